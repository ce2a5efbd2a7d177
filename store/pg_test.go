package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

func TestPGSQLRewrite(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT a FROM t WHERE id = ?", "SELECT a FROM t WHERE id = $1"},
		{"SELECT a FROM t INDEXED BY t_idx WHERE a = ? AND b = ?", "SELECT a FROM t WHERE a = $1 AND b = $2"},
		{"SELECT a FROM t WHERE a < ? LIMIT ?", "SELECT a FROM t WHERE a < $1 LIMIT NULLIF($2::bigint, -1)"},
		{"SELECT '?' || \"q?\" FROM t WHERE x = ?", "SELECT '?' || \"q?\" FROM t WHERE x = $1"},
		{"INSERT INTO t VALUES (?,?),(?,?)", "INSERT INTO t VALUES ($1,$2),($3,$4)"},
		{"SELECT 1", "SELECT 1"},
	}
	for _, c := range cases {
		if got := pgSQL(c.in); got != c.want {
			t.Errorf("pgSQL(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Every SQLite migration has its PostgreSQL port under the same number: a
// schema change must land on both stores.
func TestMigrationsOnBothStores(t *testing.T) {
	lite, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := pgMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lite) != fmt.Sprint(pg) {
		t.Errorf("store/migrations %v and store/pgmigrations %v differ: port each schema change to both", lite, pg)
	}
}

func TestIsPostgresURLAndRedact(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://h/db": true, "postgresql:///db?host=/tmp": true,
		"/home/x/registry.db": false, "registry.db": false, "postgres.db": false,
	} {
		if got := IsPostgresURL(in); got != want {
			t.Errorf("IsPostgresURL(%q) = %v", in, got)
		}
	}
	if got := RedactURL("postgres://bob:s3cret@db.example:5432/clawpit"); strings.Contains(got, "s3cret") || !strings.Contains(got, "bob") {
		t.Errorf("RedactURL kept the password or lost the user: %s", got)
	}
}

// pgOnly skips t unless CLAWPIT_TEST_POSTGRES names a server and returns a
// URL of a fresh, empty schema there.
func pgOnly(t *testing.T) string {
	t.Helper()
	base := os.Getenv(pgTestEnv)
	if base == "" {
		t.Skip(pgTestEnv + " is not set")
	}
	return freshPGSchema(t, base)
}

func TestPGOpenRefusesNewerSchema(t *testing.T) {
	u := pgOnly(t)
	db, err := Open(context.Background(), u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec("UPDATE " + pgVersionTable + " SET version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), u, Options{})
	if !errors.Is(err, core.ErrNewerSchema) {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "99") || !strings.Contains(msg, fmt.Sprint(PGSchemaVersion())) {
		t.Errorf("message %q should name version 99 and %d", msg, PGSchemaVersion())
	}
}

func TestPGOpenMustExistAndReadOnlyOnEmptySchema(t *testing.T) {
	u := pgOnly(t)
	for _, opt := range []Options{{MustExist: true}, {ReadOnly: true}} {
		if _, err := Open(context.Background(), u, opt); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("Open(%+v) of an empty schema: err = %v, want ErrNotFound", opt, err)
		}
	}
	// Nothing was created.
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var exists bool
	if err := raw.QueryRow("SELECT to_regclass('" + pgVersionTable + "') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Errorf("a refused open created the schema table (exists=%v, err=%v)", exists, err)
	}
}

func TestPGOpenUnreachable(t *testing.T) {
	// A socket directory with no server: fails at once, naming the URL
	// without its password.
	u := "postgres://bob:s3cret@/clawpit?host=" + t.TempDir() + "&connect_timeout=2"
	_, err := Open(context.Background(), u, Options{})
	if err == nil {
		t.Fatal("Open of an unreachable server succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "bob") {
		t.Errorf("error leaks the password or does not name the URL: %v", err)
	}
}
