// Package storetest runs clawpit's store conformance tests on every store:
// SQLite always, PostgreSQL when CLAWPIT_TEST_POSTGRES names a server
// (.ci/pg start prints one). A store that passes them is a clawpit store
// (SPEC §14). It hands out locations (a file path or a URL) for
// store.Open; it does not import store, so store's own tests use it too.
package storetest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Env names the PostgreSQL server of the suite, e.g.
// postgres://clawpit@/clawpit?host=/tmp/clawpit-pg-0. Unset: PostgreSQL runs
// are skipped, never failed.
const Env = "CLAWPIT_TEST_POSTGRES"

// ForceEnv set to "postgres" makes Location hand out PostgreSQL registries
// to every test, not only to Each's "postgres" subtests: a whole package's
// tests then run on PostgreSQL (CLAWPIT_TEST_STORE=postgres go test -tags sqlite_fts5 ./core/).
const ForceEnv = "CLAWPIT_TEST_STORE"

// Each runs fn as subtest "sqlite" and as subtest "postgres" (skipped when
// Env is unset). Inside fn, Location returns a fresh registry of the
// subtest's store.
func Each(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	t.Run("sqlite", fn)
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(Env) == "" {
			t.Skip(Env + " is not set")
		}
		fn(t)
	})
}

// OnPostgres reports whether t runs on PostgreSQL: inside Each's "postgres"
// subtest, or anywhere when ForceEnv is "postgres" and Env is set.
func OnPostgres(t testing.TB) bool {
	if os.Getenv(Env) == "" {
		return false
	}
	return strings.Contains(t.Name()+"/", "/postgres/") || os.Getenv(ForceEnv) == "postgres"
}

// Location returns where a new, empty registry for t lives: a file under
// t's temp dir (dir/name), or a PostgreSQL URL whose search_path is a new
// schema, dropped when t ends.
func Location(t testing.TB, name string) string {
	t.Helper()
	if !OnPostgres(t) {
		return filepath.Join(t.TempDir(), name)
	}
	return Schema(t, os.Getenv(Env))
}

// Schema creates schema t_<random> on the server at base and returns base
// with search_path set to it; the schema and everything in it are dropped
// when t ends.
func Schema(t testing.TB, base string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("create test schema (%s): %v", Env, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
