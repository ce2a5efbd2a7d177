package maintain

import (
	"context"
	"time"

	"github.com/clawpit/clawpit/maintain/sweep"
)

// Kind names what one pass of the service was.
type Kind uint8

// The kinds of pass.
const (
	KindSweep    Kind = iota + 1 // a full sweep (sweep.Sweeper.Sweep)
	KindWatchdog                 // a watchdog pass (sweep.Sweeper.Watchdog)
)

func (k Kind) String() string {
	switch k {
	case KindSweep:
		return "sweep"
	case KindWatchdog:
		return "watchdog"
	}
	return "unknown"
}

// Pass is the outcome of one pass, as given to Service.Report.
type Pass[R any] struct {
	Kind   Kind
	Result R     // the pass's report (the zero R when it failed early)
	Err    error // the pass's error; Result may still hold a partial report
}

// Service runs a process's maintenance on its Schedule: a sweep at once
// when Run starts, then one every Settings.SweepInterval, and a watchdog
// pass every Settings.WatchdogInterval (the first one interval after the
// start). Passes run one at a time, in one goroutine: a watchdog pass that
// falls due during a sweep runs after it, and a pass that overran its
// interval is followed by one more at once, not by the ones it missed, so
// a slow registry is never swept back to back. There is no jitter: two
// processes' sweeps that coincide are safe (every write is conditional)
// and cost one raced action at most.
//
// R is what a pass reports: *sweep.Report for a sweep.Sweeper (New),
// or a caller's summary of it (the SSH server's console maintenance).
// The zero Service is not usable: Sweep and Watchdog must be set.
type Service[R any] struct {
	// Sweep and Watchdog run one pass. They get a context that Run's
	// stopping does not cancel, so the pass in progress when Run's
	// context ends finishes (its writes are not cut part-way) before Run
	// returns.
	Sweep    func(ctx context.Context) (R, error)
	Watchdog func(ctx context.Context) (R, error)
	// Settings is the schedule.
	Settings Settings
	// BeforeSweep, when set, runs before each sweep on the same context
	// (the daemon and the console fold the hook spool there, so events
	// spooled while the registry was busy are in before the sweep judges
	// the tasks they concern).
	BeforeSweep func(ctx context.Context)
	// Report, when set, is given every pass's outcome, in order, from
	// Run's goroutine.
	Report func(Pass[R])
	// Clock makes the tickers; nil is the wall clock (tests: a fake).
	Clock Clock
}

// New returns the service of sweeper sw on schedule set, its passes
// reported as *sweep.Report. Build sw with NewSweeper(…, set) so that
// its settings follow the same schedule.
func New(sw *sweep.Sweeper, set Settings) *Service[*sweep.Report] {
	return &Service[*sweep.Report]{
		Sweep:    func(ctx context.Context) (*sweep.Report, error) { return sw.Sweep(ctx, false) },
		Watchdog: sw.Watchdog,
		Settings: set,
	}
}

// Run runs the schedule until ctx ends, then returns once the pass in
// progress (if any) has finished. With both intervals 0 it returns when
// ctx ends, having done nothing.
func (s *Service[R]) Run(ctx context.Context) {
	clock := s.Clock
	if clock == nil {
		clock = realClock{}
	}
	work := context.WithoutCancel(ctx)
	sched := NewSchedule(s.Settings, clock.Now())
	for ctx.Err() == nil {
		for _, k := range []Kind{KindSweep, KindWatchdog} {
			if ctx.Err() == nil && sched.Start(k, clock.Now()) {
				s.pass(work, k)
				sched.Done(k)
			}
		}
		at, ok := sched.Wake()
		if !ok {
			<-ctx.Done()
			return
		}
		if wait := at.Sub(clock.Now()); wait > 0 {
			t := clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
	}
}

func (s *Service[R]) pass(ctx context.Context, k Kind) {
	var p Pass[R]
	p.Kind = k
	if k == KindSweep {
		if s.BeforeSweep != nil {
			s.BeforeSweep(ctx)
		}
		p.Result, p.Err = s.Sweep(ctx)
	} else {
		p.Result, p.Err = s.Watchdog(ctx)
	}
	if s.Report != nil {
		s.Report(p)
	}
}

// Clock tells the service the time and makes its timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d (> 0) from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a running timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop()               { r.t.Stop() }
