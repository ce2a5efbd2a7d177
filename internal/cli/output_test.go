package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		d    time.Duration
		want string
	}{
		{12 * time.Second, "12s"}, {4*time.Minute + 30*time.Second, "4m"}, {2 * time.Hour, "2h"},
		{47 * time.Hour, "47h"}, {3 * 24 * time.Hour, "3d"}, {-4 * time.Minute, "in 4m"},
	}
	for _, c := range cases {
		if got := age(now, core.TS(now.Add(-c.d))); got != c.want {
			t.Errorf("age(%s) = %q, want %q", c.d, got, c.want)
		}
	}
	if age(now, 0) != "-" {
		t.Error("absent age")
	}
}

func TestClean(t *testing.T) {
	cases := map[string]string{
		"plain":                       "plain",
		"a\nb\tc":                     "a b c",
		"\x1b]52;c;ZXZpbA==\x07title": "]52;c;ZXZpbA==title",
		"bidi\u202eevil":              "bidievil",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"c1\u009bx":                   "c1x",
	}
	for in, want := range cases {
		if got := clean(in, 100); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := clean(strings.Repeat("x", 50), 10); got != strings.Repeat("x", 10)+"…" {
		t.Errorf("cap: %q", got)
	}
}
