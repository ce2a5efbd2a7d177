package e2e

// Tests of `clawpit demo --headless` through the real binary: the simulated
// runtime fills every pane, its real jobs log (and redact) as they should,
// and nothing of it survives the demo — no process, no temporary directory.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/demo"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/tailer"
)

// lockedBuffer is a bytes.Buffer written by a child process and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// processAlive is kill(pid, 0), not fooled by a zombie.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return supervisor.ProcessAlive(pid, 0)
}

// demoJobsAlive lists the job processes (command, process group, supervisor)
// of reg that are still alive.
func demoJobsAlive(t *testing.T, jobs []core.Job) []string {
	t.Helper()
	var alive []string
	for _, j := range jobs {
		if processAlive(j.PID) {
			alive = append(alive, "job "+j.ID+" command pid")
		}
		if j.PGID > 1 && supervisor.GroupAlive(j.PGID) {
			alive = append(alive, "job "+j.ID+" process group")
		}
		if processAlive(j.SupervisorPID) {
			alive = append(alive, "job "+j.ID+" supervisor")
		}
	}
	return alive
}

// waitGone polls until none of the jobs' processes is alive (at most d).
func waitGone(t *testing.T, jobs []core.Job, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := demoJobsAlive(t, jobs)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func listAllJobs(t *testing.T, dbPath string) []core.Job {
	t.Helper()
	db, err := store.Open(context.Background(), dbPath, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	jobs, err := supervisor.NewJobs(reg, supervisor.JobsOptions{}).ListJobs(context.Background(), core.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// demoPaneProblems reads the registry at dbPath and says what a pane would
// miss: tasks in several statuses including running, a running run, a pending
// approval, a notification, the failed build, the running dev server.
func demoPaneProblems(t *testing.T, dbPath string) (demo.Summary, []string) {
	t.Helper()
	db, err := store.Open(context.Background(), dbPath, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{})
	sum, err := demo.Summarise(context.Background(), reg, jobs)
	if err != nil {
		t.Fatal(err)
	}
	running, err := jobs.ListJobs(context.Background(), core.JobFilter{Statuses: []core.JobStatus{core.JobRunning}})
	if err != nil {
		t.Fatal(err)
	}
	var p []string
	if sum.Tasks[core.TaskRunning] == 0 || len(sum.Tasks) < 3 {
		p = append(p, fmt.Sprintf("tasks: want running and at least 3 statuses, got %v", sum.Tasks))
	}
	if sum.RunsRunning == 0 {
		p = append(p, "no running run")
	}
	if sum.Approvals[core.ApprovalPending] == 0 {
		p = append(p, fmt.Sprintf("no pending approval: %v", sum.Approvals))
	}
	if len(sum.Notifications) == 0 {
		p = append(p, "no notification")
	}
	if sum.Jobs[core.JobFailed] == 0 {
		p = append(p, fmt.Sprintf("the build job has not failed: %v", sum.Jobs))
	}
	dev := false
	for _, j := range running {
		if len(j.Command) > 1 && j.Command[1] == demo.DevServerCommand {
			dev = true
		}
	}
	if !dev {
		p = append(p, fmt.Sprintf("the dev server job is not running: %v", running))
	}
	return sum, p
}

// TestDemoHeadless runs the headless demo for 20 s on a --db registry, checks
// every pane's data while it runs, then the logs and that no process is left.
func TestDemoHeadless(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	cmd := c.command(nil, "demo", "--headless", "--duration", "20s", "--sweep-interval", "4s", "--build-duration", "4s")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()

	// While it runs: every pane has something to show. The panes fill within
	// the first 10–15 s (the scenarios are timed on the real clock), so the
	// registry is polled until every check holds, up to 18 s in.
	began := time.Now()
	var problems []string
	var last demo.Summary
	for time.Since(began) < 18*time.Second {
		select {
		case err := <-exited:
			t.Fatalf("demo exited early: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		case <-time.After(500 * time.Millisecond):
		}
		if _, err := os.Stat(c.db); err != nil {
			continue
		}
		last, problems = demoPaneProblems(t, c.db)
		if len(problems) == 0 {
			break
		}
	}
	t.Logf("after %s:\n%s", time.Since(began).Round(time.Second), last)
	for _, p := range problems {
		t.Error(p)
	}

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("demo did not stop after --duration\nstdout:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "final state:") || !strings.Contains(stderr.String(), "no demo process left") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}

	checkDemoClaudeSession(t, c.db)
	jobs := listAllJobs(t, c.db)
	if left := waitGone(t, jobs, 2*time.Second); len(left) > 0 {
		t.Errorf("processes left after the demo: %v", left)
	}
	var devLog, secretsLog, buildJob *core.Job
	for i := range jobs {
		j := &jobs[i]
		if j.Status.Active() {
			t.Errorf("job %s still %s after the demo", j.ID, j.Status)
		}
		switch j.Command[1] {
		case demo.DevServerCommand:
			devLog = j
		case demo.SecretsCommand:
			secretsLog = j
		case demo.BuildCommand:
			if len(j.Command) > 2 && j.Command[2] != "--test" {
				buildJob = j
			}
		}
	}
	if devLog == nil || secretsLog == nil || buildJob == nil {
		t.Fatalf("missing demo jobs: %+v", jobs)
	}
	if buildJob.Status != core.JobFailed || buildJob.ExitCode == nil || *buildJob.ExitCode != 2 {
		t.Errorf("build job: %s exit %v, want failed with exit code 2", buildJob.Status, buildJob.ExitCode)
	}
	readLogs := func(j *core.Job) string {
		var b strings.Builder
		for _, name := range []string{tailer.RotatedLog, tailer.CurrentLog} {
			data, err := os.ReadFile(filepath.Join(filepath.Dir(j.LogPath), name))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			b.Write(data)
		}
		return b.String()
	}
	if n := strings.Count(readLogs(devLog), `"GET /`); n < 5 {
		t.Errorf("dev server log has %d request lines, want ≥ 5:\n%s", n, readLogs(devLog))
	}
	raw := readLogs(secretsLog)
	if !strings.Contains(raw, redact.Redacted) {
		t.Errorf("secrets log has no %s:\n%s", redact.Redacted, raw)
	}
	for _, s := range demo.PlantedSecrets() {
		if strings.Contains(raw, s) {
			t.Errorf("secret %q reached the log file on disk", s)
		}
	}
	if !strings.Contains(raw, "waiting for rollout") {
		t.Errorf("no heartbeat in the secrets log:\n%s", raw)
	}
}

// TestDemoSignalCleansUp runs the headless demo on its own temporary
// directory, stops it with a signal, and checks that the directory and every
// process are gone — and that $CLAWPIT_DB was never touched.
func TestDemoSignalCleansUp(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			untouched := filepath.Join(tmp, "operator", "registry.db")
			cmd := exec.Command(clawpitBin, "demo", "--headless")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "CLAWPIT_DB="+untouched,
				"CLAWPIT_HOME="+filepath.Join(tmp, "home"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			deadline := time.Now().Add(15 * time.Second)
			for !strings.Contains(stdout.String(), "dev server:") && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			dirs, _ := filepath.Glob(filepath.Join(tmp, "clawpit-demo-*"))
			if len(dirs) != 1 {
				t.Fatalf("want one demo directory in TMPDIR, got %v\nstdout:\n%s\nstderr:\n%s", dirs, stdout.String(), stderr.String())
			}
			if st, err := os.Stat(dirs[0]); err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("demo directory: %v %v, want mode 0700", st, err)
			}
			time.Sleep(3 * time.Second) // let the jobs start their processes
			jobs := listAllJobs(t, filepath.Join(dirs[0], "registry.db"))
			if len(jobs) < 3 {
				t.Fatalf("%d jobs, want the dev server, the build and the secrets job", len(jobs))
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("demo after %s: %v\nstderr:\n%s", sig, err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("demo ignored %s", sig)
			}
			if left := waitGone(t, jobs, 2*time.Second); len(left) > 0 {
				t.Errorf("processes left after %s: %v", sig, left)
			}
			if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("demo directory %s not removed: %v", dirs[0], err)
			}
			if _, err := os.Stat(untouched); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the demo touched $CLAWPIT_DB (%s)", untouched)
			}
		})
	}
}

// TestDemoRestartsReapedJobs passivates the demo's main session while the
// demo runs: its jobs are reaped (docs/contract.md "Background jobs: Reaped"), and the simulated runtime resumes
// the session and starts a new dev server, which serves requests again.
func TestDemoRestartsReapedJobs(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	cmd := c.command(nil, "demo", "--headless", "--duration", "24s", "--seed", "3")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	devServers := func(status core.JobStatus) []core.Job {
		var out []core.Job
		for _, j := range listAllJobs(t, c.db) {
			if j.Command[1] == demo.DevServerCommand && j.Status == status {
				out = append(out, j)
			}
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(c.db); err != nil && time.Now().Before(deadline); _, err = os.Stat(c.db) {
		time.Sleep(50 * time.Millisecond)
	}
	for len(devServers(core.JobRunning)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	first := devServers(core.JobRunning)
	if len(first) != 1 {
		t.Fatalf("want one running dev server, got %v\nstdout:\n%s", first, stdout.String())
	}
	if o := c.run("session", "passivate", demo.SessionMain); o.code != 0 {
		t.Fatalf("passivate: %s", o)
	}
	if reaped := devServers(core.JobReaped); len(reaped) != 1 || reaped[0].ID != first[0].ID {
		t.Fatalf("the dev server was not reaped: %v", reaped)
	}
	deadline = time.Now().Add(20 * time.Second)
	var again []core.Job
	for time.Now().Before(deadline) {
		if again = devServers(core.JobRunning); len(again) > 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(again) != 1 || again[0].ID == first[0].ID {
		t.Fatalf("no new dev server after the reap: %v\nstdout:\n%s", again, stdout.String())
	}
	if !strings.Contains(stdout.String(), "session main resumed") {
		t.Errorf("the runtime did not resume its session:\n%s", stdout.String())
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("demo: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(45 * time.Second):
		t.Fatal("demo did not stop after --duration")
	}
	if left := waitGone(t, listAllJobs(t, c.db), 2*time.Second); len(left) > 0 {
		t.Errorf("processes left after the demo: %v", left)
	}
	data, err := os.ReadFile(again[0].LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"GET /`) {
		t.Errorf("the restarted dev server served no request:\n%s", data)
	}
}

// TestDemoBadFlags: --duration needs --headless; negative durations are bad input.
func TestDemoBadFlags(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"demo", "--duration", "5s"},
		{"demo", "--headless", "--duration", "-1s"},
	} {
		if o := c.run(args...); o.code != 2 {
			t.Errorf("%v: %s, want exit 2", args, o)
		}
	}
}

// checkDemoClaudeSession: the demo's Claude Code story, driven through
// `clawpit hook`, left its session (labelled from the cwd and the model) and
// its sub-agent's run in the registry.
func checkDemoClaudeSession(t *testing.T, dbPath string) {
	t.Helper()
	db, err := store.Open(context.Background(), dbPath, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	ss, err := reg.ListSessions(context.Background(), core.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var session string
	for _, s := range ss {
		if s.Label == "shop (claude-sonnet-4-5)" {
			session = s.ID
		}
	}
	if session == "" {
		t.Fatalf("no Claude Code session among %+v", ss)
	}
	runs, err := reg.ListRuns(context.Background(), core.RunFilter{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Label != "test-runner" {
		t.Errorf("Claude Code sub-agent runs: %+v", runs)
	}
}
