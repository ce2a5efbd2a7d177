package labelindex

import (
	"context"
	"fmt"
	"strings"
)

// Check verifies the index's invariants (see the package's Invariants)
// on x's snapshot and returns the first one broken, nil when all hold:
//   - every task is queued, or keyed by its bucket under the current
//     bounds and its rowid;
//   - the buckets' ids rise with their bounds (label order);
//   - every current key is in the trigram index under its task's name.
//
// settled (no write since the last Maintain or FoldAll) checks besides
// that nothing is queued, no key is stale, the trigram index holds exactly
// the current keys, and no bucket holds more than twice s's split size.
// Tests call it after every step; it reads every task, so it is no
// production check.
func Check(ctx context.Context, x Execer, settled bool, s Sizes) error {
	s = s.Resolved()
	if err := CheckKeys(ctx, x); err != nil {
		return err
	}
	keys, err := currentKeys(ctx, x)
	if err != nil {
		return err
	}
	if !settled {
		return nil
	}
	return checkSettled(ctx, x, len(keys), s)
}

// CheckKeys is Check's part that two SQL statements answer (about a
// second per million tasks): every task not queued is keyed by its own
// rowid in the bucket its name and id fall in, and bucket ids rise with
// their bounds. Errors: the first invariant broken, with a sample of the
// tasks it fails for; the database's.
func CheckKeys(ctx context.Context, x Execer) error {
	var bad int
	var sample string
	if err := x.QueryRowContext(ctx, `SELECT count(*), coalesce(group_concat(t.id), '') FROM tasks AS t
		LEFT JOIN tasks_label_keys AS k ON k.task = t.rowid
		WHERE NOT EXISTS (SELECT 1 FROM tasks_label_queue AS q WHERE q.task = t.rowid)
		  AND (k.key IS NULL OR k.key & ? != t.rowid OR k.key >> ? != `+BucketSQL("t.win_name", "t.id")+`)`,
		TaskMask, Shift).Scan(&bad, &sample); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d tasks neither queued nor keyed in their bucket: %s", bad, sample)
	}
	var unordered int
	if err := x.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT b, lag(b) OVER (ORDER BY lo_name, lo_id) AS prev
		FROM tasks_label_buckets) WHERE prev >= b`).Scan(&unordered); err != nil {
		return err
	}
	if unordered > 0 {
		return fmt.Errorf("%d buckets out of order", unordered)
	}
	return nil
}

// currentKeys checks that every current key (its task not queued) is in
// the trigram index under its task's name, and returns them.
func currentKeys(ctx context.Context, x Execer) ([]entry, error) {
	rows, err := x.QueryContext(ctx, `SELECT k.key, t.win_name FROM tasks_label_keys AS k JOIN tasks AS t ON t.rowid = k.task
		WHERE NOT EXISTS (SELECT 1 FROM tasks_label_queue AS q WHERE q.task = t.rowid)`)
	if err != nil {
		return nil, err
	}
	var es []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.key, &e.name); err != nil {
			rows.Close()
			return nil, err
		}
		es = append(es, e)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	for _, e := range es {
		match := MatchAll(e.name)
		if match == "" {
			continue // the trigram index finds no shorter text
		}
		var n int
		if err := x.QueryRowContext(ctx, `SELECT count(*) FROM tasks_label_fts WHERE tasks_label_fts MATCH ? AND rowid = ?`,
			match, e.key).Scan(&n); err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, fmt.Errorf("key %d (%q) not in the name index", e.key, e.name)
		}
	}
	return es, nil
}

// checkSettled checks a settled index holding current keys.
func checkSettled(ctx context.Context, x Execer, current int, s Sizes) error {
	var queued, stale, indexed, counted int
	if err := x.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM tasks_label_queue),
		(SELECT count(*) FROM tasks_label_keys AS k WHERE NOT EXISTS (SELECT 1 FROM tasks WHERE rowid = k.task)),
		(SELECT count(*) FROM tasks_label_fts_docsize), (SELECT coalesce(sum(n), 0) FROM tasks_label_buckets)`).
		Scan(&queued, &stale, &indexed, &counted); err != nil {
		return err
	}
	if queued != 0 || stale != 0 || indexed != current {
		return fmt.Errorf("settled: %d queued, %d stale keys, %d index entries for %d tasks", queued, stale, indexed, current)
	}
	// Bucket counts are a hint for splitting (stale keys make them drift
	// low), but no bucket may grow far past the split size.
	var largest int64
	if err := x.QueryRowContext(ctx, `SELECT coalesce(max(c), 0) FROM (SELECT count(*) AS c FROM tasks_label_keys GROUP BY key >> ?)`,
		Shift).Scan(&largest); err != nil {
		return err
	}
	if largest > 2*s.Split {
		return fmt.Errorf("a bucket holds %d tasks (split at %d; counts sum to %d for %d)", largest, s.Split, counted, current)
	}
	return nil
}

// MatchAll is the MATCH expression of the names holding every trigram of
// text (the index keeps no positions: no phrase longer than a trigram);
// "" when text is shorter than three characters.
func MatchAll(text string) string {
	r := []rune(text)
	var terms []string
	for i := 0; i+3 <= len(r); i++ {
		terms = append(terms, `"`+strings.ReplaceAll(string(r[i:i+3]), `"`, `""`)+`"`)
	}
	return strings.Join(terms, " AND ")
}
