// Package p1data builds registries shaped for bench/README.md P1 (a sweep over a long
// history and a live active set), for bench/p1 and the sweeper's go test
// benchmarks. Rows are generated inside SQLite (INSERT … SELECT over a
// recursive CTE) in one transaction, so a million-task registry builds in
// seconds.
package p1data

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// Shape is what Build generates.
type Shape struct {
	// Terminal is the number of terminal tasks (the history). With them come
	// ended runs (1 per 4 tasks), one journal row per task, delivered
	// notifications (1 per 20), decided approvals (1 per 10) and finished
	// jobs (1 per 50) — all inside their retention window (nothing is due).
	Terminal int
	// Active is the number of queued and running tasks, all backed: by a
	// running run (60 %: 40 % subagent rows, 20 % cli peer rows), an active
	// session (30 %) or a running job (10 %, supervised by process PID).
	Active int
	// Due is the number of extra active tasks with a missing session, idle
	// for two days: the next applied sweep marks them lost and prunes them
	// (R5, R8) — work that exists in a real registry.
	Due int
	// Now is the time the rows are relative to (default: time.Now()).
	Now time.Time
	// PID and PIDStart name a live process recorded as the supervisor of the
	// running jobs, so job liveness (J8) finds them alive. PID 0: none.
	PID      int
	PIDStart int64
}

