// Package maintain is clawpit's one maintenance service: the schedule on
// which every long-running process (`clawpit daemon`, `clawpit serve`,
// the headless `clawpit demo`) sweeps the registry and runs the watchdog,
// and the one place a sweeper is configured from the sweep settings, so
// that a setting derived from the interval (HostStaleAfter) is the same
// in every process, the console and `clawpit sweep` included.
//
// The rules themselves (what one sweep plans and applies) are package
// maintain/sweep (sweep.Sweeper); this package decides when they run and
// builds the sweeper they run in.
package maintain

import (
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
)

// Settings is the schedule of a process's maintenance.
type Settings struct {
	// SweepInterval is the time between two sweeps; 0 disables periodic
	// sweeps (and the sweep at start).
	SweepInterval time.Duration
	// WatchdogInterval is the time between two watchdog passes (the
	// inactivity budget, enforced within seconds rather than a sweep
	// interval); 0 disables them.
	WatchdogInterval time.Duration
}

// HostStaleAfter is how long another host's active jobs may go without
// its sweep confirming them before this host's audit reports that host
// (README "Many hosts: PostgreSQL"): two of this process's sweep
// intervals, or core.DefaultHostStaleAfter when periodic sweeps are off
// (a one-shot `clawpit sweep`).
func (s Settings) HostStaleAfter() time.Duration {
	if s.SweepInterval > 0 {
		return 2 * s.SweepInterval
	}
	return core.DefaultHostStaleAfter
}

// NewSweeper returns the sweeper over reg (jobs may be nil: job liveness
// is then skipped) configured from set. Every process builds its sweeper
// here, so the settings derived from the schedule are applied the same
// way everywhere (arch_maintain_test.go checks no other package calls
// sweep.New).
func NewSweeper(reg *core.Registry, jobs core.JobLiveness, set Settings) *sweep.Sweeper {
	sw := sweep.New(reg, jobs)
	sw.HostStaleAfter = set.HostStaleAfter()
	return sw
}
