package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/postgres"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/jackc/pgx/v5"
)

func TestPGSQLRewrite(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT a FROM t WHERE id = ?", "SELECT a FROM t WHERE id = $1"},
		{"SELECT a FROM t INDEXED BY t_idx WHERE a = ? AND b = ?", "SELECT a FROM t WHERE a = $1 AND b = $2"},
		{"SELECT a FROM t WHERE a < ? LIMIT ?", "SELECT a FROM t WHERE a < $1 LIMIT NULLIF($2::bigint, -1)"},
		{"SELECT '?' || \"q?\" FROM t WHERE x = ?", "SELECT '?' || \"q?\" FROM t WHERE x = $1"},
		{"INSERT INTO t VALUES (?,?),(?,?)", "INSERT INTO t VALUES ($1,$2),($3,$4)"},
		{"SELECT 1", "SELECT 1"},
		{"SELECT a FROM t WHERE x >= ?1 OR y >= ?1 AND z = ?12", "SELECT a FROM t WHERE x >= $1 OR y >= $1 AND z = $12"},
		{"SELECT '?1' FROM t WHERE x = ?1", "SELECT '?1' FROM t WHERE x = $1"},
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
	pg, err := postgres.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(lite) != fmt.Sprint(pg) {
		t.Errorf("store/sqlite/migrations %v and store/postgres/migrations %v differ: port each schema change to both", lite, pg)
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
	if _, err := db.write.Exec("UPDATE clawpit_schema_version SET version = 99"); err != nil {
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
	if err := raw.QueryRow("SELECT to_regclass('clawpit_schema_version') IS NOT NULL").Scan(&exists); err != nil || exists {
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

// TestPGListenerReconnects: the change listener's connection is killed by
// the server; DataVersion counts the reconnection as a change (what was
// sent meanwhile is lost) and goes on hearing other handles' commits, each
// within 500 ms.
func TestPGListenerReconnects(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	watcher, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	other, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	v0, err := watcher.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	write := func(id string) time.Duration {
		t.Helper()
		start := time.Now()
		update(t, other, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: id, State: core.SessionActive, CreatedAt: 1})
		})
		return time.Since(start)
	}
	seen := func(old int64) (int64, time.Duration) {
		t.Helper()
		start := time.Now()
		for time.Since(start) < 5*time.Second {
			if v, err := watcher.DataVersion(ctx); err == nil && v != old {
				return v, time.Since(start)
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatalf("no change seen after 5 s (version %d)", old)
		return 0, 0
	}
	w := write("s1")
	v1, d := seen(v0)
	if w+d > 500*time.Millisecond {
		t.Errorf("commit → change seen took %s, want < 500 ms", w+d)
	}
	// Kill the listener's backend.
	var killed int
	if err := other.write.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = $1`, "LISTEN "+pgx.Identifier{watcher.pg.Channel()}.Sanitize()).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminate the listener: killed %d, err %v", killed, err)
	}
	v2, _ := seen(v1) // the reconnection counts as a change
	write("s2")
	if _, d := seen(v2); d > 500*time.Millisecond {
		t.Errorf("after reconnecting, change seen after %s, want < 500 ms", d)
	}
}

// FuzzPGSQL: the rewrite numbers every "?" outside quotes $1…$n in order,
// leaves quoted text alone and nothing else behind.
func FuzzPGSQL(f *testing.F) {
	for _, s := range []string{"SELECT ? FROM t WHERE a = ? LIMIT ?", "x '?' \"?\" ?", "INDEXED BY i ?", "'unterminated ?", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out := pgSQL(q)
		strip := func(s string) (string, int) { // text outside quotes, and its "?" count
			var b strings.Builder
			var quote byte
			n := 0
			for i := 0; i < len(s); i++ {
				c := s[i]
				switch {
				case quote != 0:
					if c == quote {
						quote = 0
					}
				case c == '\'' || c == '"':
					quote = c
				case c == '?' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
					// "?NNN" is numbered: pgSQL writes "$NNN" and counts nothing.
					for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
						i++
					}
				default:
					if c == '?' {
						n++
					}
					b.WriteByte(c)
				}
			}
			return b.String(), n
		}
		_, want := strip(indexedBy.ReplaceAllString(q, ""))
		rest, left := strip(out)
		if left != 0 {
			t.Fatalf("pgSQL(%q) = %q keeps %d placeholders", q, out, left)
		}
		for i := 1; i <= want; i++ {
			if !strings.Contains(rest, "$"+strconv.Itoa(i)) {
				t.Fatalf("pgSQL(%q) = %q lacks $%d", q, out, i)
			}
		}
	})
}

func TestPGPathHidesPassword(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set")
	}
	loc := storetest.Schema(t, base)
	withPW := strings.Replace(loc, "://clawpit@", "://clawpit:s3cret@", 1) // the test cluster trusts its socket
	if withPW == loc {
		t.Skipf("%s names no user clawpit", storetest.Env)
	}
	db, err := Open(context.Background(), withPW, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if p := db.Path(); strings.Contains(p, "s3cret") || !strings.HasPrefix(p, "postgres://clawpit:xxxxx@") {
		t.Errorf("Path() = %q, want the URL with its password hidden", p)
	}
}

// A handle learns of other handles' writes by LISTEN when it can, and polls
// when it cannot: --listen-db naming no server, or a pooler in transaction
// mode (where LISTEN returns but nothing is ever heard) without --listen-db.
func TestPGChangeModes(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	other, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	write := func(id string) {
		t.Helper()
		update(t, other, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: id, State: core.SessionActive, CreatedAt: 1})
		})
	}

	t.Run("direct: live, and ChangedAfter wakes on the write", func(t *testing.T) {
		db, err := Open(ctx, u, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if m := db.ChangeMode(); m != "" {
			t.Errorf("mode before DataVersion = %q, want empty", m)
		}
		v0, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m := db.ChangeMode(); m != ChangeLive {
			t.Fatalf("mode = %q, want %q", m, ChangeLive)
		}
		ch := db.ChangedAfter(v0)
		if ch == nil {
			t.Fatal("ChangedAfter = nil on a live handle")
		}
		select {
		case <-ch:
			t.Fatal("ChangedAfter closed before any write")
		case <-time.After(50 * time.Millisecond):
		}
		write("live1")
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("ChangedAfter not closed 5 s after a write")
		}
		if v, _ := db.DataVersion(ctx); v == v0 {
			t.Error("DataVersion did not move with the write")
		}
		// Another handle's probe is not a change.
		v1, _ := db.DataVersion(ctx)
		third, err := Open(ctx, u, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer third.Close()
		if _, err := third.DataVersion(ctx); err != nil || third.ChangeMode() != ChangeLive {
			t.Fatalf("third handle: mode %q, err %v", third.ChangeMode(), err)
		}
		time.Sleep(100 * time.Millisecond)
		if v, _ := db.DataVersion(ctx); v != v1 {
			t.Errorf("another handle's probe moved DataVersion %d → %d", v1, v)
		}
	})

	t.Run("listen-db unreachable: polling", func(t *testing.T) {
		db, err := Open(ctx, u, Options{ListenURL: "postgres://nobody@/nodb?host=" + t.TempDir() + "&connect_timeout=2"})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		v0, err := db.DataVersion(ctx)
		if err != nil {
			t.Fatalf("DataVersion with an unreachable --listen-db: %v (want polling, no error)", err)
		}
		if m := db.ChangeMode(); m != ChangePolling {
			t.Fatalf("mode = %q, want %q", m, ChangePolling)
		}
		if db.ChangedAfter(v0) != nil {
			t.Error("ChangedAfter on a polling handle is not nil")
		}
		// Polling moves the version every PollInterval, write or not.
		deadline := time.Now().Add(3 * PollInterval)
		for {
			if v, _ := db.DataVersion(ctx); v != v0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("DataVersion still %d after %s of polling", v0, 3*PollInterval)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("not a URL", func(t *testing.T) {
		if _, err := Open(ctx, u, Options{ListenURL: "/tmp/registry.db"}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("--listen-db a path: err = %v, want ErrInvalid", err)
		}
	})
}

// Through a pooler in transaction mode LISTEN returns but nothing is ever
// heard: without --listen-db the handle polls; with it, it listens there and
// hears writes made through the pooler.
func TestPGPoolerChangeModes(t *testing.T) {
	ctx := context.Background()
	pooler := os.Getenv(storetest.PoolerEnv)
	if pooler == "" || os.Getenv(pgTestEnv) == "" {
		t.Skip(storetest.PoolerEnv + " or " + pgTestEnv + " is not set (.ci/pg start, .ci/pgbouncer start)")
	}
	pooled, direct := storetest.Pooled(t, os.Getenv(pgTestEnv), pooler)
	w, err := Open(ctx, pooled, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.DataVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if m := w.ChangeMode(); m != ChangePolling {
		t.Errorf("through the pooler without --listen-db: mode %q, want %q", m, ChangePolling)
	}
	l, err := Open(ctx, pooled, Options{ListenURL: direct})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	v0, err := l.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := l.ChangeMode(); m != ChangeLive {
		t.Fatalf("through the pooler with --listen-db: mode %q, want %q", m, ChangeLive)
	}
	ch := l.ChangedAfter(v0)
	update(t, w, func(tx core.Tx) error {
		return tx.InsertSession(&core.Session{ID: "pooled", State: core.SessionActive, CreatedAt: 1})
	})
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("a write through the pooler was not heard on --listen-db within 5 s")
	}
}
