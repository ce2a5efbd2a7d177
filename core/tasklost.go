package core

// Lost tasks (SPEC R5), the third and fourth steps of a sweep. An active
// (queued or running) task is marked lost: early, skipping the grace window,
// when a run it mirrors has ended (error "subagent run ended (<outcome>)");
// otherwise when nothing backs it and its last activity is older than the
// grace window (error "backing session missing"). Backed = its run is
// registered and running, or it has a running job, or its session is
// active. A task that names no run, job or session is never inferred lost
// (audit reports it stale). A lost row already past its retention is pruned
// in the same sweep (R8).

// lost plans R5 over the active tasks.
func (b *swPlanner) lost(active []ActiveTaskRow) {
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
		dep := b.add(Action{Rule: rule, Entity: EntityTask, ID: row.ID, From: string(row.Status), To: string(TaskLost),
			Reason: reason, rev: row.Rev, at: endAt})
		// R8: a row marked lost whose retention is already over goes in the
		// same sweep. ended_at is kept when set, else stamped endAt.
		end := row.EndedAt
		if end == 0 {
			end = endAt
		}
		if cleanup := end.Add(b.th.TaskRetention(TaskLost)); cleanup <= now {
			b.pruned[EntityTask+"/"+row.ID] = true
			b.add(Action{Rule: RulePrune, Entity: EntityTask, ID: row.ID, From: string(TaskLost), To: "pruned",
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
func (s *Sweeper) classify(row *ActiveTaskRow, now Timestamp, ov *swPlanner) (rule, reason string, endAt Timestamp) {
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
	for _, r := range []RunBacking{run, src} {
		if r.Exists && r.EndedAt != 0 {
			return RuleEarlyLost, "subagent run ended (" + string(r.Outcome) + ")", max(r.EndedAt, floor)
		}
	}
	backed := run.Running() || src.Running() || jobActive || row.Session == SessionActive
	if backed {
		return "", "", 0
	}
	// A task that names no run, no job and no session is never inferred
	// lost (SPEC R5): nothing says it should be backed; audit reports it.
	hasRef := row.RunID != "" || src.Exists || row.JobStatus != "" || row.ChildSession != "" || row.OwnerSession != ""
	if !hasRef {
		return "", "", 0
	}
	if now.Sub(row.ActivityAt) <= s.reg.th.Grace {
		return "", "", 0
	}
	return RuleGraceLost, "backing session missing", max(row.ActivityAt, floor)
}

// taskLostRule is R5 in Apply and the report: early and grace lost both
// count as lost.
type taskLostRule struct{}

func (taskLostRule) count(c *SweepCounts, _ *Action) { c.Lost++ }

// apply marks a task lost when it is unchanged since the plan (same
// revision) and the rule still says lost, with the same rule, with what
// backs it now. Only status, error, ended_at (kept when set) and
// cleanup_after change (Tx.SweepMarkLost), plus the journal row — what the
// registry's transition would write for lost, without rewriting the row.
func (taskLostRule) apply(s *Sweeper, b *applyTx, i int) (bool, error) {
	a := &b.acts[i]
	row, err := b.activeRow(i)
	if err != nil || row == nil || row.Rev != a.rev {
		return false, err
	}
	if ok, _ := CanTransitionTask(row.Status, TaskLost, ActorSweeper); !ok {
		return false, nil
	}
	rule, reason, endAt := s.classify(row, b.now, nil)
	if rule != a.Rule {
		return false, nil // something backs it again, or its run ended meanwhile: next sweep decides
	}
	end := row.EndedAt
	if end == 0 {
		end = endAt
	}
	ok, err := b.tx.SweepMarkLost(row.ID, row.Rev, reason, end, end.Add(s.reg.th.TaskRetention(TaskLost)))
	if err != nil || !ok {
		return false, err
	}
	return true, journal(b.tx, b.now, EntityTask, row.ID, string(row.Status), string(TaskLost), ActorSweeper, reason, true)
}

// maxLostReadAhead caps the task rows one read-ahead query fetches.
const maxLostReadAhead = 500

// activeRow returns the task of acts[i] as it stands in this transaction
// (nil when missing or no longer active). On a miss it reads, in one query,
// the tasks of the run of actions from i on that only mark tasks lost or
// prune tasks — writes that change no other task's row or backing, so rows
// read now are still current when their action comes.
func (b *applyTx) activeRow(i int) (*ActiveTaskRow, error) {
	id := b.acts[i].ID
	if row, ok := b.active[id]; ok {
		delete(b.active, id) // its own write makes it stale
		return row, nil
	}
	var ids []string
	for k := i; k < b.end && len(ids) < maxLostReadAhead; k++ {
		a := &b.acts[k]
		if a.Rule == RuleEarlyLost || a.Rule == RuleGraceLost {
			ids = append(ids, a.ID)
		} else if a.Rule != RulePrune || a.Entity != EntityTask {
			break
		}
	}
	rows, err := b.tx.SweepActiveTasksByID(ids)
	if err != nil {
		return nil, err
	}
	b.active = make(map[string]*ActiveTaskRow, len(ids))
	for _, k := range ids {
		b.active[k] = nil
	}
	for k := range rows {
		b.active[rows[k].ID] = &rows[k]
	}
	row := b.active[id]
	delete(b.active, id)
	return row, nil
}
