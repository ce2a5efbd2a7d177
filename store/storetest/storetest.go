// Package storetest runs clawpit's store conformance tests on every store:
// SQLite always, PostgreSQL when CLAWPIT_TEST_POSTGRES names a server
// (.ci/pg start prints one). A store that passes them is a clawpit store
// (README "Many hosts: PostgreSQL"). It hands out locations (a file path or a URL) for
// store.Open; it does not import store, so store's own tests use it too.
package storetest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
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

// PoolerEnv names a PgBouncer in transaction mode in front of Env's server,
// e.g. postgres://clawpit@/clawpit?host=/tmp/clawpit-pgbouncer-0&port=6432
// (.ci/pgbouncer start prints one). Set, every PostgreSQL registry Location
// hands out is reached through it (Pooled), so the suite proves the store
// keeps no session state across transactions.
const PoolerEnv = "CLAWPIT_TEST_PGBOUNCER"

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
	if p := os.Getenv(PoolerEnv); p != "" {
		pooled, _ := Pooled(t, os.Getenv(Env), p)
		return pooled
	}
	return Schema(t, os.Getenv(Env))
}

// ListenLocation returns the direct URL of a registry Location returned
// (the same URL unless PoolerEnv is set): what --listen-db names.
func ListenLocation(t testing.TB, loc string) string {
	t.Helper()
	p := os.Getenv(PoolerEnv)
	if p == "" || !strings.HasPrefix(loc, "postgres") {
		return loc
	}
	pu, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("%s: %v", PoolerEnv, err)
	}
	return withUser(t, os.Getenv(Env), pu.User.Username())
}

// Pooled creates role and schema t_<random> on the server at base (the
// schema named after the role and owned by it, so the role's default
// search_path, "$user", finds it: a pooler refuses a search_path startup
// parameter) and returns the registry's URL through the pooler at pooler
// and its direct URL at base. Both are dropped when t ends.
func Pooled(t testing.TB, base, pooler string) (pooled, direct string) {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	role := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	if err := aclTx(admin,
		"CREATE ROLE "+role+" LOGIN",
		"GRANT CREATE ON DATABASE "+"\""+dbName(t, base)+"\""+" TO "+role,
		"CREATE SCHEMA "+role+" AUTHORIZATION "+role,
	); err != nil {
		admin.Close()
		t.Fatalf("create test role (%s): %v", Env, err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP SCHEMA " + role + " CASCADE")
		aclTx(admin, "REVOKE CREATE ON DATABASE "+"\""+dbName(t, base)+"\""+" FROM "+role, "DROP ROLE "+role)
		admin.Close()
	})
	return withUser(t, pooler, role), withUser(t, base, role)
}

func dbName(t testing.TB, base string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func withUser(t testing.TB, base, user string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	u.User = url.User(user)
	return u.String()
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

// aclLock is the advisory lock key test processes take around a change of
// the database's privileges: two GRANTs on one database at once (two test
// packages run in parallel) fail with "tuple concurrently updated".
const aclLock = 0x636c617770697401

// aclTx runs qs in one transaction holding aclLock.
func aclTx(admin *sql.DB, qs ...string) error {
	tx, err := admin.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec("SELECT pg_advisory_xact_lock($1)", int64(aclLock)); err != nil {
		return err
	}
	for _, q := range qs {
		if _, err := tx.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return tx.Commit()
}
