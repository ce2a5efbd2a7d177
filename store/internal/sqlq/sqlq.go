// Package sqlq holds the small query helpers package store and its
// lower packages share (store/internal/labelindex): a column read into a
// slice, an int64 list for json_each.
package sqlq

import (
	"context"
	"database/sql"
	"iter"
	"strconv"
	"strings"
)

// Execer is what a helper needs of a transaction or connection (*sql.Tx,
// *sql.DB, a statement cache over a transaction).
type Execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// QueryColumn runs q and returns its one column's values. Errors: the
// database's, unmapped.
func QueryColumn[T any](ctx context.Context, x Execer, q string, args ...any) ([]T, error) {
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

// JSONInts is a JSON array of the values (for json_each).
func JSONInts(seq iter.Seq[int64]) string {
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
