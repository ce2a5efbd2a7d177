package labelindex

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/clawpit/clawpit/store/internal/sqlq"
)

// splitBound is splitBucket of the bucket whose lower bound is
// lb (lb.b unused).
func splitBound(ctx context.Context, x Execer, lb bound, per, split, maxRekeys int64) error {
	var b int64
	err := x.QueryRowContext(ctx, `SELECT b FROM tasks_label_buckets WHERE lo_name = ? AND lo_id = ?`, lb.name, lb.id).Scan(&b)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	return splitBucket(ctx, x, b, per, split, maxRekeys)
}

// InlineRekeys bounds the tasks a writing transaction re-keys to make
// room for a split (about 20 µs each); a larger renumbering is left to
// Maintain (maintainRekeys), and the bucket meanwhile holds more
// than the split size.
const (
	InlineRekeys   = 2048
	maintainRekeys = 32768
)

// member is an indexed task of a label range, with its current key;
// value is its name as stored (a string, or []byte for a BLOB another
// program wrote), for bounds.
type member struct {
	task     int64
	name, id string
	key      int64
	value    any
}

// bound is a bucket's lower bound (name as stored: string or []byte)
// and id.
type bound struct {
	name any
	id   string
	b    int64
}

// less orders (name, id) pairs as SQLite's BINARY collation does: any
// text before any BLOB, bytes compared within each.
func less(an any, aid string, bn any, bid string) bool {
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

// members are the indexed (not queued) tasks from bound lo (nil: the
// first task) up to bound hi (nil: the last), in label order.
func members(ctx context.Context, x Execer, lo, hi *bound) ([]member, error) {
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
	var ms []member
	for rows.Next() {
		var m member
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

// minGap is the fewest ids a split wants between a bucket and the
// next for each new piece; with fewer, respread makes room.
const minGap = 64

// splitBucket cuts bucket b, when it holds more than split index
// entries, into pieces of per tasks (its indexed tasks, in label order),
// with new bucket ids between b and the next bucket's, and re-keys the
// tasks of every piece but the first. With no ids left between the two
// it leaves the bucket whole (reads of it then sort more rows).
//
// maxRekeys bounds the tasks a renumbering may re-key to make room (0:
// none, after one already ran).
func splitBucket(ctx context.Context, x Execer, b, per, split, maxRekeys int64) error {
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
	var hi *bound
	gap := int64(1)<<bucketBits - b
	var next bound
	err = x.QueryRowContext(ctx, `SELECT b, lo_name, lo_id FROM tasks_label_buckets WHERE b > ? ORDER BY b LIMIT 1`, b).
		Scan(&next.b, &next.name, &next.id)
	switch {
	case err == nil:
		hi, gap = &next, next.b-b
	case err != sql.ErrNoRows:
		return err
	}
	ms, err := members(ctx, x, &bound{loName, loID, b}, hi)
	if err != nil {
		return err
	}
	if want := (int64(len(ms)) + per - 1) / per; want >= 2 && gap < want*minGap && maxRekeys > 0 {
		// Labels keep arriving here: renumber the buckets around it.
		nb, ok, err := respread(ctx, x, b, want, maxRekeys)
		if err != nil {
			return err
		}
		if ok {
			return splitBucket(ctx, x, nb, per, split, 0)
		}
	}
	pieces := (int64(len(ms)) + per - 1) / per
	pieces = min(pieces, gap)
	if pieces < 2 {
		// Its entries were mostly stale keys (collected later): count what
		// it holds. Or it could not make room (no ids left, or more to
		// re-key than this transaction may): a negative count marks it for
		// Maintain, and writers try again only after as many more
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
	small := max(1, min(gap/pieces, max(minGap, gap/(8*pieces)), maxStep))
	if hot == pieces-1 && hi == nil {
		small = max(1, min(gap/pieces, minGap*4)) // the end of the order: ids for millions of splits
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
	var fresh []entry
	for i := int64(1); i < pieces; i++ {
		nb := ids[i]
		part := ms[i*size : min(int64(len(ms)), (i+1)*size)]
		if _, err := x.ExecContext(ctx, `INSERT INTO tasks_label_buckets (lo_name, lo_id, b, n) VALUES (?, ?, ?, ?)`,
			part[0].value, part[0].id, nb, len(part)); err != nil {
			return err
		}
		for _, m := range part {
			key := nb<<Shift | m.task
			stale = append(stale, m.key)
			fresh = append(fresh, entry{key, m.name})
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

// respread makes room after bucket b for need new buckets: it
// takes the buckets around b, twice as many each time, until their ids span
// minGap ids for each of them and for each new one, and renumbers them
// evenly over that span (b with need shares), re-keying their tasks. The
// first bucket of the run keeps its id (bucket 0 stays the first). ok is
// false when even every bucket's ids are too few (then b stays whole); nb
// is b's new id. The order-maintenance relabelling of a list: the buckets
// renumbered cost their tasks' re-keying, and labels arriving at one point
// double the run each time the ids there run out again.
func respread(ctx context.Context, x Execer, b, need, maxRekeys int64) (nb int64, ok bool, err error) {
	ids := func(q string, args ...any) ([]int64, error) { return sqlq.QueryColumn[int64](ctx, x, q, args...) }
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
		fence := int64(1) << bucketBits
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
			return b, false, nil // too many to re-key here: left to Maintain, or the bucket stays whole
		}
		whole := int64(len(left)) < k && int64(len(right)) < k && fence == int64(1)<<bucketBits
		// Room for four times the fewest ids, so the next renumbering here
		// comes after many more splits.
		if fence-first < (count+need)*minGap*4 {
			if whole {
				return b, false, nil
			}
			continue
		}
		return renumber(ctx, x, first, last, fence, b, need)
	}
}

// renumber gives the buckets first…last (ids) new ids spread
// evenly from first up to fence, b with need more shares than the others,
// and re-keys their tasks. It returns b's new id.
func renumber(ctx context.Context, x Execer, first, last, fence, b, need int64) (int64, bool, error) {
	rows, err := x.QueryContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE b BETWEEN ? AND ? ORDER BY b`, first, last)
	if err != nil {
		return 0, false, err
	}
	var bounds []bound
	for rows.Next() {
		var lb bound
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
	var hi *bound
	if fence < int64(1)<<bucketBits {
		var f bound
		if err := x.QueryRowContext(ctx, `SELECT lo_name, lo_id, b FROM tasks_label_buckets WHERE b = ?`, fence).
			Scan(&f.name, &f.id, &f.b); err != nil {
			return 0, false, err
		}
		hi = &f
	}
	ms, err := members(ctx, x, &bounds[0], hi)
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
	var fresh []entry
	i := 0
	for _, m := range ms {
		for i+1 < len(bounds) && !less(m.value, m.id, bounds[i+1].name, bounds[i+1].id) {
			i++
		}
		key := newID[bounds[i].b]<<Shift | m.task
		if key == m.key {
			continue
		}
		stale = append(stale, m.key)
		fresh = append(fresh, entry{key, m.name})
		if _, err := x.ExecContext(ctx, `UPDATE tasks_label_keys SET key = ? WHERE task = ?`, key, m.task); err != nil {
			return 0, false, err
		}
	}
	return nb, true, rekey(ctx, x, stale, fresh)
}
