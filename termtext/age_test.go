package termtext

import (
	"math"
	"testing"
	"time"
)

// TestDuration: every boundary keeps every digit (a sweep threshold of 30m
// once printed as "3").
func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{time.Second, "1s"},
		{10 * time.Second, "10s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{10 * time.Minute, "10m"},
		{30 * time.Minute, "30m"},
		{11*time.Minute + 40*time.Second, "11m40s"},
		{11*time.Minute + 4*time.Second, "11m4s"},
		{time.Hour, "1h"},
		{10 * time.Hour, "10h"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{2*time.Hour + 5*time.Second, "2h5s"},
		{20*time.Hour + 10*time.Minute + 10*time.Second, "20h10m10s"},
		{24 * time.Hour, "1d"},
		{10 * 24 * time.Hour, "10d"},
		{7 * 24 * time.Hour, "7d"},
		{26 * time.Hour, "1d2h"},
		{1500 * time.Millisecond, "1.5s"},
		{61*time.Second + 250*time.Millisecond, "1m1.25s"},
		{250 * time.Millisecond, "250ms"},
		{1400 * time.Microsecond, "1ms"},
		{400 * time.Microsecond, "0s"},
		{-90 * time.Second, "-1m30s"},
		{math.MaxInt64, "106751d23h47m16.855s"},
		{math.MinInt64, "-106751d23h47m16.855s"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestFlagDuration: what clawpit writes into a command line reads back.
func TestFlagDuration(t *testing.T) {
	for _, d := range []time.Duration{0, time.Second, 10 * time.Second, 30 * time.Minute,
		11*time.Minute + 40*time.Second, 26 * time.Hour, 7 * 24 * time.Hour, 1500 * time.Millisecond,
		250 * time.Millisecond, 2*time.Hour + 5*time.Second} {
		s := FlagDuration(d)
		back, err := time.ParseDuration(s)
		if err != nil || back != d {
			t.Errorf("FlagDuration(%v) = %q, reads back as %v, %v", d, s, back, err)
		}
	}
	if got := FlagDuration(26 * time.Hour); got != "26h" {
		t.Errorf("FlagDuration(26h) = %q", got)
	}
}
