package e2e

// Headless maintenance through the real binary (built once by TestMain in
// main_test.go): --sweep-once / sweep, daemon, notifications, config.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
)

// sweepJSON is the --json report of a sweep.
type sweepJSON struct {
	Mode       string          `json:"mode"`
	StartedAt  core.Timestamp  `json:"started_at"`
	DurationMs int64           `json:"duration_ms"`
	Counts     map[string]int  `json:"counts"`
	Actions    []sweep.Action  `json:"actions"`
	Findings   []sweep.Finding `json:"findings"`
}

// withConfig runs the binary with XDG_CONFIG_HOME pointing at a config.toml
// holding body.
func (c *cli) withConfig(body string, args ...string) out {
	c.t.Helper()
	dir := c.t.TempDir()
	path := filepath.Join(dir, "clawpit", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		c.t.Fatal(err)
	}
	cmd := c.command(nil, args...)
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+dir, "CLAWPIT_CONFIG=")
	return c.runCmd(cmd)
}

// TestSweepOnceRegistryErrors: a headless sweep on a missing, corrupt or
// locked registry exits 1 with a message saying which (docs/contract.md "Maintenance", docs/contract.md "Commands: exit codes and JSON").
func TestSweepOnceRegistryErrors(t *testing.T) {
	if store.BusyTimeoutMs < 5000 {
		t.Fatalf("default busy timeout %d ms, docs/contract.md (Files) wants at least 5 s", store.BusyTimeoutMs)
	}
	c := newCLI(t)
	o := c.run("--sweep-once")
	if o.code != 1 || !strings.Contains(o.stderr, "no registry database at "+c.db) {
		t.Errorf("missing: %s", o)
	}
	if _, err := os.Stat(c.db); err == nil {
		t.Error("a headless sweep created the missing registry")
	}
	if o := c.run("sweep", "--dry-run"); o.code != 1 || !strings.Contains(o.stderr, "no registry database at") {
		t.Errorf("missing (sweep --dry-run): %s", o)
	}

	garbage := make([]byte, 8192)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(c.db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	if o := c.run("--sweep-once"); o.code != 1 || !strings.Contains(o.stderr, "corrupt or not a clawpit registry") {
		t.Errorf("corrupt: %s", o)
	}
	os.Remove(c.db)

	// Locked: another process holds the write lock (BEGIN EXCLUSIVE) past the
	// busy timeout while the sweep has something to write.
	id := c.ok("task", "create", "--runtime", "cli", "--session", "gone")
	before := c.snapshot()
	db, err := sql.Open("sqlite3", "file:"+c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	o = c.run("--sweep-once", "--grace", "1ms", "--busy-timeout", "300ms")
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if o.code != 1 || !strings.Contains(o.stderr, "database is locked") {
		t.Errorf("locked: %s", o)
	}
	if after := c.snapshot(); after != before {
		t.Errorf("a locked sweep changed the registry")
	}
	// Once the lock is gone the same sweep applies.
	var rep sweepJSON
	c.json(&rep, "--sweep-once", "--grace", "1ms")
	if rep.Mode != "applied" || rep.Counts["lost"] != 1 || c.task(id).Status != core.TaskLost {
		t.Errorf("sweep after unlock: %+v", rep)
	}
}

// TestSweepOnceDryRunAndThresholds: --dry-run prints the plan and writes
// nothing; thresholds come from flags, else the config file; bad values exit
// 2 naming them.
func TestSweepOnceDryRunAndThresholds(t *testing.T) {
	c := newCLI(t)
	id := c.ok("task", "create", "--runtime", "cli", "--session", "gone", "--label", "orphan")
	before := c.snapshot()
	o := c.run("--sweep-once", "--dry-run", "--grace", "1ms")
	if o.code != 0 || !strings.HasPrefix(o.stdout, "Sweep dry run in ") ||
		!strings.Contains(o.stdout, "  grace_lost task "+id+": queued → lost — backing session missing\n") {
		t.Fatalf("dry run: %s", o)
	}
	if c.snapshot() != before {
		t.Fatal("dry run wrote to the registry")
	}
	var rep sweepJSON
	c.json(&rep, "sweep", "--dry-run", "--grace", "1ms")
	if rep.Mode != "dry_run" || len(rep.Actions) != 1 || rep.Actions[0].Result != "planned" {
		t.Fatalf("dry run JSON: %+v", rep)
	}
	for _, key := range []string{"lost", "timed_out", "expired", "silent", "stamped", "pruned", "raced", "errors", "warnings"} {
		if _, ok := rep.Counts[key]; !ok {
			t.Errorf("counts lacks %q: %v", key, rep.Counts)
		}
	}

	// The default grace (5 min) keeps it; the config's grace does not; a flag
	// beats the config.
	c.json(&rep, "sweep")
	if rep.Counts["lost"] != 0 {
		t.Fatalf("lost within the default grace: %+v", rep)
	}
	if o := c.withConfig("[sweep]\ngrace = \"1ms\"\n", "sweep", "--grace", "1h"); o.code != 0 || strings.Contains(o.stdout, "grace_lost") {
		t.Fatalf("flag did not override config: %s", o)
	}
	if o := c.withConfig("theme = \"mono\"\n[keys]\nquit = [\"q\", \"ctrl+c\"]\napprove = \"a\"\n[sweep]\ngrace = \"1ms\"\n", "sweep"); o.code != 0 ||
		!strings.Contains(o.stdout, "grace_lost task "+id) {
		t.Fatalf("config grace not used: %s", o)
	}

	for _, tc := range []struct {
		args   []string
		config string
		want   []string
	}{
		{args: []string{"sweep", "--grace", "5x"}, want: []string{`"5x"`, "--grace"}},
		{args: []string{"--sweep-once", "--stale-running", "soon"}, want: []string{`"soon"`, "--stale-running"}},
		{args: []string{"sweep", "--retention", "-1h"}, want: []string{"--retention", "must be positive"}},
		{args: []string{"daemon", "--sweep-interval", "-5s"}, want: []string{"--sweep-interval", "must not be negative"}},
		{args: []string{"sweep"}, config: "[sweep]\ngrace = \"5 minutes\"\n", want: []string{"config.toml", "sweep.grace", `"5 minutes"`}},
		{args: []string{"sweep"}, config: "[sweep]\ngrace = 5\n", want: []string{"config.toml", "sweep.grace"}},
		{args: []string{"sweep"}, config: "[sweep]\ngrase = \"5m\"\n", want: []string{"config.toml", "unknown key sweep.grase"}},
		{args: []string{"sweep"}, config: "[sweep\n", want: []string{"config.toml", "line"}},
	} {
		var o out
		if tc.config != "" {
			o = c.withConfig(tc.config, tc.args...)
		} else {
			o = c.run(tc.args...)
		}
		if o.code != 2 {
			t.Errorf("%v %q: exit %d, want 2\n%s", tc.args, tc.config, o.code, o)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(o.stderr, w) {
				t.Errorf("%v %q: stderr %q lacks %q", tc.args, tc.config, o.stderr, w)
			}
		}
	}
}

// TestNotificationsCommand: undelivered notifications print once with --ack,
// --all includes delivered ones, --follow prints new ones as JSON lines.
func TestNotificationsCommand(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "ops")
	id := c.ok("task", "create", "--runtime", "cron", "--session", "ops", "--label", "nightly")
	c.ok("task", "start", id)
	c.ok("task", "finish", id, "--status", "failed", "--error", "rate limited")
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != 1 || ns[0].Kind != core.NotifyTaskFailed || ns[0].DeliveredAt != 0 {
		t.Fatalf("notifications: %+v", ns)
	}
	if got := c.ok("notifications", "--ack"); !strings.Contains(got, "task_failed [ops] Task nightly did not complete: rate limited") {
		t.Fatalf("text: %q", got)
	}
	if got := c.ok("notifications"); got != "" {
		t.Fatalf("acked notification printed again: %q", got)
	}
	if got := c.ok("notifications", "--all"); !strings.Contains(got, "(delivered)") {
		t.Fatalf("--all: %q", got)
	}

	cmd := c.command(nil, "--json", "notifications", "--follow", "--ack")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	time.Sleep(300 * time.Millisecond) // let it take its cursor (ordering, not a speed target)
	c.ok("sweep")                      // raises task_silent for the silent cron task
	select {
	case l := <-lines:
		var n core.Notification
		if err := json.Unmarshal([]byte(l), &n); err != nil || n.Kind != core.NotifyTaskSilent || n.SubjectID != id {
			t.Fatalf("followed %q (%v)", l, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("--follow printed nothing")
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("follow exit: %v", err)
	}
	c.json(&ns, "notifications")
	if len(ns) != 0 {
		t.Errorf("--follow --ack left %d undelivered", len(ns))
	}
}

// TestDaemon: the daemon sweeps, runs the watchdog, hands notifications to
// --notify-cmd, and exits 0 on SIGTERM.
func TestDaemon(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "ops")
	lostID := c.ok("task", "create", "--runtime", "cli", "--session", "gone")
	cron := c.ok("task", "create", "--runtime", "cron", "--session", "ops", "--label", "nightly")
	c.ok("task", "start", cron)
	c.ok("task", "finish", cron, "--status", "succeeded")
	c.ok("run", "register", "run-idle", "--session", "ops", "--requester", "ops", "--inactivity", "200ms")
	// A task deleted behind the store's back leaves its label key: the
	// daemon's maintenance after a sweep removes it.
	gone := c.ok("task", "create", "--runtime", "cli", "--session", "ops", "--label", "deleted outside")
	raw, err := sql.Open("sqlite3", c.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("DELETE FROM tasks WHERE id = ?", gone); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	sink := filepath.Join(t.TempDir(), "delivered.jsonl")
	cmd := c.command(nil, "daemon", "--sweep-interval", "300ms", "--watchdog-interval", "50ms", "--grace", "1ms",
		"--notify-cmd", "cat >> "+sink)
	var se strings.Builder
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	var kinds map[string]bool
	for {
		b, _ := os.ReadFile(sink)
		kinds = map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var n core.Notification
			if json.Unmarshal([]byte(l), &n) == nil {
				kinds[string(n.Kind)] = true
			}
		}
		if kinds["task_silent"] && kinds["run_timed_out"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notify-cmd got %v; daemon log:\n%s", kinds, se.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := c.task(lostID).Status; st != core.TaskLost {
		t.Errorf("daemon did not mark the orphan lost: %s", st)
	}
	if r := c.runRow("run-idle"); r.Outcome != core.OutcomeTimeout {
		t.Errorf("watchdog did not time out the idle run: %+v", r.Run)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon exit: %v\n%s", err, se.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("daemon did not stop on SIGTERM")
	}
	if !strings.Contains(se.String(), "clawpit daemon stopped") || !strings.Contains(se.String(), "Sweep applied in") ||
		!strings.Contains(se.String(), `label index maintained" indexed=0 removed=1`) {
		t.Errorf("daemon log:\n%s", se.String())
	}
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != 0 {
		t.Errorf("%d notifications left undelivered", len(ns))
	}
}
