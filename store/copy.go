package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// copyTables are the registry's tables in the order CopyToPostgres copies
// them (the journal last but two; operators before their keys, which
// reference them).
var copyTables = []string{"sessions", "tasks", "runs", "approvals", "grants", "jobs", "notifications", "events", "hosts",
	"operators", "operator_keys"}

// ErrNotEmpty: CopyToPostgres refuses a destination that already holds rows.
var ErrNotEmpty = errors.New("the PostgreSQL registry is not empty")

// CopyCount is how many rows of one table CopyToPostgres copied.
type CopyCount struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
}

// CopyToPostgres copies every row of every table of the SQLite registry src
// into the PostgreSQL registry dst — ids, revisions, timestamps and the
// event journal unchanged — in one PostgreSQL transaction, under dst's
// writer lock, and moves dst's id sequences past the copied ids (README "Many hosts: PostgreSQL"
// `clawpit migrate`). Both are at this build's schema version (Open
// migrated them). Errors: core.ErrInvalid when src is not SQLite or dst not
// PostgreSQL, ErrNotEmpty when dst already holds rows (nothing is
// copied), and the first failing statement's error (nothing is copied).
//
// host names the machine the SQLite registry served: jobs recorded before
// jobs had a host ("") get it, so on a registry shared by many hosts only
// that machine judges and signals them (README "Many hosts: PostgreSQL"). "" leaves them as they are.
func CopyToPostgres(ctx context.Context, src, dst *DB, host string) ([]CopyCount, error) {
	if src.lite == nil || dst.pg == nil {
		return nil, core.Invalidf("copy goes from a SQLite registry to a PostgreSQL one")
	}
	in, err := src.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, mapErr(err)
	}
	defer in.Rollback()
	out, err := dst.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, mapErr(err)
	}
	defer out.Rollback()
	if err := dst.pg.LockWriter(ctx, out); err != nil {
		return nil, mapErr(err)
	}
	for _, table := range copyTables {
		var n int64
		if err := out.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			return nil, mapErr(err)
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: %s has %d row(s) in %s; copy into an empty one", ErrNotEmpty, dst.path, n, table)
		}
	}
	var counts []CopyCount
	for _, table := range copyTables {
		n, err := copyTable(ctx, in, out, table)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, mapErr(err))
		}
		counts = append(counts, CopyCount{Table: table, Rows: n})
	}
	if host != "" {
		if _, err := out.ExecContext(ctx, "UPDATE jobs SET host = $1 WHERE host = ''", host); err != nil {
			return nil, fmt.Errorf("record the jobs' host: %w", mapErr(err))
		}
	}
	for _, table := range []string{"notifications", "events"} {
		// Identity columns: the next generated id follows the copied ones.
		if _, err := out.ExecContext(ctx, fmt.Sprintf(
			"SELECT setval(pg_get_serial_sequence('%[1]s', 'id'), COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM %[1]s", table)); err != nil {
			return nil, fmt.Errorf("advance the %s id sequence: %w", table, mapErr(err))
		}
	}
	if err := dst.pg.Notify(ctx, out); err != nil {
		return nil, mapErr(err)
	}
	if err := out.Commit(); err != nil {
		return nil, mapErr(err)
	}
	return counts, nil
}

// copyTable copies table's rows from in to out, maxRowsPerWrite rows per
// INSERT, column by column under the same names. Generated columns (the
// window sort keys, migration 0007) are left out: PostgreSQL computes its
// own. Rows go in rowid order, so operator_keys keep their order (its
// PostgreSQL identity column "rowid" numbers them as they arrive).
func copyTable(ctx context.Context, in, out *sql.Tx, table string) (int64, error) {
	var cols []string
	crows, err := in.QueryContext(ctx, "SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid", table)
	if err != nil {
		return 0, err
	}
	for crows.Next() {
		var c string
		if err := crows.Scan(&c); err != nil {
			crows.Close()
			return 0, err
		}
		cols = append(cols, c)
	}
	crows.Close()
	if err := crows.Err(); err != nil {
		return 0, err
	}
	if len(cols) == 0 {
		return 0, fmt.Errorf("table %s has no columns in the SQLite registry", table)
	}
	order := ""
	if table == "operator_keys" {
		order = " ORDER BY rowid"
	}
	rows, err := in.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+table+order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	k := len(cols)
	per := max(1, min(maxRowsPerWrite, 60000/k)) // PostgreSQL: at most 65,535 parameters
	var (
		n     int64
		batch []any
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + rowsOf(len(batch)/k, k)
		if _, err := out.ExecContext(ctx, pgSQL(q), batch...); err != nil {
			return err
		}
		batch = batch[:0]
		return nil
	}
	for rows.Next() {
		vals := make([]any, k)
		ptrs := make([]any, k)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok { // TEXT read back as bytes
				vals[i] = string(b)
			}
		}
		batch = append(batch, vals...)
		n++
		if len(batch)/k >= per {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// VacuumAnalyze runs VACUUM (ANALYZE) on every registry table of a
// PostgreSQL registry (a no-op on SQLite): after a bulk copy the visibility
// map is unset, so every index-only count (the console's header, its row
// counts) visits the heap, and the planner has no statistics, until
// autovacuum gets there. 10,000,000 tasks just copied: the header's counts
// 1,057 ms before, 99 ms after. It runs outside a transaction (VACUUM cannot
// run in one). Errors: the server's (a lost connection, say). A role that
// does not own a table gets a server warning and the table is skipped: no
// error, and autovacuum gets there later.
func (db *DB) VacuumAnalyze(ctx context.Context) error {
	if db.pg == nil {
		return nil
	}
	for _, table := range copyTables {
		if _, err := db.write.ExecContext(ctx, "VACUUM (ANALYZE) "+table); err != nil {
			return fmt.Errorf("vacuum %s: %w", table, mapErr(err))
		}
	}
	return nil
}
