package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/labelindex"
)

// The label order's name index (migration 0014, SQLite only) is
// store/internal/labelindex; these are the store's calls into it.

// labelSizes are the label index's sizes: the defaults, or a test's
// smaller ones (filterCaps.bucket, .split, .rekeys, .chunk).
func (db *DB) labelSizes() labelindex.Sizes {
	c := db.filterCap
	return labelindex.Sizes{Bucket: c.bucket, Split: c.split, Rekeys: c.rekeys, Chunk: c.chunk}
}

// MaintainLabels is the label order index's maintenance between sweeps
// (the daemon runs it after each), in transactions of a few ms so writers
// interleave: it indexes up to max tasks still queued (written by another
// program: inserts and renames; clawpit's own writes index theirs before
// they commit), then checks up to max keys for tasks that no longer exist
// (pruned, deleted) and removes theirs (labelindex.Maintain). It returns
// how many tasks it indexed and how many keys it removed. SQLite only
// (zeros on PostgreSQL, and on a registry opened read-only for a full
// disk). Errors: the database's.
func (db *DB) MaintainLabels(ctx context.Context, max int) (indexed, removed int, err error) {
	if db.lite == nil || db.full {
		return 0, 0, nil
	}
	indexed, removed, err = labelindex.Maintain(ctx, db.write, db.lite.LabelStmts(), db.labelSizes(), max, false)
	return indexed, removed, mapErr(err)
}

// MarkedLabelBuckets counts the label order's buckets that could not make
// room for a split (marked by a negative count; MaintainLabels retries
// them): reads of each sort more rows than the split size. SQLite only (0
// on PostgreSQL). Errors: the database's.
func (db *DB) MarkedLabelBuckets(ctx context.Context) (int, error) {
	if db.lite == nil {
		return 0, nil
	}
	n, err := labelindex.Marked(ctx, db.read)
	return n, mapErr(err)
}

// FoldLabels brings the label order's index up to date after a bulk load
// that bypassed the store (bench fixtures, the sqlite3 shell): rebuilt
// whole when more than a quarter of the tasks are queued, else folded in
// and maintained from the first key (labelindex.FoldAll). SQLite only (a
// no-op on PostgreSQL). Errors: the database's.
func (db *DB) FoldLabels(ctx context.Context) error {
	if db.lite == nil {
		return nil
	}
	return mapErr(labelindex.FoldAll(ctx, db.write, db.lite.LabelStmts(), db.labelSizes()))
}

// labelArm is the task filter's name arm in label order: the rowids of the
// tasks whose name contains q, from anchor (nil: the first; from: the
// anchor itself included) in the order's direction (reverse: backwards),
// at least limit of them when there are (labelindex.Search: a superset of
// the window's name matches; the caller sorts and cuts). grams are q's
// trigrams to ask the index for (at least one).
func (t *tx) labelArm(q string, grams []string, anchor []any, reverse, from bool, limit int) ([]int64, error) {
	keys := []string{"t.win_name", "t.id"}
	o := orderOf(winSort{keys: keys}, reverse, from)
	lq := labelindex.Query{Match: ftsIndex{}.allOf(grams), Like: likeArg(q), Anchor: anchor, OrderBy: o.orderBy, Reverse: reverse, Limit: limit}
	if anchor != nil {
		lq.Keyset, lq.KeyArgs = o.after(keys), anchor
	}
	ids, err := labelindex.Search(t.ctx, t.tx, lq, t.db.labelSizes())
	return ids, mapErr(err)
}

