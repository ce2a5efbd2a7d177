package serve

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// The cap refuses like sshd's should_drop_connection: never below start,
// always at full, in between when the roll is below the linear rate.
func TestStartupsRefuse(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     Startups
		open  int
		roll  int // what the random source returns; -1: must not be called
		want  bool
		wantP int // the threshold the roll was compared with (when called)
	}{
		{"below start", Startups{10, 30, 100}, 9, -1, false, 0},
		{"empty", Startups{10, 30, 100}, 0, -1, false, 0},
		{"at start, roll under rate", Startups{10, 30, 100}, 10, 29, true, 30},
		{"at start, roll at rate", Startups{10, 30, 100}, 10, 30, false, 30},
		{"halfway: 30+70*45/90=65", Startups{10, 30, 100}, 55, 64, true, 65},
		{"halfway, roll at p", Startups{10, 30, 100}, 55, 65, false, 65},
		{"one below full: 30+70*89/90=99", Startups{10, 30, 100}, 99, 98, true, 99},
		{"one below full, roll 99", Startups{10, 30, 100}, 99, 99, false, 99},
		{"at full", Startups{10, 30, 100}, 100, -1, true, 0},
		{"beyond full", Startups{10, 30, 100}, 5000, -1, true, 0},
		{"rate 100 refuses from start", Startups{3, 100, 10}, 3, -1, true, 0},
		{"hard cap N: below", Startups{3, 100, 3}, 2, -1, false, 0},
		{"hard cap N: at", Startups{3, 100, 3}, 3, -1, true, 0},
		{"integer division as sshd: 1+99*1/3=34", Startups{1, 1, 4}, 2, 33, true, 34},
		{"integer division as sshd, roll 34", Startups{1, 1, 4}, 2, 34, false, 34},
	} {
		t.Run(c.name, func(t *testing.T) {
			called := false
			roll := func(n int) int {
				called = true
				if n != 100 {
					t.Errorf("roll(%d), want roll(100)", n)
				}
				if c.roll < 0 {
					t.Errorf("roll called with %d open", c.open)
				}
				return c.roll
			}
			if got := c.m.Refuse(c.open, roll); got != c.want {
				t.Errorf("Refuse(%d) with roll %d = %v, want %v", c.open, c.roll, got, c.want)
			}
			if c.roll >= 0 && !called {
				t.Errorf("roll not called with %d open", c.open)
			}
			// The threshold: the roll just below it refuses, at it admits.
			if c.wantP > 0 {
				below := c.m.Refuse(c.open, func(int) int { return c.wantP - 1 })
				at := c.m.Refuse(c.open, func(int) int { return c.wantP })
				if !below || at {
					t.Errorf("threshold at %d open: roll %d refused=%v, roll %d refused=%v; want p=%d", c.open, c.wantP-1, below, c.wantP, at, c.wantP)
				}
			}
		})
	}
}

// Over many rolls of a fixed sequence the refusals follow the rate: a
// deterministic source cycling 0..99 refuses exactly p of every 100.
func TestStartupsRefuseRate(t *testing.T) {
	m := Startups{Start: 10, Rate: 30, Full: 100}
	for _, c := range []struct{ open, want int }{{10, 30}, {55, 65}, {99, 99}} {
		next := 0
		roll := func(n int) int { r := next % n; next++; return r }
		got := 0
		for range 100 {
			if m.Refuse(c.open, roll) {
				got++
			}
		}
		if got != c.want {
			t.Errorf("%d open: %d of 100 refused, want %d", c.open, got, c.want)
		}
	}
}

func TestParseStartups(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Startups
		err  string
	}{
		{"10:30:100", Startups{10, 30, 100}, ""},
		{"1:100:1", Startups{1, 100, 1}, ""},
		{"5", Startups{5, 100, 5}, ""},
		{" 2 : 50 : 4 ", Startups{2, 50, 4}, ""},
		{"", Startups{}, `"" is not a whole number`},
		{"10:30", Startups{}, "want start:rate:full"},
		{"10:30:100:5", Startups{}, "want start:rate:full"},
		{"a:30:100", Startups{}, `"a" is not a whole number`},
		{"0", Startups{}, "start 0 must be at least 1"},
		{"-3", Startups{}, "start -3 must be at least 1"},
		{"10:30:5", Startups{}, "full 5 is below start 10"},
		{"10:0:100", Startups{}, "rate 0% must be 1 to 100"},
		{"10:101:100", Startups{}, "rate 101% must be 1 to 100"},
		{"10:30:1048577", Startups{}, "full 1048577 is more than 1048576"},
		{"1048576", Startups{1 << 20, 100, 1 << 20}, ""},
	} {
		got, err := ParseStartups(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseStartups(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
			if back, err := ParseStartups(got.String()); err != nil || back != got {
				t.Errorf("round trip of %q: %+v %v", got.String(), back, err)
			}
			continue
		}
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--max-startups") {
			t.Errorf("ParseStartups(%q) error %v; want ErrInvalid naming --max-startups and %q", c.in, err, c.err)
		}
	}
}

// FuzzParseStartups: whatever the flag's text, parsing never panics, and
// what it accepts is a valid cap that round-trips through String and
// refuses as sshd does: never below Start, always from Full, and, for a
// fixed roll, more often (never less) as connections pile up.
func FuzzParseStartups(f *testing.F) {
	for _, s := range []string{"10:30:100", "1", "5", "1:100:1", "3:1:4", "0", "-1:50:3", "10:30", "a:b:c", "99999999999999999999", "1:1:1048576", " 2 : 50 : 4 ", "10:30:100:1", ""} {
		f.Add(s, 50)
	}
	f.Fuzz(func(t *testing.T, s string, r int) {
		m, err := ParseStartups(s)
		if err != nil {
			if !errors.Is(err, core.ErrInvalid) {
				t.Fatalf("ParseStartups(%q): %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatalf("ParseStartups(%q) accepted %+v: %v", s, m, err)
		}
		if back, err := ParseStartups(m.String()); err != nil || back != m {
			t.Fatalf("round trip %q → %+v → %q → %+v, %v", s, m, m.String(), back, err)
		}
		roll := func(n int) int { return ((r % n) + n) % n }
		prev := false
		opens := []int{0, m.Start - 1, m.Start, (m.Start + m.Full) / 2, m.Full - 1, m.Full, m.Full + 1}
		slices.Sort(opens)
		for _, open := range opens {
			if open < 0 {
				continue
			}
			got := m.Refuse(open, roll)
			switch {
			case open < m.Start && got:
				t.Fatalf("%+v refused with %d open, below start", m, open)
			case open >= m.Full && !got:
				t.Fatalf("%+v admitted with %d open, at or beyond full", m, open)
			case prev && !got:
				t.Fatalf("%+v with roll %d: refused at fewer open connections, admitted at %d", m, roll(100), open)
			}
			prev = got
		}
	})
}
