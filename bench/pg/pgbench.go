package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/termtext"
)

// The writers' baseline: PostgreSQL's own pgbench (a C client, no Go, no
// database/sql) sending the statements of one task write as clawpit sends
// them — five round trips: BEGIN with its SET LOCAL, the task's row, its
// update, its journal row, the notification with COMMIT — each client on
// its own task. Its statements go in the simple protocol (a compound
// statement cannot be an extended one), parsed and planned on every run
// as clawpit's unnamed statements are. What pgbench cannot do faster is the server's and the
// machine's, not clawpit's: its scaling from 1 to n clients is the ceiling
// this machine puts on clawpit's.

// pgbenchScript is one task write (store.Update of Registry.ProgressTask on
// PostgreSQL), the task 'w<client>'; "\;" joins statements into one round
// trip as clawpit's simple queries do.
const pgbenchScript = `\set k :client_id + 1
\set now 1700000000000 + random(0, 1000000)
BEGIN ISOLATION LEVEL REPEATABLE READ \; SET LOCAL lock_timeout = '5000ms';
SELECT ` + benchTaskCols + ` FROM tasks WHERE id = 'w' || :k;
UPDATE tasks SET runtime = runtime, kind = kind, status = status, delivery_status = delivery_status,
  notify_policy = notify_policy, run_id = run_id, source_id = source_id, owner_session = owner_session,
  child_session = child_session, parent_task_id = parent_task_id, label = label, task = task, error = error,
  result_subtype = result_subtype, progress_summary = 'step ' || :now, expects_output = expects_output,
  output_count = output_count, created_at = created_at, started_at = started_at, last_event_at = :now,
  ended_at = ended_at, cleanup_after = cleanup_after, activity_at = :now, rev = rev + 1 WHERE id = 'w' || :k;
INSERT INTO events (at, entity, entity_id, from_state, to_state, actor, reason, applied)
  VALUES (:now, 'task', 'w' || :k, 'running', 'running', 'runtime', 'progress: step', 1);
SELECT pg_notify('clawpit_bench', '') \; COMMIT;
`

const benchTaskCols = `id, runtime, kind, status, delivery_status, notify_policy, run_id, source_id,
 owner_session, child_session, parent_task_id, label, task, error, result_subtype, progress_summary,
 expects_output, output_count, created_at, started_at, last_event_at, ended_at, cleanup_after, rev`

// pgbenchPath finds pgbench on PATH or in PostgreSQL's versioned bin
// directories (Debian's layout); "" when there is none.
func pgbenchPath() string {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(m) > 0 {
		return m[len(m)-1]
	}
	return ""
}

var tpsRe = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchOnce runs pgbench with n clients for d on a fresh registry schema
// holding n running tasks 'w1'…'wn'; it returns transactions per second.
func pgbenchOnce(ctx context.Context, bin string, admin *sql.DB, base string, n int, d time.Duration) (float64, error) {
	schema := fmt.Sprintf("bench_b_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return 0, err
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	db, err := store.Open(ctx, withSearchPath(base, schema), store.Options{})
	if err != nil {
		return 0, err
	}
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	for i := range n {
		t, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: fmt.Sprintf("writer %d", i), Task: "bench"}, core.ActorRuntime)
		if err == nil {
			_, _, err = reg.StartTask(ctx, t.ID, "start", core.ActorRuntime)
		}
		if err == nil {
			_, err = admin.ExecContext(ctx, fmt.Sprintf("UPDATE %s.tasks SET id = 'w%d' WHERE id = '%s'", schema, i+1, t.ID))
		}
		if err != nil {
			db.Close()
			return 0, err
		}
	}
	db.Close()
	script := filepath.Join(os.TempDir(), schema+".sql")
	if err := os.WriteFile(script, []byte(pgbenchScript), 0o600); err != nil {
		return 0, err
	}
	defer os.Remove(script)
	cmd := exec.CommandContext(ctx, bin, "-n", "-M", "simple", "-f", script, "-T", strconv.Itoa(max(1, int(d.Seconds()))),
		"-c", strconv.Itoa(n), "-j", strconv.Itoa(min(n, 2)), base)
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := tpsRe.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// pgbenchCell is the baseline's cell: "2,345/s; 2.1× 1 client", or why
// there is none.
func pgbenchCell(tps, one float64) string {
	s := fmt.Sprintf("%s/s", termtext.Thousands(int64(tps)))
	if one > 0 {
		s += fmt.Sprintf("; %.1f× 1 client", tps/one)
	}
	return s
}
