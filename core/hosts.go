package core

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/clawpit/clawpit/termtext"
)

// Hosts (README "Many hosts: PostgreSQL"): a PostgreSQL registry is shared by many machines. A job
// runs under a supervisor on one host; only that host can see and signal its
// processes, so job liveness (J8), reaping and cancel signal a job's
// processes only there. A sweep on another host never marks such a job
// lost: it reports a host whose active jobs have gone unconfirmed (its
// sweep has not run) for more than two sweep intervals.

// EnvHost overrides the host name jobs are recorded under (tests simulate
// two hosts on one machine with it).
const EnvHost = "CLAWPIT_HOST"

// FindingHostSilent is the audit finding (warning) for a host with active
// jobs whose sweep has not confirmed them for longer than HostStaleAfter.
const FindingHostSilent = "host_not_sweeping"

// EntityHost names a host in findings.
const EntityHost = "host"

// DefaultHostStaleAfter is two default sweep intervals (60 s each).
const DefaultHostStaleAfter = 2 * time.Minute

// HostName is this machine's name for jobs: $CLAWPIT_HOST, else the
// hostname, else "localhost".
func HostName() string {
	if h := os.Getenv(EnvHost); h != "" {
		return h
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// hostOwner is the optional part of a JobLiveness that names its host
// (*supervisor.Jobs has it): the sweep then confirms that host and audits
// the others.
type hostOwner interface {
	Host() string
}

// auditHosts reports hosts other than this one whose active jobs have not
// been confirmed by their own sweep within HostStaleAfter, and notes
// whether this host has active jobs to confirm (Plan.touchHost).
func (b *swPlanner) auditHosts(tx Tx) error {
	ho, ok := b.s.jobs.(hostOwner)
	if !ok || ho.Host() == "" {
		return nil
	}
	self := ho.Host()
	rows, err := tx.SweepHosts()
	if err != nil {
		return fmt.Errorf("hosts: %w", err)
	}
	stale := b.s.HostStaleAfter
	if stale <= 0 {
		stale = DefaultHostStaleAfter
	}
	for _, h := range rows {
		if h.Host == self {
			b.p.touchHost = self
			continue
		}
		if h.SweptAt != 0 && b.p.Now.Sub(h.SweptAt) <= stale {
			continue
		}
		last := "has never swept"
		if h.SweptAt != 0 {
			last = fmt.Sprintf("last swept %s ago", termtext.Duration(b.p.Now.Sub(h.SweptAt)))
		}
		b.find(FindingHostSilent, SeverityWarning, EntityHost, h.Host,
			fmt.Sprintf("%d active job(s) on host %s are unconfirmed: it %s; only a sweep there can mark them lost (run `clawpit daemon` on %s)",
				h.ActiveJobs, h.Host, last, h.Host))
	}
	return nil
}

// touchHost records this host's confirmation of its jobs after an applied
// sweep planned it (its own transaction: a tiny upsert).
func (s *Sweeper) touchHost(ctx context.Context, p *Plan) error {
	if p.touchHost == "" {
		return nil
	}
	return s.reg.Store().Update(ctx, func(tx Tx) error { return tx.TouchHost(p.touchHost, p.Now) })
}
