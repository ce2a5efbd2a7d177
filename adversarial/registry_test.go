package adversarial

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/e2e"
	_ "github.com/mattn/go-sqlite3"
)

// registryAppID is the application_id clawpit marks its SQLite registries
// with: ASCII "CLAW".
const registryAppID = 0x434C4157

// registryForeignDB writes another program's SQLite database at path: a
// table of its own with rows, user_version 7, rollback journal.
func registryForeignDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`,
		`INSERT INTO notes (body) VALUES ('buy milk'), ('call mum'), ('ship it')`,
		`PRAGMA user_version = 7`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// registryHash is the SHA-256 of the file at path.
func registryHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// registrySiblings lists the files next to path that SQLite would add.
func registrySiblings(path string) []string {
	var got []string
	for _, ext := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + ext); err == nil {
			got = append(got, filepath.Base(path+ext))
		}
	}
	return got
}

// registryPragma reads one integer PRAGMA of the database at path.
func registryPragma(t *testing.T, path, pragma string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow("PRAGMA " + pragma).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRegistryForeignSQLiteRefused: another program's SQLite file given as
// --db is refused by every kind of command — a read, writes, the
// read-only console (in tmux: it needs a terminal; skipped without tmux),
// the sweep, migrate — (exit 2, naming the file) and
// left byte for byte as it was, with no journal, WAL or shared-memory file
// beside it.
func TestRegistryForeignSQLiteRefused(t *testing.T) {
	c := newCLI(t)
	c.DB = filepath.Join(t.TempDir(), "app.db")
	registryForeignDB(t, c.DB)
	want := registryHash(t, c.DB)
	for _, args := range [][]string{
		{"task", "list"},
		{"task", "create", "--runtime", "cli", "--label", "x"},
		{"session", "open", "S1"},
		{"approval", "request", "--session", "S1", "--tool", "Bash", "--command", "ls"},
		{"sweep"},
		{"migrate", "--from", c.DB, "--to", "postgres://clawpit@127.0.0.1:1/none"},
	} {
		o := c.RunIn(strings.NewReader(""), args...)
		if o.Code != 2 || !strings.Contains(o.Stderr, c.DB) {
			t.Errorf("%v on another program's database: want exit 2 naming %s\n%s", args, c.DB, o)
		}
		if got := registryHash(t, c.DB); got != want {
			t.Fatalf("%v changed %s (sha256 %s, was %s)\n%s", args, c.DB, got, want, o)
		}
		if s := registrySiblings(c.DB); len(s) > 0 {
			t.Fatalf("%v left %v beside %s", args, s, c.DB)
		}
	}
	// The console opens the registry read-only; it needs a terminal.
	// The shell beside it writes the exit status to a file once the
	// console has exited: tmux's #{pane_dead_status} read empty in CI.
	dir := t.TempDir()
	errFile, statusFile := filepath.Join(dir, "console.stderr"), filepath.Join(dir, "console.status")
	tm := e2e.StartTerm(t, 200, 20, []string{"CLAWPIT_HOME=" + c.Home, "ERR=" + errFile, "ST=" + statusFile}, "sh", "-c",
		`"$0" "$@" 2>"$ERR"; echo $? >"$ST.tmp" && mv "$ST.tmp" "$ST"`,
		c.Bin, "--db", c.DB, "--readonly")
	status := waitExitStatus(t, tm, statusFile, errFile)
	stderr, _ := os.ReadFile(errFile)
	if status != "2" || !strings.Contains(string(stderr), c.DB) {
		t.Errorf("console --readonly on another program's database: exit status %s, want 2 naming %s; stderr: %s\nscreen:\n%s", status, c.DB, stderr, strings.Join(tm.Capture(), "\n"))
	}
	if got := registryHash(t, c.DB); got != want {
		t.Fatalf("the console changed %s", c.DB)
	}
	if s := registrySiblings(c.DB); len(s) > 0 {
		t.Fatalf("the console left %v beside %s", s, c.DB)
	}
	if v := registryPragma(t, c.DB, "user_version"); v != 7 {
		t.Fatalf("user_version %d, want 7", v)
	}
}

// TestRegistryFileModes: an empty (0-byte) file becomes a registry readable
// by its owner only; so does a fresh one, with its WAL and shared-memory
// files.
func TestRegistryFileModes(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(empty, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	c.DB = empty
	c.OK("session", "open", "S1")
	if id := registryPragma(t, empty, "application_id"); id != registryAppID {
		t.Errorf("application_id of a registry made from an empty file: %#x, want %#x", id, registryAppID)
	}
	registryWantMode(t, empty)

	fresh := newCLI(t)
	fresh.OK("session", "open", "S1")
	registryWantMode(t, fresh.DB)
	// While a command holds the registry open its -wal and -shm exist.
	a := fresh.OK("approval", "request", "--session", "S1", "--tool", "Bash", "--command", "ls")
	wait := fresh.Command(nil, "approval", "wait", a, "--timeout", "20s")
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { wait.Process.Kill(); wait.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for len(registrySiblings(fresh.DB)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, ext := range []string{"-wal", "-shm"} {
		registryWantMode(t, fresh.DB+ext)
	}
}

func registryWantMode(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("%s has mode %#o, want 0600", filepath.Base(path), m)
	}
}

// registryPreMarkDB builds a registry as clawpit made it before registries
// were marked: migrations 0001–0014 applied (0014's backfill of an empty
// task table is its first bucket), user_version 14, application_id 0.
func registryPreMarkDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := filepath.Join(e2e.ModuleRoot(), "store", "sqlite", "migrations")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0]); err == nil && v <= 14 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) != 14 {
		t.Fatalf("found %d migrations up to 0014", len(names))
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO tasks_label_buckets (lo_name, lo_id, b, n) VALUES ('', '', 0, 0)`,
		`INSERT INTO sessions (id, label, state, created_at) VALUES ('old-session', 'from before', 'active', 1700000000000)`,
		`PRAGMA user_version = 14`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRegistryPreMarkRegistryStamped: a registry made before registries
