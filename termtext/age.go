package termtext

import (
	"strconv"
	"time"
)

// Age is the relative age of t at now, one unit, rounded down (SPEC §9): 12s
// below a minute, 4m below an hour, 2h below a day, then 3d; a time in the
// future reads "in 4m" (clock skew between processes, or a deadline); the
// zero time reads "-". The CLI and the console both use it, so they agree.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + Dur(-d)
	}
	return Dur(d)
}

// Dur formats a non-negative duration with one unit, rounded down: 12s, 4m,
// 2h (below 24 hours), 3d. A negative d reads "0s".
func Dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}
