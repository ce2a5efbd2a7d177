package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/core"
)

// The plan side of a sweep (docs/contract.md "Maintenance"): the rule steps in order over one read
// snapshot. Each step lives in its rule's file (see sweepRule).

// swPlanner accumulates one plan. The overlay (endedRuns, lostJobs, handled,
// pruned) is the state the plan is about to write, so a later rule sees the
// effect of an earlier one (docs/contract.md "Maintenance" order): a run the watchdog ends no longer
// backs its tasks, a job about to be marked lost no longer backs a task, a
// task about to be marked lost and already past its retention is pruned in
// the same sweep (R8).
type swPlanner struct {
	s     *Sweeper
	p     *Plan
	th    core.Thresholds
	limit int

	endedRuns map[string]core.RunOutcome // runs the plan ends (watchdog)
	lostJobs  map[string]bool            // jobs the plan marks lost
	handled   map[string]bool            // task ids that already have a status action
	pruned    map[string]bool            // "<entity>/<id>" the plan prunes

	lostPrunes []Action // prunes of tasks the plan marks lost, added by the retention step
}

// add appends a and returns its 1-based index (for Action.dep).
func (b *swPlanner) add(a Action) int {
	a.Result = ActionPlanned
	b.p.Actions = append(b.p.Actions, a)
	return len(b.p.Actions)
}

func (b *swPlanner) find(kind, severity, entity, id, detail string) {
	b.p.Findings = append(b.p.Findings, Finding{Kind: kind, Severity: severity, Entity: entity, ID: id, Detail: detail})
}

// capped notes a query that returned a full page: the rest waits for the next sweep.
func (b *swPlanner) capped(n int) {
	if n >= b.limit {
		b.p.Truncated = true
	}
}

// plan builds a full sweep plan, or the watchdog step alone.
func (s *Sweeper) plan(ctx context.Context, watchdogOnly bool) (*Plan, error) {
	started := time.Now()
	p := &Plan{Now: s.now(), watchdogOnly: watchdogOnly}
	b := &swPlanner{
		s: s, p: p, th: s.reg.Thresholds(), limit: s.maxPerRule(),
		endedRuns: map[string]core.RunOutcome{}, lostJobs: map[string]bool{},
		handled: map[string]bool{}, pruned: map[string]bool{},
	}
	// J8 first: LostJobs reads through the jobs front end, outside our snapshot.
	if !watchdogOnly {
		if err := b.jobLiveness(ctx); err != nil {
			return nil, fmt.Errorf("sweep plan: job liveness: %w", err)
		}
	}
	err := s.reg.Store().View(ctx, func(tx core.Tx) error {
		if err := b.watchdog(tx); err != nil {
			return fmt.Errorf("watchdog: %w", err)
		}
		if watchdogOnly {
			return nil
		}
		now := p.Now
		active, err := tx.SweepActiveTasks(core.ActiveTaskFilter{
			IdleBefore:    now.Add(-b.th.Grace),
			QueuedBefore:  now.Add(-b.th.StaleQueued),
			RunningBefore: now.Add(-b.th.StaleRunning),
		})
		if err != nil {
			return fmt.Errorf("active tasks: %w", err)
		}
		b.lost(active)
		if err := b.expiry(tx); err != nil {
			return fmt.Errorf("approval expiry: %w", err)
		}
		if err := b.waiters(tx); err != nil {
			return fmt.Errorf("approval waiters: %w", err)
		}
		if err := b.silent(tx); err != nil {
			return fmt.Errorf("silent tasks: %w", err)
		}
		if err := b.retention(tx); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
		if err := b.audit(tx, active); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if err := b.auditHosts(tx); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sweep plan: %w", err)
	}
	p.planTime = time.Since(started)
	return p, nil
}
