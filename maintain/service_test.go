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

// fakeClock's tickers fire only when the test advances it. A tick is sent
// unbuffered: Advance returns once Run has taken it, so each step of a
// test is deterministic.
type fakeClock struct {
	t       *testing.T
	mu      sync.Mutex
	now     time.Duration
	tickers []*fakeTicker
}

type fakeTicker struct {
	c       chan time.Time
	every   time.Duration
	next    time.Duration
	stopped bool
	clock   *fakeClock
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		c.t.Errorf("NewTicker(%s): the service asked for a ticker of a disabled interval", d)
	}
	tk := &fakeTicker{c: make(chan time.Time), every: d, next: c.now + d, clock: c}
	c.tickers = append(c.tickers, tk)
	return tk
}

func (tk *fakeTicker) C() <-chan time.Time { return tk.c }
func (tk *fakeTicker) Stop() {
	tk.clock.mu.Lock()
	tk.stopped = true
	tk.clock.mu.Unlock()
}

// Advance moves the clock by d and delivers each tick that falls due, in
// time order, waiting for Run to take it.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now + d
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTicker
		for _, tk := range c.tickers {
			if !tk.stopped && tk.next <= end && (due == nil || tk.next < due.next) {
				due = tk
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		c.now = due.next
		due.next += due.every
		c.mu.Unlock()
		select {
		case due.c <- time.Time{}.Add(c.now):
		case <-time.After(5 * time.Second):
			c.t.Fatalf("at %s: Run did not take the tick of its %s ticker", c.now, due.every)
		}
	}
}

// waitTickers waits until Run has made its n tickers: a tick can only
// be delivered to a ticker that exists.
func (c *fakeClock) waitTickers(n int) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		have := len(c.tickers)
		c.mu.Unlock()
		if have >= n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("Run made %d tickers, want %d", have, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// tickers is how many tickers a service on set makes.
func tickers(set Settings) int {
	n := 0
	for _, d := range []time.Duration{set.SweepInterval, set.WatchdogInterval} {
		if d > 0 {
			n++
		}
	}
	return n
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
			clock := &fakeClock{t: t}
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
			clock.waitTickers(tickers(tc.set))
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
	clock := &fakeClock{t: t}
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
	clock.Advance(time.Hour) // tickers stopped: no tick is delivered
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
		Clock:    &fakeClock{t: t},
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
	clock := &fakeClock{t: t}
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
	clock.waitTickers(1)
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
