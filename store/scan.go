package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/postgres"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// Compile-time check: *tx implements every method of core.Tx.
var _ core.Tx = (*tx)(nil)

// rowScanner is what *sql.Row and *sql.Rows have in common.
type rowScanner interface {
	Scan(dest ...any) error
}

// nstr scans a nullable TEXT column into a string: NULL reads back as "".
type nstr struct{ p *string }

func (n nstr) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.p = ""
	case string:
		*n.p = x
	case []byte:
		*n.p = string(x)
	default:
		return fmt.Errorf("cannot scan %T into a string", v)
	}
	return nil
}

// nts scans a nullable INTEGER epoch-ms column into a core.Timestamp: NULL
// reads back as 0 (absent).
type nts struct{ p *core.Timestamp }

func (n nts) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.p = 0
	case int64:
		*n.p = core.Timestamp(x)
	default:
		return fmt.Errorf("cannot scan %T into a timestamp", v)
	}
	return nil
}

// strArg stores "" as NULL (nullable TEXT columns).
func strArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// tsArg stores the absent timestamp 0 as NULL.
func tsArg(t core.Timestamp) any {
	if t == 0 {
		return nil
	}
	return int64(t)
}

// boolArg stores a bool as INTEGER 0/1.
func boolArg(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// where accumulates AND-ed conditions and their arguments for List* queries.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// in adds "col IN (?, ...)" when vals is not empty.
func in[T ~string](w *where, col string, vals []T) {
	if len(vals) == 0 {
		return
	}
	ph := make([]string, len(vals))
	for i, v := range vals {
		ph[i] = "?"
		w.args = append(w.args, string(v))
	}
	w.conds = append(w.conds, col+" IN ("+strings.Join(ph, ", ")+")")
}

// clause renders " WHERE a AND b", or "" without conditions.
func (w *where) clause() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// limitClause renders " LIMIT n" for n > 0 (0 = no limit).
func limitClause(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" LIMIT %d", n)
}

// errReadOnlyTx is returned by write methods called inside View: go-sqlite3
// ignores sql.TxOptions.ReadOnly, so the store enforces it itself.
func (t *tx) checkWritable(op string) error {
	if t.readOnly {
		return fmt.Errorf("%w: %s inside a read-only transaction", core.ErrReadOnly, op)
	}
	return nil
}

// stmt returns q prepared on this transaction, preparing it on first use,
// so a batch that runs one statement thousands of times (a sweep's apply)
// parses it once instead of once per row. database/sql closes the
// statements when the transaction ends. A statement's rows must be closed
// before the same statement runs again, as every helper here does.
func (t *tx) stmt(q string) (*sql.Stmt, error) {
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	s, err := t.tx.PrepareContext(t.ctx, t.sql(q))
	if err != nil {
		return nil, mapErr(err)
	}
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[q] = s
	return s, nil
}

// execRaw runs q in the transaction through the statement cache; errors
// are the driver's, unmapped.
func (t *tx) execRaw(q string, args ...any) (sql.Result, error) {
	t.wrote = true
	if t.db.dialect == dialectPostgres {
		// pgx caches prepared statements per connection itself; preparing
		// through database/sql would cost a round trip per statement.
		return t.tx.ExecContext(t.ctx, t.sql(q), args...)
	}
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(t.ctx, args...)
}

// queryRow runs q through the statement cache; a prepare error surfaces
// from Scan.
func (t *tx) queryRow(q string, args ...any) rowScanner {
	if t.db.dialect == dialectPostgres {
		return t.tx.QueryRowContext(t.ctx, t.sql(q), args...)
	}
	s, err := t.stmt(q)
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(t.ctx, args...)
}

// query runs q through the statement cache (SQLite) or pgx's own
// (PostgreSQL); the caller closes the rows.
func (t *tx) query(q string, args ...any) (*sql.Rows, error) {
	if t.db.dialect == dialectPostgres {
		return t.tx.QueryContext(t.ctx, t.sql(q), args...)
	}
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(t.ctx, args...)
}

