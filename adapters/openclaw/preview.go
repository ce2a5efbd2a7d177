package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
)

// PreviewCounts are the numbers `openclaw tasks maintenance --json` prints
// (maintenance.tasks: reconciled, recovered, cleanupStamped, pruned;
// maintenance.taskFlows: reconciled, pruned).
type PreviewCounts struct {
	Reconciled     int `json:"reconciled"`      // active tasks it would mark lost
	Recovered      int `json:"recovered"`       // cron tasks it would recover from a finished row of the same run
	CleanupStamped int `json:"cleanup_stamped"` // terminal tasks it would stamp cleanup_after on
	Pruned         int `json:"pruned"`          // terminal tasks it would delete
	FlowReconciled int `json:"flow_reconciled"` // task flows it would repair or finish cancelling
	FlowPruned     int `json:"flow_pruned"`     // task flows it would delete
}

// Rules of OpenClaw's maintenance that clawpit's own sweep does not have
// (the others are sweep.RuleGraceLost, sweep.RulePrune, sweep.RuleStamp).
const (
	// RuleCronRecover: an active or lost cron task takes the status of an
	// earlier-created finished row of the same job and run.
	RuleCronRecover = "cron_recover"
	// RuleFlowReconcile: a task flow repaired (updatedAt back to endedAt)
	// or its requested cancel finished.
	RuleFlowReconcile = "flow_reconcile"
)

// EntityFlow is the entity of a task flow's actions and findings.
const EntityFlow = "flow"

// Preview computes what `openclaw tasks maintenance --apply` would do,
// row for row, the way OpenClaw 2026.9.6's previewTaskRegistryMaintenance
// and previewTaskFlowRegistryMaintenance decide it: each task gets at most
// one action, the first of cron recovery (RuleCronRecover), lost after its
// grace (sweep.RuleGraceLost), prune (sweep.RulePrune: past its effective
// cleanup time, or beyond the newest 2,000 finished rows of its cron job),
// cleanup stamp (sweep.RuleStamp); then each task flow at most one
// (RuleFlowReconcile or sweep.RulePrune, entity "flow"). It reads one
// snapshot (one read transaction) through OpenClaw's indexes; it never
// writes. An error from emit stops the preview and is returned.
func (d *DB) Preview(ctx context.Context, o Options, emit func(sweep.Action) error) (PreviewCounts, error) {
	var c PreviewCounts
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		b := newBacking(d, tx)
		defer b.close()
		c, err = d.previewTx(ctx, tx, o, active, emit, b)
		return err
	})
	return c, err
}

// PreviewAndAudit is Preview then Audit over one snapshot (one read
// transaction), reading the active rows once: what `clawpit openclaw
// maintenance` prints.
func (d *DB) PreviewAndAudit(ctx context.Context, o Options, emit func(sweep.Action) error) (PreviewCounts, *AuditReport, error) {
	var c PreviewCounts
	var rep *AuditReport
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		// One set of session lookups for both.
		b := newBacking(d, tx)
		defer b.close()
		if c, err = d.previewTx(ctx, tx, o, active, emit, b); err != nil {
			return err
		}
		rep, err = d.auditTx(ctx, tx, o, active, b)
		return err
	})
	return c, rep, err
}

// lister lists at most Options.MaxActions actions per rule (all when 0);
// the counts stay exact.
type lister struct {
	max    int
	listed map[string]int
	emit   func(sweep.Action) error
}

func (l *lister) add(a sweep.Action) error {
	if l.max > 0 && l.listed[a.Rule] >= l.max {
		return nil
	}
	l.listed[a.Rule]++
	return l.emit(a)
}