// were marked is recognised by its tables and schema version, migrated and
// marked on its next open, never refused.
func TestRegistryPreMarkRegistryStamped(t *testing.T) {
	c := newCLI(t)
	registryPreMarkDB(t, c.DB)
	if out := c.OK("session", "list"); !strings.Contains(out, "old-session") {
		t.Fatalf("session list of a pre-mark registry: %q", out)
	}
	c.OK("task", "create", "--runtime", "cli", "--label", "after the upgrade")
	if id := registryPragma(t, c.DB, "application_id"); id != registryAppID {
		t.Fatalf("application_id after the next open: %#x, want %#x", id, registryAppID)
	}
}

// TestRegistryCountersSaturate: adding to a counter near its maximum
// stops at the maximum; neither the row nor the journal ever shows a
// negative count. A negative or zero --count is bad input.
func TestRegistryCountersSaturate(t *testing.T) {
	c := newCLI(t)
	id := c.OK("task", "create", "--runtime", "cli", "--label", "counter")
	c.OK("task", "start", id)
	const max = "9223372036854775807"
	for range 2 {
		c.OK("task", "output", id, "--count", max)
	}
	c.OK("task", "finish", id, "--subtype", "success", "--text", "one more output")
	var show struct {
		core.Task
		Events []core.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(c.OK("--json", "task", "show", id)), &show); err != nil {
		t.Fatal(err)
	}
	if show.OutputCount != 1<<63-1 {
		t.Errorf("output_count %d after adding the maximum twice and one more, want %s", show.OutputCount, max)
	}
	neg := regexp.MustCompile(`(output_count|count)[^0-9-]*-[0-9]`)
	for _, e := range show.Events {
		if neg.MatchString(e.Reason) {
			t.Errorf("journal shows a negative count: %q", e.Reason)
		}
	}
	for _, n := range []string{"-1", "0", "-" + max} {
		if o := c.Run("task", "output", id, "--count", n); o.Code != 2 || !strings.Contains(o.Stderr, n) {
			t.Errorf("task output --count %s: want exit 2 naming it\n%s", n, o)
		}
	}
}

// registryHookEvent runs the (ungated) hook with one event payload.
func registryHookEvent(t *testing.T, c *e2e.CLI, payload map[string]any) {
	t.Helper()
	b, _ := json.Marshal(payload)
	if o := c.RunIn(strings.NewReader(string(b)), "hook"); o.Code != 0 {
		t.Fatalf("hook %v: %s", payload["hook_event_name"], o)
	}
}

