package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// TestAgeTurns: ageTurns is the first moment the text of age and until
// changes, checked against the formatter one millisecond before and at it.
func TestAgeTurns(t *testing.T) {
	const now core.Timestamp = 1_000_000_000
	for _, d := range []time.Duration{0, 1, 999 * time.Millisecond, time.Second, 12*time.Second + 400*time.Millisecond,
		59*time.Second + 999*time.Millisecond, time.Minute, 4*time.Minute + 30*time.Second, time.Hour - 1, time.Hour,
		23*time.Hour + 59*time.Minute, 24 * time.Hour, 10*24*time.Hour + 5} {
		for _, sign := range []time.Duration{1, -1} {
			ts := now.Add(-sign * d) // sign 1: d ago; -1: in d
			text := func(n core.Timestamp) string { return termtext.Age(n.Time(), ts.Time()) }
			turn := ageTurns(now, ts)
			if turn <= now {
				t.Fatalf("%v (sign %d): turn %d not after now", d, sign, turn-now)
			}
			if text(turn-1) != text(now) || text(turn) == text(now) {
				t.Errorf("%v (sign %d): %q until %d ms, then %q; turn at %d ms", d, sign, text(now), turn-1-now, text(turn), turn-now)
			}
		}
	}
}

// nextScreenChange is how long after now, in steps of step up to limit,
// the rendered screen first differs from now's (0: not within limit).
func nextScreenChange(hs *harness, step, limit time.Duration) time.Duration {
	base := hs.clk.Now()
	defer hs.clk.Set(base)
	s0 := hs.screen()
	for d := step; d <= limit; d += step {
		hs.clk.Set(base.Add(d))
		if hs.screen() != s0 {
			return d
		}
	}
	return 0
}

// TestIdleConsoleTicksAtNextVisibleChange: an idle console (fake clock)
// schedules its tick for the next moment its screen's text changes — found
// here by rendering ahead — not every second, and a tick before it renders
// nothing.
func TestIdleConsoleTicksAtNextVisibleChange(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   hopt
		after time.Duration // clock advance before looking
		want  time.Duration // next visible change after that
	}{
		// The youngest task (12 s at t0) reads 2m at +2m, 3m at +2m48s.
		{"ages", func(o *Options) { o.SweepInterval, o.WatchdogInterval = 0, 0 }, 2 * time.Minute, 48 * time.Second},
		// After the sweep at start the header reads "swept just now · next
		// 1m" until 10 s have passed (the task ages tick meanwhile, so the
		// ages are first moved past a minute).
		{"sweep header", func(o *Options) { o.WatchdogInterval = 0 }, 0, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, 120, 40, tc.opt)
			if tc.name == "sweep header" {
				hs.clk.Advance(2 * time.Minute) // ages in minutes before the sweep at start
			}
			hs.send(tickMsg{})
			hs.clk.Advance(tc.after)
			hs.send(tickMsg{})
			now := hs.m.ctx.now()
			got := nextScreenChange(hs, 250*time.Millisecond, 10*time.Minute)
			if got != tc.want {
				t.Fatalf("the screen changes after %s, want %s:\n%s", got, tc.want, hs.screen())
			}
			if hs.m.redrawAt <= now.Add(got-250*time.Millisecond) || hs.m.redrawAt >= now.Add(got+time.Second) {
				t.Fatalf("redraw planned at +%s, the screen changes at +%s", hs.m.redrawAt.Sub(now), got)
			}
			next := hs.m.nextTick(now)
			if want := min(hs.m.redrawAt, hs.m.countedAt.Add(recountEvery)); next != want || next.Sub(now) < 5*time.Second {
				t.Fatalf("next tick at +%s, want +%s (the next change or the header recount), never every second", next.Sub(now), want.Sub(now))
			}
			// Ticks and polls before the change render nothing.
			frames := hs.m.frames
			hs.clk.Advance(time.Second)
			hs.send(tickMsg{})
			hs.send(changedMsg{})
			hs.send(RefreshMsg{})
			if hs.m.frames != frames {
				t.Fatalf("an idle tick rendered %d frames", hs.m.frames-frames)
			}
			// At the change, one frame.
			hs.clk.Set(hs.m.redrawAt.Time())
			hs.send(tickMsg{})
			if hs.m.frames != frames+1 {
				t.Fatalf("the tick at the change rendered %d frames, want 1", hs.m.frames-frames)
			}
		})
	}
}

// TestSweepHeaderSteps: the header's sweep times read in steps of 10 s
// below a minute (two before the next sweep), coarser beyond.
func TestSweepHeaderSteps(t *testing.T) {
	hs := newHarness(t, 120, 40, func(o *Options) { o.WatchdogInterval = 0; o.SweepInterval = 5 * time.Minute })
	hs.send(tickMsg{})
	for _, tc := range []struct {
		at   time.Duration // since the sweep
		want string
	}{
		{0, "swept just now: nothing to do · next 5m"},
		{9 * time.Second, "swept just now: nothing to do · next 5m"},
		{10 * time.Second, "swept 10s ago: nothing to do · next 5m"},
		{61 * time.Second, "swept 1m ago: nothing to do · next 4m"},
		{2*time.Minute + 59*time.Second, "swept 2m ago: nothing to do · next 3m"},
		{3*time.Minute + 5*time.Second, "swept 3m ago: nothing to do · next 2m"},
		{4*time.Minute + 41*time.Second, "swept 4m ago: nothing to do · next 20s"},
		{4*time.Minute + 59*time.Second, "swept 4m ago: nothing to do · next 10s"},
	} {
		hs.clk.Set(t0.Add(tc.at))
		if s := hs.screen(); !strings.Contains(s, tc.want) {
			t.Errorf("+%s: header is not %q:\n%s", tc.at, tc.want, strings.SplitN(s, "\n", 3)[1])
		}
	}
}

// TestAgesInSecondsShareOneTick: rows whose ages in seconds turn over at
// scattered milliseconds share one redraw at the next whole second, not one
// per row.
func TestAgesInSecondsShareOneTick(t *testing.T) {
	const now core.Timestamp = 1_000_000_500
	c := &Context{}
	for i := range 36 {
		c.age(now, now-12_000-core.Timestamp(i*37)) // "12s" … turning "13s" within the next second
	}
	if c.redrawAt != 1_000_001_000 {
		t.Fatalf("redraw at +%d ms, want the next whole second (+500 ms)", c.redrawAt-now)
	}
}

// TestIdleWatchdogRendersNothing: the watchdog's rounds (every 5 s) that
// find nothing render no frame.
func TestIdleWatchdogRendersNothing(t *testing.T) {
	hs := newHarness(t, 120, 40, func(o *Options) { o.SweepInterval = 0 })
	hs.clk.Advance(2 * time.Minute) // every visible age in minutes
	hs.send(tickMsg{})
	frames, rounds := hs.m.frames, hs.mt.watchdogs
	for range 3 {
		hs.clk.Advance(5 * time.Second)
		hs.send(tickMsg{})
	}
	if hs.mt.watchdogs != rounds+3 {
		t.Fatalf("watchdog rounds %d, want 3", hs.mt.watchdogs-rounds)
	}
	if hs.m.frames != frames {
		t.Fatalf("idle watchdog rounds rendered %d frames", hs.m.frames-frames)
	}
}
