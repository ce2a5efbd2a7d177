package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// The maintenance sweeper's queries (the Sweep* methods of core.Tx). Every statement reads
// through an index whose size follows active or due rows — partial indexes of
// 0001_init.sql and 0002_sweep_indexes.sql — never a scan of the history
// (docs/contract.md "Maintenance", bench/README.md P1). Each names its index (INDEXED BY): without statistics the
// planner may prefer a history-wide index such as tasks_status_created for
// "status IN ('succeeded','failed')", which costs seconds at a million rows;
// INDEXED BY fixes the plan, and fails loudly if the index ever stops fitting. sweep_test.go checks each statement of sweepSQL with EXPLAIN
// QUERY PLAN over a populated database.

// retentionTable describes one table retention and audit cover.
type retentionTable struct {
	table    string
	idCol    string
	status   string // status column (outcome for runs, kind for notifications)
	end      string // end-time column
	finished string // predicate: the row is finished (matches the partial indexes)
	hasRev   bool
	extra    string // extra selected column (log_path for jobs) or "''"
	created  string // creation column for inconsistent_timestamps ("" when none)
	started  string // start column ("" when none)
	// inconsistent is the partial-index predicate of <table>_inconsistent.
	inconsistent string
}

var retentionTables = map[string]retentionTable{
	core.EntityTask: {table: "tasks", idCol: "id", status: "status", end: "ended_at",
		finished: "status NOT IN ('queued','running')", hasRev: true, extra: "''",
		created: "created_at", started: "started_at",
		inconsistent: "(started_at < created_at OR ended_at < started_at OR ended_at < created_at OR (ended_at IS NOT NULL AND status IN ('queued','running')))"},
	core.EntityRun: {table: "runs", idCol: "run_id", status: "outcome", end: "ended_at",
		finished: "ended_at IS NOT NULL", hasRev: true, extra: "''",
		created: "", started: "started_at",
		inconsistent: "(ended_at < started_at)"},
	core.EntityApproval: {table: "approvals", idCol: "id", status: "status", end: "decided_at",
		finished: "status <> 'pending'", hasRev: true, extra: "''",
		created: "requested_at", started: "",
		inconsistent: "(decided_at < requested_at OR (decided_at IS NOT NULL AND status = 'pending'))"},
	core.EntityNotification: {table: "notifications", idCol: "id", status: "kind", end: "delivered_at",
		finished: "delivered_at IS NOT NULL", hasRev: false, extra: "''"},
	core.EntityJob: {table: "jobs", idCol: "id", status: "status", end: "completed_at",
		finished: "status NOT IN ('pending','running')", hasRev: true, extra: "log_path",
		created: "created_at", started: "started_at",
		inconsistent: "(started_at < created_at OR completed_at < started_at OR completed_at < created_at OR (completed_at IS NOT NULL AND status IN ('pending','running')))"},
}

// activeTaskSelect reads active tasks with what backs them. tasks is the outer
// loop (LEFT JOINs keep it there); each join is a primary-key lookup.
const activeTaskSelect = `SELECT t.id, t.runtime, t.status, COALESCE(t.run_id, ''), COALESCE(t.source_id, ''),
 COALESCE(t.owner_session, ''), COALESCE(t.child_session, ''),
 t.created_at, t.started_at, t.ended_at, t.activity_at, t.rev,
 r.run_id IS NOT NULL, r.ended_at, COALESCE(r.outcome, ''),
 rs.run_id IS NOT NULL, rs.ended_at, COALESCE(rs.outcome, ''),
 COALESCE(j.status, ''), COALESCE(s.state, '')
FROM tasks t %s
LEFT JOIN runs r ON r.run_id = t.run_id
LEFT JOIN runs rs ON t.runtime = 'cli' AND rs.run_id = t.source_id
LEFT JOIN jobs j ON j.id = t.source_id
LEFT JOIN sessions s ON s.id = COALESCE(t.child_session, t.owner_session)
WHERE t.status IN ('queued','running')`

