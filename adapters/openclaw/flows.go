package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/maintain/sweep"
)

// Task-flow thresholds: OpenClaw 2026.9.6 task-flow-registry.audit.ts
// DEFAULT_STALE_RUNNING_MS, DEFAULT_STALE_WAITING_MS,
// DEFAULT_STALE_BLOCKED_MS, DEFAULT_CANCEL_STUCK_MS, and
// task-flow-maintenance-policy.ts TASK_FLOW_RETENTION_MS.
const (
	FlowStaleMs       = 30 * 60_000
	FlowCancelStuckMs = 5 * 60_000
	FlowRetentionMs   = 7 * 24 * 60 * 60_000
)

// flowCodes are OpenClaw's eight task-flow audit codes
// (createEmptyTaskFlowAuditSummary). clawpit never reports restore_failed:
// it is OpenClaw failing to load its own flow rows.
var flowCodes = []string{"restore_failed", "stale_running", "stale_waiting", "stale_blocked", "cancel_stuck",
	"missing_linked_tasks", "blocked_task_missing", "inconsistent_timestamps"}

// Flow is one flow_runs row as OpenClaw's rules read it
// (task-registry.store.kernel.ts rowToFlowRecord).
type Flow struct {
	ID                string
	SyncMode          string // managed | task_mirrored
	Status            string // queued | running | waiting | blocked | succeeded | failed | cancelled | lost
	BlockedTaskID     string
	BlockedSummary    string
	HasWait           bool // wait_json holds a value
	CancelRequestedAt sql.NullInt64
	CreatedAt         int64
	UpdatedAt         int64
	EndedAt           sql.NullInt64
}

// linkedTask is a task whose parent_flow_id is the flow.
type linkedTask struct {
	ID, Runtime, Status, Error string
}

// pending is task-cancellation-state.ts isTaskFlowCancellationPending.
func (t linkedTask) pending() bool {
	return t.Status == "queued" || t.Status == "running" ||
		(t.Runtime == "subagent" && t.Status == "cancelled" && t.Error == "Subagent run killed.")
}

// terminal is task-flow-registry.types.ts isTerminalTaskFlow.
func (f *Flow) terminal() bool {
	switch f.Status {
	case "succeeded", "failed", "cancelled", "lost":
		return true
	case "blocked":
		return f.EndedAt.Valid
	}
	return false
}

const flowSelect = `SELECT flow_id, coalesce(sync_mode,''), coalesce(shape,''), status, coalesce(blocked_task_id,''),
 coalesce(blocked_summary,''), wait_json, cancel_requested_at, created_at, updated_at, ended_at FROM flow_runs`

