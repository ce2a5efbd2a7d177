// Package p1data builds registries shaped for bench/README.md P1 (a sweep
// over a long history and a live active set), for bench/p1 and the
// sweeper's go test benchmarks.
//
// Every kind of row starts as one template written through the store's own
// statements (core.Tx's Insert methods, in one store.Update). The template
// is then replicated inside SQLite, INSERT … SELECT over a recursive CTE in
// one transaction, so a million-task registry builds in minutes
// (bench/README.md P1) instead of a million inserts through the store: the
// copy overrides only the columns that vary from row to row (ids, statuses,
// times, the ids other rows point at) and takes every other column from the
// template, by the table's own column list (PRAGMA table_info). A column a
// migration adds is therefore carried with the value the store writes,
// without a change here; an override naming a column the table no longer has
// fails the build.
package p1data

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// Shape is what Build generates.
type Shape struct {
	// Terminal is the number of terminal tasks (the history): 5 % each
	// failed, lost, cancelled and timed_out, 80 % succeeded (by the row's
	// number i: i % 20 = 0, 1, 2, 3, else). With them come ended runs (1 per
	// 4 tasks), one journal row per task, delivered notifications (1 per
	// 20), decided approvals (1 per 10) and finished jobs (1 per 50) — all
	// inside their retention window (nothing is due).
	Terminal int
	// Active is the number of queued (10 %) and running (90 %) tasks, all
	// backed: by a running run (60 %: 40 % subagent rows, 20 % cli peer
	// rows), an active session (30 %) or a running job (10 %, supervised
	// by process PID).
	Active int
	// Due is the number of extra running tasks with a missing session, idle
	// for two days: the next applied sweep marks them lost and prunes them
	// (docs/contract.md "Lost work" and "Retention") — work that exists in a
	// real registry.
	Due int
	// Now is the time the rows are relative to (default: time.Now()).
	Now time.Time
	// PID and PIDStart name a live process recorded as the supervisor of the
	// running jobs, so job liveness finds them alive. PID 0: none.
	PID      int
	PIDStart int64
}

// Sessions is the number of sessions Build writes (500 active, the rest
// closed), whatever the shape.
const Sessions = 2000

