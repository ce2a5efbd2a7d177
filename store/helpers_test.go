package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// openTest opens a fresh registry in a temporary directory.
func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "home", "registry.db"), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// update runs fn in a write transaction and fails the test on error.
func update(t *testing.T, db *DB, fn func(core.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a read transaction and fails the test on error.
func view(t *testing.T, db *DB, fn func(core.Tx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// isNull reports whether column col of the row of table whose key column
// equals id is SQL NULL.
func isNull(t *testing.T, db *DB, table, keyCol, id, col string) bool {
	t.Helper()
	var n int
	q := "SELECT " + col + " IS NULL FROM " + table + " WHERE " + keyCol + " = ?"
	if err := db.read.QueryRow(q, id).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n == 1
}

func ptr[T any](v T) *T { return &v }
