package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Families are the fixture families of the differential test against the
// real OpenClaw: each is built around one set of OpenClaw 2026.9.6 rules
// (runtimes: hasBackingSession for cli, acp, cron; subagents: child
// sessions in the agent database, wedged sessions, registry-backed and
// harness-owned subagents; timestamps: normalizeTaskTimestamps; retention:
// lost and terminal retention; cron: history cap and recovery; flows:
// task-flow audit and maintenance).
var Families = []string{"runtimes", "subagents", "timestamps", "retention", "cron", "flows"}

// FixtureSession is a child session a family fixture expects in an
// agent's session database (the differential test writes them with
// OpenClaw's own session store API).
type FixtureSession struct {
	Agent, Key   string
	Wedged       bool
	WedgedReason string
}

// FixtureSessions are every session the families reference as present;
// any other child session key of theirs is missing.
var FixtureSessions = []FixtureSession{
	{Agent: "main", Key: "agent:main:subagent:live"},
	{Agent: "main", Key: "agent:main:subagent:wedged", Wedged: true, WedgedReason: "orphan recovery gave up after 3 attempts"},
	{Agent: "main", Key: "agent:main:subagent:wedged2", Wedged: true},
	{Agent: "main", Key: "agent:main:acp:alive"},
	{Agent: "ops", Key: "agent:ops:subagent:live"},
}

// FamilySpec says how WriteFamily writes a family.
type FamilySpec struct {
	Now   time.Time // every time is relative to it
	Scale int       // the family's rows repeated this many times (0: once)
	// Drift, when > 0, leaves out every row one of whose times crosses one
	// of OpenClaw's thresholds (due now, 5, 10 and 30 minutes, 24 hours,
	// 7 days of age) within Drift of Now: for a fixture OpenClaw takes
	// minutes to read, so both sides judge every row alike whatever the
	// minute each of them reads the clock.
	Drift time.Duration
}

// WriteFamily adds the rows of one family to the OpenClaw registry at
// dbPath (a database OpenClaw created), every time relative to spec.Now;
// ids stay unique and at most 10 characters, the width of OpenClaw's text
// audit. It returns the number of task rows.
func WriteFamily(ctx context.Context, dbPath, family string, spec FamilySpec) (int, error) {
	now, scale := spec.Now, spec.Scale
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=5000")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	w, err := newFamilyWriter(ctx, tx, now.UnixMilli())
	if err != nil {
		return 0, err
	}
	defer w.close()
	w.drift = spec.Drift.Milliseconds()
	gen, ok := familyRows[family]
	if !ok {
		return 0, fmt.Errorf("fixture: no family %q", family)
	}
	for rep := 0; rep < max(scale, 1); rep++ {
		if err := gen(w); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("fixture commit: %w", err)
	}
	return w.tasks, db.Close()
}

// familyWriter inserts rows with OpenClaw's column shapes; ids are a
// two-letter family prefix and a running number.
type familyWriter struct {
	ctx        context.Context
	now        int64
	task, flow *sql.Stmt
	seq        map[string]int
	tasks      int
	drift      int64 // ms; see FamilySpec.Drift
}

// thresholds are the ages (ms) at which an OpenClaw rule changes its mind.
var thresholds = []int64{0, 5 * 60_000, 10 * 60_000, 30 * 60_000, LostRetentionMs, RetentionMs}

// drifts reports whether one of the times (epoch ms; 0 is none) reaches a
// threshold age within the writer's drift.
func (w *familyWriter) drifts(times ...int64) bool {
	if w.drift <= 0 {
		return false
	}
	for _, ts := range times {
		if ts == 0 {
			continue
		}
		age := w.now - ts
		for _, th := range thresholds {
			if age < th && age+w.drift >= th {
				return true
			}
		}
	}
	return false
}

