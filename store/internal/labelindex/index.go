// Package labelindex is the SQLite registry's label-order name index
// (migration 0014): the tasks' names in an FTS5 trigram index keyed
// bucket << Shift | rowid, so the tasks whose name contains a text come in
// label order bucket by bucket, and a filtered window in label order reads
// a few buckets instead of sorting every match. Writers fold their new and
// renamed tasks in before they commit (Fold); the daemon maintains it
// between sweeps (Maintain); a bulk load rebuilds it (Rebuild, FoldAll);
// reads go through Search. It knows SQL and the tables of migration 0014,
// nothing of package store.
package labelindex

import (
	"cmp"
	"context"
	"database/sql"
	"math/bits"
	"slices"
	"strconv"

	"github.com/clawpit/clawpit/store/internal/sqlq"
)

// The label order's name index (migration 0014, SQLite): the tasks' names
// in a trigram index keyed bucket << Shift | rowid, so the matches of
// a text come in label order bucket by bucket (see the migration for the
// tables).
//
// Invariants, kept inside every writing transaction:
//   - every task is either in tasks_label_queue or has a row in
//     tasks_label_keys whose key is (its bucket by the current bounds) <<
//     Shift | its rowid, and that key is in tasks_label_fts with its
//     current name;
//   - a key in tasks_label_fts either is some task's key in
//     tasks_label_keys or is stale (its task deleted, renamed, or re-keyed
//     while queued): stale keys are never counted as matches.
//
// Bucket ids are below 1 << bucketBits and rowids below 1 <<
// Shift (8.6 billion tasks inserted over a registry's life), so every
// key is a positive int64. A task with a larger rowid (set explicitly by
// another program, and every task inserted after it) is never keyed: it
// stays in the queue, which reads read with LIKE.
const (
	Shift      = 33
	TaskMask   = 1<<Shift - 1
	bucketBits = 30
	// BucketRows is how many tasks a new bucket gets (the backfill's
	// and a split's); SplitRows is the size at which the store splits
	// one: a read sorts at most one partial bucket on each side.
	BucketRows = 256
	SplitRows  = 1024
	// maxStep is the widest gap a split leaves between new buckets:
	// labels that keep arriving at one end (timestamps) then get about
	// 2^30 / 2^14 splits before the ids run out there.
	maxStep = 1 << 14
	// FoldRows bounds how many queued tasks one writing transaction
	// indexes; one in GCEvery of them checks gcRows keys for
	// staleness too.
	FoldRows = 512
	gcRows   = 2048
	GCEvery  = 32
	// Chunk is how many keys a read takes from the index at a time.
	Chunk = 512
)

// Migration is the migration whose backfill is
// Rebuild.
const Migration = "0014_task_label_order.sql"

// BucketSQL is the SQL of the bucket holding the row value (name, id),
// two SQL expressions: the last bound at or below it (0, the first bucket,
// for anything below every bound).
func BucketSQL(name, id string) string {
	return `coalesce((SELECT b FROM tasks_label_buckets WHERE (lo_name, lo_id) <= (` + name + `, ` + id +
		`) ORDER BY lo_name DESC, lo_id DESC LIMIT 1), 0)`
}

// Sizes are the index's sizes; a zero field takes its default. Tests
// shrink them to reach splits and renumberings on a few rows.
type Sizes struct {
	// Bucket is how many tasks a new bucket gets (BucketRows).
	Bucket int64
	// Split is the count at which a bucket is split (SplitRows).
	Split int64
	// Rekeys bounds the tasks a writing transaction re-keys to make room
	// for a split (InlineRekeys).
	Rekeys int64
	// Chunk is how many keys Search reads at a time (Chunk).
	Chunk int64
}

// Resolved is s with every zero field at its default.
func (s Sizes) Resolved() Sizes {
	for _, f := range []struct {
		p   *int64
		def int64
	}{{&s.Bucket, BucketRows}, {&s.Split, SplitRows}, {&s.Rekeys, InlineRekeys}, {&s.Chunk, Chunk}} {
		if *f.p <= 0 {
			*f.p = f.def
		}
	}
	return s
}

// Execer is what the label index's writes need of a transaction.
type Execer = sqlq.Execer

// Rebuild builds the index from the tasks table alone (migration 0014's
// backfill, and a bulk load's; see rebuild), with s's bucket size.
// Errors: the database's, unmapped.
func Rebuild(ctx context.Context, x Execer, s Sizes) error {
	return rebuild(ctx, x, s.Resolved().Bucket)
}