// TestRegistryRuntimeIDsMatchedWhole: ids a runtime sends are matched
// whole, never as a prefix of another's: a SubagentStart for agent-7f3a
// after one for agent-7f3a9c21 registers a second run, the SubagentStop of
// agent-7f3a completes only that one, a SessionEnd for a prefix of a
// session's id closes nothing, and `task track --id` of a prefix tracks no
// other task. An operator's prefix still resolves.
func TestRegistryRuntimeIDsMatchedWhole(t *testing.T) {
	c := newCLI(t)
	ev := func(event string, set map[string]any) map[string]any {
		m := map[string]any{"session_id": "sess-5f1c9a2e", "cwd": "/home/dev/shop", "hook_event_name": event}
		for k, v := range set {
			m[k] = v
		}
		return m
	}
	registryHookEvent(t, c, ev("SessionStart", map[string]any{"source": "startup"}))
	registryHookEvent(t, c, ev("SubagentStart", map[string]any{"agent_id": "agent-7f3a9c21", "agent_type": "test-runner"}))
	registryHookEvent(t, c, ev("SubagentStart", map[string]any{"agent_id": "agent-7f3a", "agent_type": "linter"}))
	var runs []core.Run
	if err := json.Unmarshal([]byte(c.OK("--json", "run", "list")), &runs); err != nil {
		t.Fatal(err)
	}
	byID := map[string]core.Run{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	if len(byID) != 2 || byID["agent-7f3a"].Label != "linter" {
		t.Fatalf("runs after SubagentStart agent-7f3a9c21 then agent-7f3a: %+v", runs)
	}
	registryHookEvent(t, c, ev("SubagentStop", map[string]any{"agent_id": "agent-7f3a"}))
	if err := json.Unmarshal([]byte(c.OK("--json", "run", "list")), &runs); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if ended := !r.Running(); ended != (r.RunID == "agent-7f3a") {
			t.Errorf("after SubagentStop agent-7f3a, run %s ended=%v", r.RunID, ended)
		}
	}

	// SessionEnd for a prefix of the session's id: nothing to close.
	registryHookEvent(t, c, map[string]any{"session_id": "sess-5f1c", "hook_event_name": "SessionEnd", "reason": "other"})
	var s core.Session
	if err := json.Unmarshal([]byte(c.OK("--json", "session", "show", "sess-5f1c9a2e")), &s); err != nil {
		t.Fatal(err)
	}
	if s.State == core.SessionClosed {
		t.Errorf("SessionEnd for sess-5f1c closed session sess-5f1c9a2e")
	}

	// task track --id is a runtime's own id: matched whole.
	c.OK("task", "create", "--runtime", "cli", "--id", "build-20260101", "--label", "nightly")
	o := c.RunIn(strings.NewReader(`{"type":"result","subtype":"success","is_error":false,"result":"done"}`+"\n"),
		"task", "track", "--id", "build-2026")
	var k core.Task
	if err := json.Unmarshal([]byte(c.OK("--json", "task", "show", "build-20260101")), &k); err != nil {
		t.Fatal(err)
	}
	if k.Status != core.TaskQueued || o.Code != 4 {
		t.Errorf("task track --id build-2026 touched task build-20260101 (now %s): %s", k.Status, o)
	}

	// What an operator types still resolves by prefix.
	if out := c.OK("run", "show", "agent-7f3a9"); !strings.Contains(out, "agent-7f3a9c21") {
		t.Errorf("run show agent-7f3a9: %q", out)
	}
}

// waitExitStatus waits up to 30 s for the console in tm to exit and returns
// the exit status its shell wrote to statusFile. On timeout it sends the
// console SIGQUIT (Go prints every goroutine's stack to errFile) and fails
// with the screen and that stderr.
func waitExitStatus(t *testing.T, tm *e2e.Term, statusFile, errFile string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(statusFile); err == nil {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			if pid, err := strconv.Atoi(strings.TrimSpace(tm.Display("#{pane_pid}"))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGQUIT)
				_ = syscall.Kill(pid, syscall.SIGQUIT)
				time.Sleep(time.Second)
			}
			stderr, _ := os.ReadFile(errFile)
			t.Fatalf("the console did not exit within 30 s; screen:\n%s\nstderr:\n%s", strings.Join(tm.Capture(), "\n"), stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