// nameGrams are q's trigrams to ask the name index for: the rarest
// maxTrigrams among the names of the table's first sampleRows rows (as
// sample does for the other fields). Nil when q is shorter than three
// characters.
func (t *tx) nameGrams(q string) ([]string, error) {
	grams := trigrams(q)
	if len(grams) == 0 {
		return nil, nil
	}
	cols := make([]string, len(grams))
	args := make([]any, len(grams))
	for i, g := range grams {
		cols[i] = `coalesce(sum(win_name LIKE ? ESCAPE '\'), 0)`
		args[i] = likeArg(g)
	}
	n := make([]int, len(grams))
	ptrs := make([]any, len(grams))
	for i := range n {
		ptrs[i] = &n[i]
	}
	err := t.tx.QueryRowContext(t.ctx, `SELECT `+strings.Join(cols, ", ")+` FROM (SELECT win_name FROM tasks LIMIT `+
		strconv.Itoa(sampleRows)+`)`, args...).Scan(ptrs...)
	if err != nil {
		return nil, mapErr(err)
	}
	return rarest(grams, n, maxTrigrams), nil
}

// IndexRebuild is what RebuildIndexes did: the tasks it indexed (every
// task, in the filter's trigram index and the label order's name index)
// and how long it held the write lock (ms).
type IndexRebuild struct {
	Engine string `json:"engine"` // "sqlite", or "postgres" (nothing to do)
	Tasks  int64  `json:"tasks"`
	Ms     int64  `json:"ms"`
}

// RebuildIndexes rebuilds the SQLite registry's own indexes of tasks from
// the tasks table alone, in one write transaction: the filter's trigram
// indexes (migration 0009: tasks_fts, tasks_error_fts) and the label
// order's name index (migration 0014), then checks that every task is
// keyed in its bucket before committing. For a registry whose indexes no longer
// match its rows: a VACUUM by a SQLite that renumbered rowids, a restore of
// a partial copy, a write by another program with the triggers dropped.
// Writers wait for it (about 15 s per million tasks). On PostgreSQL it does
// nothing: its indexes are PostgreSQL's own (REINDEX). Errors: core.ErrReadOnly
// on a registry opened read-only; the database's, mapped.
func (db *DB) RebuildIndexes(ctx context.Context) (IndexRebuild, error) {
	if db.lite == nil {
		return IndexRebuild{Engine: "postgres"}, nil
	}
	if db.full {
		return IndexRebuild{}, fmt.Errorf("%w: the registry was opened for reading only (its disk is full)", core.ErrReadOnly)
	}
	start := time.Now()
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return IndexRebuild{}, mapErr(err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`INSERT INTO tasks_fts(tasks_fts) VALUES ('delete-all')`,
		`INSERT INTO tasks_error_fts(tasks_error_fts) VALUES ('delete-all')`,
		// The same rows migration 0009's triggers write.
		`INSERT INTO tasks_fts(rowid, id, runtime, name, session)
		 SELECT rowid, id || char(1, 1), runtime || char(1, 1),
		   coalesce(nullif(label, ''), nullif(kind, ''), task) || char(1, 1),
		   coalesce(nullif(child_session, ''), owner_session, '') || char(1, 1)
		 FROM tasks`,
		`INSERT INTO tasks_error_fts(rowid, error) SELECT rowid, error || char(1, 1) FROM tasks WHERE error != ''`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return IndexRebuild{}, fmt.Errorf("rebuild the filter index: %w", mapErr(err))
		}
	}
	sizes := db.labelSizes()
	if err := labelindex.Rebuild(ctx, tx, sizes); err != nil {
		return IndexRebuild{}, fmt.Errorf("rebuild the label order index: %w", mapErr(err))
	}
	if err := labelindex.CheckKeys(ctx, tx); err != nil {
		return IndexRebuild{}, fmt.Errorf("the rebuilt label order index fails its check (nothing was changed): %w", err)
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM tasks`).Scan(&n); err != nil {
		return IndexRebuild{}, mapErr(err)
	}
	if err := tx.Commit(); err != nil {
		return IndexRebuild{}, mapErr(err)
	}
	return IndexRebuild{Engine: "sqlite", Tasks: n, Ms: time.Since(start).Milliseconds()}, nil
}
