package e2e

// Tests of the registry CLI through the real binary (built once by TestMain
// in main_test.go), each on its own database in t.TempDir().

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// cli runs the binary against one database.
type cli struct {
	t    testing.TB
	db   string
	home string
	env  []string // more environment (CLAWPIT_HOST=… for a simulated host)
}

func newCLI(t testing.TB) *cli {
	t.Helper()
	dir := t.TempDir()
	return &cli{t: t, db: filepath.Join(dir, "registry.db"), home: filepath.Join(dir, "home")}
}

// out is one finished command.
type out struct {
	stdout, stderr string
	code           int
}

func (o out) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
}

// command prepares the binary with --db and a private CLAWPIT_HOME.
func (c *cli) command(stdin io.Reader, args ...string) *exec.Cmd {
	cmd := exec.Command(clawpitBin, append([]string{"--db", c.db}, args...)...)
	cmd.Env = append(append(os.Environ(), "CLAWPIT_HOME="+c.home, "USER=tester", "SSH_CONNECTION="), c.env...)
	cmd.Stdin = stdin
	return cmd
}

func (c *cli) runIn(stdin io.Reader, args ...string) out {
	c.t.Helper()
	return c.runCmd(c.command(stdin, args...))
}

// runCmd runs a prepared command (c.command, adjusted) and collects its
// output and exit status; a command that cannot start fails the test.
func (c *cli) runCmd(cmd *exec.Cmd) out {
	c.t.Helper()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	o := out{stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%v: %v", cmd.Args, err)
	}
	return o
}

func (c *cli) run(args ...string) out {
	c.t.Helper()
	return c.runIn(nil, args...)
}

// ok runs a command that must exit 0 and returns its trimmed stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	o := c.run(args...)
	if o.code != 0 {
		c.t.Fatalf("clawpit %v: %s", args, o)
	}
	return strings.TrimSpace(o.stdout)
}

// json runs a command with --json that must exit 0 and decodes its output.
func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	s := c.ok(append([]string{"--json"}, args...)...)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		c.t.Fatalf("clawpit %v: decoding %q: %v", args, s, err)
	}
}

// taskJSON is a task as printed by `task show --json`.
type taskJSON struct {
	core.Task
	Events []core.Event `json:"events"`
}

func (c *cli) task(id string) taskJSON {
	c.t.Helper()
	var t taskJSON
	c.json(&t, "task", "show", id)
	return t
}

type runJSON struct {
	core.Run
	Events []core.Event `json:"events"`
}

func (c *cli) runRow(id string) runJSON {
	c.t.Helper()
	var r runJSON
	c.json(&r, "run", "show", id)
	return r
}

// mutation is the contract's mutation output.
type mutation struct {
	Applied bool        `json:"applied"`
	Reason  string      `json:"reason"`
	Task    *core.Task  `json:"task"`
	Run     *core.Run   `json:"run"`
	Tasks   []core.Task `json:"tasks"`
}

// registry opens the same database in-process (the Go API, for what the CLI
// does not offer: the maintenance API, bulk setup).
func (c *cli) registry() (*core.Registry, func()) {
	c.t.Helper()
	db, err := store.Open(context.Background(), c.db, store.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	return core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds()), func() { db.Close() }
}

