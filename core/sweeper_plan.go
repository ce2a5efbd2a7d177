package core

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// swPlanner accumulates one plan. The overlay (endedRuns, lostJobs, handled,
// pruned) is the state the plan is about to write, so a later rule sees the
// effect of an earlier one (SPEC §5 order): a run the watchdog ends no longer
// backs its tasks, a job about to be marked lost no longer backs a task, a
// task about to be marked lost and already past its retention is pruned in
// the same sweep (R8).
type swPlanner struct {
	s     *Sweeper
	p     *Plan
	th    Thresholds
	limit int

	endedRuns map[string]RunOutcome // runs the plan ends (watchdog)
	lostJobs  map[string]bool       // jobs the plan marks lost
	handled   map[string]bool       // task ids that already have a status action
	pruned    map[string]bool       // "<entity>/<id>" the plan prunes
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

// jobLostReasoner is the optional part of a JobLiveness that explains why a
// job counts as lost (*Jobs has it); the plan shows the reason.
type jobLostReasoner interface {
	JobLostReason(job *Job, now Timestamp) string
}

// plan builds a full sweep plan, or the watchdog step alone.
func (s *Sweeper) plan(ctx context.Context, watchdogOnly bool) (*Plan, error) {
	started := time.Now()
	p := &Plan{Now: s.now(), watchdogOnly: watchdogOnly}
	b := &swPlanner{
		s: s, p: p, th: s.reg.th, limit: s.maxPerRule(),
		endedRuns: map[string]RunOutcome{}, lostJobs: map[string]bool{},
		handled: map[string]bool{}, pruned: map[string]bool{},
	}
	// J8 first: LostJobs reads through the jobs front end, outside our snapshot.
	if !watchdogOnly && s.jobs != nil {
		lost, err := s.jobs.LostJobs(ctx)
		if err != nil {
			return nil, fmt.Errorf("sweep plan: job liveness: %w", err)
		}
		for i := range lost {
			j := lost[i]
			reason := "supervisor is gone"
			if jr, ok := s.jobs.(jobLostReasoner); ok {
				if why := jr.JobLostReason(&j, p.Now); why != "" {
					reason = why
				}
			}
			b.lostJobs[j.ID] = true
			b.add(Action{Rule: RuleJobLiveness, Entity: EntityJob, ID: j.ID, From: string(j.Status), To: string(JobLost),
				Reason: reason, rev: j.Rev, job: &j})
		}
	}
	err := s.reg.store.View(ctx, func(tx Tx) error {
		stx, err := sweepTx(tx)
		if err != nil {
			return err
		}
		if err := b.watchdog(tx, stx); err != nil {
			return fmt.Errorf("watchdog: %w", err)
		}
		if watchdogOnly {
			return nil
		}
		now := p.Now
		active, err := stx.SweepActiveTasks(ActiveTaskFilter{
			IdleBefore:    now.Add(-b.th.Grace),
			QueuedBefore:  now.Add(-b.th.StaleQueued),
			RunningBefore: now.Add(-b.th.StaleRunning),
		})
		if err != nil {
			return fmt.Errorf("active tasks: %w", err)
		}
		b.lost(active)
		if err := b.approvals(stx); err != nil {
			return fmt.Errorf("approval expiry: %w", err)
		}
		if err := b.silent(stx); err != nil {
			return fmt.Errorf("silent tasks: %w", err)
		}
		if err := b.retention(stx); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
		if err := b.audit(stx, active); err != nil {
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

// approvals plans R9.
func (b *swPlanner) approvals(stx SweepTx) error {
	exp, err := stx.SweepExpiredApprovals(b.p.Now, b.limit)
	if err != nil {
		return err
	}
	b.capped(len(exp))
	for _, a := range exp {
		b.add(Action{Rule: RuleApprovalExpiry, Entity: EntityApproval, ID: a.ID, From: string(a.Status), To: string(ApprovalExpired),
			Reason: "expires_at " + a.ExpiresAt.String() + " passed", rev: a.Rev})
	}
	return nil
}

// silentText is the task_silent notification text (SPEC R7).
func silentText(t *Task) string {
	return fmt.Sprintf("Scheduled task %s produced no output and was marked %s", taskName(t), t.Status)
}

// silent plans R7.
func (b *swPlanner) silent(stx SweepTx) error {
	ts, err := stx.SweepSilentTasks(b.p.Now.Add(-b.th.SilentWindow), b.limit)
	if err != nil {
		return err
	}
	b.capped(len(ts))
	for i := range ts {
		t := &ts[i]
		b.add(Action{Rule: RuleSilentTask, Entity: EntityTask, ID: t.ID, From: string(t.Status), To: string(t.Status),
			Reason: silentText(t), rev: t.Rev})
	}
	return nil
}

// retentionFor is how long a finished row of entity is kept after its end
// (SPEC R8). status matters for tasks only.
func (th Thresholds) retentionFor(entity, status string) time.Duration {
	switch entity {
	case EntityTask:
		return th.TaskRetention(TaskStatus(status))
	case EntityJob:
		return th.JobRetention
	}
	return th.Retention
}

// swRetentionEntities are the tables retention covers (SPEC R8), in the
// order they are stamped and pruned.
var swRetentionEntities = []string{EntityTask, EntityRun, EntityApproval, EntityNotification, EntityJob}

// retention plans R8: stamp cleanup_after where it is missing (and prune at
// once when that stamp is already past), then prune rows past cleanup_after.
func (b *swPlanner) retention(stx SweepTx) error {
	now := b.p.Now
	for _, ent := range swRetentionEntities {
		rows, err := stx.SweepUnstamped(ent, b.limit)
		if err != nil {
			return fmt.Errorf("unstamped %s rows: %w", ent, err)
		}
		b.capped(len(rows))
		for _, r := range rows {
			keep := b.th.retentionFor(ent, r.Status)
			cleanup := r.EndAt.Add(keep)
			dep := b.add(Action{Rule: RuleStamp, Entity: ent, ID: r.ID, From: "cleanup_after=none", To: "cleanup_after=" + cleanup.String(),
				Reason: fmt.Sprintf("%s, %s %s, kept %s", r.Status, endVerb(ent), r.EndAt, swDur(keep)), rev: r.Rev, at: cleanup})
			if cleanup <= now {
				rev := r.Rev
				if rev != 0 {
					rev++
				}
				b.pruned[ent+"/"+r.ID] = true
				b.add(Action{Rule: RulePrune, Entity: ent, ID: r.ID, From: r.Status, To: "pruned",
					Reason: "cleanup_after " + cleanup.String() + " passed", rev: rev, dep: dep, logPath: r.LogPath})
			}
		}
		due, err := stx.SweepDue(ent, now, b.limit)
		if err != nil {
			return fmt.Errorf("due %s rows: %w", ent, err)
		}
		b.capped(len(due))
		for _, r := range due {
			if b.pruned[ent+"/"+r.ID] {
				continue
			}
			b.pruned[ent+"/"+r.ID] = true
			b.add(Action{Rule: RulePrune, Entity: ent, ID: r.ID, From: r.Status, To: "pruned",
				Reason: "cleanup_after " + r.CleanupAfter.String() + " passed", rev: r.Rev, logPath: r.LogPath})
		}
	}
	return nil
}

// swDur prints a duration compactly: "5m", "24h", "7d", "1h30m".
func swDur(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	s := d.Round(time.Second).String()
	s = strings.TrimSuffix(s, "0s")
	s = strings.TrimSuffix(s, "0m")
	if s == "" {
		return "0s"
	}
	return s
}

// audit plans R10: findings are reported, never fixed. It describes the
// registry as the plan leaves it: a row the plan marks lost or prunes is not
// reported again.
func (b *swPlanner) audit(stx SweepTx, active []ActiveTaskRow) error {
	now := b.p.Now
	th := b.th
	for i := range active {
		row := &active[i]
		if b.handled[row.ID] {
			continue
		}
		switch row.Status {
		case TaskQueued:
			if age := now.Sub(row.ActivityAt); age >= th.StaleQueued {
				b.find(FindingStaleQueued, SeverityWarning, EntityTask, row.ID,
					fmt.Sprintf("queued for %s%s", swDur(age), backingNote(row)))
			}
		case TaskRunning:
			since := Coalesce(row.StartedAt, row.CreatedAt)
			age := now.Sub(since)
			runBacked := row.Run.Running() || row.SourceRun.Running() || (row.JobStatus.Active() && !b.lostJobs[row.SourceID])
			if age >= th.StaleRunning && !runBacked {
				b.find(FindingStaleRunning, SeverityWarning, EntityTask, row.ID,
					fmt.Sprintf("running for %s, not backed by a running run or job%s", swDur(age), backingNote(row)))
			}
		}
	}
	failed, err := stx.SweepDeliveryFailed(b.limit)
	if err != nil {
		return fmt.Errorf("delivery failures: %w", err)
	}
	for _, r := range failed {
		if b.pruned[EntityTask+"/"+r.ID] {
			continue
		}
		detail := "delivery failed"
		if r.Session != "" {
			detail = "delivery to session " + r.Session + " failed"
		}
		if r.Label != "" {
			detail = r.Label + ": " + detail
		}
		b.find(FindingDeliveryFailed, SeverityError, EntityTask, r.ID, detail)
	}
	for _, ent := range []string{EntityTask, EntityApproval, EntityJob} {
		rows, err := stx.SweepMissingEnd(ent, b.limit)
		if err != nil {
			return fmt.Errorf("missing cleanup %s rows: %w", ent, err)
		}
		for _, r := range rows {
			b.find(FindingMissingCleanup, SeverityWarning, ent, r.ID,
				fmt.Sprintf("%s %s has no %s: cleanup_after cannot be computed", r.Status, ent, endColumn(ent)))
		}
	}
	for _, ent := range []string{EntityTask, EntityRun, EntityApproval, EntityJob} {
		rows, err := stx.SweepInconsistent(ent, b.limit)
		if err != nil {
			return fmt.Errorf("inconsistent %s rows: %w", ent, err)
		}
		for _, r := range rows {
			if b.pruned[ent+"/"+r.ID] || (ent == EntityTask && b.handled[r.ID]) {
				continue
			}
			if detail := inconsistency(ent, r); detail != "" {
				b.find(FindingInconsistentTimestamps, SeverityError, ent, r.ID, detail)
			}
		}
	}
	return nil
}

// backingNote says what a stale task names as its backing, for the finding.
func backingNote(row *ActiveTaskRow) string {
	if row.RunID == "" && !row.SourceRun.Exists && row.JobStatus == "" && row.ChildSession == "" && row.OwnerSession == "" {
		return " (no run, job or session: never inferred lost)"
	}
	if row.Session == SessionActive {
		return " (its session is active)"
	}
	return ""
}

// endColumn names the end-time column of entity.
func endColumn(entity string) string {
	switch entity {
	case EntityApproval:
		return "decided_at"
	case EntityJob:
		return "completed_at"
	case EntityNotification:
		return "delivered_at"
	}
	return "ended_at"
}

// endVerb says what the end time of entity records.
func endVerb(entity string) string {
	switch entity {
	case EntityApproval:
		return "decided"
	case EntityJob:
		return "completed"
	case EntityNotification:
		return "delivered"
	}
	return "ended"
}

// createColumn names the other lifecycle columns of entity.
func createColumn(entity string) string {
	if entity == EntityApproval {
		return "requested_at"
	}
	return "created_at"
}

// inconsistency describes what is wrong with a row's timestamps (SPEC R10),
// or "" when nothing is.
func inconsistency(entity string, r TimesRow) string {
	var bad []string
	if r.Started != 0 && r.Created != 0 && r.Started < r.Created {
		bad = append(bad, "started_at before "+createColumn(entity))
	}
	if r.Ended != 0 {
		switch {
		case r.Started != 0 && r.Ended < r.Started:
			bad = append(bad, endColumn(entity)+" before started_at")
		case r.Created != 0 && r.Ended < r.Created:
			bad = append(bad, endColumn(entity)+" before "+createColumn(entity))
		}
		if swActive(entity, r.Status) {
			bad = append(bad, r.Status+" with "+endColumn(entity)+" set")
		}
	}
	return strings.Join(bad, "; ")
}

// swActive reports whether status is a live (not finished) status of entity.
func swActive(entity, status string) bool {
	switch entity {
	case EntityTask:
		return TaskStatus(status).Active()
	case EntityJob:
		return JobStatus(status).Active()
	case EntityApproval:
		return status == string(ApprovalPending)
	}
	return false
}
