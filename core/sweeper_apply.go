package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// applyTx is one write transaction of Apply: the plan's actions, the
// transaction and its clock, and the rows a rule read ahead for the actions
// after the current one (taskLostRule reads a run of lost re-checks in one
// query).
type applyTx struct {
	tx   Tx
	acts []Action
	end  int // this window's actions end before acts[end]
	now  Timestamp
	// active holds task rows read ahead by taskLostRule, by id: nil when
	// the task is missing or no longer active. Only ids in the map were read.
	active map[string]*ActiveTaskRow
}

// apply executes p (see Apply). Actions run in plan order. Job liveness goes
// through JobLiveness (its own transaction, plus signals); every other action
// runs in a window of up to BatchSize actions, applied in write transactions
// of at most BatchTime each, so the write lock is held in short stretches and
// runtimes' writes interleave with a large apply (SPEC §5, P1). A pruned
// job's log directory is deleted before its window's transactions start
// (SPEC R8: a log that cannot be deleted keeps the row).
func (s *Sweeper) apply(ctx context.Context, p *Plan) (*SweepReport, error) {
	started := time.Now()
	acts := append([]Action(nil), p.Actions...)
	findings := append([]Finding(nil), p.Findings...)
	var errs []error
	for i := 0; i < len(acts); {
		if acts[i].Rule == RuleJobLiveness {
			if err := s.applyJobLost(ctx, &acts[i]); err != nil {
				errs = append(errs, err)
			}
			i++
			continue
		}
		end := i + 1
		for end < len(acts) && end-i < s.batchSize() && acts[end].Rule != RuleJobLiveness {
			end++
		}
		findings = s.removeJobLogs(acts[i:end], findings)
		next, err := s.applyWindow(ctx, acts, i, end)
		if err != nil {
			// Rolled back: that transaction's actions, and every later one,
			// stay planned.
			errs = append(errs, err)
			break
		}
		i = next
	}
	rep := report(p, ModeApplied, acts, findings, p.planTime+time.Since(started))
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("sweep apply: %w", err)
	}
	return rep, nil
}

// applyWindow applies acts[from:end] in as many write transactions as
// BatchTime needs; it returns end, or the index of the first action of a
// transaction that failed (rolled back: its actions are planned again).
func (s *Sweeper) applyWindow(ctx context.Context, acts []Action, from, end int) (int, error) {
	for from < end {
		next := from
		err := s.reg.store.Update(ctx, func(tx Tx) error {
			// The write lock is held from here (BEGIN IMMEDIATE) to commit.
			t0 := time.Now()
			b := &applyTx{tx: tx, acts: acts, end: end, now: s.now()}
			for next = from; next < end; {
				i := next
				next++
				if err := s.applyOne(b, i); err != nil {
					return err
				}
				if time.Since(t0) >= s.batchTime() {
					break
				}
			}
			return nil
		})
		if err != nil {
			for i := from; i < next; i++ {
				if acts[i].Result != ActionFailed {
					acts[i].Result = ActionPlanned
				}
			}
			return from, err
		}
		from = next
	}
	return end, nil
}

// applyOne applies acts[i] inside b's transaction and records its result. An
// action whose prerequisite did not apply is raced; one already failed (its
// job log could not be deleted) is left as it is.
func (s *Sweeper) applyOne(b *applyTx, i int) error {
	a := &b.acts[i]
	if a.Result == ActionFailed {
		return nil
	}
	ok := false
	if a.dep == 0 || b.acts[a.dep-1].Result == ActionApplied {
		r := ruleOf(a.Rule)
		if r == nil {
			return fmt.Errorf("unknown sweep rule %q", a.Rule)
		}
		var err error
		if ok, err = r.apply(s, b, i); err != nil {
			return fmt.Errorf("%s %s %s: %w", a.Rule, a.Entity, a.ID, err)
		}
	}
	a.Result = ActionRaced
	if ok {
		a.Result = ActionApplied
	}
	return nil
}