// snapshot renders every row of every table, to prove a failed command
// changed nothing.
func (c *cli) snapshot() string {
	c.t.Helper()
	s, err := registrySnapshot(c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// registrySnapshot renders every row of every table of the SQLite registry
// at path, one line a row, and each table's row count.
func registrySnapshot(path string) (string, error) {
	// A read-write connection (used only for SELECT): closing the last
	// connection then checkpoints and removes -wal/-shm, which a mode=ro
	// connection would leave behind.
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		return "", err
	}
	defer db.Close()
	tables := []string{"sessions", "tasks", "runs", "approvals", "grants", "events", "notifications", "jobs"}
	var b strings.Builder
	for _, tb := range tables {
		if err := snapshotTable(db, tb, &b); err != nil {
			return "", fmt.Errorf("snapshot %s: %w", tb, err)
		}
	}
	return b.String(), nil
}

func snapshotTable(db *sql.DB, table string, b *strings.Builder) error {
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY rowid")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Fprintf(b, "%s %v\n", table, vals)
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Fprintf(b, "%s: %d rows\n", table, n)
	return nil
}

// seedRun registers run R with a started subagent task (run_id=R) and a
// started cli peer task (source_id=R) through the CLI.
func (c *cli) seedRun(runID string) (sub, peer string) {
	c.t.Helper()
	c.ok("session", "open", "owner-"+runID)
	c.ok("run", "register", runID, "--session", "child-"+runID, "--requester", "owner-"+runID)
	sub = c.ok("task", "create", "--runtime", "subagent", "--run-id", runID, "--session", "owner-"+runID, "--child-session", "child-"+runID, "--label", "sub "+runID)
	peer = c.ok("task", "create", "--runtime", "cli", "--source-id", runID, "--session", "owner-"+runID, "--label", "peer "+runID)
	c.ok("task", "start", sub)
	c.ok("task", "start", peer)
	return sub, peer
}

// TestSeed000KillThenLateCompletion is the seed-000 story (docs/contract.md "Kill is not completion", docs/contract.md "Late completion wins", docs/contract.md "Lost work"):
// kill leaves the mirrored rows running with delivery not_applicable; the
// maintenance API marks them lost; the late `run complete --outcome ok`
// upgrades both to succeeded with the error cleared and cleanup_after
// recomputed; a second kill changes nothing.
func TestSeed000KillThenLateCompletion(t *testing.T) {
	c := newCLI(t)
	sub, peer := c.seedRun("R")

	var m mutation
	c.json(&m, "run", "kill", "R", "--reason", "operator kill")
	if !m.Applied || m.Run.Outcome != core.OutcomeKilled || m.Run.EndedReason != "subagent-killed" ||
		!m.Run.CleanupHandled || m.Run.SuppressAnnounceReason != "killed" || m.Run.EndedAt == 0 {
		t.Fatalf("kill: %+v run %+v", m, m.Run)
	}
	for _, id := range []string{sub, peer} {
		tk := c.task(id)
		if tk.Status != core.TaskRunning || tk.DeliveryStatus != core.DeliveryNotApplicable {
			t.Fatalf("after kill, task %s: status %s delivery %s; want running, not_applicable", id, tk.Status, tk.DeliveryStatus)
		}
	}

	reg, closeReg := c.registry()
	for _, id := range []string{sub, peer} {
		tk, res, err := reg.MarkTaskLost(context.Background(), id, "subagent run ended (killed)")
		if err != nil || !res.Applied || tk.Status != core.TaskLost {
			t.Fatalf("MarkTaskLost %s: %+v %+v %v", id, tk, res, err)
		}
	}
	closeReg()
	lostEnded := c.task(sub).EndedAt

	c.json(&m, "run", "complete", "R", "--outcome", "ok")
	if m.Run.Outcome != core.OutcomeKilled {
		t.Errorf("late completion changed the run record: outcome %s", m.Run.Outcome)
	}
	if len(m.Tasks) != 2 {
		t.Fatalf("complete returned %d tasks, want 2", len(m.Tasks))
	}
	for _, id := range []string{sub, peer} {
		tk := c.task(id)
		if tk.Status != core.TaskSucceeded || tk.Error != "" {
			t.Errorf("task %s: status %s error %q; want succeeded, error cleared", id, tk.Status, tk.Error)
		}
		if tk.EndedAt == 0 || tk.CleanupAfter != tk.EndedAt.Add(7*24*time.Hour) {
			t.Errorf("task %s: ended_at %s cleanup_after %s; want ended_at + 7 days", id, tk.EndedAt, tk.CleanupAfter)
		}
		if id == sub && tk.EndedAt != lostEnded {
			t.Errorf("ended_at moved from %s to %s (stamped only if unset)", lostEnded, tk.EndedAt)
		}
	}

	before := c.snapshot()
	o := c.run("--json", "run", "kill", "R")
	if o.code != 0 {
		t.Fatalf("second kill: %s", o)
	}
	if err := json.Unmarshal([]byte(o.stdout), &m); err != nil || m.Applied || !strings.Contains(m.Reason, "already ended") {
		t.Fatalf("second kill: %+v %v (%s)", m, err, o.stdout)
	}
	if strings.Count(c.snapshot(), "\n") != strings.Count(before, "\n")+1 {
		t.Errorf("second kill should add exactly one journal row (the refusal)")
	}
	human := c.run("run", "kill", "R")
	if human.code != 0 || !strings.Contains(human.stdout, "not applied: run already ended (killed)") {
		t.Errorf("human second kill: %s", human)
	}
}

// TestNewerSchema: a database written by a newer clawpit is refused (exit 1),
// untouched.
func TestNewerSchema(t *testing.T) {
	c := newCLI(t)
	id := c.ok("task", "create", "--runtime", "cli")
	db, err := sql.Open("sqlite3", c.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := c.snapshot()
	for _, args := range [][]string{{"task", "start", id}, {"task", "list"}} {
		o := c.run(args...)
		if o.code != 1 || !strings.Contains(o.stderr, "newer") || !strings.Contains(o.stderr, "99") {
			t.Errorf("%v: %s", args, o)
		}
	}
	if after := c.snapshot(); after != before {
		t.Errorf("database changed")
	}
}

// TestLockedDatabase: a database locked past the busy timeout (5 s) fails
// with exit 1 and a clear message, and nothing is written.
func TestLockedDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5 s busy timeout")
	}
	c := newCLI(t)
	id := c.ok("task", "create", "--runtime", "cli")
	db, err := sql.Open("sqlite3", "file:"+c.db+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	o := c.run("task", "start", id)
	tx.Rollback()
	if o.code != 1 || !strings.Contains(o.stderr, "database is locked") {
		t.Fatalf("locked: %s", o)
	}
	if tk := c.task(id); tk.Status != core.TaskQueued {
		t.Errorf("task changed to %s", tk.Status)
	}
}

// TestHumanAndJSONShapes: list prints an array, show an object with events,
// mutations {"applied","reason","<entity>"} (docs/contract.md "Commands: exit codes and JSON"); text tables align.
func TestHumanAndJSONShapes(t *testing.T) {
	c := newCLI(t)
	sub, peer := c.seedRun("R9")
	var raw []map[string]any
	c.json(&raw, "task", "list", "--runtime", "subagent")
	if len(raw) != 1 || raw[0]["id"] != sub || raw[0]["ended_at"] != nil {
		t.Errorf("task list --json: %v", raw)
	}
	c.json(&raw, "task", "list", "--status", "succeeded")
	if raw == nil || len(raw) != 0 {
		t.Errorf("empty list must be [], got %v", raw)
	}
	var obj map[string]any
	c.json(&obj, "session", "show", "owner-R9")
	if _, ok := obj["events"].([]any); !ok || obj["state"] != "active" {
		t.Errorf("session show --json: %v", obj)
	}
	s := c.ok("--json", "task", "cancel", peer, "--reason", "no longer needed")
	if !strings.HasPrefix(s, "{\n  \"applied\": true,\n  \"reason\": ") || !strings.Contains(s, `"task": {`) {
		t.Errorf("mutation shape:\n%s", s)
	}
	// Cancelling the cli peer killed its run (R3 → R1).
	if r := c.runRow("R9"); r.Outcome != core.OutcomeKilled {
		t.Errorf("run after cancel: %+v", r.Run)
	}
	if again := c.ok("task", "cancel", peer); !strings.Contains(again, "not applied: already cancelled") {
		t.Errorf("second cancel: %q", again)
	}
	list := c.ok("task", "list")
	lines := strings.Split(list, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("task list:\n%s", list)
	}
	col := strings.Index(lines[0], "STATUS")
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l[col:], "running") && !strings.HasPrefix(l[col:], "cancelled") {
			t.Errorf("columns not aligned:\n%s", list)
		}
	}
	// Ids you can type: a generated id is at most 12 characters, shown whole
	// by task list, and its 8-character prefix resolves.
	if len(sub) > 12 || !strings.Contains(list, sub+" ") {
		t.Errorf("task id %q: want at most 12 characters, shown whole in task list:\n%s", sub, list)
	}
	show := c.ok("task", "show", sub[:8])
	for _, w := range []string{"status:", "running", "events (", "queued → running", "runtime"} {
		if !strings.Contains(show, w) {
			t.Errorf("task show lacks %q:\n%s", w, show)
		}
	}
}

