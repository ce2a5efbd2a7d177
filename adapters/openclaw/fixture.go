package openclaw

import (
	"context"
	"database/sql"
	_ "embed" // the schema dump
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SchemaV18 is the schema OpenClaw 2026.9.6 created itself, dumped with
// `sqlite3 openclaw.sqlite .schema` (shared/openclaw/state-schema-v18.sql).
//
//go:embed schema/state-schema-v18.sql
var SchemaV18 string

// FixtureSpec says what WriteFixture puts in a fixture registry.
type FixtureSpec struct {
	Now time.Time // the clock every row's times are relative to
	// Shapes adds the hand-made rows of every status, runtime and failure
	// shape (ids "t-…", "r-…", "a-…"; see fixture.go) the golden tests
	// check.
	Shapes bool
	// Terminal adds this many terminal tasks (statuses rotating, one in a
	// hundred lost, ended in the last 6 days, cleanup_after stamped and not
	// due).
	Terminal int
	// Orphans adds this many running subagent tasks whose child session is
	// gone, idle an hour (maintenance marks them lost).
	Orphans int
	// WAL leaves the database in WAL journal mode, as OpenClaw does.
	WAL bool
}

// WriteFixture creates path (which must not exist) from SchemaV18 and fills
// it as spec says, with rows shaped as OpenClaw writes them
// (src/tasks/task-registry.store.sqlite.ts). Used by tests and bench.
func WriteFixture(ctx context.Context, path string, spec FixtureSpec) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("fixture %s: already exists", path)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, SchemaV18); err != nil {
		return fmt.Errorf("fixture schema: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	now := spec.Now.UnixMilli()
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_meta(meta_key, role, schema_version, app_version, created_at, updated_at)
		VALUES ('state','state',18,'2026.9.6',?,?)`, now, now); err != nil {
		return fmt.Errorf("fixture schema_meta: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO task_runs(task_id, runtime, task_kind, source_id, requester_session_key,
		owner_key, scope_kind, child_session_key, agent_id, run_id, label, task, status, delivery_status, notify_policy,
		created_at, started_at, ended_at, last_event_at, cleanup_after, error, progress_summary, terminal_summary,
		terminal_outcome, last_tool_name, parent_flow_id, detail_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	put := func(r fixtureTask) error {
		_, err := ins.ExecContext(ctx, r.id, r.runtime, nullStr(r.kind), nullStr(r.source), "agent:main:main",
			"agent:main:main", "session", nullStr(r.child), "main", nullStr(r.run), nullStr(r.label), r.task, r.status,
			r.delivery, r.notify, r.created, nullMs(r.started), nullMs(r.ended), nullMs(r.lastEvent), nullMs(r.cleanup),
			nullStr(r.err), nullStr(r.progress), nullStr(r.summary), nullStr(r.outcome), nullStr(r.tool), nullStr(r.flow), nullStr(r.detail))
		if err != nil {
			return fmt.Errorf("fixture task %s: %w", r.id, err)
		}
		return nil
	}
	if spec.Shapes {
		if err := writeShapes(ctx, tx, now, put); err != nil {
			return err
		}
	}
	for i := 0; i < spec.Terminal; i++ {
		if err := put(terminalTask(i, spec.Terminal, now)); err != nil {
			return err
		}
	}
	for i := 0; i < spec.Orphans; i++ {
		if err := put(orphanTask(i, now)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fixture commit: %w", err)
	}
	if spec.WAL {
		if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
			return fmt.Errorf("fixture wal: %w", err)
		}
	}
	if spec.Shapes {
		// The state directory is the parent of state/.
		stateDir := filepath.Dir(filepath.Dir(path))
		err := WriteAgentSessions(ctx, stateDir, "main", spec.Now, []string{"agent:main:subagent:live", "agent:main:subagent:killed", "agent:main:acp:alive"})
		if err != nil {
			return err
		}
	}
	return db.Close()
}

// terminalTask is the i-th of n ended tasks of a fixture written at now (Unix
// ms): statuses and runtimes in turn, ended over the last 6 days, newest
// first. Lost tasks are kept 24 h, so a registry holds about a day of them:
// one row in a hundred is lost, ended within the last ~17 h.
func terminalTask(i, n int, now int64) fixtureTask {
	statuses := [...]string{"succeeded", "succeeded", "succeeded", "failed", "timed_out", "cancelled"}
	runtimes := [...]string{"subagent", "cli", "cron", "acp"}
	const day = 24 * 60 * 60_000
	st := statuses[i%len(statuses)]
	if i%100 == 99 {
		st = "lost"
	}
	ended := now - 60_000 - int64(i)*(6*day/int64(max(n, 1)))
	ret := int64(RetentionMs)
	if st == "lost" {
		ret = LostRetentionMs
		ended = now - 60_000 - int64(i%1000)*60_000 // lost rows: the last ~16 h
	}
	r := fixtureTask{id: fmt.Sprintf("task-%08d", i), runtime: runtimes[i%len(runtimes)], kind: "agent",
		run: fmt.Sprintf("run-%08d", i), child: fmt.Sprintf("agent:main:subagent:%08d", i), label: fmt.Sprintf("job %d", i),
		task: "summarise the build log and report regressions", status: st, delivery: "delivered", notify: "done_only",
		created: ended - 120_000, started: ended - 110_000, ended: ended, lastEvent: ended, cleanup: ended + ret,
		summary: "done", outcome: st}
	if st == "lost" {
		r.err = "backing session missing"
	}
	return r
}

// orphanTask is the i-th orphan of a fixture written at now (Unix ms): a
// subagent task still running whose child session is gone, last heard of an
// hour ago.
func orphanTask(i int, now int64) fixtureTask {
	at := now - 60*60_000 - int64(i)
	return fixtureTask{id: fmt.Sprintf("orphan-%06d", i), runtime: "subagent", kind: "agent",
		run: fmt.Sprintf("orun-%06d", i), child: fmt.Sprintf("agent:main:subagent:gone-%06d", i), label: "orphan",
		task: "research task whose gateway restarted", status: "running", delivery: "pending", notify: "done_only",
		created: at - 60_000, started: at - 50_000, lastEvent: at, progress: "reading sources"}
}

// WriteAgentSessions creates the agent's session database with the
// session_nodes columns clawpit reads (session_key, entry_json; OpenClaw's
// own layout has more) and one entry per key. The differential test writes
// sessions through OpenClaw's own session store instead.
func WriteAgentSessions(ctx context.Context, stateDir, agent string, now time.Time, keys []string) error {
	p := AgentDBFile(stateDir, agent)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("fixture sessions: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+p+"?_journal_mode=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS session_nodes (session_key TEXT NOT NULL PRIMARY KEY,
		current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("fixture sessions: %w", err)
	}
	for _, k := range keys {
		sid := "sid-" + k
		if _, err := db.ExecContext(ctx, `INSERT INTO session_nodes VALUES (?,?,?,?)`, k, sid,
			fmt.Sprintf(`{"sessionId":%q,"updatedAt":%d}`, sid, now.UnixMilli()), now.UnixMilli()); err != nil {
			return fmt.Errorf("fixture session %s: %w", k, err)
		}
	}
	return db.Close()
}

type fixtureTask struct {
	id, runtime, kind, source, child, run, label, task, status, delivery, notify string
	created, started, ended, lastEvent, cleanup                                  int64
	err, progress, summary, outcome, tool                                        string
	flow, detail                                                                 string // parent_flow_id, detail_json
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullMs(ms int64) any {
	if ms == 0 {
		return nil
	}
	return ms
}

// writeShapes writes the hand-made rows. Times are minutes (m) and days (d)
// before now.
func writeShapes(ctx context.Context, tx *sql.Tx, now int64, put func(fixtureTask) error) error {
	m := func(n int64) int64 { return now - n*60_000 }
	d := func(n int64) int64 { return now - n*24*60*60_000 }
	live := "agent:main:subagent:live"
	rows := []fixtureTask{
		// Active.
		{id: "t-queued-fresh", runtime: "subagent", child: live, status: "queued", created: m(1)},
		{id: "t-queued-stale", runtime: "cli", child: live, status: "queued", created: m(20)},
		{id: "t-running-backed-stale", runtime: "subagent", run: "r-live", child: live, status: "running", created: m(50), started: m(49), lastEvent: m(45), progress: "step 3 of 5"},
		{id: "t-running-orphan", runtime: "subagent", run: "r-orphan", child: "agent:main:subagent:gone", status: "running", created: m(42), started: m(41), lastEvent: m(40)},
		{id: "t-running-grace", runtime: "subagent", child: "agent:main:subagent:gone2", status: "running", created: m(3), started: m(3), lastEvent: m(2)},
		// openclaw/openclaw#90444: a killed subagent run leaves its subagent
		// row and its same-run cli peer running, both with an error set, one
		// with ended_at before started_at; the child session still exists.
		{id: "t-90444-subagent", runtime: "subagent", run: "r-killed", child: "agent:main:subagent:killed", status: "running", created: m(15), started: m(14), lastEvent: m(12), progress: "compiling", err: "killed"},
		{id: "t-90444-cli", runtime: "cli", run: "r-killed", source: "r-killed", child: "agent:main:subagent:killed", status: "running", created: m(15), started: m(14), ended: m(15), lastEvent: m(12), err: "terminated"},
		// Stuck running that maintenance never clears (the family of
		// #61610, #79226, #78463; #92285 was not readable here): a cron task
		// (the CLI is never cron-authoritative) and an acp task whose session
		// still exists.
		{id: "t-cron-stuck", runtime: "cron", source: "nightly", run: "cron:nightly:1", status: "running", created: m(130), started: m(125), lastEvent: m(120)},
		{id: "t-acp-stuck", runtime: "acp", child: "agent:main:acp:alive", status: "running", created: m(200), started: m(199), lastEvent: m(180)},
		{id: "t-acp-missing", runtime: "acp", child: "agent:main:acp:gone", status: "running", created: m(11), started: m(11), lastEvent: m(10)},
		{id: "t-cli-group", runtime: "cli", child: "agent:main:telegram:group:42", status: "running", created: m(9), started: m(9), lastEvent: m(8)},
		{id: "t-active-ended", runtime: "subagent", child: live, status: "running", created: m(4), started: m(4), ended: m(1), lastEvent: m(1)},
		// A retained sessions_yield owner: stale_running with OpenClaw's
		// yield guidance instead of "appears stuck".
		{id: "t-yield-owner", runtime: "subagent", child: live, status: "running", created: m(70), started: m(69), lastEvent: m(35), tool: "sessions_yield"},
		// Terminal.
		{id: "t-succeeded-stamped", runtime: "subagent", status: "succeeded", created: d(1), started: d(1), ended: d(1), lastEvent: d(1), cleanup: d(1) + RetentionMs},
		{id: "t-succeeded-nocleanup", runtime: "subagent", status: "succeeded", created: d(1) - 1000, started: d(1) - 900, ended: d(1), lastEvent: d(1)},
		{id: "t-failed-old-nocleanup", runtime: "cli", status: "failed", created: d(8) - 1000, started: d(8) - 900, ended: d(8), err: "exit 1"},
		{id: "t-cancelled-due", runtime: "acp", status: "cancelled", created: d(8), ended: d(8), cleanup: m(60)},
		{id: "t-timed-out-delivery-failed", runtime: "subagent", status: "timed_out", delivery: "failed", created: d(2), started: d(2), ended: d(2), cleanup: d(2) + RetentionMs},
		{id: "t-failed-delivery-silent", runtime: "subagent", status: "failed", delivery: "failed", notify: "silent", created: d(2), ended: d(2), cleanup: d(2) + RetentionMs},
		{id: "t-lost-retained", runtime: "subagent", status: "lost", created: m(130), ended: m(120), lastEvent: m(120), cleanup: m(120) + LostRetentionMs, err: "backing session missing"},
		{id: "t-lost-expired", runtime: "subagent", status: "lost", created: m(1900), ended: m(1800), lastEvent: m(1800), cleanup: m(1800) + RetentionMs},
		{id: "t-lost-due", runtime: "cli", status: "lost", created: d(3), ended: d(3), lastEvent: d(3), cleanup: m(60), err: "backing session missing"},
		{id: "t-start-before-created", runtime: "subagent", status: "succeeded", created: d(1), started: d(1) - 5000, ended: d(1) + 1000, cleanup: d(1) + RetentionMs},
		{id: "t-end-before-start", runtime: "subagent", status: "failed", created: d(1), started: d(1) + 5000, ended: d(1) + 1000, cleanup: d(1) + RetentionMs},
		{id: "t-end-before-created", runtime: "cron", status: "succeeded", created: d(1), ended: d(1) - 5000, cleanup: d(1) + RetentionMs},
	}
	for _, r := range rows {
		if r.delivery == "" {
			r.delivery = "pending"
			if r.status != "queued" && r.status != "running" {
				r.delivery = "delivered"
			}
		}
		if r.notify == "" {
			r.notify = "done_only"
		}
		r.kind, r.label, r.task = "agent", r.id, "fixture "+r.id
		if err := put(r); err != nil {
			return err
		}
	}
	runs := []struct{ id, child, payload string }{
		{"r-live", live, fmt.Sprintf(`{"runId":"r-live","task":"refactor","label":"live","createdAt":%d,"startedAt":%d}`, m(50), m(49))},
		{"r-killed", "agent:main:subagent:killed", fmt.Sprintf(`{"runId":"r-killed","task":"compile","label":"killed","createdAt":%d,"startedAt":%d,"endedAt":%d,"outcome":{"status":"killed"},"endedReason":"subagent-killed","cleanupHandled":true,"suppressAnnounceReason":"killed"}`, m(15), m(14), m(10))},
		{"r-bad-times", "agent:main:subagent:bad", fmt.Sprintf(`{"runId":"r-bad-times","task":"x","createdAt":%d,"startedAt":%d,"endedAt":%d,"outcome":{"status":"ok"}}`, m(30), m(20), m(25))},
	}
	for _, r := range runs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO subagent_runs(run_id, child_session_key, requester_session_key, created_at, payload_json)
			VALUES (?,?,'agent:main:main',?,?)`, r.id, r.child, now, r.payload); err != nil {
			return fmt.Errorf("fixture run %s: %w", r.id, err)
		}
	}
	ref := func(c byte) string {
		b := make([]byte, 43)
		for i := range b {
			b[i] = c
		}
		return string(b)
	}
	aps := []struct {
		id, status, pres, decision, reason string
		created, expires                   int64
	}{
		{"a-pending", "pending", `{"commandText":"rm -rf build/"}`, "", "", m(2), now + 10*60_000},
		{"a-overdue", "pending", `{"command":["git","push","--force"]}`, "", "", m(40), m(5)},
		{"a-allowed", "allowed", `{"commandText":"npm test"}`, "allow-once", "user", m(90), m(60)},
	}
	for i, a := range aps {
		var resolved, kind any
		if a.status != "pending" {
			resolved, kind = a.created+1000, "device"
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO operator_approvals(approval_id, resolution_ref, kind, status, presentation_json,
			reviewer_device_ids_json, source_agent_id, source_session_key, source_run_id, source_tool_name, audience_session_keys_json,
			runtime_epoch, created_at_ms, expires_at_ms, updated_at_ms, decision, terminal_reason, resolved_at_ms, resolver_kind)
			VALUES (?,?,'exec',?,?,'[]','main','agent:main:main','r-live','exec','[]','epoch-1',?,?,?,?,?,?,?)`,
			a.id, ref(byte('a'+i)), a.status, a.pres, a.created, a.expires, max(a.created, now-1000), nullStr(a.decision), nullStr(a.reason), resolved, kind); err != nil {
			return fmt.Errorf("fixture approval %s: %w", a.id, err)
		}
	}
	return nil
}
