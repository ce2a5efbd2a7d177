package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The label order's name index (migration 0014, SQLite): the tasks' names
// in a trigram index keyed bucket << labelShift | rowid, so the matches of
// a text come in label order bucket by bucket (see the migration for the
// tables).
//
// Invariants, kept inside every writing transaction:
//   - every task is either in tasks_label_queue or has a row in
//     tasks_label_keys whose key is (its bucket by the current bounds) <<
//     labelShift | its rowid, and that key is in tasks_label_fts with its
//     current name;
//   - a key in tasks_label_fts either is some task's key in
//     tasks_label_keys or is stale (its task deleted, renamed, or re-keyed
//     while queued): stale keys are never counted as matches.
//
// Bucket ids are below 1 << labelBucketBits and rowids below 1 <<
// labelShift (8.6 billion tasks inserted over a registry's life), so every
// key is a positive int64. A task with a larger rowid (set explicitly by
// another program, and every task inserted after it) is never keyed: it
// stays in the queue, which reads read with LIKE.
const (
	labelShift      = 33
	labelTaskMask   = 1<<labelShift - 1
	labelBucketBits = 30
	// labelBucketRows is how many tasks a new bucket gets (the backfill's
	// and a split's); labelSplitRows is the size at which the store splits
	// one: a read sorts at most one partial bucket on each side.
	labelBucketRows = 256
	labelSplitRows  = 1024
	// labelMaxStep is the widest gap a split leaves between new buckets:
	// labels that keep arriving at one end (timestamps) then get about
	// 2^30 / 2^14 splits before the ids run out there.
	labelMaxStep = 1 << 14
	// labelFoldRows bounds how many queued tasks one writing transaction
	// indexes; one in labelGCEvery of them checks labelGCRows keys for
	// staleness too.
	labelFoldRows = 512
	labelGCRows   = 2048
	labelGCEvery  = 32
	// labelChunk is how many keys a read takes from the index at a time.
	labelChunk = 512
)

// labelOrderMigration is the migration whose backfill is
// rebuildLabelOrder.
const labelOrderMigration = "0014_task_label_order.sql"

// labelBucketSQL is the SQL of the bucket holding the row value (name, id),
// two SQL expressions: the last bound at or below it (0, the first bucket,
// for anything below every bound).
func labelBucketSQL(name, id string) string {
	return `coalesce((SELECT b FROM tasks_label_buckets WHERE (lo_name, lo_id) <= (` + name + `, ` + id +
		`) ORDER BY lo_name DESC, lo_id DESC LIMIT 1), 0)`
}

// labelSizes are the bucket sizes (labelBucketRows, labelSplitRows), or a
// test's smaller ones (filterCaps.bucket, .split).
func (db *DB) labelSizes() (per, split int64) {
	per, split = labelBucketRows, labelSplitRows
	if db.filterCap.bucket > 0 {
		per = db.filterCap.bucket
	}
	if db.filterCap.split > 0 {
		split = db.filterCap.split
	}
	return per, split
}

// labelRekeys is how many tasks a writing transaction re-keys at most to
// make room for a split (labelInlineRekeys, or a test's smaller
// filterCaps.rekeys).
func (db *DB) labelRekeys() int64 {
	if db.filterCap.rekeys > 0 {
		return db.filterCap.rekeys
	}
	return labelInlineRekeys
}