// Build creates the registry at path (which must not exist) with shape sh.
// Errors name the kind of row whose statement failed.
func Build(ctx context.Context, path string, sh Shape) error {
	if sh.Now.IsZero() {
		sh.Now = time.Now()
	}
	reps := replicas(sh)
	db, err := store.Open(ctx, path, store.Options{}) // schema and migrations
	if err != nil {
		return err
	}
	err = db.Update(ctx, func(tx core.Tx) error {
		for _, r := range reps {
			if r.count <= 0 {
				continue
			}
			if err := r.template(tx, templateID(r.what)); err != nil {
				return fmt.Errorf("p1data: %s: template: %w", r.what, err)
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1) // the temporary template tables live on one connection
	if _, err := raw.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return err
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	vals := strings.NewReplacer("@now", strconv.FormatInt(int64(core.TS(sh.Now)), 10),
		"@week", strconv.FormatInt(7*dayMs, 10))
	for _, r := range reps {
		if err := r.replicate(ctx, tx, vals); err != nil {
			return fmt.Errorf("p1data: %s: %w", r.what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// The copies went in behind the store: index them in the label order's
	// name index (one rebuild) before the checkpoint.
	db, err = store.Open(ctx, path, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	if err := db.FoldLabels(ctx); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	_, err = raw.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// templateID is the key of the template row of a kind of row; the template
// is deleted once copied.
func templateID(what string) string { return "p1data-template-" + strings.ReplaceAll(what, " ", "-") }

// replica is one kind of row: a template written through the store, copied
// count times.
type replica struct {
	what  string // "history tasks": names the template and errors
	table string
	key   string // the column holding the template's id
	count int    // rows numbered i = 1..count; 0: none, and no template
	// rows is the SELECT's source: "n" (the CTE n(i)), or a CTE over n
	// defined by with, optionally with a WHERE on it.
	rows, with string
	// set maps a column to the SQL giving each copy's value, over the
	// source's columns; @now and @week stand for Shape.Now (unix ms) and
	// a week in ms. Every other column is the template's.
	set      map[string]string
	template func(tx core.Tx, id string) error
}

// replicate copies r's template count times in tx: the template moves to a
// temporary table (an INSERT … SELECT from the table it inserts into would
// stage every copy in a temporary table first), then one INSERT … SELECT
// writes the copies.
func (r replica) replicate(ctx context.Context, tx *sql.Tx, vals *strings.Replacer) error {
	if r.count <= 0 {
		return nil
	}
	cols, err := columns(ctx, tx, r.table)
	if err != nil {
		return err
	}
	for c := range r.set {
		if !contains(cols, c) {
			return fmt.Errorf("table %s has no column %s", r.table, c)
		}
	}
	id := templateID(r.what)
	list := strings.Join(cols, ", ")
	steps := []struct {
		q    string
		args []any
	}{
		{"DROP TABLE IF EXISTS temp.p1tpl", nil},
		{"CREATE TEMP TABLE p1tpl AS SELECT " + list + " FROM " + r.table + " WHERE " + r.key + " = ?", []any{id}},
		{"DELETE FROM " + r.table + " WHERE " + r.key + " = ?", []any{id}},
	}
	for _, s := range steps {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM temp.p1tpl").Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("template %s: %d rows in %s, want 1", id, n, r.table)
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		if e, ok := r.set[c]; ok {
			exprs[i] = vals.Replace(e)
		} else {
			exprs[i] = "tpl." + c
		}
	}
	q := fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)", r.count)
	if r.with != "" {
		q += ", " + vals.Replace(r.with)
	}
	q += " INSERT INTO " + r.table + " (" + list + ") SELECT " + strings.Join(exprs, ", ") +
		" FROM temp.p1tpl AS tpl, " + r.rows
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, "DROP TABLE temp.p1tpl")
	return err
}

// columns returns table's stored columns in order; generated columns are
// not listed (PRAGMA table_info leaves them out), as an INSERT cannot set
// them.
func columns(ctx context.Context, tx *sql.Tx, table string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no table %s", table)
	}
	return cols, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

const (
	hourMs = int64(time.Hour / time.Millisecond)
	dayMs  = 24 * hourMs
)

// replicas are the kinds of row of shape sh, in the order they are built.
func replicas(sh Shape) []replica {
	now := core.TS(sh.Now)
	ago := func(ms int64) core.Timestamp { return now - core.Timestamp(ms) }
	// History: ages spread over six days (lost rows: 20 hours, inside their
	// 24-hour retention), so no row is due.
	age := "CASE WHEN i % 20 = 1 THEN (i * 7919) % (20 * 3600000) ELSE (i * 7919) % (6 * 86400000) END"
	taskID := "printf('00000000-0000-7000-8000-%012d', i)"
	return []replica{
		{what: "sessions", table: "sessions", key: "id", count: Sessions, rows: "n",
			set: map[string]string{"id": "'sess-' || i", "state": "CASE WHEN i <= 500 THEN 'active' ELSE 'closed' END"},
			template: func(tx core.Tx, id string) error {
				return tx.InsertSession(&core.Session{ID: id, State: core.SessionActive, CreatedAt: ago(7 * dayMs), LastActivityAt: now})
			}},
		{what: "history tasks", table: "tasks", key: "id", count: sh.Terminal, rows: "h",
			with: "h(i, ended) AS (SELECT i, @now - (" + age + ") FROM n)",
			set: map[string]string{
				"id":              taskID,
				"runtime":         "CASE i % 4 WHEN 0 THEN 'cli' WHEN 1 THEN 'cron' WHEN 2 THEN 'subagent' ELSE 'acp' END",
				"status":          "CASE i % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'lost' WHEN 2 THEN 'cancelled' WHEN 3 THEN 'timed_out' ELSE 'succeeded' END",
				"delivery_status": "CASE WHEN i <= 5 THEN 'failed' ELSE 'delivered' END",
				"run_id":          "CASE WHEN i % 4 = 2 THEN 'run-h-' || i END",
				"source_id":       "CASE WHEN i % 4 = 0 THEN 'run-h-' || (i + 2) END",
				"owner_session":   "'sess-' || (i % 2000 + 1)",
				"child_session":   "CASE WHEN i % 4 = 2 THEN 'child-h-' || i END",
				"label":           "'history task ' || i",
				"expects_output":  "CASE WHEN i % 4 = 1 THEN 1 ELSE 0 END",
				"output_count":    "1 + i % 3",
				"created_at":      "ended - 60000", "started_at": "ended - 59000", "last_event_at": "ended - 1000",
				"ended_at": "ended", "activity_at": "ended - 1000",
				"cleanup_after": "ended + CASE WHEN i % 20 = 1 THEN 86400000 ELSE @week END",
			},
			template: func(tx core.Tx, id string) error {
				return tx.InsertTask(&core.Task{ID: id, Runtime: core.RuntimeCLI, Kind: "work", Status: core.TaskSucceeded,
					DeliveryStatus: core.DeliveryDelivered, NotifyPolicy: core.NotifyDoneOnly,
					Task: "summarise the build log and open a ticket when it failed", OutputCount: 1,
					CreatedAt: ago(60000), StartedAt: ago(59000), LastEventAt: ago(1000), EndedAt: now, CleanupAfter: now})
			}},
		{what: "history runs", table: "runs", key: "run_id", count: sh.Terminal / 4, rows: "h",
			with: "h(i, ended) AS (SELECT 4 * i - 2, @now - (" + age + ") FROM n)",
			set: map[string]string{
				"run_id": "'run-h-' || i", "child_session": "'child-h-' || i", "requester_session": "'sess-' || (i % 2000 + 1)",
				"started_at": "ended - 60000", "last_progress_at": "ended - 1000", "ended_at": "ended",
				"outcome":       "CASE i % 3 WHEN 0 THEN 'ok' WHEN 1 THEN 'error' ELSE 'killed' END",
				"cleanup_after": "ended + @week",
			},
			template: func(tx core.Tx, id string) error {
				return tx.InsertRun(&core.Run{RunID: id, Label: "history run", StartedAt: ago(60000), LastProgressAt: ago(1000),
					InactivityBudgetMs: 60000, EndedAt: now, Outcome: core.OutcomeOK, EndedReason: "completed", CleanupAfter: now})
			}},
		{what: "history journal", table: "events", key: "entity_id", count: sh.Terminal, rows: "n",
			set: map[string]string{"id": "NULL", "at": "@now - (" + age + ")", "entity_id": taskID},
			template: func(tx core.Tx, id string) error {
				return tx.AppendEvent(core.Event{At: now, Entity: core.EntityTask, EntityID: id, From: string(core.TaskRunning),
					To: string(core.TaskSucceeded), Actor: core.ActorRuntime, Reason: "finished", Applied: true})
			}},
		{what: "history notifications", table: "notifications", key: "dedup_key", count: sh.Terminal / 20, rows: "h",
			with: "h(i, at) AS (SELECT i, @now - (i * 7919) % (6 * 86400000) FROM n)",
			set: map[string]string{
				"id": "NULL", "session": "'sess-' || (i % 2000 + 1)",
				"subject_id": "printf('00000000-0000-7000-8000-%012d', 20 * i)",
				"dedup_key":  "'task_failed:' || printf('00000000-0000-7000-8000-%012d', 20 * i)",
				"created_at": "at", "delivered_at": "at + 1000", "cleanup_after": "at + 1000 + @week",
			},
			template: func(tx core.Tx, id string) error {
				_, err := tx.InsertNotification(&core.Notification{Kind: core.NotifyTaskFailed, Text: "Task did not complete: error_max_turns",
					DedupKey: id, CreatedAt: now, DeliveredAt: now, CleanupAfter: now})
				return err
			}},
		{what: "history approvals", table: "approvals", key: "id", count: sh.Terminal / 10, rows: "h",
			with: "h(i, at) AS (SELECT i, @now - (i * 7919) % (6 * 86400000) FROM n)",
			set: map[string]string{
				"id": "printf('ap%010d', i)", "session": "'sess-' || (i % 2000 + 1)", "run_id": "'run-h-' || (4 * i - 2)",
				"status":       "CASE i % 5 WHEN 0 THEN 'denied' ELSE 'approved' END",
				"scope":        "CASE i % 5 WHEN 0 THEN '' ELSE 'once' END",
				"requested_at": "at - 5000", "decided_at": "at", "cleanup_after": "at + @week",
			},
			template: func(tx core.Tx, id string) error {
				return tx.InsertApproval(&core.Approval{ID: id, Session: "sess-1", Tool: "Bash", Command: "git push origin main",
					Pattern: "git push", Status: core.ApprovalApproved, Scope: core.ScopeOnce, DecidedBy: "op@host",
					RequestedAt: ago(5000), DecidedAt: now, CleanupAfter: now})
			}},
		{what: "history jobs", table: "jobs", key: "id", count: sh.Terminal / 50, rows: "h",
			with: "h(i, at) AS (SELECT i, @now - (i * 7919) % (20 * 3600000) FROM n)",
			set: map[string]string{
				"id": "printf('%012x', i)", "session": "'sess-' || (i % 2000 + 1)",
				"status":     "CASE i % 4 WHEN 0 THEN 'failed' ELSE 'completed' END",
				"exit_code":  "CASE i % 4 WHEN 0 THEN 2 ELSE 0 END",
				"created_at": "at - 60000", "started_at": "at - 59000", "completed_at": "at",
				"log_path":      "'/nonexistent/jobs/' || printf('%012x', i) || '/output.log'",
				"cleanup_after": "at + 86400000",
			},
			template: func(tx core.Tx, id string) error {
				exit := 0
				return tx.InsertJob(&core.Job{ID: id, Session: "sess-1", Command: []string{"make", "test"}, Status: core.JobCompleted,
					ExitCode: &exit, CreatedAt: ago(60000), StartedAt: ago(59000), CompletedAt: now, CleanupAfter: now})
			}},
		// The active set: the same rows at every history size.
		{what: "active runs", table: "runs", key: "run_id", count: sh.Active, rows: "n WHERE i % 10 IN (0, 1, 2, 3)",
			set: map[string]string{"run_id": "'run-a-' || i", "child_session": "'child-a-' || i", "requester_session": "'sess-' || (i % 500 + 1)"},
			template: func(tx core.Tx, id string) error {
				return tx.InsertRun(&core.Run{RunID: id, Label: "live run", StartedAt: ago(120000), LastProgressAt: now, InactivityBudgetMs: 3600000})
			}},
		{what: "active jobs", table: "jobs", key: "id", count: sh.Active, rows: "n WHERE i % 10 = 8",
			set: map[string]string{"id": "printf('a%011x', i)", "session": "'sess-' || (i % 500 + 1)",
				"log_path": "'/nonexistent/jobs/' || printf('a%011x', i) || '/output.log'"},
			template: func(tx core.Tx, id string) error {
				return tx.InsertJob(&core.Job{ID: id, Session: "sess-1", Command: []string{"npm", "run", "dev"}, Status: core.JobRunning,
					SupervisorPID: sh.PID, SupervisorStart: sh.PIDStart, CreatedAt: ago(60000), StartedAt: ago(59000)})
			}},
		{what: "active tasks", table: "tasks", key: "id", count: sh.Active, rows: "a",
			with: "a(i, created) AS (SELECT i, @now - (i * 7919) % 300000 FROM n)",
			set: map[string]string{
				"id":      "printf('a0000000-0000-7000-8000-%012d', i)",
				"runtime": "CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'subagent' WHEN i % 10 IN (4, 5, 8) THEN 'cli' WHEN i % 10 = 6 THEN 'cron' ELSE 'acp' END",
				"status":  "CASE WHEN i % 10 = 7 THEN 'queued' ELSE 'running' END",
				"run_id":  "CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'run-a-' || i END",
				"source_id": "CASE WHEN i % 10 = 4 THEN 'run-a-' || (i - 4) WHEN i % 10 = 5 THEN 'run-a-' || (i - 5)" +
					" WHEN i % 10 = 8 THEN printf('a%011x', i) END",
				"owner_session":  "'sess-' || (i % 500 + 1)",
				"child_session":  "CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'child-a-' || i END",
				"label":          "'live task ' || i",
				"expects_output": "CASE WHEN i % 10 = 6 THEN 1 ELSE 0 END",
				"created_at":     "created",
				"started_at":     "CASE WHEN i % 10 = 7 THEN NULL ELSE created + 1000 END",
				"last_event_at":  "CASE WHEN i % 10 = 7 THEN NULL ELSE created + 2000 END",
				"activity_at":    "CASE WHEN i % 10 = 7 THEN created ELSE created + 2000 END",
			},
			template: func(tx core.Tx, id string) error {
				return tx.InsertTask(&core.Task{ID: id, Runtime: core.RuntimeCLI, Kind: "work", Status: core.TaskRunning,
					DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "sess-1",
					Task: "keep the dev server up", CreatedAt: ago(2000), StartedAt: ago(1000), LastEventAt: now})
			}},
		{what: "due tasks", table: "tasks", key: "id", count: sh.Due, rows: "n",
			set: map[string]string{"id": "printf('d0000000-0000-7000-8000-%012d', i)", "owner_session": "'gone-' || i", "label": "'orphan ' || i"},
			template: func(tx core.Tx, id string) error {
				idle := ago(2 * dayMs)
				return tx.InsertTask(&core.Task{ID: id, Runtime: core.RuntimeCLI, Kind: "work", Status: core.TaskRunning,
					DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "gone-0",
					CreatedAt: idle, StartedAt: idle, LastEventAt: idle})
			}},
	}
}
