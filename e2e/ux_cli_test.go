package e2e

// Binary-level tests of issue 11's CLI items: ids you can type, a mistyped
// registry is an error, and the words a user reads.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestTaskIDsYouCanType: a generated task id is at most 12 characters, shown
// whole by task list, and every task command accepts its 8-character prefix;
// a runtime's own --id is kept as given; an ambiguous prefix says how many
// tasks matched.
func TestTaskIDsYouCanType(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var ids []string
	for range 20 {
		ids = append(ids, c.ok("task", "create", "--runtime", "cli", "--session", "S1"))
	}
	seen := map[string]bool{}
	list := c.ok("task", "list")
	for _, id := range ids {
		if len(id) > 12 || strings.Trim(id, "0123456789abcdefghjkmnpqrstvwxyz") != "" {
			t.Fatalf("task id %q: want at most 12 lowercase characters", id)
		}
		if seen[id[:8]] {
			t.Fatalf("two tasks share the 8-character prefix %q", id[:8])
		}
		seen[id[:8]] = true
		if !strings.Contains(list, "\n"+id+" ") {
			t.Errorf("task list does not show %s whole:\n%s", id, list)
		}
	}
	id := ids[0]
	p := id[:8]
	for _, args := range [][]string{
		{"task", "show", p},
		{"task", "start", p, "--summary", "go"},
		{"task", "progress", p, "--summary", "step 2"},
		{"task", "output", p, "--count", "1"},
		{"task", "deliver", p, "--status", "delivered"},
		{"task", "finish", p, "--status", "succeeded"},
		{"task", "cancel", ids[1][:8]},
	} {
		if o := c.run(args...); o.code != 0 || (!strings.Contains(o.stdout, id) && !strings.Contains(o.stdout, ids[1])) {
			t.Errorf("%v: %s", args, o)
		}
	}
	if tk := c.task(p); tk.Status != "succeeded" || tk.OutputCount != 1 || tk.ID != id {
		t.Errorf("after the prefix commands: %+v", tk.Task)
	}

	// A runtime-supplied id is unchanged, however long.
	uuid := "0190c2a4-7b7e-7c3a-9d2e-1f2a3b4c5d6e"
	if got := c.ok("task", "create", "--runtime", "cli", "--id", uuid); got != uuid {
		t.Errorf("--id %s printed %q", uuid, got)
	}
	for _, x := range []string{"abcd-1", "abcd-2", "abcd-3", "abcd-4", "abcd-5", "abcd-6", "abcd-7"} {
		c.ok("task", "create", "--runtime", "cli", "--id", x)
	}
	o := c.run("task", "show", "abcd")
	if o.code != 4 || !strings.Contains(o.stderr, `task id prefix "abcd" is ambiguous: 7 tasks match (abcd-1, abcd-2, abcd-3, abcd-4, abcd-5, …)`) {
		t.Errorf("ambiguous prefix: %s", o)
	}
	if o := c.run("task", "cancel", "abcd-"); o.code != 4 || !strings.Contains(o.stderr, "7 tasks match") {
		t.Errorf("ambiguous prefix on a mutation: %s", o)
	}
}

// TestMistypedRegistry: read commands and commands that change recorded work
// refuse a --db or CLAWPIT_DB that does not exist (exit 4, naming the path)
// and create nothing; commands that record work create it. A directory, fifo
// or device is bad input (exit 2, one sentence).
func TestMistypedRegistry(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, args := range [][]string{
		{"task", "list"}, {"task", "show", "abcd1234"}, {"job", "list"}, {"job", "show", "abcd"},
		{"job", "status", "abcd"}, {"job", "tail", "abcd"}, {"approval", "list"}, {"approval", "show", "abcd"},
		{"approval", "wait", "abcd", "--timeout", "1s"}, {"run", "list"}, {"run", "show", "R1"},
		{"session", "list"}, {"session", "show", "S1"}, {"grant", "list"}, {"notifications"},
		{"task", "start", "abcd1234"}, {"run", "kill", "R1"}, {"approval", "approve", "abcd"},
		{"session", "passivate", "S1"}, {"job", "reap", "--session", "S1"}, {"--json", "task", "list"},
	} {
		o := c.run(args...)
		if o.code != 4 || !strings.Contains(o.stderr, "no registry database at "+c.db) || strings.Count(strings.TrimSpace(o.stderr), "\n") != 0 {
			t.Errorf("%v on a missing registry: want exit 4 naming %s in one line, got %s", args, c.db, o)
		}
		if _, err := os.Stat(c.db); err == nil {
			t.Fatalf("%v created the missing registry", args)
		}
	}
	// CLAWPIT_DB is the same.
	envDB := filepath.Join(t.TempDir(), "typo.db")
	cmd := exec.Command(clawpitBin, "task", "list")
	cmd.Env = append(os.Environ(), "CLAWPIT_DB="+envDB)
	outb, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 || !strings.Contains(string(outb), "no registry database at "+envDB) {
		t.Errorf("CLAWPIT_DB=%s task list: %v %s", envDB, err, outb)
	}
	if _, err := os.Stat(envDB); err == nil {
		t.Errorf("task list created $CLAWPIT_DB")
	}

	// Each command that records work creates the registry.
	for _, args := range [][]string{
		{"session", "open", "S1"},
		{"task", "create", "--runtime", "cli"},
		{"run", "register", "R1", "--session", "S1:sub"},
		{"approval", "request", "--session", "S1", "--tool", "Bash", "--command", "ls"},
	} {
		d := newCLI(t)
		if o := d.run(args...); o.code != 0 {
			t.Errorf("%v on a new registry: %s", args, o)
		}
		if _, err := os.Stat(d.db); err != nil {
			t.Errorf("%v did not create the registry: %v", args, err)
		}
	}
	d := newCLI(t)
	if o := d.runIn(strings.NewReader(""), "task", "track", "--runtime", "cli"); o.code != 0 {
		t.Errorf("task track on a new registry: %s", o)
	}
	if _, err := os.Stat(d.db); err != nil {
		t.Errorf("task track did not create the registry: %v", err)
	}

	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ path, kind string }{
		{dir, "a directory"}, {fifo, "a named pipe (fifo)"}, {"/dev/null", "a device"},
	} {
		for _, args := range [][]string{{"task", "list"}, {"session", "open", "S1"}, {"sweep"}} {
			b := &cli{t: t, db: bad.path, home: c.home}
			o := b.run(args...)
			want := "registry path " + bad.path + " is " + bad.kind + ", not a database file"
			if o.code != 2 || !strings.Contains(o.stderr, want) || strings.Count(strings.TrimSpace(o.stderr), "\n") != 0 {
				t.Errorf("--db %s %v: want exit 2 with %q, got %s", bad.path, args, want, o)
			}
		}
	}
}

