package openclaw

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// PreviewCounts are the four numbers `openclaw tasks maintenance` prints
// (maintenance.ts TaskRegistryMaintenanceSummary).
type PreviewCounts struct {
	Reconciled     int `json:"reconciled"`      // active tasks it would mark lost
	Recovered      int `json:"recovered"`       // durable cron recovery (not previewed: always 0, see README)
	CleanupStamped int `json:"cleanup_stamped"` // terminal tasks it would stamp cleanup_after on
	Pruned         int `json:"pruned"`          // terminal tasks it would delete
}

// Preview computes what `openclaw tasks maintenance --apply` would do,
// row for row, the way maintenance.ts previewTaskRegistryMaintenance decides
// it, and calls emit once per row in this order: tasks it would mark lost
// (rule grace_lost, oldest first), tasks it would prune (rule
// retention_prune, by cleanup_after), tasks it would stamp (rule
// retention_stamp). Each task gets at most one action, as in OpenClaw (a
// task marked lost is pruned by a later sweep). It reads one snapshot (one
// read transaction) through idx_task_runs_status and
// idx_task_runs_cleanup_after; it never writes. An error from emit stops
// the preview and is returned.
func (d *DB) Preview(ctx context.Context, o Options, emit func(core.Action) error) (PreviewCounts, error) {
	var c PreviewCounts
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		c, err = d.previewTx(ctx, tx, o, active, emit)
		return err
	})
	return c, err
}

// PreviewAndAudit is Preview then Audit over one snapshot (one read
// transaction), reading the active rows once: what `clawpit openclaw
// maintenance` prints.
func (d *DB) PreviewAndAudit(ctx context.Context, o Options, emit func(core.Action) error) (PreviewCounts, *AuditReport, error) {
	var c PreviewCounts
	var rep *AuditReport
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		if c, err = d.previewTx(ctx, tx, o, active, emit); err != nil {
			return err
		}
		rep, err = d.auditTx(ctx, tx, o, active)
		return err
	})
	return c, rep, err
}

func (d *DB) previewTx(ctx context.Context, tx *sql.Tx, o Options, active []Task, emit func(core.Action) error) (PreviewCounts, error) {
	var c PreviewCounts
	now, grace, ret := o.now(), o.grace(), o.retention()
	err := func() error {
		b := newBacking(d, tx)
		defer b.close()
		for i := range active {
			t := &active[i]
			if !b.shouldMarkLost(ctx, t, now, grace) {
				continue
			}
			c.Reconciled++
			if err := emit(core.Action{Rule: core.RuleGraceLost, Entity: core.EntityTask, ID: t.TaskID,
				From: t.Status, To: "lost", Reason: lostError(t), Result: core.ActionPlanned}); err != nil {
				return err
			}
		}
		// Prune: cleanup_after set and passed (shouldPruneTerminalTask).
		err := eachTask(ctx, tx, taskSelect+` WHERE cleanup_after <= ? AND status NOT IN ('queued','running') ORDER BY cleanup_after, task_id`,
			[]any{now}, func(t *Task) error {
				c.Pruned++
				return emit(core.Action{Rule: core.RulePrune, Entity: core.EntityTask, ID: t.TaskID, From: t.Status,
					To: "deleted", Reason: "cleanup_after " + msText(t.CleanupAfter.Int64) + " passed", Result: core.ActionPlanned})
			})
		if err != nil {
			return err
		}
		// No cleanup_after: prune when the terminal time is a retention ago,
		// else stamp terminalAt + retention (shouldPruneTerminalTask,
		// shouldStampCleanupAfter, resolveCleanupAfter).
		var stamps []core.Action
		err = eachTask(ctx, tx, taskSelect+` WHERE cleanup_after IS NULL AND status NOT IN ('queued','running') ORDER BY task_id`,
			nil, func(t *Task) error {
				at := t.TerminalAt()
				if now-at >= ret {
					c.Pruned++
					return emit(core.Action{Rule: core.RulePrune, Entity: core.EntityTask, ID: t.TaskID, From: t.Status,
						To: "deleted", Reason: "ended " + msText(at) + ", past retention, no cleanup_after", Result: core.ActionPlanned})
				}
				c.CleanupStamped++
				stamps = append(stamps, core.Action{Rule: core.RuleStamp, Entity: core.EntityTask, ID: t.TaskID, From: t.Status,
					To: t.Status, Reason: "cleanup_after = " + msText(at+ret), Result: core.ActionPlanned})
				return nil
			})
		if err != nil {
			return err
		}
		for _, a := range stamps {
			if err := emit(a); err != nil {
				return err
			}
		}
		return nil
	}()
	return c, err
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