func (d *DB) previewTx(ctx context.Context, tx *sql.Tx, o Options, active []Task, emit func(sweep.Action) error, b *backing) (PreviewCounts, error) {
	var c PreviewCounts
	now, grace := o.now(), o.grace()
	l := &lister{max: o.MaxActions, listed: map[string]int{}, emit: emit}
	cr := newCronRecovery(tx)
	defer cr.close()
	for i := range active {
		t := &active[i]
		if row, ok, err := cr.find(ctx, t); err != nil {
			return c, err
		} else if ok {
			c.Recovered++
			if err := l.add(recoverAction(t, row)); err != nil {
				return c, err
			}
			continue
		}
		if !b.shouldMarkLost(ctx, t, now, grace) {
			continue
		}
		c.Reconciled++
		if err := l.add(sweep.Action{Rule: sweep.RuleGraceLost, Entity: core.EntityTask, ID: t.TaskID,
			From: t.Status, To: "lost", Reason: b.lostError(ctx, t), Result: sweep.ActionPlanned}); err != nil {
			return c, err
		}
	}
	overflow, err := cronOverflow(ctx, tx)
	if err != nil {
		return c, err
	}
	retire := func(t *Task) error {
		if row, ok, err := cr.find(ctx, t); err != nil {
			return err
		} else if ok {
			c.Recovered++
			return l.add(recoverAction(t, row))
		}
		_, over := overflow[t.TaskID]
		delete(overflow, t.TaskID)
		if eff := effectiveCleanup(t, o); over || now >= eff {
			c.Pruned++
			reason := "cleanup_after " + msText(eff) + " passed"
			if over {
				reason = "beyond the newest 2,000 finished runs of cron job " + t.SourceID
			} else if t.Status == "lost" && (!t.CleanupAfter.Valid || eff < t.CleanupAfter.Int64) {
				reason = "lost since " + msText(t.TerminalAt()) + ": kept 24 h at most, until " + msText(eff)
			} else if !t.CleanupAfter.Valid {
				reason = "ended " + msText(t.TerminalAt()) + ", past retention, no cleanup_after"
			}
			return l.add(sweep.Action{Rule: sweep.RulePrune, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: "deleted",
				Reason: reason, Result: sweep.ActionPlanned})
		}
		if t.CleanupAfter.Valid {
			return nil
		}
		c.CleanupStamped++
		return l.add(sweep.Action{Rule: sweep.RuleStamp, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: t.Status,
			Reason: "cleanup_after = " + msText(resolveCleanup(t, o)), Result: sweep.ActionPlanned})
	}
	// Terminal rows that can have an action: lost ones (idx_task_runs_status),
	// the rest when cleanup_after is due or absent (idx_task_runs_cleanup_after);
	// then the cron overflow not met on the way.
	// A lost row can only be due if its stored end (which normalizing never
	// lowers) is 24 h old, its cleanup_after has passed or is absent; a
	// cron one may be recovered.
	for _, q := range []struct {
		where string
		args  []any
	}{
		{` WHERE status = 'lost' AND ((runtime = 'cron' AND trim(coalesce(source_id, '')) != '') OR cleanup_after IS NULL OR cleanup_after <= ?
			OR coalesce(ended_at, last_event_at, created_at) <= ?) ORDER BY task_id`, []any{now, now - LostRetentionMs}},
		{` WHERE cleanup_after <= ? AND status NOT IN ('queued','running','lost') ORDER BY cleanup_after, task_id`, []any{now}},
		{` WHERE cleanup_after IS NULL AND status NOT IN ('queued','running','lost') ORDER BY task_id`, nil},
	} {
		if err := eachTask(ctx, tx, taskSelect+q.where, q.args, retire); err != nil {
			return c, err
		}
	}
	for _, id := range sortedKeys(overflow) {
		c.Pruned++
		t := overflow[id]
		if err := l.add(sweep.Action{Rule: sweep.RulePrune, Entity: core.EntityTask, ID: id, From: t.Status, To: "deleted",
			Reason: "beyond the newest 2,000 finished runs of cron job " + t.SourceID, Result: sweep.ActionPlanned}); err != nil {
			return c, err
		}
	}
	if err := d.previewFlows(ctx, tx, now, &c, l); err != nil {
		return c, err
	}
	return c, nil
}

func recoverAction(t *Task, row *Task) sweep.Action {
	return sweep.Action{Rule: RuleCronRecover, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: row.Status,
		Reason: "cron job " + strings.TrimSpace(t.SourceID) + " has finished row " + row.TaskID + " for this run (" + row.Status + ")",
		Result: sweep.ActionPlanned}
}

// retentionFor is task-retention.ts resolveTaskRetentionMs: 24 h for a lost
// task, else the retention (7 days unless Options say otherwise).
func retentionFor(status string, o Options) int64 {
	if status == "lost" {
		return LostRetentionMs
	}
	return o.retention()
}

// resolveCleanup is task-retention.ts resolveTaskCleanupAfter: the terminal
// time plus the status's retention.
func resolveCleanup(t *Task, o Options) int64 { return t.TerminalAt() + retentionFor(t.Status, o) }

// effectiveCleanup is task-retention.ts resolveEffectiveTaskCleanupAfter:
// cleanup_after when set (for a lost task no later than its terminal time +
// 24 h), else resolveCleanup.
func effectiveCleanup(t *Task, o Options) int64 {
	st := resolveCleanup(t, o)
	if !t.CleanupAfter.Valid {
		return st
	}
	if t.Status == "lost" {
		return min(t.CleanupAfter.Int64, st)
	}
	return t.CleanupAfter.Int64
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// msText prints epoch ms as clawpit prints timestamps (RFC 3339 UTC, ms).
func msText(ms int64) string { return core.Timestamp(ms).String() }

func queryTasks(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]Task, error) {
	var out []Task
	err := eachTask(ctx, tx, q, args, func(t *Task) error { out = append(out, *t); return nil })
	return out, err
}

// eachTask streams the rows of q (constant memory).
func eachTask(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(*Task) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("openclaw task_runs: %w", err)
	}
	defer rows.Close()
	var t Task
	for rows.Next() {
		if err := scanTask(rows, &t); err != nil {
			return fmt.Errorf("openclaw task_runs: %w", err)
		}
		if err := fn(&t); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("openclaw task_runs: %w", err)
	}
	return nil
}
