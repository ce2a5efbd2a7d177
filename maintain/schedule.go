package maintain

import "time"

// Schedule is the maintenance timetable as plain state: which pass is due
// when. Service.Run keeps one; the console's model (tui), which runs its
// passes as Bubble Tea commands in its own event loop, keeps one too, so
// both follow the same rules:
//
//   - the first sweep is due at the start (what fell due while nothing
//     swept is recorded before anyone acts on it), the first watchdog pass
//     one watchdog interval later;
//   - a pass of a kind never overlaps another of the same kind;
//   - the next pass of a kind is due one interval after the previous one
//     started; when a slow pass overran that, it is due at once, and
//     only once (missed passes are not made up);
//   - an interval of 0 disables that kind.
//
// A Schedule is not safe for concurrent use.
type Schedule struct {
	set                   Settings
	nextSweep, nextWatch  time.Time
	sweeping, watching    bool
	sweepStart, watchFrom time.Time
}

// NewSchedule returns the schedule of set for a process starting at start.
func NewSchedule(set Settings, start time.Time) *Schedule {
	return &Schedule{set: set, nextSweep: start, nextWatch: start.Add(set.WatchdogInterval)}
}

// Settings is the schedule's settings.
func (s *Schedule) Settings() Settings { return s.set }

// Start reports whether a pass of kind k is due at now and, if so, marks
// it running (until Done). It is false while one of k runs, and always
// false for a disabled kind.
func (s *Schedule) Start(k Kind, now time.Time) bool {
	switch k {
	case KindSweep:
		if s.set.SweepInterval <= 0 || s.sweeping || now.Before(s.nextSweep) {
			return false
		}
		s.sweeping, s.sweepStart = true, now
	case KindWatchdog:
		if s.set.WatchdogInterval <= 0 || s.watching || now.Before(s.nextWatch) {
			return false
		}
		s.watching, s.watchFrom = true, now
	default:
		return false
	}
	return true
}

// Done records that the running pass of kind k has ended: the next one is
// due an interval after it started.
func (s *Schedule) Done(k Kind) {
	switch k {
	case KindSweep:
		if s.sweeping {
			s.sweeping, s.nextSweep = false, s.sweepStart.Add(s.set.SweepInterval)
		}
	case KindWatchdog:
		if s.watching {
			s.watching, s.nextWatch = false, s.watchFrom.Add(s.set.WatchdogInterval)
		}
	}
}

// Running reports whether a pass of kind k is running.
func (s *Schedule) Running(k Kind) bool {
	if k == KindSweep {
		return s.sweeping
	}
	return s.watching
}

// Next is when the next pass of kind k is due (meaningless while one runs
// or when k is disabled: see Running, Settings).
func (s *Schedule) Next(k Kind) time.Time {
	if k == KindSweep {
		return s.nextSweep
	}
	return s.nextWatch
}

// Wake is the earliest time a pass not running is due (maybe past), and
// false when none can become due (both kinds disabled or running): when
// the process should next look at the schedule.
func (s *Schedule) Wake() (time.Time, bool) {
	var at time.Time
	ok := false
	for _, k := range []Kind{KindSweep, KindWatchdog} {
		iv := s.set.SweepInterval
		if k == KindWatchdog {
			iv = s.set.WatchdogInterval
		}
		if iv <= 0 || s.Running(k) {
			continue
		}
		if n := s.Next(k); !ok || n.Before(at) {
			at, ok = n, true
		}
	}
	return at, ok
}
