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
	// room is how many more actions of a rule are listed (-1: all, which is
	// also SQLite's LIMIT -1).
	room := func(listed int) int {
		if o.MaxActions <= 0 {
			return -1
		}
		return max(0, o.MaxActions-listed)
	}
	b := newBacking(d, tx)
	defer b.close()
	for i := range active {
		t := &active[i]
		if !b.shouldMarkLost(ctx, t, now, grace) {
			continue
		}
		c.Reconciled++
		if room(c.Reconciled-1) == 0 {
			continue
		}
		if err := emit(core.Action{Rule: core.RuleGraceLost, Entity: core.EntityTask, ID: t.TaskID,
			From: t.Status, To: "lost", Reason: lostError(t), Result: core.ActionPlanned}); err != nil {
			return c, err
		}
	}
	const finished = ` status NOT IN ('queued','running')`
	// terminalAt is endedAt ?? lastEventAt ?? createdAt in SQL.
	const terminalAt = ` coalesce(ended_at, last_event_at, created_at)`
	// Prune: cleanup_after set and passed (shouldPruneTerminalTask), then no
	// cleanup_after and the terminal time a retention ago; stamp: no
	// cleanup_after and not yet (shouldStampCleanupAfter, resolveCleanupAfter).
	groups := []struct {
		rule, where string
		args        []any
		action      func(*Task) core.Action
	}{
		{core.RulePrune, ` WHERE cleanup_after <= ? AND` + finished, []any{now}, func(t *Task) core.Action {
			return core.Action{Rule: core.RulePrune, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: "deleted",
				Reason: "cleanup_after " + msText(t.CleanupAfter.Int64) + " passed", Result: core.ActionPlanned}
		}},
		{core.RulePrune, ` WHERE cleanup_after IS NULL AND` + finished + ` AND` + terminalAt + ` <= ?`, []any{now - ret}, func(t *Task) core.Action {
			return core.Action{Rule: core.RulePrune, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: "deleted",
				Reason: "ended " + msText(t.TerminalAt()) + ", past retention, no cleanup_after", Result: core.ActionPlanned}
		}},
		{core.RuleStamp, ` WHERE cleanup_after IS NULL AND` + finished + ` AND` + terminalAt + ` > ?`, []any{now - ret}, func(t *Task) core.Action {
			return core.Action{Rule: core.RuleStamp, Entity: core.EntityTask, ID: t.TaskID, From: t.Status, To: t.Status,
				Reason: "cleanup_after = " + msText(t.TerminalAt()+ret), Result: core.ActionPlanned}
		}},
	}
	listed := map[string]int{}
	for _, g := range groups {
		n := 0
		lim := room(listed[g.rule])
		err := eachTask(ctx, tx, taskSelect+g.where+` ORDER BY cleanup_after, task_id LIMIT ?`, append(g.args, lim), func(t *Task) error {
			n++
			return emit(g.action(t))
		})
		if err != nil {
			return c, err
		}
		listed[g.rule] += n
		if lim >= 0 {
			// Listing stopped at the limit: the total is an indexed count.
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM task_runs`+g.where, g.args...).Scan(&n); err != nil {
				return c, fmt.Errorf("openclaw task_runs: %w", err)
			}
		}
		if g.rule == core.RuleStamp {
			c.CleanupStamped += n
		} else {
			c.Pruned += n
		}
	}
	return c, nil
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
