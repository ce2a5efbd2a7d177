package sweep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/core"
)

// applyTx is one write transaction of Apply: the plan's actions, the
// transaction and its clock. A rule may apply a run of actions at once —
// taskLostRule and pruneRule write up to maxRun rows per statement — by
// setting their Result in this transaction; Apply then skips them.
type applyTx struct {
	tx   core.Tx
	acts []Action
	end  int // this window's actions end before acts[end]
	now  core.Timestamp
	// prunes maps a planned lost (its index in acts) to the prune of the
	// same row planned after it (R8: already past its retention).
	prunes map[int]int
	// decided are the actions this transaction gave a result, in or after
	// its window (the prune of a row it deleted as lost): a rollback plans
	// exactly these again, and no action an earlier, committed transaction
	// decided.
	decided []int
}

// set gives acts[k] its result in this transaction.
func (b *applyTx) set(k int, result string) {
	b.acts[k].Result = result
	b.decided = append(b.decided, k)
}

// maxRun caps the actions a rule applies at once: the rows of one batched
// statement.
const maxRun = 500

// run returns the indexes of the planned actions from acts[i] on, up to
// maxRun, while same(k) holds, within this transaction's window.
func (b *applyTx) run(i int, same func(a *Action) bool) []int {
	var out []int
	for k := i; k < b.end && len(out) < maxRun && same(&b.acts[k]); k++ {
		if b.acts[k].Result == ActionPlanned {
			out = append(out, k)
		}
	}
	return out
}

// decide records the results of a run applied at once.
func (b *applyTx) decide(idx []int, applied []bool) {
	for j, k := range idx {
		if applied[j] {
			b.set(k, ActionApplied)
		} else {
			b.set(k, ActionRaced)
		}
	}
}

// depApplied reports whether a's prerequisite, if any, applied.
func (b *applyTx) depApplied(a *Action) bool {
	return a.dep == 0 || b.acts[a.dep-1].Result == ActionApplied
}

// apply executes p (see Apply). Actions run in plan order. Job liveness goes
// through JobLiveness (its own transaction, plus signals); every other action
// runs in a window of up to BatchSize actions, applied in write transactions
// of at most BatchTime each, so the write lock is held in short stretches and
// runtimes' writes interleave with a large apply (docs/contract.md "Maintenance", bench/README.md P1). A pruned
// job's log directory is deleted before its window's transactions start
// (docs/contract.md "Retention": a log that cannot be deleted keeps the row).
func (s *Sweeper) apply(ctx context.Context, p *Plan) (*Report, error) {
	started := time.Now()
	acts := append([]Action(nil), p.Actions...)
	findings := append([]Finding(nil), p.Findings...)
	prunes := map[int]int{}
	for k, a := range acts {
		if a.Rule == RulePrune && a.dep != 0 && isLostRule(acts[a.dep-1].Rule) {
			prunes[a.dep-1] = k
		}
	}
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
		next, err := s.applyWindow(ctx, acts, prunes, i, end)
		if err != nil {
			// Rolled back: that transaction's actions, and every later one,
			// stay planned.
			errs = append(errs, err)
			break
		}
		i = next
	}
	if err := s.touchHost(ctx, p); err != nil {
		errs = append(errs, fmt.Errorf("record this host's sweep: %w", err))
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
func (s *Sweeper) applyWindow(ctx context.Context, acts []Action, prunes map[int]int, from, end int) (int, error) {
	for from < end {
		next := from
		b := &applyTx{}
		err := s.reg.Store().Update(ctx, func(tx core.Tx) error {
			// The write lock is held from here (BEGIN IMMEDIATE) to commit.
			// fn runs again after a PostgreSQL serialization failure
			// (Store.Update): what the failed attempt decided is planned again.
			for _, k := range b.decided {
				acts[k].Result = ActionPlanned
			}
			t0 := time.Now()
			b = &applyTx{tx: tx, acts: acts, end: end, now: s.now(), prunes: prunes}
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
			for _, k := range b.decided {
				acts[k].Result = ActionPlanned
			}
			return from, err
		}
		from = next
	}
	return end, nil
}

// applyOne applies acts[i] inside b's transaction and records its result. An
// action whose prerequisite did not apply is raced; one already decided (in
// a run applied at once, or failed: its job log could not be deleted) is
// left as it is.
func (s *Sweeper) applyOne(b *applyTx, i int) error {
	a := &b.acts[i]
	if a.Result != ActionPlanned {
		return nil
	}
	ok := false
	if b.depApplied(a) {
		r := ruleOf(a.Rule)
		if r == nil {
			return fmt.Errorf("unknown sweep rule %q", a.Rule)
		}
		var err error
		if ok, err = r.apply(s, b, i); err != nil {
			return fmt.Errorf("%s %s %s: %w", a.Rule, a.Entity, a.ID, err)
		}
	}
	if ok {
		b.set(i, ActionApplied)
	} else {
		b.set(i, ActionRaced)
	}
	return nil
}
