package maintain

import (
	"context"
	"time"

	"github.com/clawpit/clawpit/core"
)

// Kind names what one pass of the service was.
type Kind uint8

// The kinds of pass.
const (
	KindSweep    Kind = iota + 1 // a full sweep (core.Sweeper.Sweep)
	KindWatchdog                 // a watchdog pass (core.Sweeper.Watchdog)
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

// Service runs a process's maintenance on its schedule: a sweep at once
// when Run starts, then one every Settings.SweepInterval, and a watchdog
// pass every Settings.WatchdogInterval (the first one interval after the
// start). Passes run one at a time, in one goroutine: a watchdog pass that
// falls due during a sweep runs after it, and a tick missed while a pass
// ran is dropped, not queued (time.Ticker's rule), so a slow registry is
// never swept back to back. There is no jitter: two processes' sweeps
// that coincide are safe (every write is conditional) and cost one
// raced action at most.
//
// R is what a pass reports: *core.SweepReport for a core.Sweeper (New),
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
// reported as *core.SweepReport. Build sw with NewSweeper(…, set) so that
// its settings follow the same schedule.
func New(sw *core.Sweeper, set Settings) *Service[*core.SweepReport] {
	return &Service[*core.SweepReport]{
		Sweep:    func(ctx context.Context) (*core.SweepReport, error) { return sw.Sweep(ctx, false) },
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
	sweepC, stopSweep := tick(clock, s.Settings.SweepInterval)
	defer stopSweep()
	watchC, stopWatch := tick(clock, s.Settings.WatchdogInterval)
	defer stopWatch()
	if s.Settings.SweepInterval > 0 && ctx.Err() == nil {
		s.pass(work, KindSweep)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweepC:
			if ctx.Err() == nil { // select picks at random among ready cases
				s.pass(work, KindSweep)
			}
		case <-watchC:
			if ctx.Err() == nil {
				s.pass(work, KindWatchdog)
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

// tick is a ticker of clock every d, or a nil channel (never) when d is
// not positive.
func tick(clock Clock, d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := clock.NewTicker(d)
	return t.C(), t.Stop
}

// Clock makes the service's tickers.
type Clock interface {
	// NewTicker returns a ticker that ticks every d (d > 0), dropping
	// ticks a slow reader misses, as time.NewTicker does.
	NewTicker(d time.Duration) Ticker
}

// Ticker is a running ticker of a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realClock struct{}

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