// sql returns q in the DB's dialect (see pgSQL), rewritten once per DB.
func (t *tx) sql(q string) string {
	if t.db.dialect != dialectPostgres {
		return q
	}
	if r, ok := t.db.rewritten.Load(q); ok {
		return r.(string)
	}
	r := pgSQL(q)
	t.db.rewritten.Store(q, r)
	return r
}

// errRow is a row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// exec runs a statement in the transaction, mapping errors.
func (t *tx) exec(q string, args ...any) (sql.Result, error) {
	res, err := t.execRaw(q, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	return res, nil
}

// insert runs an INSERT of entity id; a duplicate key is core.ErrConflict, a
// failed CHECK or NOT NULL constraint is core.ErrInvalid.
func (t *tx) insert(entity, id, q string, args ...any) (sql.Result, error) {
	if err := t.checkWritable("insert " + entity); err != nil {
		return nil, err
	}
	if t.db.dialect == dialectPostgres && !strings.Contains(q, "ON CONFLICT") {
		// A failed statement aborts a PostgreSQL transaction; a duplicate
		// must stay a plain ErrConflict the caller can handle and go on.
		res, err := t.execRaw(q+" ON CONFLICT DO NOTHING", args...)
		if err != nil {
			return nil, constraintErr(entity, id, err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return nil, fmt.Errorf("%w: %s %s already exists", core.ErrConflict, entity, id)
		}
		return res, nil
	}
	res, err := t.execRaw(q, args...)
	if err != nil {
		return nil, constraintErr(entity, id, err)
	}
	return res, nil
}

// condUpdate runs an "UPDATE … SET …, rev = rev + 1 WHERE id = ? AND rev = ?"
// statement and reports core.ErrConflict when no row matched: the row changed
// since it was read, or vanished.
func (t *tx) condUpdate(entity, id string, rev int64, q string, args ...any) error {
	if err := t.checkWritable("update " + entity); err != nil {
		return err
	}
	res, err := t.execRaw(q, args...)
	if err != nil {
		return constraintErr(entity, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %s (rev %d)", core.ErrConflict, entity, id, rev)
	}
	return nil
}

// constraintErr maps constraint violations to core sentinels and everything
// else through mapErr.
func constraintErr(entity, id string, err error) error {
	if c := postgres.Code(err); strings.HasPrefix(c, "23") {
		if c == "23505" { // unique_violation
			return fmt.Errorf("%w: %s %s already exists: %v", core.ErrConflict, entity, id, err)
		}
		return core.Invalidf("%s %s: %v", entity, id, err)
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrConstraint {
		switch se.ExtendedCode {
		case sqlite3.ErrConstraintPrimaryKey, sqlite3.ErrConstraintUnique:
			return fmt.Errorf("%w: %s %s already exists: %v", core.ErrConflict, entity, id, err)
		default:
			return core.Invalidf("%s %s: %v", entity, id, err)
		}
	}
	return mapErr(err)
}

// notFound wraps core.ErrNotFound naming entity and id.
func notFound(entity, id string) error {
	return core.NotFoundf("no %s with id %q", entity, id)
}

// getRow runs q (which selects one row by id) and scans it; no row is a
// wrapped core.ErrNotFound naming entity and id.
func getRow[T any](t *tx, entity, id, q string, scan func(rowScanner, *T) error) (*T, error) {
	v, err := findRow(t, q, []any{id}, scan)
	if v == nil && err == nil {
		return nil, notFound(entity, id)
	}
	return v, err
}

// findRow runs q (which selects at most one row) and scans it; nil, nil
// when there is no row, for the reads where absence is an answer, not an
// error (a grant that does not match, a file never read).
func findRow[T any](t *tx, q string, args []any, scan func(rowScanner, *T) error) (*T, error) {
	var v T
	if err := scan(t.queryRow(q, args...), &v); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return nil, mapErr(err)
	}
	return &v, nil
}

// queryAll runs q and scans every row with scan.
func queryAll[T any](t *tx, q string, args []any, scan func(rowScanner, *T) error) ([]T, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}
