package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Journal states of a run: "running" until it ends, then its outcome.
const runRunning = "running"

func runState(run *Run) string {
	if run.Running() {
		return runRunning
	}
	return string(run.Outcome)
}

// RegisterRun records a subagent run (docs/contract.md "Entities and statuses", docs/contract.md "Commands: exit codes and JSON" `run register`): started_at
// and last_progress_at = now, inactivity budget default 60 s; the label is
// sanitised to one line and redacted (docs/contract.md "Background jobs: Live, redacted log", README "The console"). Errors: ErrInvalid for
// a missing or unprintable run id or session id (termtext.ValidID), a label
// over 1 KiB, a negative budget, or a run id that is already registered.
func (r *Registry) RegisterRun(ctx context.Context, nr NewRun, actor Actor) (*Run, error) {
	switch {
	case nr.RunID == "":
		return nil, Invalidf("run id is required")
	case nr.ChildSession == "":
		return nil, Invalidf("run %q: child session is required", nr.RunID)
	case nr.InactivityBudget < 0:
		return nil, Invalidf("run %q: inactivity budget %s is negative", nr.RunID, nr.InactivityBudget)
	}
	budget := int64(DefaultInactivityBudgetMs)
	if nr.InactivityBudget > 0 {
		budget = nr.InactivityBudget.Milliseconds()
		if budget == 0 {
			return nil, Invalidf("run %q: inactivity budget %s is below 1ms", nr.RunID, nr.InactivityBudget)
		}
	}
	if err := checkIDs("run id", nr.RunID, "child session", nr.ChildSession, "requester session", nr.RequesterSession); err != nil {
		return nil, err
	}
	label, err := cleanLabel("run label", nr.Label)
	if err != nil {
		return nil, err
	}
	nr.Label = r.redactText(label)
	var out *Run
	err = r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		if _, err := tx.GetRun(nr.RunID); err == nil {
			return Invalidf("run %q is already registered", nr.RunID)
		} else if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("check run %s: %w", nr.RunID, err)
		}
		run := &Run{
			RunID: nr.RunID, ChildSession: nr.ChildSession, RequesterSession: nr.RequesterSession,
			Label: nr.Label, StartedAt: now, LastProgressAt: now, InactivityBudgetMs: budget,
		}
		if err := tx.InsertRun(run); err != nil {
			if errors.Is(err, ErrConflict) {
				return Invalidf("run %q is already registered", nr.RunID)
			}
			return wrapWrite("run", nr.RunID, err)
		}
		out = run
		return journal(tx, now, EntityRun, run.RunID, "", runRunning, actor,
			fmt.Sprintf("registered (inactivity budget %d ms)", budget), true)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runOp runs fn on the resolved run inside one write transaction.
