package termtext

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Age is the relative age of t at now, one unit, rounded down (README "The console"): 12s
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

// Duration formats d exactly and compactly, the way people write a setting:
// "0s", "45s", "1m", "11m40s", "1h30m", "2h0m5s" reads "2h5s", whole days as
// "7d", and "1d2h" beyond. Zero units are left out, never a digit of a
// non-zero one (so 10s stays "10s" and 30m "30m"). Below a second it keeps
// milliseconds ("1.5s", "250ms"); finer parts are rounded to the
// millisecond. A negative d reads "-" and its magnitude. Unlike Dur, which
// rounds an age down to one unit, Duration is for thresholds and timeouts,
// where a lost digit would misstate what is in force.
func Duration(d time.Duration) string { return duration(d, true) }

// FlagDuration is Duration without days ("168h", "26h"), so that
// time.ParseDuration reads it back: for a command line clawpit writes (a
// hook's flags).
func FlagDuration(d time.Duration) string { return duration(d, false) }

func duration(d time.Duration, days bool) string {
	if d < 0 {
		if d == math.MinInt64 {
			d++ // -d would overflow; a nanosecond is below what is shown
		}
		return "-" + duration(-d, days)
	}
	d = d.Round(time.Millisecond)
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}} {
		if u.name == "d" && !days {
			continue
		}
		if n := d / u.unit; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10) + u.name)
			d -= n * u.unit
		}
	}
	switch {
	case d == 0:
	case d%time.Second == 0:
		b.WriteString(strconv.FormatInt(int64(d/time.Second), 10) + "s")
	case d < time.Second && b.Len() == 0:
		b.WriteString(strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms")
	default:
		s := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		b.WriteString(strings.TrimRight(strings.TrimRight(s, "0"), ".") + "s")
	}
	return b.String()
}