// TestWordsUserReads: --help never cites SPEC rule numbers; counts agree
// with their nouns; empty lists say so; a late completion leads with what
// changed; job show has no raw internals; session resume lists only the
// jobs its passivation reaped.
func TestWordsUserReads(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ruleRef := regexp.MustCompile(`\bSPEC\b|§|\b[RJ][0-9]{1,2}\b`)
	for _, args := range [][]string{
		{"--help"}, {"session", "--help"}, {"session", "passivate", "--help"}, {"session", "close", "--help"},
		{"task", "--help"}, {"task", "finish", "--help"}, {"task", "cancel", "--help"}, {"task", "track", "--help"},
		{"task", "create", "--help"}, {"run", "--help"}, {"run", "complete", "--help"}, {"run", "kill", "--help"},
		{"approval", "request", "--help"}, {"sweep", "--help"}, {"daemon", "--help"}, {"demo", "--help"},
		{"job", "--help"}, {"job", "run", "--help"},
	} {
		o := c.run(args...)
		if o.code != 0 {
			t.Errorf("%v: %s", args, o)
		}
		if m := ruleRef.FindAllString(o.stdout, -1); m != nil {
			t.Errorf("clawpit %v cites rule numbers %v:\n%s", args, m, o.stdout)
		}
	}
	if o := c.run("sweep", "--help"); !strings.Contains(o.stdout, "how long an unbacked active task may stay idle before it is marked lost") {
		t.Errorf("--grace does not say what it does:\n%s", o.stdout)
	}

	c.ok("session", "open", "S1")
	for _, l := range []struct {
		args []string
		want string
	}{
		{[]string{"task", "list"}, "no tasks\n"},
		{[]string{"run", "list"}, "no runs\n"},
		{[]string{"approval", "list"}, "no approvals\n"},
		{[]string{"grant", "list"}, "no grants\n"},
		{[]string{"job", "list"}, "no jobs\n"},
		{[]string{"session", "list", "--state", "closed"}, "no sessions\n"},
	} {
		if o := c.run(l.args...); o.code != 0 || o.stdout != l.want {
			t.Errorf("%v on an empty registry: %s (want %q)", l.args, o, l.want)
		}
	}
	if got := c.ok("--json", "task", "list"); got != "[]" {
		t.Errorf("task list --json on an empty registry: %q", got)
	}

	// 1 pending approval, not 1 pending approvals.
	c.ok("session", "open", "S2")
	c.ok("approval", "request", "--session", "S2", "--tool", "Bash", "--command", "rm -rf build")
	if got := c.ok("session", "close", "S2"); !strings.Contains(got, "(1 pending approval cancelled)") {
		t.Errorf("session close: %q", got)
	}

	// A late completion on a killed run leads with the tasks it changed.
	c.ok("run", "register", "R1", "--session", "S1:sub:R1", "--requester", "S1")
	for range 2 {
		id := c.ok("task", "create", "--runtime", "subagent", "--run-id", "R1", "--session", "S1")
		c.ok("task", "start", id)
	}
	c.ok("run", "kill", "R1")
	c.ok("sweep", "--grace", "1ms")
	if got := c.ok("run", "complete", "R1", "--outcome", "ok"); !strings.HasPrefix(got, "run R1: 2 tasks lost → succeeded; late completion (ok) after run ended (killed)") {
		t.Errorf("run complete on a killed run: %q", got)
	}

	// job show: no supervisor_start (clock ticks); session resume lists
	// only the job the passivation reaped, not the one the operator reaped.
	first := c.startJob(nil, "S1", "sleep", "60")
	c.waitJobRunning(first.ID)
	if show := c.ok("job", "show", first.ID); strings.Contains(show, "supervisor_start") || !strings.Contains(show, "supervisor_pid") {
		t.Errorf("job show:\n%s", show)
	}
	if got := c.ok("job", "reap", "--session", "S1"); got != "reaped 1 job of session S1: "+first.ID {
		t.Errorf("job reap: %q", got)
	}
	second := c.startJob(nil, "S1", "sleep", "60")
	c.waitJobRunning(second.ID)
	if got := c.ok("session", "passivate", "S1"); !strings.Contains(got, "reaped 1 background job") || strings.Contains(got, "jobs") {
		t.Errorf("session passivate: %q", got)
	}
	got := c.ok("session", "resume", "S1")
	if !strings.Contains(got, "1 background job was reaped while the session was passivated:") ||
		!strings.Contains(got, second.ID) || strings.Contains(got, first.ID) {
		t.Errorf("session resume lists other than the passivation's reap:\n%s", got)
	}
}
