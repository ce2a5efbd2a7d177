package sweep

import (
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// Audit (docs/contract.md "Audit"), the last step of a sweep: findings are reported, never
// fixed — stale_queued, stale_running, delivery_failed, missing_cleanup,
// inconsistent_timestamps (and prune_failed, raised by Apply when a job's
// log cannot be deleted). They are counted by severity, not by rule.

// audit plans R10: findings are reported, never fixed. It describes the
// registry as the plan leaves it: a row the plan marks lost or prunes is not
// reported again.
func (b *swPlanner) audit(tx core.Tx, active []core.ActiveTaskRow) error {
	now := b.p.Now
	th := b.th
	for i := range active {
		row := &active[i]
		if b.handled[row.ID] {
			continue
		}
		switch row.Status {
		case core.TaskQueued:
			if age := now.Sub(row.ActivityAt); age >= th.StaleQueued {
				b.find(FindingStaleQueued, SeverityWarning, core.EntityTask, row.ID,
					fmt.Sprintf("queued for %s%s", termtext.Duration(age), backingNote(row)))
			}
		case core.TaskRunning:
			since := core.Coalesce(row.StartedAt, row.CreatedAt)
			age := now.Sub(since)
			runBacked := row.Run.Running() || row.SourceRun.Running() || (row.JobStatus.Active() && !b.lostJobs[row.SourceID])
			if age >= th.StaleRunning && !runBacked {
				b.find(FindingStaleRunning, SeverityWarning, core.EntityTask, row.ID,
					fmt.Sprintf("running for %s, not backed by a running run or job%s", termtext.Duration(age), backingNote(row)))
			}
		}
	}
	failed, err := tx.SweepDeliveryFailed(b.limit)
	if err != nil {
		return fmt.Errorf("delivery failures: %w", err)
	}
	for _, r := range failed {
		if b.pruned[core.EntityTask+"/"+r.ID] {
			continue
		}
		detail := "delivery failed"
		if r.Session != "" {
			detail = "delivery to session " + r.Session + " failed"
		}
		if r.Label != "" {
			detail = r.Label + ": " + detail
		}
		b.find(FindingDeliveryFailed, SeverityError, core.EntityTask, r.ID, detail)
	}
	for _, ent := range []string{core.EntityTask, core.EntityApproval, core.EntityJob} {
		rows, err := tx.SweepMissingEnd(ent, b.limit)
		if err != nil {
			return fmt.Errorf("missing cleanup %s rows: %w", ent, err)
		}
		for _, r := range rows {
			b.find(FindingMissingCleanup, SeverityWarning, ent, r.ID,
				fmt.Sprintf("%s %s has no %s: cleanup_after cannot be computed", r.Status, ent, endColumn(ent)))
		}
	}
	for _, ent := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob} {
		rows, err := tx.SweepInconsistent(ent, b.limit)
		if err != nil {
			return fmt.Errorf("inconsistent %s rows: %w", ent, err)
		}
		for _, r := range rows {
			if b.pruned[ent+"/"+r.ID] || (ent == core.EntityTask && b.handled[r.ID]) {
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
func backingNote(row *core.ActiveTaskRow) string {
	if row.RunID == "" && !row.SourceRun.Exists && row.JobStatus == "" && row.ChildSession == "" && row.OwnerSession == "" {
		return " (no run, job or session: never inferred lost)"
	}
	if row.Session == core.SessionActive {
		return " (its session is active)"
	}
	return ""
}

// endColumn names the end-time column of entity.
func endColumn(entity string) string {
	switch entity {
	case core.EntityApproval:
		return "decided_at"
	case core.EntityJob:
		return "completed_at"
	case core.EntityNotification:
		return "delivered_at"
	}
	return "ended_at"
}

// endVerb says what the end time of entity records.
func endVerb(entity string) string {
	switch entity {
	case core.EntityApproval:
		return "decided"
	case core.EntityJob:
		return "completed"
	case core.EntityNotification:
		return "delivered"
	}
	return "ended"
}

// createColumn names the other lifecycle columns of entity.
func createColumn(entity string) string {
	if entity == core.EntityApproval {
		return "requested_at"
	}
	return "created_at"
}

// inconsistency describes what is wrong with a row's timestamps (docs/contract.md "Audit"),
// or "" when nothing is.
func inconsistency(entity string, r core.TimesRow) string {
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
	case core.EntityTask:
		return core.TaskStatus(status).Active()
	case core.EntityJob:
		return core.JobStatus(status).Active()
	case core.EntityApproval:
		return status == string(core.ApprovalPending)
	}
	return false
}