// Build creates the registry at path (which must not exist) with shape sh.
func Build(ctx context.Context, path string, sh Shape) error {
	if sh.Now.IsZero() {
		sh.Now = time.Now()
	}
	db, err := store.Open(ctx, path, store.Options{}) // schema and migrations
	if err != nil {
		return err
	}
	db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return err
	}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, st := range statements(sh) {
		if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("p1data: %s: %w", st.what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// The rows went in behind the store: index them in the label order's
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

type stmt struct {
	what string
	q    string
	args []any
}

const (
	hourMs = int64(time.Hour / time.Millisecond)
	dayMs  = 24 * hourMs
)

func statements(sh Shape) []stmt {
	now := core.TS(sh.Now)
	n := int64(now)
	week := 7 * dayMs
	seq := func(count int) string {
		return fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) ", count)
	}
	// History: ages spread over six days (lost rows: 20 hours, inside their
	// 24-hour retention), so no row is due.
	age := "CASE WHEN i % 20 = 1 THEN (i * 7919) % (20 * 3600000) ELSE (i * 7919) % (6 * 86400000) END"
	return []stmt{
		{"sessions", seq(2000) + `INSERT INTO sessions (id, label, state, created_at, last_activity_at)
		 SELECT 'sess-' || i, '', CASE WHEN i <= 500 THEN 'active' ELSE 'closed' END, ? - 7 * 86400000, ? FROM n`,
			[]any{n, n}},
		{"history tasks", seq(sh.Terminal) + `, h(i, ended) AS (SELECT i, ? - (` + age + `) FROM n)
		 INSERT INTO tasks (id, runtime, kind, status, delivery_status, notify_policy, run_id, source_id, owner_session,
		   child_session, label, task, error, expects_output, output_count, created_at, started_at, last_event_at,
		   ended_at, cleanup_after, activity_at)
		 SELECT printf('00000000-0000-7000-8000-%012d', i),
		   CASE i % 4 WHEN 0 THEN 'cli' WHEN 1 THEN 'cron' WHEN 2 THEN 'subagent' ELSE 'acp' END, 'work',
		   CASE i % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'lost' WHEN 2 THEN 'cancelled' WHEN 3 THEN 'timed_out' ELSE 'succeeded' END,
		   CASE WHEN i <= 5 THEN 'failed' ELSE 'delivered' END, 'done_only',
		   CASE WHEN i % 4 = 2 THEN 'run-h-' || i END, CASE WHEN i % 4 = 0 THEN 'run-h-' || (i + 2) END,
		   'sess-' || (i % 2000 + 1), CASE WHEN i % 4 = 2 THEN 'child-h-' || i END,
		   'history task ' || i, 'summarise the build log and open a ticket when it failed', '',
		   CASE WHEN i % 4 = 1 THEN 1 ELSE 0 END, 1 + i % 3,
		   ended - 60000, ended - 59000, ended - 1000, ended,
		   ended + CASE WHEN i % 20 = 1 THEN 86400000 ELSE ? END, ended - 1000
		 FROM h`, []any{n, week}},
		{"history runs", seq(sh.Terminal/4) + `, h(i, ended) AS (SELECT 4 * i - 2, ? - (` + age + `) FROM n)
		 INSERT INTO runs (run_id, child_session, requester_session, label, started_at, last_progress_at,
		   inactivity_budget_ms, ended_at, outcome, ended_reason, cleanup_after)
		 SELECT 'run-h-' || i, 'child-h-' || i, 'sess-' || (i % 2000 + 1), 'history run', ended - 60000, ended - 1000,
		   60000, ended, CASE i % 3 WHEN 0 THEN 'ok' WHEN 1 THEN 'error' ELSE 'killed' END, 'completed', ended + ?
		 FROM h`, []any{n, week}},
		{"history journal", seq(sh.Terminal) + `INSERT INTO events (at, entity, entity_id, from_state, to_state, actor, reason, applied)
		 SELECT ? - (` + age + `), 'task', printf('00000000-0000-7000-8000-%012d', i), 'running', 'succeeded', 'runtime', 'finished', 1 FROM n`,
			[]any{n}},
		{"history notifications", seq(sh.Terminal/20) + `INSERT INTO notifications (session, kind, subject_id, text, dedup_key,
		   created_at, delivered_at, cleanup_after)
		 SELECT 'sess-' || (i % 2000 + 1), 'task_failed', printf('00000000-0000-7000-8000-%012d', 20 * i),
		   'Task did not complete: error_max_turns', 'task_failed:' || printf('00000000-0000-7000-8000-%012d', 20 * i),
		   ? - (i * 7919) % (6 * 86400000), ? - (i * 7919) % (6 * 86400000) + 1000, ? - (i * 7919) % (6 * 86400000) + 1000 + ?
		 FROM n`, []any{n, n, n, week}},
		{"history approvals", seq(sh.Terminal/10) + `INSERT INTO approvals (id, session, run_id, tool, command, pattern, status, scope,
		   decided_by, requested_at, decided_at, cleanup_after)
		 SELECT printf('ap%010d', i), 'sess-' || (i % 2000 + 1), 'run-h-' || (4 * i - 2), 'Bash', 'git push origin main', 'git push',
		   CASE i % 5 WHEN 0 THEN 'denied' ELSE 'approved' END, CASE i % 5 WHEN 0 THEN '' ELSE 'once' END, 'op@host',
		   ? - (i * 7919) % (6 * 86400000) - 5000, ? - (i * 7919) % (6 * 86400000), ? - (i * 7919) % (6 * 86400000) + ?
		 FROM n`, []any{n, n, n, week}},
		{"history jobs", seq(sh.Terminal/50) + `INSERT INTO jobs (id, session, command, status, exit_code, created_at, started_at,
		   completed_at, log_path, cleanup_after)
		 SELECT printf('%012x', i), 'sess-' || (i % 2000 + 1), '["make","test"]', CASE i % 4 WHEN 0 THEN 'failed' ELSE 'completed' END,
		   CASE i % 4 WHEN 0 THEN 2 ELSE 0 END, ? - (i * 7919) % (20 * 3600000) - 60000, ? - (i * 7919) % (20 * 3600000) - 59000,
		   ? - (i * 7919) % (20 * 3600000), '/nonexistent/jobs/' || printf('%012x', i) || '/output.log',
		   ? - (i * 7919) % (20 * 3600000) + 86400000
		 FROM n`, []any{n, n, n, n}},
		// The active set: the same rows at every history size.
		{"active runs", seq(sh.Active) + `INSERT INTO runs (run_id, child_session, requester_session, label, started_at,
		   last_progress_at, inactivity_budget_ms)
		 SELECT 'run-a-' || i, 'child-a-' || i, 'sess-' || (i % 500 + 1), 'live run', ? - 120000, ?, 3600000
		 FROM n WHERE i % 10 = 0 OR i % 10 IN (1, 2, 3)`, []any{n, n}},
		{"active jobs", seq(sh.Active) + `INSERT INTO jobs (id, session, command, status, pid, pgid, supervisor_pid,
		   supervisor_start, created_at, started_at, log_path)
		 SELECT printf('a%011x', i), 'sess-' || (i % 500 + 1), '["npm","run","dev"]', 'running', 0, 0, ?, ?, ? - 60000, ? - 59000,
		   '/nonexistent/jobs/' || printf('a%011x', i) || '/output.log'
		 FROM n WHERE i % 10 = 8`, []any{sh.PID, sh.PIDStart, n, n}},
		{"active tasks", seq(sh.Active) + `, a(i, created) AS (SELECT i, ? - (i * 7919) % 300000 FROM n)
		 INSERT INTO tasks (id, runtime, kind, status, delivery_status, notify_policy, run_id, source_id, owner_session,
		   child_session, label, task, expects_output, created_at, started_at, last_event_at, activity_at)
		 SELECT printf('a0000000-0000-7000-8000-%012d', i),
		   CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'subagent' WHEN i % 10 IN (4, 5, 8) THEN 'cli' WHEN i % 10 = 6 THEN 'cron' ELSE 'acp' END,
		   'work', CASE WHEN i % 10 = 7 THEN 'queued' ELSE 'running' END, 'pending', 'done_only',
		   CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'run-a-' || i END,
		   CASE WHEN i % 10 = 4 THEN 'run-a-' || (i - 4) WHEN i % 10 = 5 THEN 'run-a-' || (i - 5)
		        WHEN i % 10 = 8 THEN printf('a%011x', i) END,
		   'sess-' || (i % 500 + 1), CASE WHEN i % 10 IN (0, 1, 2, 3) THEN 'child-a-' || i END,
		   'live task ' || i, 'keep the dev server up', CASE WHEN i % 10 = 6 THEN 1 ELSE 0 END,
		   created, CASE WHEN i % 10 = 7 THEN NULL ELSE created + 1000 END,
		   CASE WHEN i % 10 = 7 THEN NULL ELSE created + 2000 END,
		   CASE WHEN i % 10 = 7 THEN created ELSE created + 2000 END
		 FROM a`, []any{n}},
		{"due tasks", seq(max(sh.Due, 1)) + `INSERT INTO tasks (id, runtime, kind, status, delivery_status, notify_policy,
		   owner_session, label, created_at, started_at, last_event_at, activity_at)
		 SELECT printf('d0000000-0000-7000-8000-%012d', i), 'cli', 'work', 'running', 'pending', 'done_only',
		   'gone-' || i, 'orphan ' || i, ? - 2 * 86400000, ? - 2 * 86400000, ? - 2 * 86400000, ? - 2 * 86400000
		 FROM n WHERE ? > 0`, []any{n, n, n, n, sh.Due}},
	}
}