// runBacked is true when a running run (run_id, or a cli row's source_id) or
// a pending/running job (source_id) backs the task.
const runBacked = `(r.run_id IS NOT NULL AND r.ended_at IS NULL) OR (rs.run_id IS NOT NULL AND rs.ended_at IS NULL)
   OR COALESCE(j.status, '') IN ('pending','running')`

// sweepSQL holds every fixed maintenance statement by name; the per-table
// retention and audit statements are built by the functions below and listed
// by sweepStatements.
var sweepSQL = map[string]string{
	"overdue_runs": "SELECT " + runCols + ` FROM runs INDEXED BY runs_running
 WHERE ended_at IS NULL AND last_progress_at < ? AND pending_approval_waits = 0
 AND last_progress_at + inactivity_budget_ms < ? ORDER BY last_progress_at LIMIT ?`,
	// The candidate filter of core.ActiveTaskFilter. COALESCE keeps every
	// operand non-NULL, so NOT (…) of a missing run, job or session is true.
	"active_tasks": fmt.Sprintf(activeTaskSelect, "INDEXED BY tasks_active") + ` AND (
   COALESCE(r.ended_at, rs.ended_at) IS NOT NULL
   OR (t.activity_at < ? AND NOT (` + runBacked + ` OR COALESCE(s.state, '') = 'active'))
   OR (t.status = 'queued' AND t.activity_at <= ?)
   OR (t.status = 'running' AND COALESCE(t.started_at, t.created_at) <= ? AND NOT (` + runBacked + `)))
 ORDER BY t.activity_at`,
	// active_tasks_by_id takes one "?" per id (activeByIDSQL); listed here
	// with two for the query-plan test.
	"active_tasks_by_id": activeByIDSQL(2),
	// Batched writes take one row of "?" per row (the functions below);
	// listed here with two rows for the query-plan test. Their argument
	// list is a VALUES clause (named args in a CTE), scanned, not a table.
	"mark_lost":    markLostSQL(2),
	"drop_lost":    dropLostSQL(2),
	"prune_events": pruneEventsSQL(2),
	"expired_approvals": "SELECT " + approvalCols + ` FROM approvals INDEXED BY approvals_pending_expiry
 WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
	"waited_approvals": "SELECT " + approvalCols + ` FROM approvals INDEXED BY approvals_pending
 WHERE status = 'pending' AND waiter_pid <> 0 AND waiter_host = ? ORDER BY id LIMIT ?`,
	"silent_tasks": "SELECT " + taskCols + ` FROM tasks INDEXED BY tasks_silent
 WHERE expects_output = 1 AND output_count = 0 AND status IN ('succeeded','failed') AND ended_at >= ?
 AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.dedup_key = 'task_silent:' || tasks.id)
 ORDER BY ended_at LIMIT ?`,
	"delivery_failed": `SELECT id, COALESCE(owner_session, ''), label FROM tasks INDEXED BY tasks_delivery_failed
 WHERE delivery_status = 'failed' ORDER BY id LIMIT ?`,
	"last_notification_id": "SELECT COALESCE(MAX(id), 0) FROM notifications",
}

// activeByIDSQL reads the active rows among n task ids (primary-key lookups).
func activeByIDSQL(n int) string {
	return fmt.Sprintf(activeTaskSelect, "") + " AND t.id IN (" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// rowsOf renders n rows of k placeholders: "(?,?),(?,?)".
func rowsOf(n, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", k), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// typedRowsOf renders n rows of one placeholder per type, each cast to its
// type: "(CAST(? AS TEXT),CAST(? AS INTEGER)),(…)". A VALUES list used as a
// table needs the casts on PostgreSQL, which would otherwise type every
// placeholder as text; on SQLite they change nothing.
func typedRowsOf(n int, types ...string) string {
	cols := make([]string, len(types))
	for i, ty := range types {
		if ty == "INTEGER" {
			ty = intType
		}
		cols[i] = "CAST(? AS " + ty + ")"
	}
	row := "(" + strings.Join(cols, ",") + ")"
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// intType is the cast type of an integer: BIGINT exists in both dialects
// (SQLite gives it INTEGER affinity).
const intType = "BIGINT"

// markLostSQL marks n tasks lost, each at its revision and only while
// active, and returns the ids it changed.
func markLostSQL(n int) string {
	return "WITH args(id, rev, error, ended_at, cleanup_after) AS (VALUES " + typedRowsOf(n, "TEXT", "INTEGER", "TEXT", "INTEGER", "INTEGER") + `)
