package sweep

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// The inactivity watchdog (docs/contract.md "The inactivity watchdog pauses for approvals"): a running run whose
// pending_approval_waits is 0 and whose last_progress_at is older than its
// inactivity budget ends with outcome timeout, reason "no activity for <N>s"
// (N = the budget), its mirrored tasks become timed_out, and one
// run_timed_out notification is raised (dedup "run_timed_out:<run id>"), all
// journaled with actor watchdog. It is the second step of every sweep, and
// runs alone every few seconds in the console and the daemon. Approval waits
// pause it: the registry counts them (RequestApproval +1, each resolution −1)
// and re-arms last_progress_at when the last one resolves, so a run that
// waited an hour for a human still gets one full budget afterwards.

// Watchdog runs the R6 step alone — plan and apply — and returns its report
// (the console and the daemon run it every 5 s, so a 60 s budget is enforced
// within seconds). It waits for a sweep running in this process.
func (s *Sweeper) Watchdog(ctx context.Context) (*Report, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	p, err := s.plan(ctx, true)
	if err != nil {
		return nil, err
	}
	return s.apply(ctx, p)
}

// budgetText is a budget in seconds as the watchdog reason prints it: "60s",
// "1.5s".
func budgetText(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) + "s"
}

// watchdog plans R6: a running run with no pending approval wait whose
// last_progress_at + budget < now ends with outcome timeout, and its mirrored
// tasks (active, or lost — an authoritative timeout replaces the inference)
// become timed_out.
func (b *swPlanner) watchdog(tx core.Tx) error {
	now := b.p.Now
	runs, err := tx.SweepOverdueRuns(now, b.limit)
	if err != nil {
		return err
	}
	b.capped(len(runs))
	for i := range runs {
		r := &runs[i]
		if !r.Running() || r.PendingApprovalWaits != 0 || r.LastProgressAt+core.Timestamp(r.InactivityBudgetMs) >= now {
			continue
		}
		reason := "no activity for " + budgetText(r.InactivityBudgetMs)
		dep := b.add(Action{Rule: RuleWatchdog, Entity: core.EntityRun, ID: r.RunID, From: "running", To: string(core.OutcomeTimeout),
			Reason: reason, rev: r.Rev})
		b.endedRuns[r.RunID] = core.OutcomeTimeout
		mirrored, err := tx.MirroredTasks(r.RunID)
		if err != nil {
			return err
		}
		for _, t := range mirrored {
			if ok, _ := core.CanTransitionTask(t.Status, core.TaskTimedOut, core.ActorWatchdog); !ok {
				continue
			}
			b.handled[t.ID] = true
			b.add(Action{Rule: RuleWatchdog, Entity: core.EntityTask, ID: t.ID, From: string(t.Status), To: string(core.TaskTimedOut),
				Reason: "run " + r.RunID + " timed out: " + reason, rev: t.Rev, dep: dep})
		}
	}
	return nil
}

// watchdogRule is R6 in Apply and the report: a run it ends counts as timed
// out; its mirrored tasks are listed as actions but not counted.
type watchdogRule struct{}

func (watchdogRule) apply(s *Sweeper, b *applyTx, i int) (bool, error) {
	a := &b.acts[i]
	if a.Entity == core.EntityRun {
		return s.applyRunTimeout(b.tx, a, b.now)
	}
	return s.applyTaskTimeout(b.tx, a, b.now)
}

func (watchdogRule) count(c *Counts, a *Action) {
	if a.Entity == core.EntityRun {
		c.TimedOut++
	}
}

// applyRunTimeout ends an idle run (docs/contract.md "The inactivity watchdog pauses for approvals") if it is still running, still
// idle (same revision: no progress since the plan) and not waiting for an
// approval; one run_timed_out notification for its requester session.
func (s *Sweeper) applyRunTimeout(tx core.Tx, a *Action, now core.Timestamp) (bool, error) {
	run, err := tx.GetRun(a.ID)
	if errors.Is(err, core.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if run.Rev != a.rev || !run.Running() || run.PendingApprovalWaits != 0 {
		return false, nil
	}
	run.EndedAt = now
	run.Outcome = core.OutcomeTimeout
	run.EndedReason = a.Reason
	run.CleanupAfter = now.Add(s.reg.Thresholds().Retention)
	if err := tx.UpdateRun(run); err != nil {
		return false, core.WrapWrite("run", run.RunID, err)
	}
	if err := core.Journal(tx, now, core.EntityRun, run.RunID, "running", string(core.OutcomeTimeout), core.ActorWatchdog, a.Reason, true); err != nil {
		return false, err
	}
	name := run.Label
	if name == "" {
		name = run.RunID
	}
	session := run.RequesterSession
	if session == "" {
		session = run.ChildSession
	}
	return true, core.Notify(tx, &core.Notification{
		Session: session, Kind: core.NotifyRunTimedOut, SubjectID: run.RunID,
		Text:     fmt.Sprintf("Sub-agent run %s timed out: %s", termtext.Exact(name, 0), termtext.Exact(a.Reason, 0)),
		DedupKey: "run_timed_out:" + run.RunID, CreatedAt: now,
	})
}

// applyTaskTimeout moves one mirrored task of a timed-out run to timed_out
// (docs/contract.md "The inactivity watchdog pauses for approvals") when the transition rule still allows it.
func (s *Sweeper) applyTaskTimeout(tx core.Tx, a *Action, now core.Timestamp) (bool, error) {
	t, err := tx.GetTask(a.ID)
	if errors.Is(err, core.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if ok, _ := core.CanTransitionTask(t.Status, core.TaskTimedOut, core.ActorWatchdog); !ok {
		return false, nil
	}
	reason := a.Reason
	res, err := s.reg.SetTaskStatusTx(tx, t, core.TaskTimedOut, reason, func(t *core.Task) { t.Error = reason }, core.ActorWatchdog, now)
	return res.Applied, err
}
