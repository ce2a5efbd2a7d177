package core

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// apply executes p (see Apply). Actions run in plan order, batched into write
// transactions of BatchSize; job liveness goes through JobLiveness (its own
// transaction, plus signals) between batches.
func (s *Sweeper) apply(ctx context.Context, p *Plan) (*SweepReport, error) {
	started := time.Now()
	acts := make([]Action, len(p.Actions))
	copy(acts, p.Actions)
	findings := append([]Finding(nil), p.Findings...)
	var batch []int
	var errs []error
	stopped := false // a batch failed: later actions stay planned

	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.reg.store.Update(ctx, func(tx Tx) error {
			stx, err := sweepTx(tx)
			if err != nil {
				return err
			}
			now := s.now()
			for _, i := range batch {
				ok, err := s.applyOne(tx, stx, acts, i, now)
				if err != nil {
					return fmt.Errorf("%s %s %s: %w", acts[i].Rule, acts[i].Entity, acts[i].ID, err)
				}
				acts[i].Result = ActionRaced
				if ok {
					acts[i].Result = ActionApplied
				}
			}
			return nil
		})
		if err != nil {
			// Rolled back: nothing of this batch happened.
			for _, i := range batch {
				acts[i].Result = ActionPlanned
			}
		}
		batch = batch[:0]
		return err
	}

loop:
	for i := range acts {
		a := &acts[i]
		switch {
		case a.Rule == RuleJobLiveness:
			if err := flush(); err != nil {
				errs = append(errs, err)
				stopped = true
				break loop
			}
			a.Result = ActionRaced
			if s.jobs == nil || a.job == nil {
				continue
			}
			ok, err := s.jobs.MarkJobLost(ctx, *a.job, a.Reason)
			if ok {
				a.Result = ActionApplied
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("job_liveness job %s: %w", a.ID, err))
				if !ok {
					a.Result = ActionPlanned
				}
			}
			continue
		case a.Rule == RulePrune && a.Entity == EntityJob && a.logPath != "":
			// The log goes first: a row whose log cannot be deleted is kept
			// for a later sweep (SPEC R8).
			if err := s.removeJobLog(a.ID, a.logPath); err != nil {
				a.Result = ActionFailed
				findings = append(findings, Finding{Kind: FindingPruneFailed, Severity: SeverityError, Entity: EntityJob, ID: a.ID,
					Detail: "log directory not deleted, row kept: " + err.Error()})
				continue
			}
		}
		batch = append(batch, i)
		if len(batch) >= s.batchSize() {
			if err := flush(); err != nil {
				errs = append(errs, err)
				stopped = true
				break loop
			}
		}
	}
	if !stopped {
		if err := flush(); err != nil {
			errs = append(errs, err)
		}
	}
	rep := s.report(p, "applied", acts, findings, p.planTime+time.Since(started))
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("sweep apply: %w", err)
	}
	return rep, nil
}

// removeJobLog deletes a pruned job's log: its directory <jobs>/<id>/ when
// the log lives in one named after the job, else just the log file.
func (s *Sweeper) removeJobLog(id, logPath string) error {
	dir := filepath.Dir(logPath)
	if filepath.Base(dir) == id {
		return s.removeAll(dir)
	}
	return s.removeAll(logPath)
}

// applyOne applies acts[i] inside tx; false when it raced. Every check is
// made again here, inside the write transaction, against the revision or
// status the action was planned under.
func (s *Sweeper) applyOne(tx Tx, stx SweepTx, acts []Action, i int, now Timestamp) (bool, error) {
	a := &acts[i]
	if a.dep > 0 && acts[a.dep-1].Result != ActionApplied {
		return false, nil
	}
	switch a.Rule {
	case RuleWatchdog:
		if a.Entity == EntityRun {
			return s.applyRunTimeout(tx, a, now)
		}
		return s.applyTaskTimeout(tx, a, now)
	case RuleEarlyLost, RuleGraceLost:
		return s.applyLost(tx, stx, a, now)
	case RuleApprovalExpiry:
		return s.applyExpiry(tx, a, now)
	case RuleSilentTask:
		return s.applySilent(tx, a, now)
	case RuleStamp:
		ok, err := stx.SweepStamp(a.Entity, a.ID, a.rev, a.at)
		if err != nil || !ok || a.Entity == EntityNotification {
			return ok, err // notifications keep no journal
		}
		return true, journal(tx, now, a.Entity, a.ID, a.From, a.To, ActorSweeper, "retention: "+a.Reason, true)
	case RulePrune:
		// The row's journal goes with it: nothing is written about a prune.
		return stx.SweepPrune(a.Entity, a.ID, a.rev, now)
	}
	return false, fmt.Errorf("unknown sweep rule %q", a.Rule)
}

// applyLost marks a task lost (SPEC R5) when it is unchanged since the plan
// (same revision) and the rule still says lost with what backs it now.
func (s *Sweeper) applyLost(tx Tx, stx SweepTx, a *Action, now Timestamp) (bool, error) {
	row, err := stx.SweepActiveTask(a.ID)
	if err != nil || row == nil || row.Rev != a.rev {
		return false, err
	}
	rule, reason, endAt := s.classify(row, now, nil)
	if rule != a.Rule {
		return false, nil // something backs it again, or its run ended meanwhile: next sweep decides
	}
	t, err := tx.GetTask(a.ID)
	if err != nil {
		return false, err
	}
	res, err := s.reg.setTaskStatus(tx, t, taskChange{to: TaskLost, reason: reason, edit: func(t *Task) {
		t.Error = reason
		if t.EndedAt == 0 {
			t.EndedAt = endAt
		}
	}}, ActorSweeper, now)
	return res.Applied, err
}

// applyExpiry expires a pending approval (SPEC R9) through the registry's
// rule, which releases its run's approval wait (R6) and notifies.
func (s *Sweeper) applyExpiry(tx Tx, a *Action, now Timestamp) (bool, error) {
	ap, err := tx.GetApproval(a.ID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if ap.Rev != a.rev || ap.Status != ApprovalPending || ap.ExpiresAt == 0 || now < ap.ExpiresAt {
		return false, nil
	}
	res, err := s.reg.expireApproval(tx, ap, now)
	return res.Applied, err
}

// applySilent raises the task_silent notification (SPEC R7) if the task still
// qualifies and nobody raised it first (dedup key "task_silent:<id>").
func (s *Sweeper) applySilent(tx Tx, a *Action, now Timestamp) (bool, error) {
	t, err := tx.GetTask(a.ID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !t.ExpectsOutput || t.OutputCount != 0 || (t.Status != TaskSucceeded && t.Status != TaskFailed) {
		return false, nil
	}
	text := silentText(t)
	ok, err := tx.InsertNotification(&Notification{
		Session: t.OwnerSession, Kind: NotifyTaskSilent, SubjectID: t.ID, Text: text,
		DedupKey: "task_silent:" + t.ID, CreatedAt: now,
	})
	if err != nil || !ok {
		return false, err
	}
	st := string(t.Status)
	return true, journal(tx, now, EntityTask, t.ID, st, st, ActorSweeper, "task_silent notification: "+text, true)
}