UPDATE tasks SET status = 'lost', error = args.error, ended_at = args.ended_at, cleanup_after = args.cleanup_after, rev = tasks.rev + 1
FROM args WHERE tasks.id = args.id AND tasks.rev = args.rev AND tasks.status IN ('queued','running') RETURNING tasks.id`
}

// pruneEventsSQL deletes the journal of n rows of one entity.
func pruneEventsSQL(n int) string {
	return "DELETE FROM events WHERE entity = ? AND entity_id IN " + rowsOf(1, n)
}

func unstampedSQL(rt retentionTable) string {
	return fmt.Sprintf("SELECT %s, %s, %s, %s, %s FROM %s INDEXED BY %s_unstamped WHERE cleanup_after IS NULL AND %s AND %s IS NOT NULL LIMIT ?",
		rt.idCol, rt.status, rt.end, revCol(rt), rt.extra, rt.table, rt.table, rt.finished, rt.end)
}

func missingEndSQL(rt retentionTable) string {
	return fmt.Sprintf("SELECT %s, %s, %s, %s, %s FROM %s INDEXED BY %s_unstamped WHERE cleanup_after IS NULL AND %s AND %s IS NULL LIMIT ?",
		rt.idCol, rt.status, rt.end, revCol(rt), rt.extra, rt.table, rt.table, rt.finished, rt.end)
}

func dueSQL(rt retentionTable) string {
	return fmt.Sprintf("SELECT %s, %s, %s, %s, %s, cleanup_after FROM %s INDEXED BY %s_cleanup_after WHERE cleanup_after IS NOT NULL AND cleanup_after <= ? AND %s ORDER BY cleanup_after LIMIT ?",
		rt.idCol, rt.status, rt.end, revCol(rt), rt.extra, rt.table, rt.table, rt.finished)
}

func inconsistentSQL(rt retentionTable) string {
	col := func(c string) string {
		if c == "" {
			return "NULL"
		}
		return c
	}
	// INDEXED BY: the planner would otherwise pick a wider index implied by
	// the same predicate (runs_ended for ended_at < started_at).
	return fmt.Sprintf("SELECT %s, %s, %s, %s, %s FROM %s INDEXED BY %s_inconsistent WHERE %s LIMIT ?",
		rt.idCol, rt.status, col(rt.created), col(rt.started), rt.end, rt.table, rt.table, rt.inconsistent)
}

func stampSQL(rt retentionTable) string {
	if rt.hasRev {
		return fmt.Sprintf("UPDATE %s SET cleanup_after = ?, rev = rev + 1 WHERE %s = ? AND rev = ? AND cleanup_after IS NULL AND %s",
			rt.table, rt.idCol, rt.finished)
	}
	return fmt.Sprintf("UPDATE %s SET cleanup_after = ? WHERE %s = ? AND cleanup_after IS NULL AND %s", rt.table, rt.idCol, rt.finished)
}

// pruneSQL deletes n due rows of rt, each at its revision (rows of "id,
// rev"; just ids without a revision column), after them the now bound; it
// returns the ids it deleted.
func pruneSQL(rt retentionTable, n int) string {
	if rt.hasRev {
		return fmt.Sprintf("WITH args(id, rev) AS (VALUES %s) DELETE FROM %s %s AND cleanup_after IS NOT NULL AND cleanup_after <= ? AND %s RETURNING %s",
			typedRowsOf(n, "TEXT", "INTEGER"), rt.table, byIDRev(rt.table, rt.idCol), rt.finished, rt.idCol)
	}
	return fmt.Sprintf("DELETE FROM %s WHERE %s IN %s AND cleanup_after IS NOT NULL AND cleanup_after <= ? AND %s RETURNING %s",
		rt.table, rt.idCol, rowsOf(1, n), rt.finished, rt.idCol)
}

func revCol(rt retentionTable) string {
	if rt.hasRev {
		return "rev"
	}
	return "0"
}

// sweepStatements lists every statement the Sweep* methods run, by name, for the
// EXPLAIN QUERY PLAN test.
func sweepStatements() map[string]string {
	out := map[string]string{}
	for k, v := range sweepSQL {
		out[k] = v
	}
	for ent, rt := range retentionTables {
		out["unstamped/"+ent] = unstampedSQL(rt)
		out["due/"+ent] = dueSQL(rt)
		out["stamp/"+ent] = stampSQL(rt)
		out["prune/"+ent] = pruneSQL(rt, 2)
		if rt.created != "" {
			out["missing_end/"+ent] = missingEndSQL(rt)
		}
		if rt.inconsistent != "" {
			out["inconsistent/"+ent] = inconsistentSQL(rt)
		}
	}
	return out
}

func retentionOf(entity string) (retentionTable, error) {
	rt, ok := retentionTables[entity]
	if !ok {
		return retentionTable{}, core.Invalidf("sweep: unknown entity %q", entity)
	}
	return rt, nil
}

// limitArg turns limit 0 (no cap) into SQLite's LIMIT -1.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

// SweepOverdueRuns implements core.Tx (docs/contract.md "The inactivity watchdog pauses for approvals").
func (t *tx) SweepOverdueRuns(now core.Timestamp, limit int) ([]core.Run, error) {
	return queryAll(t, sweepSQL["overdue_runs"], []any{int64(now), int64(now), limitArg(limit)}, scanRun)
}

func scanActiveTask(s rowScanner, r *core.ActiveTaskRow) error {
	return s.Scan(&r.ID, &r.Runtime, &r.Status, &r.RunID, &r.SourceID, &r.OwnerSession, &r.ChildSession,
		&r.CreatedAt, nts{&r.StartedAt}, nts{&r.EndedAt}, &r.ActivityAt, &r.Rev,
		&r.Run.Exists, nts{&r.Run.EndedAt}, &r.Run.Outcome,
		&r.SourceRun.Exists, nts{&r.SourceRun.EndedAt}, &r.SourceRun.Outcome,
		&r.JobStatus, &r.Session)
}

// SweepActiveTasks implements core.Tx (docs/contract.md "Lost work", docs/contract.md "Audit").
func (t *tx) SweepActiveTasks(f core.ActiveTaskFilter) ([]core.ActiveTaskRow, error) {
	if t.db.dialect == dialectPostgres {
		// PostgreSQL's INDEXED BY: with thousands of active rows the planner
		// would hash-join whole runs and jobs tables (history); nested loops
		// over their primary keys keep the cost on the active set (P1).
		restore, err := t.pgPlanHint("enable_hashjoin", "enable_mergejoin")
		if err != nil {
			return nil, err
		}
		defer restore()
	}
	return queryAll(t, sweepSQL["active_tasks"], []any{int64(f.IdleBefore), int64(f.QueuedBefore), int64(f.RunningBefore)}, scanActiveTask)
}

// pgPlanHint turns the planner settings off for the rest of the statement
// about to run (transaction-local), and returns what turns them back on.
func (t *tx) pgPlanHint(settings ...string) (func(), error) {
	set := func(v string) error {
		for _, s := range settings {
			if _, err := t.tx.ExecContext(t.ctx, "SELECT set_config($1, $2, true)", s, v); err != nil {
				return mapErr(err)
			}
		}
		return nil
	}
	if err := set("off"); err != nil {
		return nil, err
	}
	return func() { _ = set("on") }, nil
}

// maxIDsPerQuery bounds the "?" of one IN list, well under SQLite's
// variable limit; longer id lists are read in chunks.
const maxIDsPerQuery = 500

// SweepActiveTasksByID implements core.Tx: chunks of up to maxIDsPerQuery
// ids, each one statement (cached per transaction by its length).
func (t *tx) SweepActiveTasksByID(ids []string) ([]core.ActiveTaskRow, error) {
	var out []core.ActiveTaskRow
	for len(ids) > 0 {
		n := min(len(ids), maxIDsPerQuery)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		rows, err := queryAll(t, activeByIDSQL(n), args, scanActiveTask)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		ids = ids[n:]
	}
	return out, nil
}

// maxRowsPerWrite bounds the rows of one batched write statement.
const maxRowsPerWrite = 500

// SweepMarkLost implements core.Tx (docs/contract.md "Lost work"): a narrow conditional update,
// one statement per maxRowsPerWrite marks.
func (t *tx) SweepMarkLost(marks []core.LostMark) ([]bool, error) {
	if err := t.checkWritable("mark tasks lost"); err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(marks))
	for rest := marks; len(rest) > 0; {
		n := min(len(rest), maxRowsPerWrite)
		args := make([]any, 0, 5*n)
		for _, m := range rest[:n] {
			args = append(args, m.ID, m.Rev, m.Reason, int64(m.EndedAt), int64(m.CleanupAfter))
		}
		if err := t.returning(markLostSQL(n), args, done); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	out := make([]bool, len(marks))
	for i, m := range marks {
		out[i] = done[m.ID]
	}
	return out, nil
}

// byIDRev is the WHERE clause of a batched write to table by (id, rev), the
// rows named by an "args(id, rev)" CTE: each row found through the primary
// key. (SQLite does not search a one-column key for a two-column IN, and
// without the hint may read an index of the other conditions instead, such
// as every active or every due row for each batch; PostgreSQL drops it.)
func byIDRev(table, idCol string) string {
	return fmt.Sprintf("INDEXED BY sqlite_autoindex_%s_1 WHERE %s IN (SELECT id FROM args) AND (%s, rev) IN (SELECT id, rev FROM args)",
		table, idCol, idCol)
}

// dropLostSQL deletes n active tasks by (id, rev).
func dropLostSQL(n int) string {
	return "WITH args(id, rev) AS (VALUES " + typedRowsOf(n, "TEXT", "INTEGER") + ") DELETE FROM tasks " + byIDRev("tasks", "id") +
		" AND status IN ('queued','running') RETURNING id"
}

// SweepDropLost implements core.Tx (docs/contract.md "Lost work" and docs/contract.md "Retention"): one conditional
// DELETE per maxRowsPerWrite keys, and one for their journal.
func (t *tx) SweepDropLost(keys []core.RowKey) ([]bool, error) {
	if err := t.checkWritable("prune lost tasks"); err != nil {
		return nil, err
	}
	return t.deleteBatches(core.EntityTask, keys, func(rest []core.RowKey) (string, []any, error) {
		args := make([]any, 0, 2*len(rest))
		for _, k := range rest {
			args = append(args, k.ID, k.Rev)
		}
		return dropLostSQL(len(rest)), args, nil
	})
}

// deleteBatches deletes entity's rows keys name, maxRowsPerWrite at a time
// (stmt renders one batch's conditional DELETE … RETURNING id and its
// arguments), and the journal of the rows deleted. It returns, in the order
// of keys, whether each was deleted.
func (t *tx) deleteBatches(entity string, keys []core.RowKey, stmt func(batch []core.RowKey) (string, []any, error)) ([]bool, error) {
	done := make(map[string]bool, len(keys))
	for rest := keys; len(rest) > 0; {
		n := min(len(rest), maxRowsPerWrite)
		q, args, err := stmt(rest[:n])
		if err != nil {
			return nil, err
		}
		deleted := map[string]bool{}
		if err := t.returning(q, args, deleted); err != nil {
			return nil, err
		}
		if len(deleted) > 0 {
			ev := make([]any, 0, len(deleted)+1)
			ev = append(ev, entity)
			for id := range deleted {
				ev = append(ev, id)
				done[id] = true
			}
			if _, err := t.exec(pruneEventsSQL(len(deleted)), ev...); err != nil {
				return nil, err
			}
			if err := t.pruneUsage(entity, ev[1:]); err != nil {
				return nil, err
			}
		}
		rest = rest[n:]
	}
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = done[k.ID]
	}
	return out, nil
}

// returning runs a write with a RETURNING id clause and adds each id to done.
func (t *tx) returning(q string, args []any, done map[string]bool) error {
	t.wrote = true
	rows, err := t.query(q, args...)
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return mapErr(err)
		}
		done[id] = true
	}
	return mapErr(rows.Err())
}

// SweepExpiredApprovals implements core.Tx (docs/contract.md "Approvals expire").
func (t *tx) SweepExpiredApprovals(now core.Timestamp, limit int) ([]core.Approval, error) {
	return queryAll(t, sweepSQL["expired_approvals"], []any{int64(now), limitArg(limit)}, scanApproval)
}

// SweepWaitedApprovals implements core.Tx.
func (t *tx) SweepWaitedApprovals(host string, limit int) ([]core.Approval, error) {
	return queryAll(t, sweepSQL["waited_approvals"], []any{host, limitArg(limit)}, scanApproval)
}

// SweepSilentTasks implements core.Tx (docs/contract.md "Silent scheduled tasks").
func (t *tx) SweepSilentTasks(endedSince core.Timestamp, limit int) ([]core.Task, error) {
	return queryAll(t, sweepSQL["silent_tasks"], []any{int64(endedSince), limitArg(limit)}, scanTask)
}

func scanRetention(s rowScanner, r *core.RetentionRow) error {
	return s.Scan(&r.ID, &r.Status, nts{&r.EndAt}, &r.Rev, &r.LogPath)
}

func scanDue(s rowScanner, r *core.RetentionRow) error {
	return s.Scan(&r.ID, &r.Status, nts{&r.EndAt}, &r.Rev, &r.LogPath, nts{&r.CleanupAfter})
}

// SweepUnstamped implements core.Tx (docs/contract.md "Retention" stamp).
func (t *tx) SweepUnstamped(entity string, limit int) ([]core.RetentionRow, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return nil, err
	}
	return queryAll(t, unstampedSQL(rt), []any{limitArg(limit)}, scanRetention)
}

// SweepMissingEnd implements core.Tx (docs/contract.md "Audit" missing_cleanup).
func (t *tx) SweepMissingEnd(entity string, limit int) ([]core.RetentionRow, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return nil, err
	}
	if rt.created == "" {
		return nil, nil // runs and notifications are finished by their end time
	}
	return queryAll(t, missingEndSQL(rt), []any{limitArg(limit)}, scanRetention)
}

// SweepDue implements core.Tx (docs/contract.md "Retention" prune).
func (t *tx) SweepDue(entity string, now core.Timestamp, limit int) ([]core.RetentionRow, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return nil, err
	}
	return queryAll(t, dueSQL(rt), []any{int64(now), limitArg(limit)}, scanDue)
}

// SweepDeliveryFailed implements core.Tx (docs/contract.md "Audit" delivery_failed).
func (t *tx) SweepDeliveryFailed(limit int) ([]core.RetentionRow, error) {
	return queryAll(t, sweepSQL["delivery_failed"], []any{limitArg(limit)}, func(s rowScanner, r *core.RetentionRow) error {
		r.Status = "failed"
		return s.Scan(&r.ID, &r.Session, &r.Label)
	})
}

// SweepInconsistent implements core.Tx (docs/contract.md "Audit" inconsistent_timestamps).
func (t *tx) SweepInconsistent(entity string, limit int) ([]core.TimesRow, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return nil, err
	}
	if rt.inconsistent == "" {
		return nil, nil
	}
	return queryAll(t, inconsistentSQL(rt), []any{limitArg(limit)}, func(s rowScanner, r *core.TimesRow) error {
		return s.Scan(&r.ID, &r.Status, nts{&r.Created}, nts{&r.Started}, nts{&r.Ended})
	})
}

// SweepLastNotificationID implements core.Tx.
func (t *tx) SweepLastNotificationID() (int64, error) {
	var id int64
	if err := t.queryRow(sweepSQL["last_notification_id"]).Scan(&id); err != nil {
		return 0, mapErr(err)
	}
	return id, nil
}

// idArg is the primary-key argument of entity: notification ids are integers.
func idArg(entity, id string) (any, error) {
	if entity != core.EntityNotification {
		return id, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, core.Invalidf("notification id %q is not a number", id)
	}
	return n, nil
}

// changed runs a write and reports whether it touched a row.
func (t *tx) changed(op, q string, args ...any) (bool, error) {
	if err := t.checkWritable(op); err != nil {
		return false, err
	}
	res, err := t.exec(q, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, mapErr(err)
	}
	return n > 0, nil
}

// SweepStamp implements core.Tx (docs/contract.md "Retention" stamp).
func (t *tx) SweepStamp(entity, id string, rev int64, cleanupAfter core.Timestamp) (bool, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return false, err
	}
	key, err := idArg(entity, id)
	if err != nil {
		return false, err
	}
	args := []any{int64(cleanupAfter), key}
	if rt.hasRev {
		args = append(args, rev)
	}
	return t.changed("stamp "+entity, stampSQL(rt), args...)
}

// SweepPrune implements core.Tx (docs/contract.md "Retention" prune): the rows, then their
// journal, one statement each per maxRowsPerWrite keys.
func (t *tx) SweepPrune(entity string, keys []core.RowKey, now core.Timestamp) ([]bool, error) {
	rt, err := retentionOf(entity)
	if err != nil {
		return nil, err
	}
	if err := t.checkWritable("prune " + entity); err != nil {
		return nil, err
	}
	return t.deleteBatches(entity, keys, func(rest []core.RowKey) (string, []any, error) {
		args := make([]any, 0, 2*len(rest)+1)
		for _, k := range rest {
			key, err := idArg(entity, k.ID)
			if err != nil {
				return "", nil, err
			}
			args = append(args, key)
			if rt.hasRev {
				args = append(args, k.Rev)
			}
		}
		return pruneSQL(rt, len(rest)), append(args, int64(now)), nil
	})
}

// pruneUsage deletes what the usage tables hold of the tasks or runs ids
// (entity core.EntityTask or core.EntityRun; others hold none): their token
// totals and counts, a run's transcript read positions and raised budget,
// so no usage row outlives its task or run. A session's rows stay with it
// (sessions are never pruned).
func (t *tx) pruneUsage(entity string, ids []any) error {
	if entity != core.EntityTask && entity != core.EntityRun {
		return nil
	}
	n := len(ids)
	args := append([]any{entity}, ids...) // core.UsageTask, core.UsageRun: the same words
	for _, table := range []string{"token_usage", "usage_counts"} {
		if _, err := t.exec("DELETE FROM "+table+" WHERE scope = ? AND scope_id IN "+rowsOf(1, n), args...); err != nil {
			return fmt.Errorf("prune %s of %s: %w", table, entity, err)
		}
	}
	if entity != core.EntityRun {
		return nil
	}
	if _, err := t.exec("DELETE FROM usage_sources WHERE run_id IN "+rowsOf(1, n), ids...); err != nil {
		return fmt.Errorf("prune usage_sources: %w", err)
	}
	keys := make([]any, n)
	for i, id := range ids {
		keys[i] = "run:" + fmt.Sprint(id)
	}
	if _, err := t.exec("DELETE FROM budgets WHERE key IN "+rowsOf(1, n), keys...); err != nil {
		return fmt.Errorf("prune budgets: %w", err)
	}
	return nil
}