// rebuild builds the label order's index from the tasks table
// alone (migration 0014's backfill, and a bulk load's): buckets of per
// tasks in label order spread evenly over the bucket ids, every task keyed
// in one pass of the label index, the trigram index written in key order.
// Errors: the database's, wrapped by the caller.
func rebuild(ctx context.Context, x Execer, per int64) error {
	p := strconv.FormatInt(per, 10)
	// step spreads count/per+1 buckets over the ids, leaving room for
	// splits between them.
	step := `(SELECT max(1, (1 << ` + strconv.Itoa(bucketBits) + `) / (count(*) / ` + p + ` + 1)) FROM tasks)`
	// Only tasks with a text id are keyed: a NULL or BLOB id (written by
	// another program; the column allows them) would make a bound no
	// comparison orders. Those, and rowids past the keys' room, stay
	// queued: read with LIKE.
	ranked := `(SELECT rowid AS r, win_name, id, row_number() OVER (ORDER BY win_name, id) - 1 AS rn FROM tasks WHERE typeof(id) = 'text')`
	for _, q := range []string{
		`DELETE FROM tasks_label_buckets`,
		`DELETE FROM tasks_label_keys`,
		`DELETE FROM tasks_label_queue`,
		`DELETE FROM tasks_label_gc`,
		`INSERT INTO tasks_label_fts (tasks_label_fts) VALUES ('delete-all')`,
		`INSERT INTO tasks_label_buckets (lo_name, lo_id, b, n) SELECT '', '', 0, min(` + p + `, count(*)) FROM tasks`,
		`INSERT INTO tasks_label_buckets (lo_name, lo_id, b, n)
		 SELECT win_name, id, (rn / ` + p + `) * ` + step + `, min(` + p + `, (SELECT count(*) FROM tasks) - rn)
		 FROM ` + ranked + ` WHERE rn % ` + p + ` = 0 AND rn > 0`,
		`INSERT INTO tasks_label_keys (task, key)
		 SELECT r, (((rn / ` + p + `) * ` + step + `) << ` + strconv.Itoa(Shift) + `) | r FROM ` + ranked +
			` WHERE r <= ` + strconv.FormatInt(TaskMask, 10),
		`INSERT INTO tasks_label_queue (task) SELECT rowid FROM tasks WHERE rowid > ` + strconv.FormatInt(TaskMask, 10) +
			` OR typeof(id) != 'text'`,
		`INSERT INTO tasks_label_fts (rowid, name)
		 SELECT k.key, t.win_name FROM tasks_label_keys AS k CROSS JOIN tasks AS t ON t.rowid = k.task ORDER BY k.key`,
	} {
		if _, err := x.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// entry is one task's key and name in the index.
type entry struct {
	key  int64
	name string
}

// Fold indexes the tasks queued by the transaction x (up to FoldRows; see
// fold). Run inside every writing transaction of the registry, before it
// commits, so the queue is empty between transactions of clawpit's own.
// Errors: the database's, unmapped.
func Fold(ctx context.Context, x Execer, s Sizes) (int, error) {
	s = s.Resolved()
	return fold(ctx, x, FoldRows, s.Bucket, s.Split, s.Rekeys)
}

// fold indexes up to max queued tasks (their stale keys removed, the
// new ones written in key order), splits the buckets that grew past the
// split size, and (one task in GCEvery) checks gcRows keys for
// staleness. It reports how
// many tasks it took from the queue. Run inside every writing transaction
// (store.DB.Update), so the queue is empty between transactions of clawpit's own.
func fold(ctx context.Context, x Execer, max int, per, split, rekeys int64) (int, error) {
	qs, err := queuedTasks(ctx, x, max)
	if err != nil {
		return 0, err
	}
	if len(qs) == 0 {
		return 0, nil
	}
	var stale []int64
	var fresh []entry
	// Counts only grow here (a stale key's old bucket id may belong to
	// another bucket since a renumbering): an over-count costs a recount
	// when the split finds fewer tasks.
	counts := map[int64]int64{}
	for _, q := range qs {
		if q.old.Valid {
			stale = append(stale, q.old.Int64)
		}
		if !q.exists {
			if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_keys WHERE task = ?`, q.task); err != nil {
				return 0, err
			}
			continue
		}
		b := q.b
		key := b<<Shift | q.task
		fresh = append(fresh, entry{key, q.name})
		counts[b]++
		if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_keys (task, key) VALUES (?, ?)
			ON CONFLICT (task) DO UPDATE SET key = excluded.key`, q.task, key); err != nil {
			return 0, err
		}
	}
	if err := rekey(ctx, x, stale, fresh); err != nil {
		return 0, err
	}
	if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_queue WHERE task IN (SELECT value FROM json_each(?))`,
		sqlq.JSONInts(func(yield func(int64) bool) {
			for _, q := range qs {
				if !yield(q.task) {
					return
				}
			}
		})); err != nil {
		return 0, err
	}
	// The buckets to split, by their bounds: a split's renumbering may
	// change the ids of others among them.
	full, err := countBuckets(ctx, x, counts, split)
	if err != nil {
		return 0, err
	}
	for _, lb := range full {
		if err := splitBound(ctx, x, lb, per, split, rekeys); err != nil {
			return 0, err
		}
	}
	// Collect stale keys once every GCEvery rowids: a collection
	// writes its cursor, a page of its own in the commit.
	for _, q := range qs {
		if q.task%GCEvery == 0 {
			_, _, err := collect(ctx, x, gcRows)
			return len(qs), err
		}
	}
	return len(qs), nil
}

// queued is a task of the label queue: its rowid, whether it still exists,
// its name, its current key (if keyed) and its bucket by the current bounds.
type queued struct {
	task   int64
	exists bool
	name   string
	old    sql.NullInt64
	b      int64
}

// queuedTasks reads up to max tasks of the queue, in rowid order.
func queuedTasks(ctx context.Context, x Execer, max int) ([]queued, error) {
	// The bucket is found in SQL from the row itself: a name another
	// program wrote as a BLOB sorts after every text there, as in the
	// label order.
	rows, err := x.QueryContext(ctx, `SELECT q.task, t.rowid IS NOT NULL, coalesce(t.win_name, ''), k.key, `+
		BucketSQL("t.win_name", "t.id")+`
		FROM tasks_label_queue AS q LEFT JOIN tasks AS t ON t.rowid = q.task LEFT JOIN tasks_label_keys AS k ON k.task = q.task
		WHERE q.task <= `+strconv.FormatInt(TaskMask, 10)+` AND (t.rowid IS NULL OR typeof(t.id) = 'text')
		ORDER BY q.task LIMIT ?`, max)
	if err != nil {
		return nil, err
	}
	var qs []queued
	for rows.Next() {
		var q queued
		if err := rows.Scan(&q.task, &q.exists, &q.name, &q.old, &q.b); err != nil {
			rows.Close()
			return nil, err
		}
		qs = append(qs, q)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return qs, nil
}

// countBuckets adds counts (bucket id → tasks added) to the buckets'
// counts and returns the bounds of those to split: past split, or marked
// and grown past the next power of two.
func countBuckets(ctx context.Context, x Execer, counts map[int64]int64, split int64) ([]bound, error) {
	var full []bound
	for b, d := range counts {
		var lb bound
		var n int64
		// A marked bucket (negative: it could not make room) stays marked
		// for Maintain, its count growing away from zero; writers try
		// it again each time the count doubles.
		err := x.QueryRowContext(ctx, `UPDATE tasks_label_buckets SET n = CASE WHEN n < 0 THEN n - ? ELSE n + ? END WHERE b = ?
			RETURNING lo_name, lo_id, n`, d, d, b).Scan(&lb.name, &lb.id, &n)
		if err != nil {
			return nil, err
		}
		if n > split || n < 0 && bits.Len64(uint64(-n)) > bits.Len64(uint64(-n-d)) {
			full = append(full, lb)
		}
	}
	return full, nil
}

// rekey removes the stale keys from the trigram index and writes the fresh
// entries, each pass in key order: FTS5 starts a new segment whenever a
// write's rowid is lower than the last one's.
func rekey(ctx context.Context, x Execer, stale []int64, fresh []entry) error {
	slices.Sort(stale)
	for _, k := range slices.Compact(stale) {
		if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_fts WHERE rowid = ?`, k); err != nil {
			return err
		}
	}
	slices.SortFunc(fresh, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range fresh {
		if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_fts (rowid, name) VALUES (?, ?)`, e.key, e.name); err != nil {
			return err
		}
	}
	return nil
}
