package maintain

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// fakeClock's timers fire only when the test advances it. A firing is
// sent unbuffered, and Advance then waits for Run to set its next timer:
// each step of a test is deterministic.
type fakeClock struct {
	t       *testing.T
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	created int
}

type fakeTimer struct {
	c       chan time.Time
	at      time.Time
	stopped bool
	clock   *fakeClock
}

func newFakeClock(t *testing.T) *fakeClock {
	return &fakeClock{t: t, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		c.t.Errorf("NewTimer(%s): want a positive duration", d)
	}
	tm := &fakeTimer{c: make(chan time.Time), at: c.now.Add(d), clock: c}
	c.timers = append(c.timers, tm)
	c.created++
	return tm
}

func (tm *fakeTimer) C() <-chan time.Time { return tm.c }
func (tm *fakeTimer) Stop() {
	tm.clock.mu.Lock()
	tm.stopped = true
	tm.clock.mu.Unlock()
}

// waitTimers waits until Run has set n timers in all.
func (c *fakeClock) waitTimers(n int) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		have := c.created
		c.mu.Unlock()
		if have >= n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("Run set %d timers, want %d", have, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Advance moves the clock by d, firing each timer that falls due, in time
// order; after each it waits for Run to set its next one.
func (c *fakeClock) Advance(d time.Duration) {
	c.t.Helper()
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTimer
		for _, tm := range c.timers {
			if !tm.stopped && !tm.at.After(end) && (due == nil || tm.at.Before(due.at)) {
				due = tm
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		c.now = due.at
		due.stopped = true // fires once
		created := c.created
		c.mu.Unlock()
		select {
		case due.c <- due.at:
		case <-time.After(5 * time.Second):
			c.t.Fatalf("at %s: Run did not take its timer", due.at)
		}
		c.waitTimers(created + 1)
	}
}

// timersAtStart is how many timers Run has set once its first passes
// are done: one, unless both kinds are disabled.
func timersAtStart(set Settings) int {
	if set.SweepInterval > 0 || set.WatchdogInterval > 0 {
		return 1
	}
	return 0
}

// recorder collects what the service did, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFor waits until n events are recorded.
func (r *recorder) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.snapshot()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d events, have %q", n, r.snapshot())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestServiceSchedule(t *testing.T) {
	type step struct {
		advance time.Duration
		want    []string // events this step adds
	}
	for _, tc := range []struct {
		name  string
		set   Settings
		steps []step
	}{
		{"sweep at once, then each interval", Settings{SweepInterval: time.Minute}, []step{
			{0, []string{"fold", "sweep"}},
			{59 * time.Second, nil},
			{time.Second, []string{"fold", "sweep"}},
			{time.Minute, []string{"fold", "sweep"}},
		}},
		{"watchdog alone: nothing at start", Settings{WatchdogInterval: 5 * time.Second}, []step{
			{0, nil},
			{4 * time.Second, nil},
			{time.Second, []string{"watchdog"}},
			{10 * time.Second, []string{"watchdog", "watchdog"}},
		}},
		{"both: the watchdog's first pass an interval after the start", Settings{SweepInterval: 10 * time.Second, WatchdogInterval: 4 * time.Second}, []step{
			{0, []string{"fold", "sweep"}},
			{4 * time.Second, []string{"watchdog"}},
			{4 * time.Second, []string{"watchdog"}},
			{2 * time.Second, []string{"fold", "sweep"}},
			{2 * time.Second, []string{"watchdog"}},
		}},
		{"both off: nothing ever", Settings{}, []step{
			{0, nil},
			{time.Hour, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock(t)
			rec := &recorder{}
			svc := &Service[string]{
				Sweep:       func(context.Context) (string, error) { return "swept", nil },
				Watchdog:    func(context.Context) (string, error) { return "watched", nil },
				Settings:    tc.set,
				BeforeSweep: func(context.Context) { rec.add("fold") },
				Report: func(p Pass[string]) {
					if p.Err != nil || p.Result != map[Kind]string{KindSweep: "swept", KindWatchdog: "watched"}[p.Kind] {
						t.Errorf("pass %s: result %q, err %v", p.Kind, p.Result, p.Err)
					}
					rec.add(p.Kind.String())
				},
				Clock: clock,
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); svc.Run(ctx) }()
			clock.waitTimers(timersAtStart(tc.set))
			var want []string
			for _, st := range tc.steps {
				clock.Advance(st.advance)
				want = append(want, st.want...)
				rec.waitFor(t, len(want))
			}
			cancel()
			<-done
			if got := rec.snapshot(); !slices.Equal(got, want) {
				t.Errorf("events %q, want %q", got, want)
			}
		})
	}
}

// TestServiceStopFinishesThePass: stopping lets the pass in progress
// finish on a context that is not cancelled, then nothing more runs.
func TestServiceStopFinishesThePass(t *testing.T) {
	clock := newFakeClock(t)
	rec := &recorder{}
	entered, release := make(chan struct{}), make(chan struct{})
	var passErr error
	svc := &Service[int]{
		Sweep: func(ctx context.Context) (int, error) {
			close(entered)
			<-release
			passErr = ctx.Err()
			return 1, nil
		},
		Watchdog: func(context.Context) (int, error) { return 0, errors.New("no watchdog expected") },
		Settings: Settings{SweepInterval: time.Minute, WatchdogInterval: time.Second},
		Report:   func(p Pass[int]) { rec.add(p.Kind.String()) },
		Clock:    clock,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	<-entered
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while its sweep was still running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-done
	if passErr != nil {
		t.Errorf("the sweep in progress saw its context end (%v): a stop must let it finish", passErr)
	}
	clock.Advance(time.Hour) // the timer was stopped: nothing fires
	if got := rec.snapshot(); !slices.Equal(got, []string{"sweep"}) {
		t.Errorf("events %q, want just the first sweep", got)
	}
}

// TestServiceStoppedBeforeStart: a context already ended runs nothing.
func TestServiceStoppedBeforeStart(t *testing.T) {
	ran := false
	svc := &Service[int]{
		Sweep:    func(context.Context) (int, error) { ran = true; return 0, nil },
		Watchdog: func(context.Context) (int, error) { ran = true; return 0, nil },
		Settings: Settings{SweepInterval: time.Minute, WatchdogInterval: time.Second},
		Clock:    newFakeClock(t),
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	svc.Run(ctx)
	if ran {
		t.Error("a pass ran after the context had ended")
	}
}

// TestServiceReportsErrors: a failed pass is reported with its partial
// result and the schedule goes on.
func TestServiceReportsErrors(t *testing.T) {
	clock := newFakeClock(t)
	boom := errors.New("database is locked")
	var mu sync.Mutex
	var got []Pass[string]
	n := 0
	svc := &Service[string]{
		Sweep: func(context.Context) (string, error) {
			n++
			if n == 1 {
				return "partial", boom
			}
			return "whole", nil
		},
		Watchdog: func(context.Context) (string, error) { return "", nil },
		Settings: Settings{SweepInterval: time.Minute},
		Report:   func(p Pass[string]) { mu.Lock(); got = append(got, p); mu.Unlock() },
		Clock:    clock,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	clock.waitTimers(1)
	clock.Advance(time.Minute)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	<-done
	want := []Pass[string]{{KindSweep, "partial", boom}, {KindSweep, "whole", nil}}
	if !slices.Equal(got, want) {
		t.Errorf("passes %+v, want %+v", got, want)
	}
}

// TestSettingsApplied: the settings derived from the schedule, the same
// for every caller (they all build their sweeper with NewSweeper).
func TestSettingsApplied(t *testing.T) {
	for _, tc := range []struct {
		caller string
		set    Settings
		stale  time.Duration
	}{
		{"clawpit sweep (one shot)", Settings{}, core.DefaultHostStaleAfter},
		{"daemon, default interval", Settings{SweepInterval: time.Minute, WatchdogInterval: 5 * time.Second}, 2 * time.Minute},
		{"serve, 30 s", Settings{SweepInterval: 30 * time.Second, WatchdogInterval: 5 * time.Second}, time.Minute},
		{"console, sweeps off", Settings{WatchdogInterval: 5 * time.Second}, core.DefaultHostStaleAfter},
		{"demo, 5 s", Settings{SweepInterval: 5 * time.Second, WatchdogInterval: time.Second}, 10 * time.Second},
	} {
		if got := tc.set.HostStaleAfter(); got != tc.stale {
			t.Errorf("%s: HostStaleAfter %s, want %s", tc.caller, got, tc.stale)
		}
		if got := NewSweeper(nil, nil, tc.set).HostStaleAfter; got != tc.stale {
			t.Errorf("%s: NewSweeper's HostStaleAfter %s, want %s", tc.caller, got, tc.stale)
		}
	}
}
