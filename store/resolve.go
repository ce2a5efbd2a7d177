package store

import (
	"database/sql"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
)

// MinPrefixLen is the shortest id prefix accepted (docs/contract.md "Entities and statuses": 4+ characters).
const MinPrefixLen = 4

// maxAmbiguous is how many matches an AmbiguousError lists.
const maxAmbiguous = 5

// idTables maps an entity name to its table and primary-key column.
var idTables = map[string][2]string{
	core.EntitySession:  {"sessions", "id"},
	core.EntityTask:     {"tasks", "id"},
	core.EntityRun:      {"runs", "run_id"},
	core.EntityApproval: {"approvals", "id"},
	core.EntityGrant:    {"grants", "id"},
	core.EntityJob:      {"jobs", "id"},
}

// ResolveID turns an exact id, or a unique prefix of at least MinPrefixLen
// characters, into the full id of entity. The prefix lookup is a range scan on
// the primary key (id >= prefix AND id < successor(prefix)), so it uses the
// index. Errors: wrapped core.ErrNotFound ("no task matches id prefix
// \"abcd\""), *core.AmbiguousError listing up to 5 matches and counting all, core.ErrInvalid for
// an unknown entity or a non-exact prefix shorter than 4 characters.
func (t *tx) ResolveID(entity, prefix string) (string, error) {
	tc, ok := idTables[entity]
	if !ok {
		return "", core.Invalidf("unknown entity %q", entity)
	}
	table, col := tc[0], tc[1]
	if prefix == "" {
		return "", core.Invalidf("empty %s id", entity)
	}
	var id string
	err := t.queryRow(fmt.Sprintf("SELECT %s FROM %s WHERE %s = ?", col, table, col), prefix).Scan(&id)
	switch {
	case err == nil:
		return id, nil
	case !errors.Is(err, sql.ErrNoRows):
		return "", mapErr(err)
	}
	if len(prefix) < MinPrefixLen {
		return "", core.Invalidf("%s id prefix %q is too short: give at least %d characters", entity, prefix, MinPrefixLen)
	}
	cond := fmt.Sprintf("%s >= ?", col)
	args := []any{prefix}
	succ, ok := successor(prefix)
	switch {
	case ok && (t.db.dialect != dialectPostgres || utf8.ValidString(succ)):
		cond += fmt.Sprintf(" AND %s < ?", col)
		args = append(args, succ)
	case t.db.dialect == dialectPostgres:
		// PostgreSQL refuses text that is not UTF-8, which the byte
		// successor of a prefix ending in U+007F or a continuation byte is.
		cond += fmt.Sprintf(" AND starts_with(%s, ?)", col)
		args = append(args, prefix)
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d", col, table, cond, col, maxAmbiguous+1)
	matches, err := queryAll(t, q, args, func(r rowScanner, s *string) error { return r.Scan(s) })
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", core.NotFoundf("no %s matches id prefix %q", entity, prefix)
	case 1:
		return matches[0], nil
	}
	count := len(matches)
	if count > maxAmbiguous {
		matches = matches[:maxAmbiguous]
		// The ambiguous error says how many matched: count them all (the
		// same index range, rows not read).
		cq := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", table, cond)
		if err := t.queryRow(cq, args...).Scan(&count); err != nil {
			return "", mapErr(err)
		}
	}
	return "", &core.AmbiguousError{Entity: entity, Prefix: prefix, Matches: matches, Count: count}
}

// successor returns the smallest string greater than every string that starts
// with p (byte-wise, as SQLite's BINARY collation compares): p with its last
// byte incremented after dropping trailing 0xff bytes. ok is false when p is
// all 0xff bytes (no upper bound).
func successor(p string) (string, bool) {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), true
}

// IDNeighbours implements core.Tx: one statement, two primary-key seeks per
// id (the largest id below it, the smallest above), the ids passed as a
// VALUES table with their positions.
func (t *tx) IDNeighbours(entity string, ids []string) ([][2]string, error) {
	tc, ok := idTables[entity]
	if !ok {
		return nil, core.Invalidf("unknown entity %q", entity)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	table, col := tc[0], tc[1]
	q := fmt.Sprintf("WITH args(i, id) AS (VALUES %[3]s) SELECT args.i, "+
		"COALESCE((SELECT MAX(%[2]s) FROM %[1]s WHERE %[2]s < args.id), ''), "+
		"COALESCE((SELECT MIN(%[2]s) FROM %[1]s WHERE %[2]s > args.id), '') FROM args ORDER BY args.i",
		table, col, typedRowsOf(len(ids), "INTEGER", "TEXT"))
	args := make([]any, 0, 2*len(ids))
	for i, id := range ids {
		args = append(args, int64(i), id)
	}
	type row struct {
		i          int
		prev, next string
	}
	rows, err := queryAll(t, q, args, func(r rowScanner, x *row) error { return r.Scan(&x.i, &x.prev, &x.next) })
	if err != nil {
		return nil, err
	}
	out := make([][2]string, len(ids))
	for _, r := range rows {
		out[r.i] = [2]string{r.prev, r.next}
	}
	return out, nil
}