func (r *Registry) runOp(ctx context.Context, id string, fn func(tx Tx, run *Run, now Timestamp) (Result, error)) (*Run, Result, error) {
	var (
		out *Run
		res Result
	)
	err := r.store.Update(ctx, func(tx Tx) error {
		run, err := lookup(tx, EntityRun, id, r.match, tx.GetRun)
		if err != nil {
			return err
		}
		if res, err = fn(tx, run, r.now()); err != nil {
			return err
		}
		out = run
		return nil
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// ProgressRun records progress of a running run: last_progress_at = now, which
// re-arms the inactivity watchdog (docs/contract.md "The inactivity watchdog pauses for approvals"). An ended run is refused ("run
// already ended (<outcome>)").
func (r *Registry) ProgressRun(ctx context.Context, runID string, actor Actor) (*Run, Result, error) {
	return r.runOp(ctx, runID, func(tx Tx, run *Run, now Timestamp) (Result, error) {
		if !run.Running() {
			return refuse(tx, now, EntityRun, run.RunID, runState(run), runState(run), actor,
				"run already ended ("+string(run.Outcome)+")")
		}
		run.LastProgressAt = now
		if err := tx.UpdateRun(run); err != nil {
			return Result{}, wrapWrite("run", run.RunID, err)
		}
		return applied(""), journal(tx, now, EntityRun, run.RunID, runRunning, runRunning, actor, "progress", true)
	})
}

// completionStatus maps a run outcome reported by `run complete` to the task
// status of its mirrored rows (docs/contract.md "Late completion wins"). reset, deleted and killed are not
// completions: ErrInvalid.
func completionStatus(o RunOutcome) (TaskStatus, error) {
	switch o {
	case OutcomeOK:
		return TaskSucceeded, nil
	case OutcomeError:
		return TaskFailed, nil
	case OutcomeTimeout:
		return TaskTimedOut, nil
	}
	if _, err := ParseRunOutcome(string(o)); err != nil {
		return "", err
	}
	return "", Invalidf("outcome %q is not a completion (want one of: ok, error, timeout)", o)
}

// CompleteRun records a run's completion (docs/contract.md "Late completion wins"): a running run ends now
// with outcome and errText (cleanup_after = ended_at + retention, R8); an
// already-ended run is kept exactly as it was and the journal notes "late
// completion (<outcome>) after run ended (<old outcome>)". Either way the
// mapped status (ok → succeeded, error → failed, timeout → timed_out) is
// applied to every mirrored task row through the transition rule, each
// result journaled per task: lost → succeeded is an upgrade that clears the
// lost-derived error; succeeded is never downgraded. Returns the run and its
// mirrored tasks after the change; Result.Applied is true when the run or any
// task changed. errText is redacted (docs/contract.md "Background jobs: Live, redacted log"). Errors: ErrInvalid for a
// non-completion outcome.
func (r *Registry) CompleteRun(ctx context.Context, runID string, outcome RunOutcome, errText string, actor Actor) (*Run, []Task, Result, error) {
	errText = r.redactText(errText)
	to, err := completionStatus(outcome)
	if err != nil {
		return nil, nil, Result{}, err
	}
	var tasks []Task
	run, res, err := r.runOp(ctx, runID, func(tx Tx, run *Run, now Timestamp) (Result, error) {
		tasks = nil
		var res Result
		if run.Running() {
			run.EndedAt = now
			run.Outcome = outcome
			run.EndedReason = "completed (" + string(outcome) + ")"
			run.Error = errText
			run.CleanupAfter = now.Add(r.th.Retention)
			if err := tx.UpdateRun(run); err != nil {
				return Result{}, wrapWrite("run", run.RunID, err)
			}
			if err := journal(tx, now, EntityRun, run.RunID, runRunning, string(outcome), actor, joinReason("completed", errText), true); err != nil {
				return Result{}, err
			}
			res = applied("")
		} else {
			late := fmt.Sprintf("late completion (%s) after run ended (%s)", outcome, run.Outcome)
			if err := journal(tx, now, EntityRun, run.RunID, string(run.Outcome), string(outcome), actor, late+"; run record kept", false); err != nil {
				return Result{}, err
			}
			res = Result{Reason: late}
		}
		mirrored, err := tx.MirroredTasks(run.RunID)
		if err != nil {
			return Result{}, fmt.Errorf("mirrored tasks of run %s: %w", run.RunID, err)
		}
		taskErr := errText
		if taskErr == "" && to != TaskSucceeded {
			taskErr = "subagent run ended (" + string(outcome) + ")"
		}
		why := "run " + run.RunID + " completed (" + string(outcome) + ")"
		changed := 0
		var moves []string // "lost → succeeded" per changed task, in order
		for i := range mirrored {
			t := &mirrored[i]
			from := t.Status
			tr, err := r.setTaskStatus(tx, t, taskChange{to: to, reason: why, edit: func(t *Task) {
				if to != TaskSucceeded {
					t.Error = taskErr
				}
			}}, actor, now)
			if err != nil {
				return Result{}, err
			}
			if tr.Applied {
				changed++
				moves = append(moves, string(from)+" → "+string(t.Status))
			}
		}
		tasks = mirrored
		if changed > 0 && !res.Applied {
			// A late completion: lead with what changed ("2 tasks lost →
			// succeeded"), then why the run itself was not.
			res = applied(fmt.Sprintf("%s; %s (%d of %d mirrored tasks updated)", summariseMoves(moves), res.Reason, changed, len(mirrored)))
		}
		return res, nil
	})
	if err != nil {
		return nil, nil, Result{}, err
	}
	return run, tasks, res, nil
}

// KillRun ends a running run at once (docs/contract.md "Kill is not completion"), even while it waits for
// approvals (R6): ended_at = now, outcome killed, ended_reason
// "subagent-killed", cleanup_handled, suppress_announce_reason "killed",
// cleanup_after = ended_at + retention (R8). Its mirrored task rows get
// delivery_status not_applicable — killed runs never announce — and keep their
// status: the next sweep finalises them (R5). Its pending approvals are
// cancelled (R9), each releasing its approval wait (R6). Killing an ended run
// changes nothing: Result{false, "run already ended (<outcome>)"}. reason
// (default "killed") is redacted (docs/contract.md "Background jobs: Live, redacted log") before it is journaled.
func (r *Registry) KillRun(ctx context.Context, runID, reason string, actor Actor) (*Run, Result, error) {
	if reason = r.redactText(reason); reason == "" {
		reason = "killed"
	}
	return r.runOp(ctx, runID, func(tx Tx, run *Run, now Timestamp) (Result, error) {
		if !run.Running() {
			return refuse(tx, now, EntityRun, run.RunID, runState(run), string(OutcomeKilled), actor,
				"run already ended ("+string(run.Outcome)+")")
		}
		// Cancel approvals first, while the run is still running, so each
		// releases the wait it holds (docs/contract.md "The inactivity watchdog pauses for approvals", docs/contract.md "Approvals expire").
		pending, err := tx.ListApprovals(ApprovalFilter{Statuses: []ApprovalStatus{ApprovalPending}, RunID: run.RunID})
		if err != nil {
			return Result{}, fmt.Errorf("pending approvals of run %s: %w", run.RunID, err)
		}
		for i := range pending {
			a := &pending[i]
			if err := r.resolveApproval(tx, a, approvalDecision{to: ApprovalCancelled, reason: "run " + run.RunID + " killed", decidedBy: string(actor)}, actor, now, run); err != nil {
				return Result{}, err
			}
		}
		run.EndedAt = now
		run.Outcome = OutcomeKilled
		run.EndedReason = "subagent-killed"
		run.CleanupHandled = true
		run.SuppressAnnounceReason = "killed"
		run.CleanupAfter = now.Add(r.th.Retention)
		if err := tx.UpdateRun(run); err != nil {
			return Result{}, wrapWrite("run", run.RunID, err)
		}
		if err := journal(tx, now, EntityRun, run.RunID, runRunning, string(OutcomeKilled), actor, reason, true); err != nil {
			return Result{}, err
		}
		mirrored, err := tx.MirroredTasks(run.RunID)
		if err != nil {
			return Result{}, fmt.Errorf("mirrored tasks of run %s: %w", run.RunID, err)
		}
		for i := range mirrored {
			t := &mirrored[i]
			if t.DeliveryStatus == DeliveryNotApplicable {
				continue
			}
			from := "delivery_status=" + string(t.DeliveryStatus)
			t.DeliveryStatus = DeliveryNotApplicable
			if err := tx.UpdateTask(t); err != nil {
				return Result{}, wrapWrite("task", t.ID, err)
			}
			if err := journal(tx, now, EntityTask, t.ID, from, "delivery_status="+string(DeliveryNotApplicable), actor,
				"run "+run.RunID+" killed: killed runs never announce (status unchanged)", true); err != nil {
				return Result{}, err
			}
		}
		note := ""
		if len(pending) > 0 {
			note = plural(len(pending), "pending approval", "pending approvals") + " cancelled"
		}
		return applied(note), nil
	})
}

// GetRun returns a run by id or unique prefix with its event journal.
func (r *Registry) GetRun(ctx context.Context, id string) (*Run, []Event, error) {
	var (
		run *Run
		evs []Event
	)
	err := r.store.View(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntityRun, id, r.match)
		if err != nil {
			return err
		}
		if run, err = tx.GetRun(full); err != nil {
			return fmt.Errorf("run %s: %w", full, err)
		}
		evs, err = tx.Events(EntityRun, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return run, evs, nil
}

// ListRuns returns the runs matching f, newest first.
func (r *Registry) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	var out []Run
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListRuns(f)
		return err
	})
	return out, err
}

// summariseMoves groups status changes: ["lost → succeeded", "lost →
// succeeded", "running → succeeded"] is "2 tasks lost → succeeded, 1 task
// running → succeeded", groups in order of first appearance.
func summariseMoves(moves []string) string {
	var order []string
	n := map[string]int{}
	for _, m := range moves {
		if n[m] == 0 {
			order = append(order, m)
		}
		n[m]++
	}
	parts := make([]string, len(order))
	for i, m := range order {
		parts[i] = plural(n[m], "task", "tasks") + " " + m
	}
	return strings.Join(parts, ", ")
}
