package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/storetest"
)

// The store conformance suite (store/storetest): every test wrapped in
// eachStore runs on SQLite and, when CLAWPIT_TEST_POSTGRES names a server,
// on PostgreSQL, each run on a fresh registry.

const pgTestEnv = storetest.Env

func eachStore(t *testing.T, fn func(t *testing.T)) { t.Helper(); storetest.Each(t, fn) }

// freshLocation returns a new, empty registry's file path or URL.
func freshLocation(t testing.TB) string {
	t.Helper()
	return storetest.Location(t, filepath.Join("home", "registry.db"))
}

func freshPGSchema(t *testing.T, base string) string { t.Helper(); return storetest.Schema(t, base) }

// openTest opens a fresh registry (see freshLocation).
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), freshLocation(t), Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// update runs fn in a write transaction and fails the test on error.
func update(t testing.TB, db *DB, fn func(core.Tx) error) {
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
	var n bool
	q := db.dialectSQL("SELECT " + col + " IS NULL FROM " + table + " WHERE " + keyCol + " = ?")
	if err := db.read.QueryRow(q, id).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }
