package labelindex

import (
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/clawpit/clawpit/store/internal/sqlq"
)

// Query is one read of the index by Search.
type Query struct {
	// Match is the FTS5 MATCH expression of the text's trigrams (at
	// least one).
	Match string
	// Like is the text as a LIKE pattern (ESCAPE '\'), the exact test.
	Like string
	// Anchor is the (win_name, id) the read starts from; nil: the first
	// row in the read's direction.
	Anchor []any
	// Keyset is the SQL condition (" AND …" over t.win_name, t.id, on
	// KeyArgs) keeping rows on the read's side of Anchor; "" without one.
	Keyset  string
	KeyArgs []any
	// OrderBy orders the unindexed (queued) tasks read with LIKE
	// (" ORDER BY t.win_name, t.id" or its reverse).
	OrderBy string
	// Reverse reads backwards in label order.
	Reverse bool
	// Limit is how many matches the read needs at least (when there are).
	Limit int
}

// Search returns the rowids of the tasks whose name matches q.Like, from
// q.Anchor in label order (q.Reverse: backwards), at least q.Limit of them
// when there are, read through the index bucket by bucket (s.Chunk keys
// at a time). A bucket is read whole (its keys are not in label order
// within it), so the rowids are a superset of the window's name matches:
// the caller sorts and cuts. Queued tasks (written by another program
// since clawpit last wrote) come first, read with LIKE, at most q.Limit of
// them. Errors: the database's, unmapped.
func Search(ctx context.Context, x Execer, q Query, s Sizes) ([]int64, error) {
	s = s.Resolved()
	var start int64
	if q.Reverse {
		start = math.MaxInt64
	}
	if q.Anchor != nil {
		var b int64
		if err := x.QueryRowContext(ctx, `SELECT `+BucketSQL("?", "?"), q.Anchor[0], q.Anchor[1]).Scan(&b); err != nil {
			return nil, err
		}
		start = b << Shift
		if q.Reverse {
			start |= TaskMask
		}
	}
	out, err := sqlq.QueryColumn[int64](ctx, x, `SELECT t.rowid FROM tasks_label_queue AS q CROSS JOIN tasks AS t ON t.rowid = q.task
		WHERE t.win_name LIKE ? ESCAPE '\'`+q.Keyset+q.OrderBy+` LIMIT ?`, append(append([]any{q.Like}, q.KeyArgs...), q.Limit)...)
	if err != nil {
		return nil, err
	}
	op, dir := ">=", "ASC"
	if q.Reverse {
		op, dir = "<=", "DESC"
	}
	chunk := int(s.Chunk)
	found := 0
	var pending []int64
	for {
		keys, err := sqlq.QueryColumn[int64](ctx, x, `SELECT rowid FROM tasks_label_fts WHERE tasks_label_fts MATCH ? AND rowid `+op+
			` ? ORDER BY rowid `+dir+` LIMIT `+strconv.Itoa(chunk), q.Match, start)
		if err != nil {
			return nil, err
		}
		done := len(keys) < chunk
		pending = append(pending, keys...)
		// The keys of buckets wholly read: all but the last key's bucket,
		// unless the index has no more.
		cut := len(pending)
		if !done {
			lastB := keys[len(keys)-1] >> Shift
			for cut > 0 && pending[cut-1]>>Shift == lastB {
				cut--
			}
		}
		if cut > 0 {
			ids, err := matches(ctx, x, pending[:cut], q)
			if err != nil {
				return nil, err
			}
			out = append(out, ids...)
			found += len(ids)
			pending = pending[cut:]
		}
		if done || found >= q.Limit {
			return out, nil
		}
		start = keys[len(keys)-1]
		if q.Reverse {
			start--
		} else {
			start++
		}
	}
}

// matches are the rowids, among the tasks keyed keys, whose key is
// current (not stale, not queued) and whose name matches q.Like, on
// q.Keyset's side of the anchor.
func matches(ctx context.Context, x Execer, keys []int64, q Query) ([]int64, error) {
	return sqlq.QueryColumn[int64](ctx, x, `SELECT t.rowid FROM json_each(?) AS j
		CROSS JOIN tasks_label_keys AS k ON k.task = (j.value & `+strconv.FormatInt(TaskMask, 10)+`) AND k.key = j.value
		CROSS JOIN tasks AS t ON t.rowid = k.task
		WHERE NOT EXISTS (SELECT 1 FROM tasks_label_queue AS q WHERE q.task = t.rowid)
		  AND t.win_name LIKE ? ESCAPE '\'`+q.Keyset, append([]any{sqlq.JSONInts(slices.Values(keys)), q.Like}, q.KeyArgs...)...)
}
