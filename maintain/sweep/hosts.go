package sweep

import (
	"context"
	"fmt"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// The host audit of a sweep (README "Many hosts: PostgreSQL"; core/hosts.go
// names the hosts): a sweep confirms this host's active jobs and reports
// another host whose jobs its own sweep has left unconfirmed.

// FindingHostSilent is the audit finding (warning) for a host with active
// jobs whose sweep has not confirmed them for longer than HostStaleAfter.
const FindingHostSilent = "host_not_sweeping"

// hostOwner is the optional part of a JobLiveness that names its host
// (*supervisor.Jobs has it): the sweep then confirms that host and audits
// the others.
type hostOwner interface {
	Host() string
}

// auditHosts reports hosts other than this one whose active jobs have not
// been confirmed by their own sweep within HostStaleAfter, and notes
// whether this host has active jobs to confirm (Plan.touchHost).
func (b *swPlanner) auditHosts(tx core.Tx) error {
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
		stale = core.DefaultHostStaleAfter
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
		b.find(FindingHostSilent, SeverityWarning, core.EntityHost, h.Host,
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
	return s.reg.Store().Update(ctx, func(tx core.Tx) error { return tx.TouchHost(p.touchHost, p.Now) })
}
