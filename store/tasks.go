package store

import (
	"strings"

	"github.com/clawpit/clawpit/core"
)

const taskCols = `id, runtime, kind, status, delivery_status, notify_policy, run_id, source_id,
 owner_session, child_session, parent_task_id, label, task, error, result_subtype, progress_summary,
 expects_output, output_count, created_at, started_at, last_event_at, ended_at, cleanup_after, rev`

func scanTask(r rowScanner, t *core.Task) error {
	return r.Scan(&t.ID, &t.Runtime, &t.Kind, &t.Status, &t.DeliveryStatus, &t.NotifyPolicy,
		nstr{&t.RunID}, nstr{&t.SourceID}, nstr{&t.OwnerSession}, nstr{&t.ChildSession}, nstr{&t.ParentTaskID},
		&t.Label, &t.Task, &t.Error, &t.ResultSubtype, &t.ProgressSummary,
		&t.ExpectsOutput, &t.OutputCount, &t.CreatedAt, nts{&t.StartedAt}, nts{&t.LastEventAt},
		nts{&t.EndedAt}, nts{&t.CleanupAfter}, &t.Rev)
}

// taskArgs are the values of every column but rev, in taskCols order,
// followed by activity_at (docs/contract.md "Lost work": last_event_at ?? started_at ?? created_at).
func taskArgs(t *core.Task) []any {
	return []any{t.ID, string(t.Runtime), t.Kind, string(t.Status), string(t.DeliveryStatus), string(t.NotifyPolicy),
		strArg(t.RunID), strArg(t.SourceID), strArg(t.OwnerSession), strArg(t.ChildSession), strArg(t.ParentTaskID),
		t.Label, t.Task, t.Error, t.ResultSubtype, t.ProgressSummary,
		boolArg(t.ExpectsOutput), t.OutputCount, int64(t.CreatedAt), tsArg(t.StartedAt), tsArg(t.LastEventAt),
		tsArg(t.EndedAt), tsArg(t.CleanupAfter), int64(t.LastActivity())}
}

// GetTask returns the task id; wrapped core.ErrNotFound when unknown.
func (t *tx) GetTask(id string) (*core.Task, error) {
	return getRow(t, core.EntityTask, id, "SELECT "+taskCols+" FROM tasks WHERE id = ?", scanTask)
}

// InsertTask stores k with Rev 1 and its activity_at; core.ErrConflict when
// the id exists.
func (t *tx) InsertTask(k *core.Task) error {
	_, err := t.insert(core.EntityTask, k.ID,
		"INSERT INTO tasks ("+taskCols+`, activity_at) VALUES
		 (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`,
		taskArgs(k)...)
	if err != nil {
		return err
	}
	k.Rev = 1
	return nil
}

// UpdateTask writes every field of k (and recomputes activity_at) when its row
// still has revision k.Rev, then bumps k.Rev; core.ErrConflict otherwise.
func (t *tx) UpdateTask(k *core.Task) error {
	set, args := t.taskChanges(k)
	err := t.condUpdate(core.EntityTask, k.ID, k.Rev,
		"UPDATE tasks SET "+set+"rev = rev + 1 WHERE id = ? AND rev = ?", append(args, k.ID, k.Rev)...)
	if err != nil {
		return err
	}
	k.Rev++
	return nil
}

// taskChanges is the SET list ("col = ?, " each) and arguments that turn
// the stored row of k (at k.Rev) into k: only the columns whose value
// differs. SQLite rewrites every index holding a column an UPDATE assigns,
// changed or not: assigning all of them rewrote the task's entry in each of
// the table's ~20 indexes, so a progress wrote 12 pages where 7 do (bench
// P2). When the stored row cannot be read or is not at k.Rev, every
// column is assigned and the rev condition decides, as before.
//
// PostgreSQL is not read first: it decides a heap-only update by comparing
// the indexed columns' values, assigned or not, so the read would only add
// a statement to every task write (a fleet's hook events: bench/pg -writers).
func (t *tx) taskChanges(k *core.Task) (string, []any) {
	// The columns UpdateTask may set, in taskArgs' order after the id.
	cols := [...]string{"runtime", "kind", "status", "delivery_status", "notify_policy",
		"run_id", "source_id", "owner_session", "child_session", "parent_task_id",
		"label", "task", "error", "result_subtype", "progress_summary",
		"expects_output", "output_count", "created_at", "started_at", "last_event_at",
		"ended_at", "cleanup_after", "activity_at"}
	a := taskArgs(k)[1:]
	var old []any
	if t.db.dialect != dialectPostgres {
		if cur, err := t.GetTask(k.ID); err == nil && cur.Rev == k.Rev {
			old = taskArgs(cur)[1:]
		}
	}
	var b strings.Builder
	args := make([]any, 0, len(a))
	for i, c := range cols {
		if old != nil && old[i] == a[i] { // nil, string and int64 only: comparable
			continue
		}
		b.WriteString(c + " = ?, ")
		args = append(args, a[i])
	}
	return b.String(), args
}

// ListTasks returns tasks matching f, newest first (created_at DESC).
func (t *tx) ListTasks(f core.TaskFilter) ([]core.Task, error) {
	var w where
	in(&w, "status", f.Statuses)
	if f.Runtime != "" {
		w.add("runtime = ?", string(f.Runtime))
	}
	if f.Session != "" {
		w.add("(owner_session = ? OR child_session = ?)", f.Session, f.Session)
	}
	if f.RunID != "" {
		w.add("run_id = ?", f.RunID)
	}
	q := "SELECT " + taskCols + " FROM tasks" + w.clause() + " ORDER BY created_at DESC, id DESC" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanTask)
}

// MirroredTasks returns the task rows mirroring run runID (docs/contract.md "Entities and statuses"): rows with
// run_id = runID (any runtime) and cli rows with source_id = runID, oldest
// first. Each arm reads through its partial index (an equality on a non-NULL
// value implies the index's IS NOT NULL predicate).
func (t *tx) MirroredTasks(runID string) ([]core.Task, error) {
	if runID == "" {
		return nil, nil
	}
	q := "SELECT " + taskCols + " FROM tasks WHERE run_id = ?" +
		" UNION SELECT " + taskCols + " FROM tasks WHERE source_id = ? AND runtime = 'cli'" +
		" ORDER BY created_at, id"
	return queryAll(t, q, []any{runID, runID}, scanTask)
}