func newFamilyWriter(ctx context.Context, tx *sql.Tx, now int64) (*familyWriter, error) {
	task, err := tx.PrepareContext(ctx, `INSERT INTO task_runs(task_id, runtime, task_kind, source_id, requester_session_key,
		owner_key, scope_kind, child_session_key, agent_id, run_id, label, task, status, delivery_status, notify_policy,
		created_at, started_at, ended_at, last_event_at, cleanup_after, error, progress_summary, terminal_summary,
		terminal_outcome, last_tool_name, parent_flow_id, detail_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return nil, fmt.Errorf("fixture: %w", err)
	}
	flow, err := tx.PrepareContext(ctx, `INSERT INTO flow_runs(flow_id, shape, sync_mode, owner_key, revision, status, notify_policy,
		goal, blocked_task_id, blocked_summary, wait_json, cancel_requested_at, created_at, updated_at, ended_at)
		VALUES (?,?,?,?,0,?,'done_only',?,?,?,?,?,?,?,?)`)
	if err != nil {
		task.Close()
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return &familyWriter{ctx: ctx, now: now, task: task, flow: flow, seq: map[string]int{}}, nil
}

func (w *familyWriter) close() { w.task.Close(); w.flow.Close() }

// id is the next id with prefix p (at most 10 characters).
func (w *familyWriter) id(p string) string {
	w.seq[p]++
	return fmt.Sprintf("%s%d", p, w.seq[p])
}

func (w *familyWriter) m(n float64) int64 { return w.now - int64(n*60_000) }
func (w *familyWriter) h(n float64) int64 { return w.m(n * 60) }
func (w *familyWriter) d(n float64) int64 { return w.h(n * 24) }

// put inserts r with an id from prefix p and returns the id.
func (w *familyWriter) put(p string, r fixtureTask) (string, error) {
	if r.id == "" {
		r.id = w.id(p)
	}
	if w.drifts(r.created, r.started, r.ended, r.lastEvent, r.cleanup) {
		return r.id, nil
	}
	if r.delivery == "" {
		r.delivery = "pending"
		if r.status != "queued" && r.status != "running" {
			r.delivery = "delivered"
		}
	}
	if r.notify == "" {
		r.notify = "done_only"
	}
	if r.task == "" {
		r.task = "fixture task " + r.id
	}
	_, err := w.task.ExecContext(w.ctx, r.id, r.runtime, nullStr(r.kind), nullStr(r.source), "agent:main:main",
		"agent:main:main", "session", nullStr(r.child), "main", nullStr(r.run), nullStr(r.label), r.task, r.status,
		r.delivery, r.notify, r.created, nullMs(r.started), nullMs(r.ended), nullMs(r.lastEvent), nullMs(r.cleanup),
		nullStr(r.err), nullStr(r.progress), nullStr(r.summary), nullStr(r.outcome), nullStr(r.tool), nullStr(r.flow), nullStr(r.detail))
	if err != nil {
		return "", fmt.Errorf("fixture task %s: %w", r.id, err)
	}
	w.tasks++
	return r.id, nil
}

// puts inserts rows under prefix p.
func (w *familyWriter) puts(p string, rows ...fixtureTask) error {
	for _, r := range rows {
		if _, err := w.put(p, r); err != nil {
			return err
		}
	}
	return nil
}

// idle is an active row created c minutes ago whose last event was l
// minutes ago.
func (w *familyWriter) idle(runtime, status string, c, l float64) fixtureTask {
	return fixtureTask{runtime: runtime, status: status, created: w.m(c), started: w.m(c), lastEvent: w.m(l)}
}

// done is a finished row ended e minutes ago with cleanup_after at c
// minutes from now (0: none).
func (w *familyWriter) done(runtime, status string, e, c float64) fixtureTask {
	r := fixtureTask{runtime: runtime, status: status, created: w.m(e + 2), started: w.m(e + 1), ended: w.m(e), lastEvent: w.m(e)}
	if c != 0 {
		r.cleanup = w.m(-c)
	}
	return r
}

type familyGen func(*familyWriter) error

var familyRows = map[string]familyGen{
	"runtimes":   runtimesFamily,
	"subagents":  subagentsFamily,
	"timestamps": timestampsFamily,
	"retention":  retentionFamily,
	"cron":       cronFamily,
	"flows":      flowsFamily,
}

// with returns r changed by fn.
func with(r fixtureTask, fn func(*fixtureTask)) fixtureTask { fn(&r); return r }

// runtimesFamily: cli, acp and cron tasks are backed in the CLI process
// whatever their session or run identity; subagent controls are not.
func runtimesFamily(w *familyWriter) error {
	gone := func(p string) string { return "agent:main:subagent:gone-" + w.id(p) }
	var rows []fixtureTask
	for _, l := range []float64{8, 40} {
		rows = append(rows,
			with(w.idle("cli", "running", l+5, l), func(r *fixtureTask) { r.source, r.run = "clirun", "clirun" }),
			with(w.idle("cli", "running", l+5, l), func(r *fixtureTask) { r.child = "agent:main:telegram:group:42" }),
			with(w.idle("cli", "running", l+5, l), func(r *fixtureTask) { r.kind, r.source = "exec", "proc-1" }),
			with(w.idle("cli", "running", l+5, l), func(r *fixtureTask) { r.child = gone("rg") }),
			with(w.idle("acp", "running", l+5, l), func(r *fixtureTask) { r.child = gone("rg") }),
			with(w.idle("acp", "running", l+5, l), func(r *fixtureTask) { r.child = "agent:main:acp:alive" }),
			with(w.idle("acp", "running", l+5, l), func(r *fixtureTask) { r.kind = "context_engine_turn_maintenance" }),
			with(w.idle("cron", "running", l+5, l), func(r *fixtureTask) { r.source, r.run = "job-rt", "cron:rt:"+w.id("rr") }),
			with(w.idle("cron", "running", l+5, l), func(r *fixtureTask) {}),
			with(w.idle("subagent", "running", l+5, l), func(r *fixtureTask) { r.child = gone("rg") }),
		)
	}
	rows = append(rows,
		with(w.idle("cron", "queued", 15, 15), func(r *fixtureTask) { r.started, r.source = 0, "job-q" }),
		with(w.idle("cli", "queued", 4, 4), func(r *fixtureTask) { r.started, r.child = 0, gone("rg") }),
		with(w.idle("subagent", "running", 3, 2), func(r *fixtureTask) { r.child = gone("rg") }),
		w.done("cli", "succeeded", 60, 7*24*60),
		w.done("acp", "failed", 90, 7*24*60),
		w.done("cron", "cancelled", 120, 7*24*60),
	)
	return w.puts("rt", rows...)
}

// subagentsFamily: child sessions live in the agent database (present,
// missing, wedged, another agent), registry-backed subagents are backed,
// harness-owned ones are lost after 30 minutes.
func subagentsFamily(w *familyWriter) error {
	gone := func() string { return "agent:main:subagent:gone-" + w.id("sg") }
	const backing = `{"kind":"task_backing_instance","runtime":"subagent","generation":1}`
	var rows []fixtureTask
	for _, l := range []float64{2, 8, 40} {
		rows = append(rows,
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:main:subagent:live" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = gone() }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:main:subagent:wedged" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:main:subagent:wedged2" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:ops:subagent:live" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:ops:subagent:gone" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child = "agent:nobody:subagent:x" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child, r.err = gone(), "worker crashed" }),
			with(w.idle("subagent", "queued", l+3, l), func(r *fixtureTask) { r.started, r.child = 0, gone() }),
			// Registry-backed.
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child, r.run, r.detail = gone(), "sub-"+w.id("sr"), backing }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child, r.detail = gone(), backing }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) {
				r.child, r.detail = gone(), `{"kind":"task_backing_instance","runtime":"subagent","generation":0}`
			}),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.child, r.detail = "agent:main:subagent:wedged", backing }),
		)
	}
	// Harness-owned: no child session, a task kind; 30-minute grace.
	for _, l := range []float64{8, 20, 40, 90} {
		rows = append(rows,
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) { r.kind = "codex" }),
			with(w.idle("subagent", "running", l+3, l), func(r *fixtureTask) {}),
			with(w.idle("subagent", "queued", l+3, l), func(r *fixtureTask) { r.started, r.kind = 0, "claude" }),
		)
	}
	rows = append(rows,
		with(w.done("subagent", "succeeded", 30, 7*24*60), func(r *fixtureTask) { r.child = gone() }),
		with(w.done("subagent", "lost", 30, 24*60), func(r *fixtureTask) { r.child, r.err = gone(), "backing session missing" }),
	)
	return w.puts("sa", rows...)
}

// timestampsFamily: rows whose times disagree; OpenClaw normalizes them on
// load before any rule runs.
func timestampsFamily(w *familyWriter) error {
	live, missing := "agent:main:subagent:live", "agent:main:subagent:gone-ts"
	week := 7 * 24 * 60.0
	rows := []fixtureTask{
		// Finished rows, cleanup set.
		{runtime: "subagent", status: "succeeded", created: w.h(5), started: w.h(6), ended: w.h(4), lastEvent: w.h(4), cleanup: w.m(-week)},
		{runtime: "subagent", status: "failed", created: w.h(5), started: w.h(3), ended: w.h(4), lastEvent: w.h(4), cleanup: w.m(-week)},
		{runtime: "cron", status: "succeeded", created: w.h(5), ended: w.h(6), cleanup: w.m(-week)},
		{runtime: "cli", status: "cancelled", created: w.h(5), lastEvent: w.h(7), cleanup: w.m(-week)},
		{runtime: "acp", status: "timed_out", created: w.h(5), cleanup: w.m(-week)},
		// Finished rows without cleanup_after: stamp or prune from the
		// normalized end.
		{runtime: "subagent", status: "succeeded", created: w.d(8), lastEvent: w.d(6)},
		{runtime: "subagent", status: "succeeded", created: w.d(6), started: w.d(9), ended: w.d(8)},
		{runtime: "cli", status: "failed", created: w.d(8), ended: w.d(9), lastEvent: w.d(5)},
		{runtime: "subagent", status: "lost", created: w.h(30), lastEvent: w.h(20), err: "backing session missing"},
		{runtime: "subagent", status: "lost", created: w.h(20), started: w.h(30), ended: w.h(26), err: "backing session missing"},
		// Active rows.
		{runtime: "subagent", status: "running", child: live, created: w.m(4), started: w.m(4), ended: w.m(1), lastEvent: w.m(1)},
		{runtime: "subagent", status: "running", child: live, created: w.m(2), started: w.m(3), lastEvent: w.m(40)},
		{runtime: "subagent", status: "running", child: missing, created: w.m(2), lastEvent: w.m(40)},
		{runtime: "subagent", status: "running", child: missing, created: w.m(2), started: w.m(1), lastEvent: w.m(40)},
		{runtime: "subagent", status: "running", child: missing, created: w.m(50), started: w.m(45), ended: w.d(2), lastEvent: w.m(44)},
		{runtime: "subagent", status: "running", child: missing, created: w.m(50), started: w.m(45), ended: w.m(70), lastEvent: w.m(44)},
		{runtime: "subagent", status: "queued", child: live, created: w.m(3), lastEvent: w.m(20)},
		{runtime: "cli", status: "running", created: w.m(3), started: w.m(50), lastEvent: w.m(45)},
		{runtime: "cron", status: "queued", source: "job-ts", created: w.m(30), ended: w.m(20)},
	}
	return w.puts("ts", rows...)
}

// retentionFamily: lost rows are pruned at min(cleanup_after, end + 24 h),
// the rest at cleanup_after, or 24 h / 7 days after their end when none.
func retentionFamily(w *familyWriter) error {
	week, day := 7*24*60.0, 24*60.0
	lost := func(e, c float64, err string) fixtureTask {
		r := w.done("subagent", "lost", e, c)
		r.err = err
		return r
	}
	rows := []fixtureTask{
		lost(30*60, week, "backing session missing"),
		lost(10*60, week, "backing session missing"),
		lost(20*60, day, ""),
		lost(3*day, -60, "backing session missing"),
		lost(30*60, 0, "backing session missing"),
		lost(2*60, 0, ""),
		lost(23*60+50, 60, "worker crashed"),
		w.done("cli", "lost", 25*60, 3*day),
		w.done("subagent", "succeeded", 8*day, 0),
		w.done("subagent", "succeeded", 6*day, 0),
		w.done("cron", "failed", 30, 0),
		w.done("acp", "cancelled", 9*day, -30),
		w.done("acp", "cancelled", 9*day, 30),
		w.done("subagent", "timed_out", 2*day, week),
		with(w.done("subagent", "failed", 60, week), func(r *fixtureTask) { r.delivery = "failed" }),
		with(w.done("subagent", "failed", 60, week), func(r *fixtureTask) { r.delivery, r.notify = "failed", "silent" }),
		with(w.done("subagent", "succeeded", 60, 0), func(r *fixtureTask) { r.delivery = "failed" }),
		with(w.done("cli", "succeeded", 8*day, 0), func(r *fixtureTask) { r.delivery = "failed" }),
	}
	return w.puts("rn", rows...)
}

// cronFamily: the newest 2,000 finished rows per job and partition are
// kept; an active or lost cron task takes the status of an earlier-created
// finished row of the same run.
func cronFamily(w *familyWriter) error {
	week := 7 * 24 * 60.0
	job := "job-" + w.id("cj")
	var rows []fixtureTask
	// 2,040 run records (the oldest 40 overflow), 30 other rows, lost and
	// active rows of the same job (never counted).
	for i := 0; i < 2040; i++ {
		r := w.done("cron", []string{"succeeded", "failed", "timed_out", "cancelled"}[i%4], 60+float64(i)*2, week)
		r.source, r.run = job, fmt.Sprintf("%s:h%d", job, i)
		r.detail = `{"kind":"cron-run","storeKey":"default"}`
		if i == 7 {
			r.created, r.started, r.ended, r.lastEvent = w.m(2000*2+100), w.m(2000*2+99), 0, 0 // no end: createdAt counts
		}
		rows = append(rows, r)
	}
	for i := 0; i < 30; i++ {
		r := w.done("cron", "succeeded", 5000+float64(i), week)
		r.source = job
		rows = append(rows, r)
	}
	rows = append(rows,
		with(w.done("cron", "lost", 90, 24*60), func(r *fixtureTask) { r.source, r.err = job, "backing session missing" }),
		with(w.idle("cron", "running", 20, 20), func(r *fixtureTask) { r.source = job }),
	)
	// A second job split over two store partitions: 2,100 rows in all,
	// neither partition over 2,000.
	job2 := "job-" + w.id("cj")
	for i := 0; i < 2100; i++ {
		r := w.done("cron", "succeeded", 60+float64(i), week)
		r.source = job2
		r.detail = fmt.Sprintf(`{"kind":"cron-run","storeKey":"s%d"}`, i%2)
		rows = append(rows, r)
	}
	// Recovery: active and lost tasks with a finished row of the same run
	// created before (recovered) or after them (not), or none.
	job3 := "job-" + w.id("cj")
	run := func() string { return job3 + ":" + w.id("cx") }
	for _, st := range []string{"running", "queued", "lost", "lost-other"} {
		before, after, none := run(), run(), run()
		mk := func(runID string, c float64) fixtureTask {
			r := w.idle("cron", st, c, c-1)
			if st == "queued" {
				r.started = 0
			}
			if st == "lost" || st == "lost-other" {
				r = w.done("cron", "lost", c-1, 20*60)
				r.err = "Backing session missing (cron)"
				if st == "lost-other" {
					r.err = "runner exited"
				}
			}
			r.source, r.run = job3, runID
			return r
		}
		rows = append(rows,
			with(w.done("cron", "succeeded", 50, week), func(r *fixtureTask) { r.source, r.run, r.created = job3, before, w.m(60) }),
			mk(before, 40),
			mk(after, 40),
			with(w.done("cron", "failed", 20, week), func(r *fixtureTask) { r.source, r.run, r.created = job3, after, w.m(30) }),
			mk(none, 40),
		)
	}
	// A finished row of another job with the same run id is not a peer.
	other := run()
	rows = append(rows,
		with(w.done("cron", "succeeded", 50, week), func(r *fixtureTask) { r.source, r.run, r.created = "job-other", other, w.m(60) }),
		with(w.idle("cron", "running", 40, 39), func(r *fixtureTask) { r.source, r.run = job3, other }),
	)
	return w.puts("cr", rows...)
}

// flowsFamily: task flows in every state with and without linked tasks.
func flowsFamily(w *familyWriter) error {
	type flow struct {
		shape, sync, status, blocked, summary, wait string
		cancel, created, updated, ended             int64
		linked                                      []fixtureTask
	}
	week := 7 * 24 * 60.0
	running := func() fixtureTask {
		return with(w.idle("subagent", "running", 3, 2), func(r *fixtureTask) { r.child = "agent:main:subagent:live" })
	}
	killed := func() fixtureTask {
		return with(w.done("subagent", "cancelled", 10, week), func(r *fixtureTask) { r.err = "Subagent run killed." })
	}
	flows := []flow{
		{sync: "managed", status: "running", created: w.m(60), updated: w.m(40)},
		{sync: "managed", status: "running", created: w.m(60), updated: w.m(40), linked: []fixtureTask{running()}},
		{sync: "managed", status: "running", created: w.m(60), updated: w.m(10)},
		{sync: "managed", status: "waiting", created: w.m(60), updated: w.m(40)},
		{sync: "managed", status: "waiting", created: w.m(60), updated: w.m(40), wait: `{"kind":"timer"}`},
		{sync: "managed", status: "blocked", created: w.m(60), updated: w.m(40), blocked: "missing-t"},
		{sync: "managed", status: "blocked", created: w.m(60), updated: w.m(40), summary: "needs approval"},
		{sync: "managed", status: "blocked", created: w.d(9), updated: w.d(8), ended: w.d(8)},
		{sync: "managed", status: "running", created: w.m(60), updated: w.m(20), cancel: w.m(10)},
		{sync: "managed", status: "running", created: w.m(60), updated: w.m(20), cancel: w.m(10), linked: []fixtureTask{running()}},
		{sync: "managed", status: "waiting", created: w.m(60), updated: w.m(20), cancel: w.m(10), linked: []fixtureTask{killed()}},
		{sync: "managed", status: "queued", created: w.m(60), updated: w.m(20), cancel: w.m(2)},
		{sync: "managed", status: "cancelled", created: w.m(60), updated: w.m(20), cancel: w.m(30), ended: w.m(20)},
		{sync: "task_mirrored", status: "succeeded", created: w.m(60), updated: w.m(10), ended: w.m(20)},
		{shape: "single_task", status: "failed", created: w.m(60), updated: w.m(10), ended: w.m(20)},
		{sync: "task_mirrored", status: "running", created: w.m(60), updated: w.m(10), ended: w.m(20)},
		{sync: "managed", status: "succeeded", created: w.d(9), updated: w.d(8), ended: w.d(8)},
		{sync: "managed", status: "succeeded", created: w.d(9), updated: w.d(8), ended: w.d(8), linked: []fixtureTask{running()}},
		{sync: "managed", status: "lost", created: w.d(9), updated: w.d(8)},
		{sync: "managed", status: "failed", created: w.d(2), updated: w.d(3), ended: w.d(2)},
		{sync: "managed", status: "succeeded", created: w.d(2), updated: w.d(1), ended: w.d(3)},
		{sync: "managed", status: "succeeded", created: w.d(1), updated: w.d(1), ended: w.d(1) - 60_000},
	}
	for _, f := range flows {
		id := w.id("fl")
		for _, t := range f.linked {
			t.flow = id
			if _, err := w.put("fk", t); err != nil {
				return err
			}
		}
		if f.blocked != "" {
			f.blocked = f.blocked + "-" + id
		}
		if w.drifts(f.cancel, f.created, f.updated, f.ended) {
			continue
		}
		if _, err := w.flow.ExecContext(w.ctx, id, nullStr(f.shape), f.sync, "agent:main:main", f.status, "flow "+id,
			nullStr(f.blocked), nullStr(f.summary), nullStr(f.wait), nullMs(f.cancel), f.created, f.updated, nullMs(f.ended)); err != nil {
			return fmt.Errorf("fixture flow %s: %w", id, err)
		}
	}
	return nil
}

// WriteFiller adds n plain finished tasks (ids "fx…": statuses and
// runtimes rotating, ended in the last 6 days, cleanup_after stamped and
// not due) to the registry at dbPath: the bulk of a large fixture.
func WriteFiller(ctx context.Context, dbPath string, now time.Time, n int) (int, error) {
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=5000")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	w, err := newFamilyWriter(ctx, tx, now.UnixMilli())
	if err != nil {
		return 0, err
	}
	defer w.close()
	statuses := []string{"succeeded", "succeeded", "succeeded", "failed", "timed_out", "cancelled"}
	runtimes := []string{"subagent", "cli", "cron", "acp"}
	span := 6 * 24 * 60.0
	for i := 0; i < n; i++ {
		r := w.done(runtimes[i%len(runtimes)], statuses[i%len(statuses)], 5+span*float64(i)/float64(max(n, 1)), 7*24*60)
		if _, err := w.put("fx", r); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("fixture commit: %w", err)
	}
	return w.tasks, db.Close()
}