// TestReadOnlyDatabase: a registry the process cannot write fails with exit
// 1 and a message saying it is read-only, and nothing changes. How: the
// database file is made 0444 in a 0555 directory; because root ignores
// permission bits, when the test runs as root the binary is started as user
// nobody (65534) — so the open really hits a read-only file, not a simulated
// error.
func TestReadOnlyDatabase(t *testing.T) {
	c := newCLI(t)
	id := c.ok("task", "create", "--runtime", "cli")
	before := c.snapshot()
	dir := filepath.Dir(c.db)
	if err := os.Chmod(c.db, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.Chmod(c.db, 0o644) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		// nobody must be able to reach the database and the binary.
		for _, d := range []string{dir, filepath.Dir(dir), filepath.Dir(clawpitBin)} {
			if d != dir {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, args := range [][]string{
		{"task", "start", id},
		{"task", "create", "--runtime", "cli"},
	} {
		cmd := c.command(nil, args...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(se.String(), "read-only") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 naming read-only", args, code, se.String())
		}
	}
	if after := c.snapshot(); after != before {
		t.Errorf("database changed:\n%s\n%s", before, after)
	}
}

// BenchmarkCLITaskStart is P2 as a Go benchmark: one `clawpit task start`
// process per iteration (start to exit) on a registry of a few thousand
// tasks. Compare with BenchmarkSqlite3Update:
//
//	go test -run '^$' -bench 'CLITaskStart|Sqlite3Update' .
//
// bench/p2.sh runs the same comparison interleaved and prints the ratio.
func BenchmarkCLITaskStart(b *testing.B) {
	c, ids := benchRegistry(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.command(nil, "task", "start", ids[i]).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSqlite3Update is the P2 baseline: one bare sqlite3 CLI UPDATE per
// iteration on the same kind of registry.
func BenchmarkSqlite3Update(b *testing.B) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Skip("sqlite3 CLI not installed (apt-get install -y sqlite3)")
	}
	c, ids := benchRegistry(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := fmt.Sprintf("UPDATE tasks SET status='running', rev=rev+1 WHERE id='%s' AND status='queued'", ids[i])
		if err := exec.Command(bin, c.db, q).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRegistry seeds 3,000 terminal tasks plus enough queued ones for b.N.
func benchRegistry(b *testing.B) (*cli, []string) {
	b.Helper()
	c := newCLI(b)
	db, err := store.Open(context.Background(), c.db, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := core.TS(time.Now())
	var ids []string
	n := b.N + 10
	err = db.Update(context.Background(), func(tx core.Tx) error {
		for i := 0; i < 3000+n; i++ {
			t := &core.Task{ID: core.NewTaskID(), Runtime: core.RuntimeCLI, Status: core.TaskQueued,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now}
			if i < 3000 {
				t.Status, t.StartedAt, t.EndedAt, t.CleanupAfter = core.TaskSucceeded, now, now, now.Add(time.Hour)
			} else {
				ids = append(ids, t.ID)
			}
			if err := tx.InsertTask(t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return c, ids
}

// TestConsoleNeedsATerminal: without a terminal the console says what to
// do instead of drawing into a pipe; like bad flags, that is a usage
// problem (exit 2, the same as `clawpit demo`).
func TestConsoleNeedsATerminal(t *testing.T) {
	c := newCLI(t)
	t.Setenv("CLAWPIT_CONFIG", filepath.Join(t.TempDir(), "none.toml"))
	o := c.run()
	if o.code != 2 || !strings.Contains(o.stderr, "the console needs a terminal") {
		t.Fatalf("%s", o)
	}
	if _, err := os.Stat(c.db); err != nil {
		t.Logf("registry not created before the terminal check: %v", err)
	}
	o = c.run("--theme", "neon")
	if o.code != 2 || !strings.Contains(o.stderr, `unknown theme "neon"`) {
		t.Fatalf("%s", o)
	}
	o = c.run("--readonly", "--watchdog-interval", "nope")
	if o.code != 2 {
		t.Fatalf("%s", o)
	}
}
