package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for test schemas
)

// The store conformance suite: every test wrapped in eachStore runs once on
// SQLite (always) and once on PostgreSQL when CLAWPIT_TEST_POSTGRES names a
// server (.ci/pg start prints one), each run on a fresh registry. A store
// that passes it keeps clawpit's rules (SPEC §14).

// pgTestEnv names the PostgreSQL server of the conformance suite.
const pgTestEnv = "CLAWPIT_TEST_POSTGRES"

// eachStore runs fn as subtest "sqlite" and, when CLAWPIT_TEST_POSTGRES is
// set, as subtest "postgres"; without it the PostgreSQL run is skipped.
func eachStore(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	t.Run("sqlite", fn)
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(pgTestEnv) == "" {
			t.Skip(pgTestEnv + " is not set")
		}
		fn(t)
	})
}

// onPostgres reports whether t runs inside eachStore's "postgres" subtest.
func onPostgres(t *testing.T) bool {
	return strings.Contains(t.Name()+"/", "/postgres/")
}

// freshLocation returns where a new, empty registry for t lives: a file in
// t's temp dir, or (postgres subtest) the test server's URL with a new
// schema first on its search_path, dropped when t ends.
func freshLocation(t *testing.T) string {
	t.Helper()
	if !onPostgres(t) {
		return filepath.Join(t.TempDir(), "home", "registry.db")
	}
	return freshPGSchema(t, os.Getenv(pgTestEnv))
}

// freshPGSchema creates schema t_<random> on the server at base and returns
// base with search_path set to it; the schema is dropped when t ends.
func freshPGSchema(t *testing.T, base string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", pgTestEnv, err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create test schema on %s: %v", RedactURL(base), err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", pgTestEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openTest opens a fresh registry (see freshLocation).
func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), freshLocation(t), Options{})
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
	var n bool
	q := db.dialectSQL("SELECT " + col + " IS NULL FROM " + table + " WHERE " + keyCol + " = ?")
	if err := db.read.QueryRow(q, id).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }
