package e2e

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// inert fails when s holds anything that drives a terminal: ESC, BEL, a C1
// control, a bidi override, or (oneLine) a newline inside a printed field.
func inert(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\x1b\x07\u009b\u009d\u202e") {
		t.Errorf("%s prints raw control bytes: %q", what, s)
	}
}

// TestCLIRefusesBadIDs: ids with escape sequences or controls are refused
// where they enter, exit 2 naming the value (inert), and nothing is written
// (issue 9 item 7).
func TestCLIRefusesBadIDs(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "s")
	before := c.snapshot()
	for _, args := range [][]string{
		{"run", "register", "r\x1b[31mred", "--session", "child"},
		{"run", "register", "r1", "--session", "child\x1b]0;t\x07"},
		{"task", "create", "--runtime", "cli", "--id", "t\x1b]0;pwned\x07"},
		{"task", "create", "--runtime", "cli", "--id", "t\nforged"},
		{"task", "create", "--runtime", "cli", "--source-id", "src\u202eevil"},
		{"task", "create", "--runtime", "cli", "--id", strings.Repeat("x", 129)},
		{"session", "open", "s\x1b[2J"},
	} {
		o := c.run(args...)
		if o.code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, o.code, o)
			continue
		}
		inert(t, "error", o.stderr)
		if strings.Count(strings.TrimRight(o.stderr, "\n"), "\n") != 0 {
			t.Errorf("%q: error spans lines: %q", args, o.stderr)
		}
		if !strings.Contains(o.stderr, "clawpit: ") || !strings.Contains(o.stderr, "invalid") {
			t.Errorf("%q: error does not name the bad value: %q", args, o.stderr)
		}
	}
	if !strings.Contains(c.run("run", "register", "r\x1b[31mred", "--session", "child").stderr, `"rred"`) {
		t.Error("the refused run id is not named")
	}
	if c.snapshot() != before {
		t.Error("a refused id wrote to the registry")
	}
}

// TestCLIPrintsUntrustedInert: labels, errors and stream fields with escapes
// or newlines print inert, on one line, everywhere the CLI echoes them:
// stored labels, `sweep`'s action and finding lines (ids and labels written
// straight into the database, as an older version or another writer could),
// the ambiguous-prefix error and `task track`'s summary.
func TestCLIPrintsUntrustedInert(t *testing.T) {
	c := newCLI(t)
	// A label is sanitised where it enters.
	id := c.ok("task", "create", "--runtime", "cli", "--label", "a\x1b[31mb\nFAKE\x07")
	if got := c.task(id).Label; got != "ab FAKE␇" {
		t.Errorf("stored label %q", got)
	}
	if o := c.run("task", "create", "--runtime", "cli", "--label", strings.Repeat("x", 1025)); o.code != 2 || !strings.Contains(o.stderr, "1024") {
		t.Errorf("oversized label: %s", o)
	}

	// Rows written around the CLI: a forged id and a 1 MB label.
	lost := c.ok("task", "create", "--runtime", "cli", "--session", "gone")
	db, err := sql.Open("sqlite3", "file:"+c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	forged := "evil\x1b[31m\x07\n  grace_lost task forged: queued → lost — fake"
	big := strings.Repeat("\x1b[1mL", 1<<18)
	if _, err := db.ExecContext(ctx, "UPDATE tasks SET id = ?, label = ? WHERE id = ?", forged, big, lost); err != nil {
		t.Fatal(err)
	}
	for _, tid := range []string{"ambx\x1b]0;A\x07one", "ambx\x1b]0;B\x07two"} {
		x := c.ok("task", "create", "--runtime", "cli")
		if _, err := db.ExecContext(ctx, "UPDATE tasks SET id = ? WHERE id = ?", tid, x); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	o := c.run("sweep", "--dry-run", "--grace", "1ms")
	if o.code != 0 {
		t.Fatalf("sweep: %s", o)
	}
	inert(t, "sweep", o.stdout)
	if strings.Contains(o.stdout, "\n  grace_lost task forged") {
		t.Errorf("a newline in an id forged a report line:\n%s", o.stdout)
	}
	if !strings.Contains(o.stdout, "grace_lost task evil␇   grace_lost task forged") {
		t.Errorf("sweep lost the action:\n%s", o.stdout)
	}
	if len(o.stdout) > 64<<10 {
		t.Errorf("sweep printed %d bytes: untrusted fields are not capped", len(o.stdout))
	}

	o = c.run("task", "show", "ambx")
	if o.code != 4 || !strings.Contains(o.stderr, "ambiguous") {
		t.Fatalf("ambiguous prefix: %s", o)
	}
	inert(t, "ambiguous-prefix error", o.stderr)

	o = c.run("task", "list")
	inert(t, "task list", o.stdout)

	stream := `{"type":"result","subtype":"error_\u001b]0;pwned\u0007\nFAKE LINE","is_error":true}` + "\n"
	o = c.runIn(strings.NewReader(stream), "task", "track")
	inert(t, "track summary", o.stderr)
	if strings.Contains(o.stderr, "\nFAKE LINE") || !strings.Contains(o.stderr, "error_") {
		t.Errorf("track summary: %q", o.stderr)
	}
}
