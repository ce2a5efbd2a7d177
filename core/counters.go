package core

import "math"

// MaxCount is the largest value a counter holds (output_count,
// pending_approval_waits): the largest int64, as both engines store them
// (SQLite INTEGER, PostgreSQL BIGINT).
const MaxCount = math.MaxInt64

// SatAdd returns a+n for a counter a ≥ 0 and n ≥ 0, stopping at MaxCount
// instead of wrapping to a negative number (a runtime may add any amount:
// `task output --count 9223372036854775807` twice must not leave -2).
// saturated is true when the sum was cut to MaxCount. A negative n is the
// caller's to refuse; SatAdd treats it as 0.
func SatAdd(a, n int64) (sum int64, saturated bool) {
	if n <= 0 {
		return a, false
	}
	if a > MaxCount-n {
		return MaxCount, true
	}
	return a + n, false
}
