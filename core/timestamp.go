package core

import (
	"encoding/json"
	"time"
)

// Timestamp is a point in time stored as Unix epoch milliseconds (docs/contract.md "Files").
// The zero value means "absent": it is stored as SQL NULL and printed as JSON
// null. Non-zero values print as RFC 3339 UTC with milliseconds, for example
// "2026-11-22T10:04:05.123Z".
type Timestamp int64

// TS converts t to a Timestamp (ms precision). The zero time gives 0 (absent).
func TS(t time.Time) Timestamp {
	if t.IsZero() {
		return 0
	}
	return Timestamp(t.UnixMilli())
}

// IsZero reports whether the timestamp is absent.
func (t Timestamp) IsZero() bool { return t == 0 }

// Time returns the timestamp as a UTC time.Time; the zero time when absent.
func (t Timestamp) Time() time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(t)).UTC()
}

// Add returns t shifted by d (ms precision). Absent stays absent.
func (t Timestamp) Add(d time.Duration) Timestamp {
	if t == 0 {
		return 0
	}
	return t + Timestamp(d.Milliseconds())
}

// Sub returns t-u as a duration.
func (t Timestamp) Sub(u Timestamp) time.Duration {
	return time.Duration(int64(t)-int64(u)) * time.Millisecond
}

// String is the RFC 3339 UTC form with milliseconds, or "" when absent.
func (t Timestamp) String() string {
	if t == 0 {
		return ""
	}
	return t.Time().Format("2006-01-02T15:04:05.000Z07:00")
}

// MarshalJSON prints RFC 3339 UTC with milliseconds, or null when absent.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(t.String())
}

// UnmarshalJSON accepts null, an RFC 3339 string, or epoch milliseconds.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return err
		}
		*t = TS(p)
		return nil
	}
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*t = Timestamp(ms)
	return nil
}

// Coalesce returns the first non-zero timestamp, or 0.
func Coalesce(ts ...Timestamp) Timestamp {
	for _, t := range ts {
		if t != 0 {
			return t
		}
	}
	return 0
}