// execer is what the label index's writes need of a transaction.
type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// rebuildLabelOrder builds the label order's index from the tasks table
// alone (migration 0014's backfill, and a bulk load's): buckets of per
// tasks in label order spread evenly over the bucket ids, every task keyed
// in one pass of the label index, the trigram index written in key order.
// Errors: the database's, wrapped by the caller.
func rebuildLabelOrder(ctx context.Context, x execer, per int64) error {
	p := strconv.FormatInt(per, 10)
	// step spreads count/per+1 buckets over the ids, leaving room for
	// splits between them.
	step := `(SELECT max(1, (1 << ` + strconv.Itoa(labelBucketBits) + `) / (count(*) / ` + p + ` + 1)) FROM tasks)`
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
		 SELECT r, (((rn / ` + p + `) * ` + step + `) << ` + strconv.Itoa(labelShift) + `) | r FROM ` + ranked +
			` WHERE r <= ` + strconv.FormatInt(labelTaskMask, 10),
		`INSERT INTO tasks_label_queue (task) SELECT rowid FROM tasks WHERE rowid > ` + strconv.FormatInt(labelTaskMask, 10) +
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

// labelEntry is one task's key and name in the index.
type labelEntry struct {
	key  int64
	name string
}

// foldLabels indexes up to max queued tasks (their stale keys removed, the
// new ones written in key order), splits the buckets that grew past the
// split size, and (one task in labelGCEvery) checks labelGCRows keys for
// staleness. It reports how
// many tasks it took from the queue. Run inside every writing transaction
// (Update), so the queue is empty between transactions of clawpit's own.
func foldLabels(ctx context.Context, x execer, max int, per, split, rekeys int64) (int, error) {
	// The bucket is found in SQL from the row itself: a name another
	// program wrote as a BLOB sorts after every text there, as in the
	// label order.
	rows, err := x.QueryContext(ctx, `SELECT q.task, t.rowid IS NOT NULL, coalesce(t.win_name, ''), k.key, `+
		labelBucketSQL("t.win_name", "t.id")+`
		FROM tasks_label_queue AS q LEFT JOIN tasks AS t ON t.rowid = q.task LEFT JOIN tasks_label_keys AS k ON k.task = q.task
		WHERE q.task <= `+strconv.FormatInt(labelTaskMask, 10)+` AND (t.rowid IS NULL OR typeof(t.id) = 'text')
		ORDER BY q.task LIMIT ?`, max)
	if err != nil {
		return 0, err
	}
	type queued struct {
		task   int64
		exists bool
		name   string
		old    sql.NullInt64
		b      int64
	}
	var qs []queued
	for rows.Next() {
		var q queued
		if err := rows.Scan(&q.task, &q.exists, &q.name, &q.old, &q.b); err != nil {
			rows.Close()
			return 0, err
		}
		qs = append(qs, q)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if len(qs) == 0 {
		return 0, nil
	}
	var stale []int64
	var fresh []labelEntry
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
		key := b<<labelShift | q.task
		fresh = append(fresh, labelEntry{key, q.name})
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
		jsonInts(func(yield func(int64) bool) {
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
	var full []labelBound
	for b, d := range counts {
		var lb labelBound
		var n int64
		// A marked bucket (negative: it could not make room) stays marked
		// for MaintainLabels, its count growing away from zero; writers try
		// it again each time the count doubles.
		err := x.QueryRowContext(ctx, `UPDATE tasks_label_buckets SET n = CASE WHEN n < 0 THEN n - ? ELSE n + ? END WHERE b = ?
			RETURNING lo_name, lo_id, n`, d, d, b).Scan(&lb.name, &lb.id, &n)
		if err != nil {
			return 0, err
		}
		if n > split || n < 0 && bits.Len64(uint64(-n)) > bits.Len64(uint64(-n-d)) {
			full = append(full, lb)
		}
	}
	for _, lb := range full {
		if err := splitLabelBound(ctx, x, lb, per, split, rekeys); err != nil {
			return 0, err
		}
	}
	// Collect stale keys once every labelGCEvery rowids: a collection
	// writes its cursor, a page of its own in the commit.
	for _, q := range qs {
		if q.task%labelGCEvery == 0 {
			_, _, err := collectLabels(ctx, x, labelGCRows)
			return len(qs), err
		}
	}
	return len(qs), nil
}

// rekey removes the stale keys from the trigram index and writes the fresh
// entries, each pass in key order: FTS5 starts a new segment whenever a
// write's rowid is lower than the last one's.
func rekey(ctx context.Context, x execer, stale []int64, fresh []labelEntry) error {
	slices.Sort(stale)
	for _, k := range slices.Compact(stale) {
		if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_fts WHERE rowid = ?`, k); err != nil {
			return err
		}
	}
	slices.SortFunc(fresh, func(a, b labelEntry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range fresh {
		if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_fts (rowid, name) VALUES (?, ?)`, e.key, e.name); err != nil {
			return err
		}
	}
	return nil
}

// queryColumn runs q and returns its one column's values. Errors: the
// database's, unmapped.
func queryColumn[T any](ctx context.Context, x execer, q string, args ...any) ([]T, error) {
	rows, err := x.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// jsonInts is a JSON array of the values (for json_each).
func jsonInts(seq iter.Seq[int64]) string {
	var b strings.Builder
	b.WriteByte('[')
	first := true
	seq(func(v int64) bool {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(strconv.FormatInt(v, 10))
		return true
	})
	b.WriteByte(']')
	return b.String()
}

// splitLabelBound is splitLabelBucket of the bucket whose lower bound is
// lb (lb.b unused).
func splitLabelBound(ctx context.Context, x execer, lb labelBound, per, split, maxRekeys int64) error {
	var b int64
	err := x.QueryRowContext(ctx, `SELECT b FROM tasks_label_buckets WHERE lo_name = ? AND lo_id = ?`, lb.name, lb.id).Scan(&b)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	return splitLabelBucket(ctx, x, b, per, split, maxRekeys)
}

// labelInlineRekeys bounds the tasks a writing transaction re-keys to make
// room for a split (about 20 µs each); a larger renumbering is left to
// MaintainLabels (labelMaintainRekeys), and the bucket meanwhile holds more
// than the split size.
const (
	labelInlineRekeys   = 2048
	labelMaintainRekeys = 32768
)

// labelMember is an indexed task of a label range, with its current key;
// value is its name as stored (a string, or []byte for a BLOB another
// program wrote), for bounds.
type labelMember struct {
	task     int64
	name, id string
	key      int64
	value    any
}

// labelBound is a bucket's lower bound (name as stored: string or []byte)
// and id.
type labelBound struct {
	name any
	id   string
	b    int64
}

// labelLess orders (name, id) pairs as SQLite's BINARY collation does: any
// text before any BLOB, bytes compared within each.
func labelLess(an any, aid string, bn any, bid string) bool {
	ab, aBlob := an.([]byte)
	bb, bBlob := bn.([]byte)
	switch {
	case aBlob != bBlob:
		return !aBlob
	case aBlob:
		if c := strings.Compare(string(ab), string(bb)); c != 0 {
			return c < 0
		}
	default:
		as, _ := an.(string)
		bs, _ := bn.(string)
		if as != bs {
			return as < bs
		}
	}
	return aid < bid
}

// labelMembers are the indexed (not queued) tasks from bound lo (nil: the
// first task) up to bound hi (nil: the last), in label order.
func labelMembers(ctx context.Context, x execer, lo, hi *labelBound) ([]labelMember, error) {
	where, args := "1", []any(nil)
	if lo != nil && lo.b != 0 { // the first bucket holds everything below the second
		where += ` AND (t.win_name, t.id) >= (?, ?)`
		args = append(args, lo.name, lo.id)
	}
	if hi != nil {
		where += ` AND (t.win_name, t.id) < (?, ?)`
		args = append(args, hi.name, hi.id)
	}
	rows, err := x.QueryContext(ctx, `SELECT t.rowid, t.win_name, t.id, k.key FROM tasks AS t INDEXED BY tasks_win_label
		CROSS JOIN tasks_label_keys AS k ON k.task = t.rowid
		WHERE `+where+` AND NOT EXISTS (SELECT 1 FROM tasks_label_queue AS q WHERE q.task = t.rowid)
		ORDER BY t.win_name, t.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []labelMember
	for rows.Next() {
		var m labelMember
		if err := rows.Scan(&m.task, &m.value, &m.id, &m.key); err != nil {
			return nil, err
		}
		switch v := m.value.(type) {
		case []byte:
			m.value = slices.Clone(v)
			m.name = string(v)
		case string:
			m.name = v
		default:
			m.name = fmt.Sprint(v)
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// labelMinGap is the fewest ids a split wants between a bucket and the
// next for each new piece; with fewer, respreadLabelBuckets makes room.
const labelMinGap = 64

// splitLabelBucket cuts bucket b, when it holds more than split index
// entries, into pieces of per tasks (its indexed tasks, in label order),
// with new bucket ids between b and the next bucket's, and re-keys the
// tasks of every piece but the first. With no ids left between the two
// it leaves the bucket whole (reads of it then sort more rows).
//
// maxRekeys bounds the tasks a renumbering may re-key to make room (0:
// none, after one already ran).
func splitLabelBucket(ctx context.Context, x execer, b, per, split, maxRekeys int64) error {
	var n int64
	var loName any
	var loID string
	err := x.QueryRowContext(ctx, `SELECT n, lo_name, lo_id FROM tasks_label_buckets WHERE b = ?`, b).Scan(&n, &loName, &loID)
	if err == sql.ErrNoRows || (err == nil && n >= 0 && n <= split) {
		return nil
	}
	if err != nil {
		return err
	}
	var hi *labelBound
	gap := int64(1)<<labelBucketBits - b
	var next labelBound
	err = x.QueryRowContext(ctx, `SELECT b, lo_name, lo_id FROM tasks_label_buckets WHERE b > ? ORDER BY b LIMIT 1`, b).
		Scan(&next.b, &next.name, &next.id)
	switch {
	case err == nil:
		hi, gap = &next, next.b-b
	case err != sql.ErrNoRows:
		return err
	}
	ms, err := labelMembers(ctx, x, &labelBound{loName, loID, b}, hi)
	if err != nil {
		return err
	}
	if want := (int64(len(ms)) + per - 1) / per; want >= 2 && gap < want*labelMinGap && maxRekeys > 0 {
		// Labels keep arriving here: renumber the buckets around it.
		nb, ok, err := respreadLabelBuckets(ctx, x, b, want, maxRekeys)
		if err != nil {
			return err
		}
		if ok {
			return splitLabelBucket(ctx, x, nb, per, split, 0)
		}
	}
	pieces := (int64(len(ms)) + per - 1) / per
	pieces = min(pieces, gap)
	if pieces < 2 {
		// Its entries were mostly stale keys (collected later): count what
		// it holds. Or it could not make room (no ids left, or more to
		// re-key than this transaction may): a negative count marks it for
		// MaintainLabels, and writers try again only after as many more
		// tasks arrive there, not on every write.
		held := int64(len(ms))
		if held > split {
			held = -held
		}
		_, err := x.ExecContext(ctx, `UPDATE tasks_label_buckets SET n = ? WHERE b = ?`, held, b)
		return err
	}
	size := (int64(len(ms)) + pieces - 1) / pieces
	pieces = (int64(len(ms)) + size - 1) / size
	// The piece holding the newest task (the highest rowid) is where
	// labels are arriving: it keeps most of the ids up to the next bucket,
	// the others get a small share each, so labels arriving at one point
	// use the ids up slowly (a gap shrinks by 7/8 per split there, not by
	// the number of pieces).
	hot, newest := int64(0), int64(-1)
	for i, m := range ms {
		if m.task > newest {
			hot, newest = int64(i)/size, m.task
		}
	}
	small := max(1, min(gap/pieces, max(labelMinGap, gap/(8*pieces)), labelMaxStep))
	if hot == pieces-1 && hi == nil {
		small = max(1, min(gap/pieces, labelMinGap*4)) // the end of the order: ids for millions of splits
	}
	ids := make([]int64, pieces)
	ids[0] = b
	for i := int64(1); i < pieces; i++ {
		step := small
		if i-1 == hot {
			step = gap - (pieces-1)*small
		}
		ids[i] = ids[i-1] + step
	}
	var stale []int64
	var fresh []labelEntry
	for i := int64(1); i < pieces; i++ {
		nb := ids[i]
		part := ms[i*size : min(int64(len(ms)), (i+1)*size)]
		if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_buckets (lo_name, lo_id, b, n) VALUES (?, ?, ?, ?)`,
			part[0].value, part[0].id, nb, len(part)); err != nil {
			return err
		}
		for _, m := range part {
			key := nb<<labelShift | m.task
			stale = append(stale, m.key)
			fresh = append(fresh, labelEntry{key, m.name})
			if _, err := x.ExecContext(ctx, `UPDATE tasks_label_keys SET key = ? WHERE task = ?`, key, m.task); err != nil {
				return err
			}
		}
	}
	if _, err := x.ExecContext(ctx, `UPDATE tasks_label_buckets SET n = ? WHERE b = ?`, min(size, int64(len(ms))), b); err != nil {
		return err
	}
	return rekey(ctx, x, stale, fresh)
}

// respreadLabelBuckets makes room after bucket b for need new buckets: it
// takes the buckets around b, twice as many each time, until their ids span
// labelMinGap ids for each of them and for each new one, and renumbers them
// evenly over that span (b with need shares), re-keying their tasks. The
// first bucket of the run keeps its id (bucket 0 stays the first). ok is
// false when even every bucket's ids are too few (then b stays whole); nb
// is b's new id. The order-maintenance relabelling of a list: the buckets
// renumbered cost their tasks' re-keying, and labels arriving at one point
// double the run each time the ids there run out again.
func respreadLabelBuckets(ctx context.Context, x execer, b, need, maxRekeys int64) (nb int64, ok bool, err error) {
	ids := func(q string, args ...any) ([]int64, error) { return queryColumn[int64](ctx, x, q, args...) }
	for k := int64(1); ; k *= 2 {
		left, err := ids(`SELECT b FROM tasks_label_buckets WHERE b < ? ORDER BY b DESC LIMIT ?`, b, k)
		if err != nil {
			return 0, false, err
		}
		right, err := ids(`SELECT b FROM tasks_label_buckets WHERE b > ? ORDER BY b LIMIT ?`, b, k+1)
		if err != nil {
			return 0, false, err
		}
		first := b
		if len(left) > 0 {
			first = left[len(left)-1]
		}
		fence := int64(1) << labelBucketBits
		last := b
		if int64(len(right)) > k {
			fence = right[k]
			right = right[:k]
		}
		if len(right) > 0 {
			last = right[len(right)-1]
		}
		count := int64(len(left) + 1 + len(right))
		var tasks int64
		if err := x.QueryRowContext(ctx, `SELECT coalesce(sum(abs(n)), 0) FROM tasks_label_buckets WHERE b BETWEEN ? AND ?`, first, last).
			Scan(&tasks); err != nil {
			return 0, false, err
		}
		if tasks > maxRekeys {
			return b, false, nil // too many to re-key here: left to MaintainLabels, or the bucket stays whole
		}
		whole := int64(len(left)) < k && int64(len(right)) < k && fence == int64(1)<<labelBucketBits
		// Room for four times the fewest ids, so the next renumbering here
		// comes after many more splits.
		if fence-first < (count+need)*labelMinGap*4 {
			if whole {
				return b, false, nil
			}
			continue
		}
		return renumberLabelBuckets(ctx, x, first, last, fence, b, need)
	}
}

// renumberLabelBuckets gives the buckets first…last (ids) new ids spread
// evenly from first up to fence, b with need more shares than the others,
// and re-keys their tasks. It returns b's new id.
func renumberLabelBuckets(ctx context.Context, x execer, first, last, fence, b, need int64) (int64, bool, error) {
	rows, err := x.QueryContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE b BETWEEN ? AND ? ORDER BY b`, first, last)
	if err != nil {
		return 0, false, err
	}
	var bounds []labelBound
	for rows.Next() {
		var lb labelBound
		if err := rows.Scan(&lb.name, &lb.id, &lb.b); err != nil {
			rows.Close()
			return 0, false, err
		}
		bounds = append(bounds, lb)
	}
	if err := rows.Close(); err != nil {
		return 0, false, err
	}
	shares := int64(len(bounds)) + need
	step := (fence - first) / shares
	newID := make(map[int64]int64, len(bounds))
	at, nb := first, b
	for _, lb := range bounds {
		newID[lb.b] = at
		if lb.b == b {
			nb = at
			at += step * (1 + need)
		} else {
			at += step
		}
	}
	var hi *labelBound
	if fence < int64(1)<<labelBucketBits {
		var f labelBound
		if err := x.QueryRowContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE b = ?`, fence).
			Scan(&f.name, &f.id, &f.b); err != nil {
			return 0, false, err
		}
		hi = &f
	}
	ms, err := labelMembers(ctx, x, &bounds[0], hi)
	if err != nil {
		return 0, false, err
	}
	// Ids are unique: move the run out of the way (negative), then in.
	if _, err := x.ExecContext(ctx, `UPDATE tasks_label_buckets SET b = -1 - b WHERE b BETWEEN ? AND ?`, first, last); err != nil {
		return 0, false, err
	}
	for _, lb := range bounds {
		if _, err := x.ExecContext(ctx, `UPDATE tasks_label_buckets SET b = ? WHERE b = ?`, newID[lb.b], -1-lb.b); err != nil {
			return 0, false, err
		}
	}
	var stale []int64
	var fresh []labelEntry
	i := 0
	for _, m := range ms {
		for i+1 < len(bounds) && !labelLess(m.value, m.id, bounds[i+1].name, bounds[i+1].id) {
			i++
		}
		key := newID[bounds[i].b]<<labelShift | m.task
		if key == m.key {
			continue
		}
		stale = append(stale, m.key)
		fresh = append(fresh, labelEntry{key, m.name})
		if _, err := x.ExecContext(ctx, `UPDATE tasks_label_keys SET key = ? WHERE task = ?`, key, m.task); err != nil {
			return 0, false, err
		}
	}
	return nb, true, rekey(ctx, x, stale, fresh)
}

// collectLabels checks up to max keys, from where the last check stopped
// (by rowid, wrapping at the end), and removes those whose task no longer
// exists (pruned or deleted): their index entries, keys and bucket counts.
// It reports how many it removed and whether it reached the end (the next
// check starts from the first key).
func collectLabels(ctx context.Context, x execer, limit int) (removed int, wrapped bool, err error) {
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
		if _, err := x.ExecContext(ctx, `DELETE FROM tasks_label_keys WHERE task = ?`, k&labelTaskMask); err != nil {
			return 0, false, err
		}
	}
	return len(gone), wrapped, nil
}

// MaintainLabels is the label order index's maintenance between sweeps
// (the daemon runs it after each), in transactions of a few ms so writers
// interleave: it indexes up to max tasks still queued (written by another
// program: inserts and renames; clawpit's own writes index theirs before
// they commit), then checks up to max keys for tasks that no longer exist
// (pruned, deleted) and removes theirs; when it removed many it merges the
// index's segments a step (FTS5 'merge'), so reads skip fewer deleted
// entries. Pruning writes nothing to the index (a sweep stays as fast as
// before it) and inserts collect only a little: this is where most keys of
// pruned tasks go. It returns how many tasks it indexed and how many keys
// it removed. SQLite only (zeros on PostgreSQL). Errors: the database's.
func (db *DB) MaintainLabels(ctx context.Context, max int) (indexed, removed int, err error) {
	return db.maintainLabels(ctx, max, false)
}

// maintainLabels is MaintainLabels; fromStart begins the collection at the
// first key (a whole pass when max allows), not where the last one stopped.
func (db *DB) maintainLabels(ctx context.Context, max int, fromStart bool) (indexed, removed int, err error) {
	if db.dialect != dialectSQLite || db.full {
		return 0, 0, nil
	}
	per, split := db.labelSizes()
	for indexed < max {
		var n int
		err := db.writeTx(ctx, func(tx *sql.Tx) error {
			var err error
			n, err = foldLabels(ctx, tx, min(labelFoldRows, max-indexed), per, split, db.labelRekeys())
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
	// Buckets past the split size whose split needed more re-keying than
	// a writer's transaction does, and queue rows of deleted tasks past
	// the keys' room.
	err = db.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tasks_label_queue WHERE task > ? AND NOT EXISTS
			(SELECT 1 FROM tasks WHERE rowid = tasks_label_queue.task)`, int64(labelTaskMask)); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return indexed, removed, err
	}
	full, err := db.fullLabelBuckets(ctx, split)
	if err != nil {
		return indexed, removed, err
	}
	for _, lb := range full {
		if err := db.writeTx(ctx, func(tx *sql.Tx) error {
			return splitLabelBound(ctx, cachedTx{tx, &db.labelStmts}, lb, per, split, labelMaintainRekeys)
		}); err != nil {
			return indexed, removed, err
		}
	}
	if fromStart {
		if _, err := db.write.ExecContext(ctx, `DELETE FROM tasks_label_gc`); err != nil {
			return indexed, removed, mapErr(err)
		}
	}
	for checked := 0; checked < max; checked += labelCollectRows {
		var n int
		var wrapped bool
		err := db.writeTx(ctx, func(tx *sql.Tx) error {
			var err error
			n, wrapped, err = collectLabels(ctx, tx, min(labelCollectRows, max-checked))
			if err == nil && n >= labelMergeAfter {
				_, err = tx.ExecContext(ctx, `INSERT INTO tasks_label_fts (tasks_label_fts, rank) VALUES ('merge', 500)`)
			}
			return err
		})
		if err != nil {
			return indexed, removed, err
		}
		removed += n
		if wrapped {
			break
		}
	}
	return indexed, removed, nil
}

// MarkedLabelBuckets counts the label order's buckets that could not make
// room for a split (marked by a negative count; MaintainLabels retries
// them): reads of each sort more rows than the split size. SQLite only (0
// on PostgreSQL). Errors: the database's.
func (db *DB) MarkedLabelBuckets(ctx context.Context) (int, error) {
	if db.dialect != dialectSQLite {
		return 0, nil
	}
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM tasks_label_buckets WHERE n < 0`).Scan(&n)
	return n, mapErr(err)
}

// fullLabelBuckets are the bounds of the buckets counted past split, or
// marked (a negative count) as past it with no room made.
func (db *DB) fullLabelBuckets(ctx context.Context, split int64) ([]labelBound, error) {
	rows, err := db.write.QueryContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE n > ? OR n < 0 ORDER BY b`, split)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []labelBound
	for rows.Next() {
		var lb labelBound
		if err := rows.Scan(&lb.name, &lb.id, &lb.b); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, lb)
	}
	return out, mapErr(rows.Err())
}

// labelCollectRows is how many keys one transaction of CollectLabels checks
// (a few ms); labelMergeAfter how many removed keys call for a merge step.
const (
	labelCollectRows = 8192
	labelMergeAfter  = 1000
)

// FoldLabels brings the label order's index up to date after a bulk load
// that bypassed the store (bench fixtures, the sqlite3 shell): a queue
// larger than a quarter of the tasks is rebuilt whole (one pass, in one
// transaction), a smaller one is indexed labelFoldRows tasks per
// transaction; then, as MaintainLabels does, marked buckets are split and
// every stale key is collected, from the first. SQLite only (a no-op on
// PostgreSQL). Errors: the database's.
func (db *DB) FoldLabels(ctx context.Context) error {
	if db.dialect != dialectSQLite {
		return nil
	}
	per, _ := db.labelSizes()
	var queued, tasks int64
	if err := db.write.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tasks_label_queue AS q JOIN tasks AS t ON t.rowid = q.task WHERE q.task <= `+
		strconv.FormatInt(labelTaskMask, 10)+`), (SELECT count(*) FROM tasks)`).
		Scan(&queued, &tasks); err != nil {
		return mapErr(err)
	}
	if queued > 0 && queued*4 > tasks {
		return db.writeTx(ctx, func(tx *sql.Tx) error { return rebuildLabelOrder(ctx, tx, per) })
	}
	_, _, err := db.maintainLabels(ctx, math.MaxInt, true)
	return err
}

// writeTx runs fn in one write transaction of the SQLite connection.
func (db *DB) writeTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return mapErr(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return mapErr(err)
	}
	return mapErr(tx.Commit())
}

// labelArm is the task filter's name arm in label order: the rowids of the
// tasks whose name contains q (LIKE), from anchor (nil: the first; from:
// the anchor itself included) in the order's direction (reverse:
// backwards), at least limit of them when there are, read through the
// name index bucket by bucket. A bucket is read whole (its keys are not in
// label order within it), so the rowids are a superset of the window's
// name matches: the caller sorts and cuts. grams are q's trigrams to ask
// the index for (at least one).
func (t *tx) labelArm(q string, grams []string, anchor []any, reverse, from bool, limit int) ([]int64, error) {
	match := ftsIndex{}.allOf(grams)
	like := likeArg(q)
	o := orderOf(winSort{keys: []string{"t.win_name", "t.id"}}, reverse, from)
	keyset, keyArgs := "", []any(nil)
	var start int64
	if reverse {
		start = math.MaxInt64
	}
	if anchor != nil {
		keyset, keyArgs = o.after([]string{"t.win_name", "t.id"}), anchor
		var b int64
		if err := t.tx.QueryRowContext(t.ctx, `SELECT `+labelBucketSQL("?", "?"), anchor[0], anchor[1]).Scan(&b); err != nil {
			return nil, mapErr(err)
		}
		start = b << labelShift
		if reverse {
			start |= labelTaskMask
		}
	}
	// Tasks not yet indexed (written outside clawpit since its last
	// write): read with LIKE, at most a window of them.
	out, err := queryColumn[int64](t.ctx, t.tx, `SELECT t.rowid FROM tasks_label_queue AS q CROSS JOIN tasks AS t ON t.rowid = q.task
		WHERE t.win_name LIKE ? ESCAPE '\'`+keyset+o.orderBy+` LIMIT ?`, append(append([]any{like}, keyArgs...), limit)...)
	if err != nil {
		return nil, mapErr(err)
	}
	op, dir := ">=", "ASC"
	if reverse {
		op, dir = "<=", "DESC"
	}
	chunk := labelChunk
	if c := t.db.filterCap.chunk; c > 0 {
		chunk = int(c)
	}
	found := 0
	var pending []int64
	for {
		keys, err := t.labelKeys(match, op, dir, start, chunk)
		if err != nil {
			return nil, err
		}
		done := len(keys) < chunk
		pending = append(pending, keys...)
		// The keys of buckets wholly read: all but the last key's bucket,
		// unless the index has no more.
		cut := len(pending)
		if !done {
			lastB := keys[len(keys)-1] >> labelShift
			for cut > 0 && pending[cut-1]>>labelShift == lastB {
				cut--
			}
		}
		if cut > 0 {
			ids, err := t.labelMatches(pending[:cut], like, keyset, keyArgs)
			if err != nil {
				return nil, err
			}
			out = append(out, ids...)
			found += len(ids)
			pending = pending[cut:]
		}
		if done || found >= limit {
			return out, nil
		}
		start = keys[len(keys)-1]
		if reverse {
			start--
		} else {
			start++
		}
	}
}

// labelKeys is the next chunk keys of the name index matching match, from
// start in the direction of op (">=" or "<=") and dir.
func (t *tx) labelKeys(match, op, dir string, start int64, chunk int) ([]int64, error) {
	keys, err := queryColumn[int64](t.ctx, t.tx, `SELECT rowid FROM tasks_label_fts WHERE tasks_label_fts MATCH ? AND rowid `+op+
		` ? ORDER BY rowid `+dir+` LIMIT `+strconv.Itoa(chunk), match, start)
	return keys, mapErr(err)
}

// labelMatches are the rowids, among the tasks keyed keys, whose key is
// current (not stale, not queued) and whose name contains the LIKE pattern,
// on the keyset's side of the anchor.
func (t *tx) labelMatches(keys []int64, like, keyset string, keyArgs []any) ([]int64, error) {
	ids, err := queryColumn[int64](t.ctx, t.tx, `SELECT t.rowid FROM json_each(?) AS j
		CROSS JOIN tasks_label_keys AS k ON k.task = (j.value & `+strconv.FormatInt(labelTaskMask, 10)+`) AND k.key = j.value
		CROSS JOIN tasks AS t ON t.rowid = k.task
		WHERE NOT EXISTS (SELECT 1 FROM tasks_label_queue AS q WHERE q.task = t.rowid)
		  AND t.win_name LIKE ? ESCAPE '\'`+keyset, append([]any{jsonInts(slices.Values(keys)), like}, keyArgs...)...)
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

// stmtCache holds the label index's write statements prepared on the write
// pool (SQLite: one connection), so every transaction after the first runs
// them without preparing them again (Tx.StmtContext reuses a statement
// already prepared on the transaction's connection). A statement is
// prepared after the transaction that first ran it commits: the
// connection is busy before.
type stmtCache struct {
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	miss map[string]bool
}

// stmtCacheMax bounds the cache (the label index's statements number about
// twenty).
const stmtCacheMax = 64

// cachedTx runs statements through a stmtCache: an execer.
type cachedTx struct {
	tx *sql.Tx
	c  *stmtCache
}

func (c cachedTx) stmt(ctx context.Context, q string) *sql.Stmt {
	c.c.mu.Lock()
	s := c.c.m[q]
	if s == nil {
		if c.c.miss == nil {
			c.c.miss = map[string]bool{}
		}
		c.c.miss[q] = true
	}
	c.c.mu.Unlock()
	if s == nil {
		return nil
	}
	return c.tx.StmtContext(ctx, s)
}

func (c cachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s := c.stmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, q, args...)
}

func (c cachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := c.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, q, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if s := c.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, q, args...)
}

// warm prepares the statements transactions missed, on db (call with no
// transaction of this process open on it, or it waits for one to end).
func (c *stmtCache) warm(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	var qs []string
	for q := range c.miss {
		if len(c.m)+len(qs) < stmtCacheMax {
			qs = append(qs, q)
		}
	}
	clear(c.miss)
	c.mu.Unlock()
	for _, q := range qs {
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue // runs unprepared, as before
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if old := c.m[q]; old != nil {
			old.Close()
		}
		c.m[q] = s
		c.mu.Unlock()
	}
}

// close closes the prepared statements.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	clear(c.m)
}
