package sweep

import (
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// Lost tasks (docs/contract.md "Lost work"), the third and fourth steps of a sweep. An active
// (queued or running) task is marked lost: early, skipping the grace window,
// when a run it mirrors has ended (error "subagent run ended (<outcome>)");
// otherwise when nothing backs it and its last activity is older than the
// grace window (error "backing session missing"). Backed = its run is
// registered and running, or it has a running job, or its session is
// active. A task that names no run, job or session is never inferred lost
// (audit reports it stale). A lost row already past its retention is pruned
// in the same sweep (R8).

// lost plans R5 over the active tasks.
func (b *swPlanner) lost(active []core.ActiveTaskRow) {
	now := b.p.Now
	for i := range active {
		row := &active[i]
		if b.handled[row.ID] {
			continue
		}
		rule, reason, endAt := b.s.classify(row, now, b)
		if rule == "" {
			continue
		}
		b.handled[row.ID] = true
		dep := b.add(Action{Rule: rule, Entity: core.EntityTask, ID: row.ID, From: string(row.Status), To: string(core.TaskLost),
			Reason: reason, rev: row.Rev, at: endAt})
		// R8: a row marked lost whose retention is already over goes in the
		// same sweep. ended_at is kept when set, else stamped endAt.
		end := row.EndedAt
		if end == 0 {
			end = endAt
		}
		if cleanup := end.Add(b.th.TaskRetention(core.TaskLost)); cleanup <= now {
			// Planned now, listed with the retention step (docs/contract.md "Maintenance" order),
			// so the sweep's prunes are one run Apply deletes in batches.
			b.pruned[core.EntityTask+"/"+row.ID] = true
			b.lostPrunes = append(b.lostPrunes, Action{Rule: RulePrune, Entity: core.EntityTask, ID: row.ID, From: string(core.TaskLost), To: "pruned",
				Reason: "lost, cleanup_after " + cleanup.String() + " already passed", rev: row.Rev + 1, dep: dep})
		}
	}
}

// classify decides R5 for one active task at now: RuleEarlyLost when a run it
// mirrors has ended, RuleGraceLost when nothing backs it and its last activity
// is older than the grace window, "" to keep it. endAt is the ended_at a lost
// task gets when it has none: when its run ended (early), or its last sign of
// life (grace). ov, when non-nil, is the plan's overlay of runs it ends and
// jobs it marks lost.
func (s *Sweeper) classify(row *core.ActiveTaskRow, now core.Timestamp, ov *swPlanner) (rule, reason string, endAt core.Timestamp) {
	run, src := row.Run, row.SourceRun
	jobActive := row.JobStatus.Active()
	if ov != nil {
		if o, ok := ov.endedRuns[row.RunID]; ok && run.Running() {
			run.EndedAt, run.Outcome = now, o
		}
		if o, ok := ov.endedRuns[row.SourceID]; ok && src.Running() {
			src.EndedAt, src.Outcome = now, o
		}
		if ov.lostJobs[row.SourceID] {
			jobActive = false
		}
	}
	floor := max(row.CreatedAt, row.StartedAt)
	for _, r := range []core.RunBacking{run, src} {
		if r.Exists && r.EndedAt != 0 {
			return RuleEarlyLost, "subagent run ended (" + string(r.Outcome) + ")", max(r.EndedAt, floor)
		}
	}
	backed := run.Running() || src.Running() || jobActive || row.Session == core.SessionActive
	if backed {
		return "", "", 0
	}
	// A task that names no run, no job and no session is never inferred
	// lost (docs/contract.md "Lost work"): nothing says it should be backed; audit reports it.
	hasRef := row.RunID != "" || src.Exists || row.JobStatus != "" || row.ChildSession != "" || row.OwnerSession != ""
	if !hasRef {
		return "", "", 0
	}
	if now.Sub(row.ActivityAt) <= s.reg.Thresholds().Grace {
		return "", "", 0
	}
	return RuleGraceLost, "backing session missing", max(row.ActivityAt, floor)
}

// taskLostRule is R5 in Apply and the report: early and grace lost both
// count as lost.
type taskLostRule struct{}

func (taskLostRule) count(c *Counts, _ *Action) { c.Lost++ }

// isLostRule reports whether rule is one of R5's (early or grace lost).
func isLostRule(rule string) bool { return rule == RuleEarlyLost || rule == RuleGraceLost }

// apply marks lost the run of planned lost actions from acts[i] on (up to
// maxRun), each when its task is unchanged since the plan (same revision)
// and the rule still says lost, by the same rule, with what backs it now.
// One query reads the run's tasks, one statement marks them: only status,
// error, ended_at (kept when set) and cleanup_after change
// (Tx.SweepMarkLost), plus a journal row each — what the registry's
// transition writes for lost, without rewriting whole rows. Marking a task
// lost changes no other task's row or backing, so the rows read at the
// start of the run are current for all of it.
//
// A task whose prune is planned too (R8: its retention is already over)
// and is still due is deleted instead, in one conditional statement
// (Tx.SweepDropLost), and both actions are decided here: the lost row and
// its journal would be written only for the prune to delete them, at about
// twice the cost.
func (taskLostRule) apply(s *Sweeper, b *applyTx, i int) (bool, error) {
	idx := b.run(i, func(a *Action) bool { return isLostRule(a.Rule) })
	ids := make([]string, len(idx))
	for j, k := range idx {
		ids[j] = b.acts[k].ID
	}
	rows, err := b.tx.SweepActiveTasksByID(ids)
	if err != nil {
		return false, err
	}
	byID := make(map[string]*core.ActiveTaskRow, len(rows))
	for k := range rows {
		byID[rows[k].ID] = &rows[k]
	}
	var (
		marks   []core.LostMark
		marked  []int // indexes into idx of the marks
		evs     []core.Event
		drops   []core.RowKey
		dropped []int // indexes into idx of the drops
	)
	for j, k := range idx {
		a := &b.acts[k]
		row := byID[a.ID]
		if row == nil || row.Rev != a.rev || !b.depApplied(a) {
			continue
		}
		if ok, _ := core.CanTransitionTask(row.Status, core.TaskLost, core.ActorSweeper); !ok {
			continue
		}
		rule, reason, endAt := s.classify(row, b.now, nil)
		if rule != a.Rule {
			continue // something backs it again, or its run ended meanwhile: next sweep decides
		}
		end := row.EndedAt
		if end == 0 {
			end = endAt
		}
		cleanup := end.Add(s.reg.Thresholds().TaskRetention(core.TaskLost))
		if p, ok := b.prunes[k]; ok && b.acts[p].Result == ActionPlanned && cleanup <= b.now {
			drops = append(drops, core.RowKey{ID: row.ID, Rev: row.Rev})
			dropped = append(dropped, j)
			continue
		}
		marks = append(marks, core.LostMark{ID: row.ID, Rev: row.Rev, Reason: reason, EndedAt: end, CleanupAfter: cleanup})
		marked = append(marked, j)
		evs = append(evs, core.Event{At: b.now, Entity: core.EntityTask, EntityID: row.ID, From: string(row.Status), To: string(core.TaskLost),
			Actor: core.ActorSweeper, Reason: reason, Applied: true})
	}
	applied := make([]bool, len(idx))
	if len(marks) > 0 {
		ok, err := b.tx.SweepMarkLost(marks)
		if err != nil {
			return false, err
		}
		var journal []core.Event
		for m, j := range marked {
			if ok[m] {
				applied[j] = true
				journal = append(journal, evs[m])
			}
		}
		if err := b.tx.AppendEvents(journal); err != nil {
			return false, fmt.Errorf("journal: %w", err)
		}
	}
	if len(drops) > 0 {
		ok, err := b.tx.SweepDropLost(drops)
		if err != nil {
			return false, err
		}
		for m, j := range dropped {
			if !ok[m] {
				continue
			}
			applied[j] = true
			// The prune is decided with its lost; a rollback of this
			// transaction plans both again.
			b.set(b.prunes[idx[j]], ActionApplied)
		}
	}
	b.decide(idx, applied)
	return b.acts[i].Result == ActionApplied, nil
}