// eachFlow streams every flow with its linked tasks
// (idx_task_runs_parent_flow_id).
func (d *DB) eachFlow(ctx context.Context, tx *sql.Tx, fn func(*Flow, []linkedTask) error) error {
	if !d.hasFlows {
		return nil
	}
	var flows []Flow
	rows, err := tx.QueryContext(ctx, flowSelect+` ORDER BY created_at, flow_id`)
	if err != nil {
		return fmt.Errorf("openclaw flow_runs: %w", err)
	}
	for rows.Next() {
		var f Flow
		var shape string
		var wait sql.NullString
		if err := rows.Scan(&f.ID, &f.SyncMode, &shape, &f.Status, &f.BlockedTaskID, &f.BlockedSummary, &wait,
			&f.CancelRequestedAt, &f.CreatedAt, &f.UpdatedAt, &f.EndedAt); err != nil {
			rows.Close()
			return fmt.Errorf("openclaw flow_runs: %w", err)
		}
		if f.SyncMode != "managed" && f.SyncMode != "task_mirrored" {
			f.SyncMode = "managed" // resolveFlowSyncMode
			if shape == "single_task" {
				f.SyncMode = "task_mirrored"
			}
		}
		w := strings.TrimSpace(wait.String)
		f.HasWait = wait.Valid && w != "" && w != "null"
		flows = append(flows, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("openclaw flow_runs: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `SELECT task_id, runtime, status, coalesce(error,'') FROM task_runs WHERE parent_flow_id = ?`)
	if err != nil {
		return fmt.Errorf("openclaw task_runs: %w", err)
	}
	defer st.Close()
	for i := range flows {
		var linked []linkedTask
		if key := strings.TrimSpace(flows[i].ID); key != "" {
			r, err := st.QueryContext(ctx, key)
			if err != nil {
				return fmt.Errorf("openclaw task_runs: %w", err)
			}
			for r.Next() {
				var t linkedTask
				if err := r.Scan(&t.ID, &t.Runtime, &t.Status, &t.Error); err != nil {
					r.Close()
					return fmt.Errorf("openclaw task_runs: %w", err)
				}
				linked = append(linked, t)
			}
			r.Close()
			if err := r.Err(); err != nil {
				return fmt.Errorf("openclaw task_runs: %w", err)
			}
		}
		if err := fn(&flows[i], linked); err != nil {
			return err
		}
	}
	return nil
}

// auditFlows is task-flow-registry.audit.ts listTaskFlowAuditFindings: the
// findings of every flow, in flow order, each flow's in the order of the
// checks below. now is in Unix milliseconds.
func (d *DB) auditFlows(ctx context.Context, tx *sql.Tx, now int64) ([]Finding, error) {
	var out []Finding
	err := d.eachFlow(ctx, tx, func(f *Flow, linked []linkedTask) error {
		a := flowAudit{f: f, linked: linked, now: now, age: max(0, now-f.UpdatedAt), out: out}
		a.stale()
		a.cancelStuck()
		a.missingLinkedTasks()
		a.blockedTaskMissing()
		a.timestamps()
		out = a.out
		return nil
	})
	return out, err
}

// flowAudit is the audit of one flow f with its linked tasks at now (Unix
// ms); age is how long since f last advanced, in ms (0 if updated in the
// future). Each check appends its findings to out.
type flowAudit struct {
	f      *Flow
	linked []linkedTask
	now    int64
	age    int64
	out    []Finding
}

// add appends a finding about the flow; ageMs is nil for a finding without an
// age (inconsistent timestamps).
func (a *flowAudit) add(code, sev, detail string, ageMs *int64) {
	f := a.f
	a.out = append(a.out, Finding{Code: code, Severity: sev, Source: "openclaw", Entity: EntityFlow, ID: f.ID,
		Status: f.Status, AgeMs: ageMs, Detail: detail, CreatedAt: f.CreatedAt})
}

// ageP returns a pointer to a copy of ms, for Finding.AgeMs.
func ageP(ms int64) *int64 { return &ms }

// stale: a running (error), waiting or blocked and not ended (warnings) flow
// that has not advanced for FlowStaleMs.
func (a *flowAudit) stale() {
	f := a.f
	if a.age < FlowStaleMs {
		return
	}
	switch {
	case f.Status == "running":
		a.add("stale_running", SevError, "running TaskFlow has not advanced recently", ageP(a.age))
	case f.Status == "waiting":
		a.add("stale_waiting", SevWarn, "waiting TaskFlow has not advanced recently", ageP(a.age))
	case f.Status == "blocked" && !f.EndedAt.Valid:
		a.add("stale_blocked", SevWarn, "blocked TaskFlow has not advanced recently", ageP(a.age))
	}
}

// cancelStuck: a flow whose cancel was requested FlowCancelStuckMs ago or
// more, still not cancelled, failed, succeeded or lost, with no pending
// linked task. Its age is counted from the request.
func (a *flowAudit) cancelStuck() {
	f := a.f
	if !f.CancelRequestedAt.Valid || a.now-f.CancelRequestedAt.Int64 < FlowCancelStuckMs {
		return
	}
	switch f.Status {
	case "cancelled", "failed", "succeeded", "lost":
		return
	}
	for _, t := range a.linked {
		if t.pending() {
			return
		}
	}
	a.add("cancel_stuck", SevWarn, "cancel-requested TaskFlow has no active child tasks but is still nonterminal",
		ageP(max(0, a.now-f.CancelRequestedAt.Int64)))
}

// missingLinkedTasks: a managed running, waiting or blocked flow, stale, with
// no linked task and nothing it waits on (a blocked task or summary, a wait);
// an error when running, else a warning.
func (a *flowAudit) missingLinkedTasks() {
	f := a.f
	if f.SyncMode != "managed" || a.age < FlowStaleMs || len(a.linked) != 0 {
		return
	}
	if f.Status != "running" && f.Status != "waiting" && f.Status != "blocked" {
		return
	}
	if strings.TrimSpace(f.BlockedTaskID) != "" || strings.TrimSpace(f.BlockedSummary) != "" || f.HasWait {
		return
	}
	sev := SevWarn
	if f.Status == "running" {
		sev = SevError
	}
	a.add("missing_linked_tasks", sev, "managed TaskFlow has no linked tasks or wait state", ageP(a.age))
}

// blockedTaskMissing: a flow not ended that is blocked on a task none of its
// linked tasks is.
func (a *flowAudit) blockedTaskMissing() {
	bt := strings.TrimSpace(a.f.BlockedTaskID)
	if a.f.EndedAt.Valid || bt == "" {
		return
	}
	for _, t := range a.linked {
		if t.ID == bt {
			return
		}
	}
	a.add("blocked_task_missing", SevWarn, "blocked TaskFlow points at missing task "+bt, ageP(a.age))
}

// timestamps: at most one inconsistent_timestamps finding, the first of
// updatedAt before createdAt, endedAt before createdAt, endedAt before
// updatedAt (an endedAt of 0 counts as none).
func (a *flowAudit) timestamps() {
	f := a.f
	ended := f.EndedAt.Valid && f.EndedAt.Int64 != 0
	switch {
	case f.UpdatedAt < f.CreatedAt:
		a.add("inconsistent_timestamps", SevWarn, "updatedAt is earlier than createdAt", nil)
	case ended && f.EndedAt.Int64 < f.CreatedAt:
		a.add("inconsistent_timestamps", SevWarn, "endedAt is earlier than createdAt", nil)
	case ended && f.EndedAt.Int64 < f.UpdatedAt:
		a.add("inconsistent_timestamps", SevWarn, "endedAt is earlier than updatedAt", nil)
	}
}

// previewFlows is maintenance.ts previewTaskFlowRegistryMaintenance over
// task-flow-maintenance-policy.ts resolveTaskFlowMaintenanceAction: repair
// a mirrored finished flow updated after it ended, finish a requested
// cancel with no pending linked task (both "reconcile"), prune a finished
// flow 7 days past its end with no pending linked task.
func (d *DB) previewFlows(ctx context.Context, tx *sql.Tx, now int64, c *PreviewCounts, l *lister) error {
	return d.eachFlow(ctx, tx, func(f *Flow, linked []linkedTask) error {
		pending := false
		for _, t := range linked {
			pending = pending || t.pending()
		}
		act := sweep.Action{Entity: EntityFlow, ID: f.ID, From: f.Status, Result: sweep.ActionPlanned}
		switch {
		case f.SyncMode == "task_mirrored" && f.terminal() && f.EndedAt.Valid && f.EndedAt.Int64 >= f.CreatedAt && f.UpdatedAt > f.EndedAt.Int64:
			act.Rule, act.To, act.Reason = RuleFlowReconcile, f.Status, "updated_at "+msText(f.UpdatedAt)+" after it ended: set back to ended_at "+msText(f.EndedAt.Int64)
			c.FlowReconciled++
		case f.SyncMode == "managed" && f.CancelRequestedAt.Valid && !f.terminal():
			if pending {
				return nil
			}
			act.Rule, act.To, act.Reason = RuleFlowReconcile, "cancelled", "cancel requested "+msText(f.CancelRequestedAt.Int64)+" and no linked task is still active"
			c.FlowReconciled++
		case f.terminal() && now-f.terminalAt() >= FlowRetentionMs && !pending:
			act.Rule, act.To, act.Reason = sweep.RulePrune, "deleted", "ended "+msText(f.terminalAt())+", past the 7-day flow retention"
			c.FlowPruned++
		default:
			return nil
		}
		return l.add(act)
	})
}

// terminalAt is endedAt ?? updatedAt.
func (f *Flow) terminalAt() int64 {
	if f.EndedAt.Valid {
		return f.EndedAt.Int64
	}
	return f.UpdatedAt
}
