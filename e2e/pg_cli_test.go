package e2e

import (
	"bytes"
	"database/sql"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/store/storetest"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// An unreachable PostgreSQL registry: every command exits 1 with one line
// that says so and names the URL without its password.
func TestPostgresUnreachableExits1(t *testing.T) {
	c := newCLI(t)
	c.db = "postgres://op:s3cret@/clawpit?host=" + t.TempDir() + "&connect_timeout=2"
	for _, args := range [][]string{{"session", "list"}, {"task", "create", "--runtime", "cli", "--label", "x"}, {"sweep"}} {
		o := c.runIn(nil, args...)
		if o.code != 1 || !strings.Contains(o.stderr, "cannot reach") || strings.Contains(o.stderr, "s3cret") ||
			strings.Count(strings.TrimSpace(o.stderr), "\n") != 0 {
			t.Errorf("clawpit %v: %s", args, o)
		}
	}
}

// `clawpit migrate` copies a SQLite registry into PostgreSQL and the copy
// answers the same queries.
func TestMigrateCommand(t *testing.T) {
	if os.Getenv(storetest.Env) == "" {
		t.Skip(storetest.Env + " is not set")
	}
	c := newCLI(t)
	c.ok("session", "open", "s1", "--label", "first")
	id := c.ok("task", "create", "--runtime", "cli", "--session", "s1", "--label", "copied")
	c.ok("task", "start", id)
	before := c.ok("task", "show", id, "--json")

	to := storetest.Schema(t, os.Getenv(storetest.Env))
	o := c.run("migrate", "--from", c.db, "--to", to)
	if o.code != 0 {
		t.Fatalf("migrate: %s", o)
	}
	for _, want := range []string{"1 sessions", "1 tasks", "events"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("migrate output lacks %q: %s", want, o)
		}
	}
	// The copy is vacuumed and analyzed: counts need no heap visits.
	if o.stderr != "" {
		t.Errorf("migrate warned: %s", o)
	}
	raw, err := sql.Open("pgx", to)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var vacuumed bool
	if err := raw.QueryRow("SELECT last_vacuum IS NOT NULL AND last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relid = 'tasks'::regclass").Scan(&vacuumed); err != nil || !vacuumed {
		t.Errorf("tasks not vacuumed and analyzed after migrate (%v)", err)
	}
	pg := *c
	pg.db = to
	if after := pg.ok("task", "show", id, "--json"); after != before {
		t.Errorf("task show differs after migrate:\nsqlite   %s\npostgres %s", before, after)
	}
	if o := pg.runIn(nil, "migrate", "--from", c.db, "--to", to); o.code != 1 || !strings.Contains(o.stderr, "not empty") {
		t.Errorf("second migrate into the same registry: %s", o)
	}
	if o := c.runIn(nil, "migrate", "--from", c.db, "--to", c.db); o.code != 2 {
		t.Errorf("migrate --to a file: %s", o)
	}
}

// The daemon waits for an unreachable registry server, logging each retry,
// and still stops cleanly on SIGTERM.
func TestDaemonWaitsForUnreachableRegistry(t *testing.T) {
	c := newCLI(t)
	c.db = "postgres://op@/clawpit?host=" + t.TempDir() + "&connect_timeout=2"
	cmd := c.command(nil, "daemon")
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if cmd.ProcessState != nil {
		t.Fatalf("daemon exited: %s", se.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if err != nil || strings.Count(se.String(), "registry unreachable, retrying") < 2 {
		t.Errorf("daemon: %v\n%s", err, se.String())
	}
}
