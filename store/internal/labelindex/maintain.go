package labelindex

import (
	"context"
	"database/sql"
	"math"
	"strconv"
)

// collect checks up to max keys, from where the last check stopped
// (by rowid, wrapping at the end), and removes those whose task no longer
// exists (pruned or deleted): their index entries, keys and bucket counts.
// It reports how many it removed and whether it reached the end (the next
// check starts from the first key).
func collect(ctx context.Context, x Execer, limit int) (removed int, wrapped bool, err error) {
	var after int64
	err = x.QueryRowContext(ctx, `SELECT after FROM tasks_label_gc WHERE id = 1`).Scan(&after)
	if err != nil && err != sql.ErrNoRows {
		return 0, false, err
	}
	rows, err := x.QueryContext(ctx, `SELECT k.task, k.key, t.rowid IS NULL FROM
		(SELECT task, key FROM tasks_label_keys WHERE task > ? ORDER BY task LIMIT ?) AS k
		LEFT JOIN tasks AS t ON t.rowid = k.task`, after, limit)
	if err != nil {
		return 0, false, err
	}
	var gone []int64
	seen := 0
	last := after
	for rows.Next() {
		var task, key int64
		var missing bool
		if err := rows.Scan(&task, &key, &missing); err != nil {
			rows.Close()
			return 0, false, err
		}
		seen++
		last = max(last, task)
		if missing {
			gone = append(gone, key)
		}
	}
	if err := rows.Close(); err != nil {
		return 0, false, err
	}
	if seen < limit {
		last, wrapped = 0, true // the end: start again from the first key
	}
	if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_gc (id, after) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET after = excluded.after`, last); err != nil {
		return 0, false, err
	}
	if len(gone) == 0 {
		return 0, wrapped, nil
	}
	if err := rekey(ctx, x, gone, nil); err != nil {
		return 0, false, err
	}
	for _, k := range gone {
		if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_keys WHERE task = ?`, k&TaskMask); err != nil {
			return 0, false, err
		}
	}
	return len(gone), wrapped, nil
}

// Maintain is the index's maintenance between sweeps (the daemon runs it
// after each), in transactions of a few ms on w (the registry's write
// pool) so writers interleave: it indexes up to max tasks still queued
// (written by another program: inserts and renames; clawpit's own writes
// index theirs before they commit), splits the buckets a writer could not,
// then checks up to max keys for tasks that no longer exist (pruned,
// deleted) and removes theirs; when it removed many it merges the index's
// segments a step (FTS5 'merge'), so reads skip fewer deleted entries.
// fromStart begins the collection at the first key (a whole pass when max
// allows), not where the last one stopped. It returns how many tasks it
// indexed and how many keys it removed. Errors: the database's, unmapped.
func Maintain(ctx context.Context, w *sql.DB, c *StmtCache, s Sizes, max int, fromStart bool) (indexed, removed int, err error) {
	s = s.Resolved()
	for indexed < max {
		var n int
		err := writeTx(ctx, w, func(tx *sql.Tx) error {
			var err error
			n, err = fold(ctx, tx, min(FoldRows, max-indexed), s.Bucket, s.Split, s.Rekeys)
			return err
		})
		if err != nil {
			return indexed, removed, err
		}
		indexed += n
		if n == 0 {
			break
		}
	}
	if err := splitFull(ctx, w, c, s); err != nil {
		return indexed, removed, err
	}
	if fromStart {
		if _, err := w.ExecContext(ctx, `DELETE FROM tasks_label_gc`); err != nil {
			return indexed, removed, err
		}
	}
	removed, err = collectAll(ctx, w, max)
	return indexed, removed, err
}

// splitFull splits the buckets past the split size whose split needed
// more re-keying than a writer's transaction does, after removing the
// queue rows of deleted tasks past the keys' room.
func splitFull(ctx context.Context, w *sql.DB, c *StmtCache, s Sizes) error {
	err := writeTx(ctx, w, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM tasks_label_queue WHERE task > ? AND NOT EXISTS
			(SELECT 1 FROM tasks WHERE rowid = tasks_label_queue.task)`, int64(TaskMask))
		return err
	})
	if err != nil {
		return err
	}
	full, err := fullBuckets(ctx, w, s.Split)
	if err != nil {
		return err
	}
	for _, lb := range full {
		if err := writeTx(ctx, w, func(tx *sql.Tx) error {
			return splitBound(ctx, CachedTx{Tx: tx, Cache: c}, lb, s.Bucket, s.Split, maintainRekeys)
		}); err != nil {
			return err
		}
	}
	return nil
}

// collectAll checks up to max keys for staleness, collectRows per
// transaction, and returns how many it removed.
func collectAll(ctx context.Context, w *sql.DB, max int) (removed int, err error) {
	for checked := 0; checked < max; checked += collectRows {
		var n int
		var wrapped bool
		err := writeTx(ctx, w, func(tx *sql.Tx) error {
			var err error
			n, wrapped, err = collect(ctx, tx, min(collectRows, max-checked))
			if err == nil && n >= mergeAfter {
				_, err = tx.ExecContext(ctx, `INSERT INTO tasks_label_fts (tasks_label_fts, rank) VALUES ('merge', 500)`)
			}
			return err
		})
		if err != nil {
			return removed, err
		}
		removed += n
		if wrapped {
			break
		}
	}
	return removed, nil
}

// Marked counts the buckets that could not make room for a split (marked
// by a negative count; Maintain retries them): reads of each sort more
// rows than the split size. Errors: the database's, unmapped.
func Marked(ctx context.Context, r *sql.DB) (int, error) {
	var n int
	err := r.QueryRowContext(ctx, `SELECT count(*) FROM tasks_label_buckets WHERE n < 0`).Scan(&n)
	return n, err
}

// fullBuckets are the bounds of the buckets counted past split, or
// marked (a negative count) as past it with no room made.
func fullBuckets(ctx context.Context, w *sql.DB, split int64) ([]bound, error) {
	rows, err := w.QueryContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE n > ? OR n < 0 ORDER BY b`, split)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []bound
	for rows.Next() {
		var lb bound
		if err := rows.Scan(&lb.name, &lb.id, &lb.b); err != nil {
			return nil, err
		}
		out = append(out, lb)
	}
	return out, rows.Err()
}

// collectRows is how many keys one transaction of collectAll checks
// (a few ms); mergeAfter how many removed keys call for a merge step.
const (
	collectRows = 8192
	mergeAfter  = 1000
)

// FoldAll brings the index up to date after a bulk load that bypassed the
// store (bench fixtures, the sqlite3 shell): a queue larger than a quarter
// of the tasks is rebuilt whole (one pass, in one transaction), a smaller
// one is indexed FoldRows tasks per transaction; then, as Maintain does,
// marked buckets are split and every stale key is collected, from the
// first. Errors: the database's, unmapped.
func FoldAll(ctx context.Context, w *sql.DB, c *StmtCache, s Sizes) error {
	s = s.Resolved()
	var queued, tasks int64
	if err := w.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tasks_label_queue AS q JOIN tasks AS t ON t.rowid = q.task WHERE q.task <= `+
		strconv.FormatInt(TaskMask, 10)+`), (SELECT count(*) FROM tasks)`).
		Scan(&queued, &tasks); err != nil {
		return err
	}
	if queued > 0 && queued*4 > tasks {
		return writeTx(ctx, w, func(tx *sql.Tx) error { return rebuild(ctx, tx, s.Bucket) })
	}
	_, _, err := Maintain(ctx, w, c, s, math.MaxInt, true)
	return err
}

// writeTx runs fn in one write transaction on w.
func writeTx(ctx context.Context, w *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
