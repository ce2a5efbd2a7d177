package e2e

// Background jobs through the real binary (docs/contract.md "Background jobs: Detached" to "Alerts on finish", `job …`). Each test
// uses its own database; the supervisors are the real `clawpit __supervise`.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/tailer"
)

// jobOut is `job run|cancel --json`.
type jobOut struct {
	Applied bool      `json:"applied"`
	Reason  string    `json:"reason"`
	Job     *core.Job `json:"job"`
}

func (c *cli) job(id string) core.Job {
	c.t.Helper()
	var j core.Job
	c.json(&j, "job", "status", id)
	return j
}

// waitJob polls `job status` until ok, failing after timeout.
func (c *cli) waitJob(id string, timeout time.Duration, what string, ok func(core.Job) bool) core.Job {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := c.job(id)
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s: waited %s for %s; status %s", id, timeout, what, j.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killJobOnCleanup SIGKILLs whatever is left of a job when the test ends.
func (c *cli) killJobOnCleanup(id string) {
	c.t.Cleanup(func() {
		var j core.Job
		if o := c.run("--json", "job", "status", id); o.code == 0 && json.Unmarshal([]byte(o.stdout), &j) == nil && j.PGID > 1 {
			_ = supervisor.SignalGroup(j.PGID, syscall.SIGKILL)
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A dev server is a normal job (docs/contract.md "Background jobs: Detached", docs/contract.md "Background jobs: Live, redacted log", docs/contract.md "Background jobs: Tail and follow", docs/contract.md "Background jobs: Ending"): it keeps running after
// `job run` and the shell that started it have exited, its request log is on
// disk while it runs, `job tail` shows it, and `job cancel` ends it cancelled
// with the port free again.
func TestJobDevServer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	c := newCLI(t)
	port := freePort(t)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "index.html"), []byte("hello from the dev server\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", `"$0" --json --db "$1" job run --session dev --cwd "$2" --rationale "serve the site" -- python3 -m http.server "$3" --bind 127.0.0.1`,
		clawpitBin, c.db, cwd, fmt.Sprint(port))
	sh.Env = append(os.Environ(), "CLAWPIT_HOME="+c.home)
	start := time.Now()
	b, err := sh.Output()
	if err != nil {
		t.Fatalf("job run: %v", err)
	}
	if el := time.Since(start); el > 10*time.Second { // generous: CI machines are loaded
		t.Errorf("job run took %s: it must return at once", el)
	}
	var run jobOut
	if err := json.Unmarshal(b, &run); err != nil || !run.Applied || run.Job == nil {
		t.Fatalf("job run output %q: %v", b, err)
	}
	id := run.Job.ID
	c.killJobOnCleanup(id)
	if want := filepath.Join(filepath.Dir(c.db), "jobs", id, "output.log"); run.Job.LogPath != want {
		t.Errorf("log path %s, want %s", run.Job.LogPath, want)
	}
	if _, err := os.Stat(run.Job.LogPath); err != nil {
		t.Errorf("log missing right after job run: %v", err)
	}

	// The server answers although `job run` and its shell are gone.
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get(url + "index.html")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev server never answered: %v; job %+v", err, c.job(id))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 1; i <= 3; i++ {
		resp, err := client.Get(fmt.Sprintf("%sindex.html?req-%d", url, i))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	j := c.job(id)
	if j.Status != core.JobRunning || j.PID == 0 || j.PGID != j.PID || j.SupervisorPID == 0 {
		t.Fatalf("job while serving: %+v", j)
	}
	// Each request line reaches the log while the server runs.
	deadline = time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(j.LogPath)
		if strings.Contains(string(b), "GET /index.html?req-3 ") {
			if !strings.Contains(string(b), "[stderr] ") {
				t.Errorf("http.server logs to stderr; lines lack the prefix: %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("request lines not in the log while running: %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tail := c.ok("job", "tail", id[:6], "--lines", "3")
	for i := 1; i <= 3; i++ {
		if !strings.Contains(tail, fmt.Sprintf("GET /index.html?req-%d ", i)) {
			t.Errorf("job tail lacks request %d:\n%s", i, tail)
		}
	}
	if strings.Contains(tail, "GET /index.html HTTP") {
		t.Errorf("--lines 3 printed more than 3 lines:\n%s", tail)
	}

	start = time.Now()
	var cancel jobOut
	c.json(&cancel, "job", "cancel", id)
	if !cancel.Applied || cancel.Job.Status != core.JobCancelled {
		t.Fatalf("cancel: %+v", cancel)
	}
	if el := time.Since(start); el > 6*time.Second {
		t.Errorf("cancel took %s", el)
	}
	j = c.waitJob(id, 15*time.Second, "exit code", func(j core.Job) bool { return j.ExitCode != nil })
	if j.Status != core.JobCancelled || *j.ExitCode != 143 {
		t.Errorf("after cancel: %s exit %d", j.Status, *j.ExitCode)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Errorf("port %d still busy after cancel: %v", port, err)
	} else {
		l.Close()
	}
	// A second cancel is refused and changes nothing.
	if o := c.run("job", "cancel", id); o.code != 0 || !strings.Contains(o.stdout, "not applied: already cancelled") {
		t.Errorf("second cancel: %s", o)
	}
	// show, list and the journal.
	show := c.ok("job", "show", id)
	for _, want := range []string{"status:", "cancelled", "python3 -m http.server", "serve the site", "SIGTERM", "events ("} {
		if !strings.Contains(show, want) {
			t.Errorf("job show lacks %q:\n%s", want, show)
		}
	}
	if list := c.ok("job", "list", "--session", "dev", "--status", "cancelled"); !strings.Contains(list, id) {
		t.Errorf("job list:\n%s", list)
	}
}

// Bad input to `job run` exits 2 with a clear message and writes nothing.
func TestJobRunBadInput(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ok("session", "open", "s")
	missing := filepath.Join(t.TempDir(), "not here")
	plain := filepath.Join(t.TempDir(), "notes.sh")
	if err := os.WriteFile(plain, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "run", "--session", "s"}, "empty command"},
		{[]string{"job", "run", "--session", "s", "--", ""}, "empty command"},
		{[]string{"job", "run", "--", "true"}, "--session is required"},
		{[]string{"job", "run", "--session", "s", "--timeout", "5 minutes", "--", "true"}, `--timeout "5 minutes"`},
		{[]string{"job", "run", "--session", "s", "--timeout", "-3s", "--", "true"}, "negative"},
		{[]string{"job", "run", "--session", "s", "--cwd", missing, "--", "true"}, "mkdir -p -- '" + missing + "'"},
		{[]string{"job", "run", "--session", "s", "--", "no-such-command-clawpit", "-x"}, `command "no-such-command-clawpit" not found in $PATH`},
		{[]string{"job", "run", "--session", "s", "--", plain}, "command " + plain + " is not executable"},
		{[]string{"job", "run", "--session", "s", "--cwd", filepath.Dir(missing), "--", "./gone.sh"}, "command ./gone.sh does not exist"},
		{[]string{"job", "run", "--session", "s", "--", "/"}, "command / is a directory"},
		{[]string{"job", "list", "--status", "runing"}, `unknown job status "runing"`},
		{[]string{"job", "tail", "abcd", "--lines", "-1"}, "--lines -1: must not be negative"},
		{[]string{"job", "tail", "abcd", "--bytes", "-5"}, "--bytes -5: must not be negative"},
	} {
		o := c.run(tc.args...)
		if o.code != 2 || !strings.Contains(o.stderr, tc.want) {
			t.Errorf("%v: want exit 2 mentioning %q, got %s", tc.args, tc.want, o)
		}
	}
	if list := c.ok("--json", "job", "list"); list != "[]" {
		t.Errorf("bad input wrote jobs: %s", list)
	}
	if ents, _ := os.ReadDir(filepath.Join(filepath.Dir(c.db), "jobs")); len(ents) != 0 {
		t.Errorf("bad input created %d log directories", len(ents))
	}
	for _, args := range [][]string{{"job", "status", "ffffffffffff"}, {"job", "tail", "abcd"}, {"job", "cancel", "abcd"}} {
		if o := c.run(args...); o.code != 4 {
			t.Errorf("%v: want exit 4, got %s", args, o)
		}
	}
}

// `session passivate` reaps the session's jobs (docs/contract.md "Background jobs: Reaped") when the CLI wires
// the job supervisor into the registry; `session resume` lists them once.
func TestJobSessionPassivateReaps(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ok("session", "open", "p")
	var run jobOut
	c.json(&run, "job", "run", "--session", "p", "--", "sh", "-c", "sleep 60")
	id := run.Job.ID
	c.killJobOnCleanup(id)
	j := c.waitJob(id, 20*time.Second, "running", func(j core.Job) bool { return j.Status == core.JobRunning })
	start := time.Now()
	o := c.run("session", "passivate", "p")
	if o.code != 0 {
		t.Fatalf("passivate: %s", o)
	}
	if el := time.Since(start); el > 6*time.Second {
		t.Errorf("passivate took %s", el)
	}
	if got := c.job(id); got.Status != core.JobReaped {
		t.Fatalf("job after passivate: %s (is app.open calling a.wireJobs()?)", got.Status)
	}
	if supervisor.GroupAlive(j.PGID) {
		t.Errorf("process group %d alive after reap", j.PGID)
	}
	c.waitJob(id, 15*time.Second, "exit code", func(j core.Job) bool { return j.ExitCode != nil })
	reg, closeReg := c.registry()
	ns, err := reg.ListNotifications(t.Context(), core.NotificationFilter{})
	closeReg()
	if err != nil || len(ns) != 0 {
		t.Errorf("a reaped job raised a notification: %+v %v", ns, err)
	}
	if o := c.ok("session", "resume", "p"); !strings.Contains(o, id) || !strings.Contains(o, "sh -c 'sleep 60'") {
		t.Errorf("first resume does not list the reaped job with its command quoted as job list does:\n%s", o)
	}
	c.ok("session", "passivate", "p")
	if o := c.ok("session", "resume", "p"); strings.Contains(o, id) {
		t.Errorf("second resume lists the reaped job again:\n%s", o)
	}
}

// `job follow --from-start` prints every line once, in order, across many
// rotations (a small threshold through the hidden CLAWPIT_JOB_ROTATE_BYTES,
// the writer paced at about 8 MB/s, i.e. 100,000 lines/s as in bench/README.md P5), and
// exits 0 by itself when the job ends.
func TestJobFollow(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	const lines = 40_000 // 3.2 MB at 256 KiB per generation: 12 rotations
	gen := fmt.Sprintf(`sleep 1; awk 'BEGIN { for (i = 0; i < %d; i++) { printf "%%08d %%070d\n", i, i; if (i %% 1000 == 999) system("sleep 0.01") } }'; echo done >&2`, lines)
	cmd := c.command(nil, "--json", "job", "run", "--session", "f", "--", "sh", "-c", gen)
	cmd.Env = append(cmd.Env, supervisor.EnvJobRotateBytes+"=262144")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("job run: %v", err)
	}
	var run jobOut
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	c.killJobOnCleanup(run.Job.ID)
	start := time.Now()
	o := c.run("job", "follow", run.Job.ID, "--from-start")
	if o.code != 0 {
		t.Fatalf("follow: %s", o)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("follow took %s", el)
	}
	// stdout and stderr are separate pipes: "[stderr] done" may land among
	// the last stdout lines still in the pipe; stdout lines keep their order.
	next, done := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n") {
		if l == "[stderr] done" {
			done++
			continue
		}
		if want := fmt.Sprintf("%08d %070d", next, next); l != want {
			t.Fatalf("after line %d: %.40q, want %.40q", next-1, l, want)
		}
		next++
	}
	if next != lines || done != 1 {
		t.Errorf("follow printed %d of %d lines and %d done lines", next, lines, done)
	}
	j := c.job(run.Job.ID)
	if j.Status != core.JobCompleted {
		t.Errorf("job %s", j.Status)
	}
	st1, err1 := os.Stat(filepath.Join(filepath.Dir(j.LogPath), tailer.RotatedLog))
	st0, err0 := os.Stat(j.LogPath)
	if err0 != nil || err1 != nil || st0.Size()+st1.Size() > 2*262144 {
		t.Errorf("rotation at 256 KiB did not bound the log: %v %v", st0, st1)
	}
}

// An unwritable log directory does not refuse the job (docs/contract.md "Background jobs: Rotation"): `job run`
// exits 0 with the id and a warning on stderr, the command runs to
// completion with its pipes drained (several MB of output, so a child
// writing to an undrained pipe would block), and capture_error says why.
func TestJobRunUnwritableLogDir(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ok("session", "open", "u")
	jobsDir := filepath.Join(filepath.Dir(c.db), "jobs")
	if err := os.WriteFile(jobsDir, []byte("a file where the jobs directory belongs"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := c.run("--json", "job", "run", "--session", "u", "--",
		"sh", "-c", `head -c 4000000 /dev/zero | tr '\0' x | fold -w 100; echo done >&2`)
	if o.code != 0 {
		t.Fatalf("job run refused: %s", o)
	}
	var run jobOut
	if err := json.Unmarshal([]byte(o.stdout), &run); err != nil || run.Job == nil || run.Job.ID == "" {
		t.Fatalf("job run output: %s (%v)", o, err)
	}
	id := run.Job.ID
	c.killJobOnCleanup(id)
	if !strings.Contains(o.stderr, "output will not be captured") || !strings.Contains(o.stderr, "not a directory") {
		t.Errorf("no warning naming the cause on stderr: %q", o.stderr)
	}
	j := c.waitJob(id, 30*time.Second, "the end (did the child block?)", func(j core.Job) bool {
		return !j.Status.Active() && j.ExitCode != nil
	})
	if j.Status != core.JobCompleted || *j.ExitCode != 0 {
		t.Errorf("status %s exit %d, want completed 0", j.Status, *j.ExitCode)
	}
	if !strings.Contains(j.CaptureError, "not a directory") || !strings.Contains(j.CaptureError, jobsDir) {
		t.Errorf("capture_error %q does not name the cause", j.CaptureError)
	}
	if st, err := os.Stat(jobsDir); err != nil || st.IsDir() {
		t.Errorf("the jobs file was replaced: %v %v", st, err)
	}
	// Plain output says the same.
	o = c.run("job", "run", "--session", "u", "--", "true")
	if o.code != 0 || !strings.Contains(o.stdout, "job ") || !strings.Contains(o.stderr, "warning: job ") {
		t.Errorf("plain job run: %s", o)
	}
	// Let both supervisors finish before the temp dir goes.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list []core.Job
		c.json(&list, "job", "list")
		done := true
		for _, jb := range list {
			if jb.Status.Active() || jb.ExitCode == nil || supervisor.ProcessAlive(jb.SupervisorPID, jb.SupervisorStart) {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not finish: %+v", list)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A token written as a URL's user name (as `git remote set-url` prints it)
// never reaches the log on disk, `job tail` or `job follow` (docs/contract.md "Background jobs: Live, redacted log").
func TestJobTokenInURLUserinfo(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	token := "gh" + "p_" + strings.Repeat("aB3d", 9) // assembled: no secret in this file
	script := `printf 'git remote set-url origin https://%s@github.com/o/r.git\n' "$1"; printf 'https://%s:x-oauth-basic@github.com/o/r.git\n' "$1" >&2`
	var run jobOut
	c.json(&run, "job", "run", "--session", "u", "--", "sh", "-c", script, "sh", token)
	c.killJobOnCleanup(run.Job.ID)
	j := c.waitJob(run.Job.ID, 20*time.Second, "the end", func(j core.Job) bool { return !j.Status.Active() })
	if j.Status != core.JobCompleted {
		t.Fatalf("job %s", j.Status)
	}
	disk, err := os.ReadFile(j.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct{ name, text string }{
		{"output.log", string(disk)},
		{"job tail", c.ok("job", "tail", run.Job.ID)},
		{"job follow", c.ok("job", "follow", run.Job.ID, "--from-start")},
	} {
		if strings.Contains(o.text, token[:12]) || !strings.Contains(o.text, "https://"+redact.Redacted+"@github.com/o/r.git") {
			t.Errorf("%s:\n%s", o.name, o.text)
		}
	}
}

// A line still being written shows in the live view only (issue 26 item
// 13): `job follow` prints "[partial] progress 7%" after 200 ms of silence,
// from output.partial beside the log; output.log, `job tail` and the finish
// notification hold the line once, whole, and keep a command's own line
// that starts with "[partial] ". A follow that ends because its job ended
// closes with how it ended, on stderr.
func TestJobPartialLiveOnlyAndFollowClosing(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var run jobOut
	c.json(&run, "job", "run", "--session", "p", "--", "sh", "-c",
		`printf 'progress 7%%'; sleep 3; printf ' done\n'; echo '[partial] x'; sleep 60`)
	c.killJobOnCleanup(run.Job.ID)
	j := c.job(run.Job.ID)
	partialFile := filepath.Join(filepath.Dir(j.LogPath), tailer.PartialFile)
	cmd := c.command(nil, "job", "follow", run.Job.ID)
	var so, se lockedBuffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(so.String(), "[partial] progress 7%\n"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("follow never showed the line while it was being written:\n%s", so.String())
		}
	}
	// The command sleeps 3 s before it ends the line: the preview is beside
	// the log, not in it.
	if pv, err := os.ReadFile(partialFile); err != nil || string(pv) != "progress 7%\n" {
		t.Errorf("%s holds %q (err %v) while the line is written, want \"progress 7%%\\n\"", tailer.PartialFile, pv, err)
	}
	if disk, err := os.ReadFile(j.LogPath); err != nil || len(disk) > 0 {
		t.Errorf("output.log holds %q (err %v) while the line is written, want nothing", disk, err)
	}
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(so.String(), "progress 7% done\n"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("follow never showed the whole line:\n%s", so.String())
		}
	}
	if strings.Count(so.String(), "[partial] progress 7%\n") != 1 || !strings.Contains(so.String(), "progress 7% done\n[partial] x\n") {
		t.Errorf("follow did not show the line once while it was being written, then whole:\n%s", so.String())
	}
	c.ok("job", "cancel", run.Job.ID)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("follow: %v\n%s", err, se.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("follow still runs after the job was cancelled")
	}
	if !regexp.MustCompile(`(?m)^job ` + run.Job.ID + ` was cancelled after \d+s\n$`).MatchString(se.String()) {
		t.Errorf("follow's closing line %q, want \"job %s was cancelled after Ns\"", se.String(), run.Job.ID)
	}
	if strings.Contains(so.String(), "was cancelled") {
		t.Errorf("the closing line went to stdout, among the log:\n%s", so.String())
	}
	if disk, err := os.ReadFile(j.LogPath); err != nil || string(disk) != "progress 7% done\n[partial] x\n" {
		t.Errorf("output.log holds %q (err %v), want the whole lines only", disk, err)
	}
	if _, err := os.Stat(partialFile); !os.IsNotExist(err) {
		t.Errorf("%s left after the job ended (err %v)", tailer.PartialFile, err)
	}
	if tail := c.ok("job", "tail", run.Job.ID); tail != "progress 7% done\n[partial] x" {
		t.Errorf("job tail %q, want the whole lines, the command's own \"[partial] x\" kept", tail)
	}
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != 1 || strings.Count(ns[0].Text, "\n  progress 7%") != 1 || !strings.Contains(ns[0].Text, "\n  [partial] x") {
		t.Errorf("notification text shows other than the whole lines, the command's own '[partial] x' kept: %+v", ns)
	}
}
