package supervisor_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/tailer"
)

// Job tests run real processes. The supervisor is this test binary itself,
// re-run as TestHelperJobSupervisor (the usual Go helper-process pattern), so
// the supervisor's tests do not depend on the clawpit binary being built.

const envHelperSupervisor = "CLAWPIT_TEST_JOB_SUPERVISOR"

// TestHelperJobSupervisor is the supervisor process of the job tests; it does
// nothing in a normal test run. Arguments after "--": DB path, job id.
func TestHelperJobSupervisor(t *testing.T) {
	if os.Getenv(envHelperSupervisor) != "1" {
		t.Skip("helper process for the job tests")
	}
	args := flag.Args()
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: -- DB JOB_ID")
		os.Exit(2)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, args[0], store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var st core.Store = db
	if trigger := os.Getenv(envHelperFullWhen); trigger != "" {
		st = fullStore{db, trigger}
	}
	reg := core.NewRegistry(st, core.SystemClock{}, core.DefaultThresholds())
	opts := supervisor.JobsOptions{ExecShim: testExecShim()}
	if ms, err := strconv.Atoi(os.Getenv(envHelperFinalRetryMS)); err == nil {
		opts.FinalRetry = time.Duration(ms) * time.Millisecond
	}
	if ms, err := strconv.Atoi(os.Getenv(envHelperPollMS)); err == nil {
		opts.PollInterval = time.Duration(ms) * time.Millisecond
	}
	j := supervisor.NewJobs(reg, opts)
	err = j.Supervise(ctx, args[1], os.Stdin)
	db.Close()
	if err != nil && !errors.Is(err, supervisor.ErrJobNotPending) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestHelperExecShim is a job's start shim (supervisor.RunExecShim) in the job
// tests; it does nothing in a normal test run (no arguments after "--").
func TestHelperExecShim(t *testing.T) {
	if len(flag.Args()) == 0 || os.Getenv(supervisor.EnvJobID) == "" {
		t.Skip("helper process for the job tests")
	}
	os.Exit(supervisor.RunExecShim(flag.Args()))
}

// testExecShim runs this test binary as the start shim.
func testExecShim() []string {
	return []string{os.Args[0], "-test.run=^TestHelperExecShim$", "--"}
}

// jobFixture is a registry on a fresh SQLite file plus a Jobs whose
// supervisor is the helper process.
type jobFixture struct {
	t      *testing.T
	ctx    context.Context
	dbPath string
	db     *store.DB
	reg    *core.Registry
	jobs   *supervisor.Jobs
}

func newJobFixture(t *testing.T, env ...string) *jobFixture {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "registry.db")
	db, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	f := &jobFixture{t: t, ctx: ctx, dbPath: dbPath, db: db, reg: reg}
	f.jobs = supervisor.NewJobs(reg, f.options(env...))
	reg.SetJobController(f.jobs)
	return f
}

func (f *jobFixture) options(env ...string) supervisor.JobsOptions {
	return supervisor.JobsOptions{
		SupervisorArgv: func(id string) ([]string, error) {
			return []string{os.Args[0], "-test.run=^TestHelperJobSupervisor$", "--", f.dbPath, id}, nil
		},
		SupervisorEnv: append([]string{envHelperSupervisor + "=1"}, env...),
		ExecShim:      testExecShim(),
	}
}

// run starts argv as a job of session and registers a cleanup that kills it.
func (f *jobFixture) run(session string, timeout time.Duration, argv ...string) *core.Job {
	f.t.Helper()
	job, err := f.jobs.Run(f.ctx, supervisor.JobSpec{Session: session, Timeout: timeout, Command: argv, Cwd: f.t.TempDir()}, core.ActorRuntime)
	if err != nil {
		f.t.Fatalf("run %v: %v", argv, err)
	}
	f.t.Cleanup(func() {
		if j := f.get(job.ID); j.PGID > 1 {
			_ = supervisor.SignalGroup(j.PGID, syscall.SIGKILL)
		}
		// Let the supervisor record the end before the temp dir goes.
		f.waitFor(job.ID, 15*time.Second, "supervisor done", func(j *core.Job) bool {
			return !j.Status.Active() && (j.SupervisorPID == 0 || !supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart))
		})
	})
	return job
}

func (f *jobFixture) get(id string) *core.Job {
	f.t.Helper()
	j, _, err := f.jobs.GetJob(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return j
}

// waitFor polls job id until ok or timeout (generous: CI machines are loaded).
func (f *jobFixture) waitFor(id string, timeout time.Duration, what string, ok func(*core.Job) bool) *core.Job {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := f.get(id)
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("job %s: timed out after %s waiting for %s; status %s exit %v capture_error %q",
				id, timeout, what, j.Status, j.ExitCode, j.CaptureError)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDone waits until the supervisor has recorded the end (completed_at and
// exit_code set, supervisor exited).
func (f *jobFixture) waitDone(id string, timeout time.Duration) *core.Job {
	f.t.Helper()
	return f.waitFor(id, timeout, "the end", func(j *core.Job) bool {
		return !j.Status.Active() && j.ExitCode != nil && !supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart)
	})
}

func (f *jobFixture) notifications(session string) []core.Notification {
	f.t.Helper()
	ns, err := f.reg.ListNotifications(f.ctx, core.NotificationFilter{Session: session})
	if err != nil {
		f.t.Fatal(err)
	}
	return ns
}

func readLog(t *testing.T, job *core.Job) string {
	t.Helper()
	var all []byte
	for _, name := range []string{tailer.RotatedLog, tailer.CurrentLog} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(job.LogPath), name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return string(all)
}

// Run refuses a command that cannot start (docs/contract.md "Commands: exit codes and JSON": bad input, nothing
// half-written): no job row, no log directory.
func TestJobRunRefusesUnstartable(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	for _, argv := range [][]string{{"/nonexistent/clawpit-no-such-command"}, {"clawpit-no-such-command-in-path", "-x"}} {
		job, err := f.jobs.Run(f.ctx, supervisor.JobSpec{Session: "s1", Command: argv, Cwd: t.TempDir()}, core.ActorRuntime)
		if !errors.Is(err, core.ErrInvalid) || job != nil || !strings.Contains(err.Error(), argv[0]) {
			t.Errorf("%v: job %v, err %v; want ErrInvalid naming the command", argv, job, err)
		}
	}
	jobs, err := f.jobs.ListJobs(f.ctx, core.JobFilter{})
	if err != nil || len(jobs) != 0 {
		t.Errorf("refused commands recorded jobs: %v %v", jobs, err)
	}
	if ents, _ := os.ReadDir(f.jobs.Dir()); len(ents) != 0 {
		t.Errorf("refused commands left %d log directories", len(ents))
	}
}

func TestJobCompletedAndFailed(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	ok := f.run("s1", 0, "sh", "-c", "echo hello; echo oops >&2")
	bad := f.run("s1", 0, "sh", "-c", "echo partial; exit 3")
	// A command Run's check lets through but exec refuses (its interpreter
	// is missing): the supervisor records the start failure. A command that
	// does not exist at all never gets this far (TestJobRunRefusesUnstartable).
	broken := filepath.Join(t.TempDir(), "broken.sh")
	if err := os.WriteFile(broken, []byte("#!/nonexistent/clawpit-no-such-interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := f.run("s1", 0, broken)

	for _, tc := range []struct {
		job      *core.Job
		status   core.JobStatus
		code     int
		headline string
		logHas   []string
	}{
		{ok, core.JobCompleted, 0, "completed successfully", []string{"hello\n", "[stderr] oops\n"}},
		{bad, core.JobFailed, 3, "failed with exit code 3", []string{"partial\n"}},
		{missing, core.JobFailed, 127, "failed with exit code 127", []string{"[clawpit] cannot start"}},
	} {
		j := f.waitDone(tc.job.ID, 20*time.Second)
		if j.Status != tc.status || *j.ExitCode != tc.code {
			t.Errorf("%v: status %s exit %d, want %s %d", j.Command, j.Status, *j.ExitCode, tc.status, tc.code)
		}
		if j.CompletedAt == 0 || j.CleanupAfter != j.CompletedAt.Add(24*time.Hour) {
			t.Errorf("%v: completed_at %v cleanup_after %v", j.Command, j.CompletedAt, j.CleanupAfter)
		}
		log := readLog(t, j)
		for _, want := range tc.logHas {
			if !strings.Contains(log, want) {
				t.Errorf("%v: log %q lacks %q", j.Command, log, want)
			}
		}
		st, err := os.Stat(j.LogPath)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("log mode: %v %v", st, err)
		}
		dst, err := os.Stat(filepath.Dir(j.LogPath))
		if err != nil || dst.Mode().Perm() != 0o700 {
			t.Errorf("log dir mode: %v %v", dst, err)
		}
	}
	ns := f.notifications("s1")
	if len(ns) != 3 {
		t.Fatalf("want 3 notifications, got %d: %+v", len(ns), ns)
	}
	for _, n := range ns {
		if n.Kind != core.NotifyJobFinished || n.DedupKey != "job_finished:"+n.SubjectID {
			t.Errorf("notification %+v", n)
		}
		j := f.get(n.SubjectID)
		for _, want := range []string{"[Background job " + j.ID + " ", "Command: ", "Duration: ", "Full log: " + j.LogPath} {
			if !strings.Contains(n.Text, want) {
				t.Errorf("notification text %q lacks %q", n.Text, want)
			}
		}
	}
	var okText string
	for _, n := range ns {
		if n.SubjectID == ok.ID {
			okText = n.Text
		}
	}
	// stdout and stderr are two pipes: their relative order is not fixed.
	if !strings.Contains(okText, "completed successfully]") || !strings.Contains(okText, "hello\n") || !strings.Contains(okText, "[stderr] oops\n") {
		t.Errorf("ok notification: %q", okText)
	}
	// The journal shows the supervisor's steps.
	_, evs, err := f.jobs.GetJob(f.ctx, ok.ID)
	if err != nil {
		t.Fatal(err)
	}
	var tos []string
	for _, e := range evs {
		tos = append(tos, e.To+"/"+string(e.Actor))
	}
	if got := strings.Join(tos, " "); got != "pending/runtime pending/supervisor running/supervisor completed/supervisor" {
		t.Errorf("journal: %s", got)
	}
}

func TestJobRunValidation(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	missing := filepath.Join(t.TempDir(), "no'such dir")
	for _, tc := range []struct {
		name string
		spec supervisor.JobSpec
		want string
	}{
		{"empty command", supervisor.JobSpec{Session: "s"}, "empty command"},
		{"empty argv0", supervisor.JobSpec{Session: "s", Command: []string{""}}, "empty command"},
		{"missing session", supervisor.JobSpec{Command: []string{"true"}}, "session"},
		{"negative timeout", supervisor.JobSpec{Session: "s", Command: []string{"true"}, Timeout: -time.Second}, "negative timeout"},
		{"missing cwd", supervisor.JobSpec{Session: "s", Command: []string{"true"}, Cwd: missing},
			`mkdir -p -- '` + strings.ReplaceAll(missing, "'", `'\''`) + `'`},
	} {
		_, err := f.jobs.Run(f.ctx, tc.spec, core.ActorRuntime)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
	if js, _ := f.jobs.ListJobs(f.ctx, core.JobFilter{}); len(js) != 0 {
		t.Errorf("rejected runs wrote %d jobs", len(js))
	}
	if ents, _ := os.ReadDir(f.jobs.Dir()); len(ents) != 0 {
		t.Errorf("rejected runs created %d log dirs", len(ents))
	}
}

func TestJobTimeout(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	start := time.Now()
	job := f.run("s", time.Second, "sleep", "30")
	if job.TimeoutS != 1 {
		t.Fatalf("timeout_s %d", job.TimeoutS)
	}
	j := f.waitDone(job.ID, 20*time.Second)
	if j.Status != core.JobTimedOut || *j.ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("status %s exit %d, want timed_out 143", j.Status, *j.ExitCode)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("timed out after %s", el)
	}
	if ns := f.notifications("s"); len(ns) != 1 || !strings.Contains(ns[0].Text, "timed out]") {
		t.Errorf("notifications %+v", ns)
	}
}

// Without --timeout a job has no kill timer (docs/contract.md "Background jobs: Ending"): still running after 10 s.
func TestJobNoDefaultTimer(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	job := f.run("s", 0, "sleep", "30")
	f.waitFor(job.ID, 20*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
	time.Sleep(10 * time.Second)
	j := f.get(job.ID)
	if j.Status != core.JobRunning || !supervisor.GroupAlive(j.PGID) {
		t.Fatalf("after 10 s: status %s, group alive %v", j.Status, supervisor.GroupAlive(j.PGID))
	}
	if _, res, err := f.jobs.CancelJob(f.ctx, job.ID, "op@host"); err != nil || !res.Applied {
		t.Fatalf("cancel: %+v %v", res, err)
	}
}

func TestJobCancel(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	job := f.run("s", 0, "sh", "-c", "echo started; exec sleep 60")
	j := f.waitFor(job.ID, 20*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
	start := time.Now()
	got, res, err := f.jobs.CancelJob(f.ctx, job.ID[:6], "op@host")
	if err != nil || !res.Applied || got.Status != core.JobCancelled {
		t.Fatalf("cancel: %+v %+v %v", got, res, err)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("cancel took %s for a job that obeys SIGTERM", el)
	}
	if supervisor.GroupAlive(j.PGID) {
		t.Errorf("process group %d alive after cancel", j.PGID)
	}
	j = f.waitDone(job.ID, 20*time.Second)
	if j.Status != core.JobCancelled || *j.ExitCode != 143 {
		t.Errorf("after cancel: %s exit %d", j.Status, *j.ExitCode)
	}
	// A second cancel changes nothing.
	if _, res, err := f.jobs.CancelJob(f.ctx, job.ID, "op@host"); err != nil || res.Applied || res.Reason != "already cancelled" {
		t.Errorf("second cancel: %+v %v", res, err)
	}
	ns := f.notifications("s")
	if len(ns) != 1 || !strings.Contains(ns[0].Text, "was cancelled]") || !strings.Contains(ns[0].Text, "started") {
		t.Errorf("notifications: %+v", ns)
	}
}

// A command that prints megabytes to a log it cannot write still runs to its
// end: the pumps keep draining (docs/contract.md "Background jobs: Rotation"), and capture_error says why.
func TestJobUnwritableLog(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	for _, tc := range []struct {
		name  string
		setup func(dir string) // dir: the job's log directory, which does not exist yet
		want  string
	}{
		{"log directory is a file", func(dir string) {
			if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "cannot open log"},
		{"disk full", func(dir string) {
			if _, err := os.Stat("/dev/full"); err != nil {
				t.Skip("no /dev/full")
			}
			os.Mkdir(dir, 0o700)
			if err := os.Symlink("/dev/full", filepath.Join(dir, tailer.CurrentLog)); err != nil {
				t.Fatal(err)
			}
		}, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := core.NewShortID()
			dir := filepath.Join(t.TempDir(), id)
			tc.setup(dir)
			// Insert the job by hand and supervise it in-process: Run would
			// create a good log directory first.
			job := &core.Job{ID: id, Session: "s", Status: core.JobPending, Cwd: t.TempDir(),
				Command:   []string{"sh", "-c", "head -c 5000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo done >&2"},
				LogPath:   filepath.Join(dir, tailer.CurrentLog),
				CreatedAt: core.TS(time.Now())}
			if err := f.db.Update(f.ctx, func(tx core.Tx) error { return tx.InsertJob(job) }); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- f.jobs.Supervise(f.ctx, id, nil) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("supervise did not return: the child blocked?")
			}
			j := f.get(id)
			if j.Status != core.JobCompleted || *j.ExitCode != 0 {
				t.Errorf("status %s exit %d", j.Status, *j.ExitCode)
			}
			if !strings.Contains(j.CaptureError, tc.want) {
				t.Errorf("capture_error %q lacks %q", j.CaptureError, tc.want)
			}
			ns := f.notifications("s")
			var text string
			for _, n := range ns {
				if n.SubjectID == id {
					text = n.Text
				}
			}
			if !strings.Contains(text, "Log incomplete: ") {
				t.Errorf("notification does not say the log is incomplete: %q", text)
			}
		})
	}
}

// docs/contract.md "Background jobs: Live, redacted log": no secret of any kind reaches the log files, the notification or a
// tail in clear, including a PEM block spanning lines.
func TestJobRedaction(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	corpus, secrets := secretCorpus()
	path := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(path, []byte(corpus), 0o600); err != nil {
		t.Fatal(err)
	}
	job := f.run("s", 0, "sh", "-c", "cat \"$1\"; cat \"$1\" >&2", "sh", path)
	j := f.waitDone(job.ID, 20*time.Second)
	if j.Status != core.JobCompleted {
		t.Fatalf("status %s", j.Status)
	}
	raw := readLog(t, j)
	if !strings.Contains(raw, redact.Redacted) || !strings.Contains(raw, "[stderr] plain line") {
		t.Fatalf("log looks wrong: %q", raw)
	}
	tail, err := tailer.TailChars(filepath.Dir(j.LogPath), 100000)
	if err != nil {
		t.Fatal(err)
	}
	ns := f.notifications("s")
	if len(ns) != 1 {
		t.Fatalf("notifications %+v", ns)
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"log file": raw, "tail": tail, "notification": ns[0].Text} {
			if strings.Contains(text, s) {
				t.Errorf("%s contains secret %q", what, s)
			}
		}
	}
	// A secret on the command line is not stored either.
	job2, err := f.jobs.Run(f.ctx, supervisor.JobSpec{Session: "s", Command: []string{"sh", "-c", "exit 0", "x", "password=" + "hunter2hunter2"}}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	f.waitDone(job2.ID, 20*time.Second)
	if got := strings.Join(f.get(job2.ID).Command, " "); strings.Contains(got, "hunter2") {
		t.Errorf("stored command %q holds the secret", got)
	}
}

// secretCorpus is output carrying every J4 kind, and the secret values that
// must not survive. Assembled from pieces so that this file itself does not
// trip secret scanners.
func secretCorpus() (string, []string) {
	sk := "sk-" + "proj-" + strings.Repeat("Zq9x", 8)
	skAnt := "sk-" + "ant-api03-" + strings.Repeat("Ab3x", 10)
	xox := "xo" + "xb-" + "123456789012-1234567890123-abcdefABCDEF"
	ghp := "gh" + "p_" + strings.Repeat("aB3d", 9)
	pat := "github" + "_pat_" + "11ABCDEFG0" + strings.Repeat("x_Y1", 8)
	akia := "AK" + "IA" + "IOSFODNN7EXAMPLE"
	asia := "AS" + "IA" + "Q3EGQEXAMPLE1234"
	live := "sk" + "_live_" + "51HxYzAbCdEfGhIjK"
	rk := "rk" + "_live_" + "51HxYzAbCdEfGhIjK"
	wh := "wh" + "sec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	aiza := "AI" + "za" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	npm := "np" + "m_" + strings.Repeat("a1B2c3", 6)
	pypi := "py" + "pi-" + "AgEIcHlwaS5vcmcCJDU3NmM4Y2Y0LWE1"
	jwt := "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	slack := "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	pemBody1 := "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaQ7bEGn"
	pemBody2 := "kZ3VS5JJcds3xfn+ygWyF8PbnGy0AHB7MaQ7bEGnXtZk0Q=="
	lines := []string{
		"plain line",
		`{"api_key": "kv-json-secret-1111", "user": "bob"}`,
		"export GITHUB_TOKEN=kv-env-secret-2222",
		"curl -d 'user=bob&password=kv-form-secret-3333'",
		"client_secret: kv-yaml-secret-4444",
		`refresh_token = "kv-toml-secret-5555"`,
		"DATABASE_URL=postgres://app:connpass-6666@db.internal:5432/app",
		"Authorization: Bearer bearer-token-7777-abcdefgh",
		"posting to https://hooks." + "slack.com/services/" + slack,
		"keys " + sk + " " + skAnt,
		"slack " + xox + " github " + ghp + " " + pat,
		"aws " + akia + " " + asia,
		"stripe " + live + " " + rk + " " + wh,
		"google " + aiza + " npm " + npm + " pypi " + pypi,
		"jwt " + jwt,
		"-----BEGIN RSA " + "PRIVATE KEY-----",
		pemBody1,
		pemBody2,
		"-----END RSA " + "PRIVATE KEY-----",
		"commit 3f786850e387550fdab836ed7e6dc881de23001b stays",
	}
	secrets := []string{"kv-json-secret-1111", "kv-env-secret-2222", "kv-form-secret-3333", "kv-yaml-secret-4444",
		"kv-toml-secret-5555", "connpass-6666", "bearer-token-7777-abcdefgh", slack, sk, skAnt, xox, ghp, pat, akia, asia,
		live, rk, wh, aiza, npm, pypi, jwt, pemBody1, pemBody2}
	return strings.Join(lines, "\n") + "\n", secrets
}

// Rotation (docs/contract.md "Background jobs: Rotation"): 30 MB of numbered 80-byte lines leave at most about
// 10 MiB on disk, the two files hold the last lines in order, and a follower
// attached from the start receives all 375,000 lines.
func TestJobRotation(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	const lines = 375_000 // 30 MB of 80-byte lines
	gen := fmt.Sprintf(`awk 'BEGIN { for (i = 0; i < %d; i++) printf "%%08d %%070d\n", i, i }'`, lines)
	job := f.run("s", 0, "sh", "-c", gen)
	// A follower attached from the start gets every line once, in order,
	// across every rotation (docs/contract.md "Background jobs: Tail and follow", bench/README.md P5).
	fl, err := tailer.Follow(f.ctx, filepath.Dir(job.LogPath), tailer.FollowOptions{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Stop()
	followed := make(chan error, 1)
	// On a starved machine the writer (awk at full speed) can rotate a
	// whole generation away before the follower is scheduled: then, and
	// only then, a Gap line stands where lines are missing. What must never
	// happen is a silent jump.
	var skipped atomic.Int64
	go func() {
		next := 0
		gap := false
		var bad error
		for batch := range fl.C() {
			for _, l := range batch {
				if bad != nil {
					continue
				}
				if l.Gap {
					gap = true
					continue
				}
				n, err := strconv.Atoi(strings.Fields(l.Text + " x")[0])
				if err == nil && gap && n > next {
					skipped.Add(int64(n - next))
					next, gap = n, false
				}
				if err != nil || n != next {
					bad = fmt.Errorf("after line %d the follower got %q with no gap line before it", next-1, l.Text)
					continue
				}
				next++
			}
		}
		if bad == nil && next != lines {
			bad = fmt.Errorf("the follower got %d lines, want %d", next, lines)
		}
		followed <- errors.Join(bad, fl.Err())
	}()
	j := f.waitDone(job.ID, 60*time.Second)
	if j.Status != core.JobCompleted || j.CaptureError != "" {
		t.Fatalf("status %s capture_error %q", j.Status, j.CaptureError)
	}
	fl.StopAtEOF()
	select {
	case err := <-followed:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the follower did not finish")
	}
	if n := skipped.Load(); n > 0 {
		t.Logf("the follower was starved: %d lines skipped behind a gap line", n)
	} else if fl.Rotations() < 5 {
		t.Errorf("follower saw %d rotations, want 5", fl.Rotations())
	}
	dir := filepath.Dir(j.LogPath)
	var sizes []int64
	for _, n := range []string{tailer.RotatedLog, tailer.CurrentLog} {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > tailer.DefaultMaxBytes {
			t.Errorf("%s is %d bytes, over the 5 MiB threshold", n, st.Size())
		}
		sizes = append(sizes, st.Size())
	}
	// output.1.log is a full generation; output.log holds the rest since
	// the last rotation: 30 MB = 5 full files of 65,536 lines + 47,320 lines.
	if sizes[0] < tailer.DefaultMaxBytes-80 {
		t.Errorf("%s holds %d bytes, want a full 5 MiB generation", tailer.RotatedLog, sizes[0])
	}
	if want := int64(lines%65536) * 80; sizes[1] != want {
		t.Errorf("%s holds %d bytes, want %d", tailer.CurrentLog, sizes[1], want)
	}
	// The lines on disk are the last ones, consecutive and in order.
	sc := bufio.NewScanner(strings.NewReader(readLog(t, j)))
	prev := -1
	for sc.Scan() {
		n, err := strconv.Atoi(strings.Fields(sc.Text())[0])
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		if prev >= 0 && n != prev+1 {
			t.Fatalf("line %d follows %d", n, prev)
		}
		prev = n
	}
	if prev != lines-1 {
		t.Errorf("last line %d, want %d", prev, lines-1)
	}
}

// Reap (docs/contract.md "Background jobs: Reaped"): three running jobs, one ignoring SIGTERM; the reap returns
// within about 5 s, all three are reaped, no process is left in their groups,
// and no job_finished notification is raised.
func TestJobReapSession(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	ignorer := `import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)`
	var jobs []*core.Job
	jobs = append(jobs, f.run("reap-s", 0, "sleep", "60"))
	jobs = append(jobs, f.run("reap-s", 0, "sh", "-c", "sleep 60 & sleep 60; wait"))
	jobs = append(jobs, f.run("reap-s", 0, "python3", "-c", ignorer))
	other := f.run("other-s", 0, "sleep", "60")
	var groups []int
	for _, jb := range jobs {
		j := f.waitFor(jb.ID, 20*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
		groups = append(groups, j.PGID)
	}
	f.waitFor(jobs[2].ID, 20*time.Second, "python ready", func(j *core.Job) bool { return strings.Contains(readLog(t, j), "ready") })

	start := time.Now()
	rep, err := f.jobs.ReapSession(f.ctx, "reap-s", "op@host")
	el := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// TimedOut is usually true (the ignorer outlives SIGTERM), but the
	// ignorer's own supervisor sees the reaped row and may SIGKILL its group
	// before the reap's grace ends (seen on a loaded machine): then no group
	// was left for the reap to time out on. The elapsed time below still
	// shows the ignorer held the reap for its grace.
	if len(rep.Reaped) != 3 {
		t.Errorf("report: %d reaped, timed out %v", len(rep.Reaped), rep.TimedOut)
	}
	if el < 4*time.Second || el > 9*time.Second {
		t.Errorf("reap took %s, want about 5 s (one job ignores SIGTERM)", el)
	}
	for i, g := range groups {
		if supervisor.GroupAlive(g) {
			t.Errorf("job %s: process group %d still alive: %v", jobs[i].ID, g, supervisor.GroupMembers(g))
		}
	}
	for _, jb := range jobs {
		j := f.waitDone(jb.ID, 20*time.Second)
		if j.Status != core.JobReaped {
			t.Errorf("job %s: %s", j.ID, j.Status)
		}
	}
	if ns := f.notifications("reap-s"); len(ns) != 0 {
		t.Errorf("reaped jobs notified: %+v", ns)
	}
	if j := f.get(other.ID); j.Status != core.JobRunning {
		t.Errorf("job of another session: %s", j.Status)
	}
	// Idempotent.
	rep, err = f.jobs.ReapSession(f.ctx, "reap-s", "op@host")
	if err != nil || len(rep.Reaped) != 0 || rep.TimedOut {
		t.Errorf("second reap: %+v %v", rep, err)
	}
	// Through the registry: passivating the other session reaps its job.
	if _, _, err := f.reg.OpenSession(f.ctx, "other-s", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	_, prep, _, err := f.reg.PassivateSession(f.ctx, "other-s", "op@host")
	if err != nil || len(prep.Reaped) != 1 {
		t.Fatalf("passivate: %+v %v", prep, err)
	}
	if j := f.waitDone(other.ID, 20*time.Second); j.Status != core.JobReaped {
		t.Errorf("passivated session's job: %s", j.Status)
	}
}

// Lost (docs/contract.md "Background jobs: Lost"): kill -9 of a supervisor; the sweep API finds the job, marks
// it lost, notifies with the log path and kills the orphaned process group.
func TestJobLost(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	job := f.run("s", 0, "sh", "-c", "echo before-crash; exec sleep 60")
	j := f.waitFor(job.ID, 20*time.Second, "running", func(j *core.Job) bool {
		return j.Status == core.JobRunning && strings.Contains(readLog(t, j), "before-crash")
	})
	if lost, err := f.jobs.LostJobs(f.ctx); err != nil || len(lost) != 0 {
		t.Fatalf("lost before crash: %+v %v", lost, err)
	}
	if err := syscall.Kill(j.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !supervisor.GroupAlive(j.PGID) {
		t.Fatal("the command died with its supervisor; the test needs an orphan")
	}
	lost, err := f.jobs.LostJobs(f.ctx)
	if err != nil || len(lost) != 1 || lost[0].ID != job.ID {
		t.Fatalf("LostJobs: %+v %v", lost, err)
	}
	// A stale row (changed since LostJobs) is not marked.
	stale := lost[0]
	stale.Rev--
	if ok, err := f.jobs.MarkJobLost(f.ctx, stale, ""); ok || err != nil {
		t.Errorf("stale mark: %v %v", ok, err)
	}
	ok, err := f.jobs.MarkJobLost(f.ctx, lost[0], "")
	if !ok || err != nil {
		t.Fatalf("MarkJobLost: %v %v", ok, err)
	}
	j = f.get(job.ID)
	if j.Status != core.JobLost || j.CompletedAt == 0 {
		t.Errorf("after mark: %s", j.Status)
	}
	if err := waitGroupGone(j.PGID, 5*time.Second); err != nil {
		t.Error(err)
	}
	ns := f.notifications("s")
	if len(ns) != 1 || ns[0].Kind != core.NotifyJobLost || ns[0].DedupKey != "job_lost:"+job.ID ||
		!strings.Contains(ns[0].Text, "was lost]") || !strings.Contains(ns[0].Text, j.LogPath) ||
		!strings.Contains(ns[0].Text, "before-crash") {
		t.Errorf("notifications: %+v", ns)
	}
	// Marking again is a no-op (raced).
	if ok, err := f.jobs.MarkJobLost(f.ctx, lost[0], ""); ok || err != nil {
		t.Errorf("second mark: %v %v", ok, err)
	}
}

func waitGroupGone(pgid int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for supervisor.GroupAlive(pgid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("process group %d still alive: %v", pgid, supervisor.GroupMembers(pgid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// A pending job whose supervisor never recorded itself is lost only after
// the grace (measured on the registry clock), so a sweep right after `job
// run` leaves a starting job alone.
func TestJobLostGrace(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	clock := core.NewFakeClock(time.Now())
	reg := core.NewRegistry(f.db, clock, core.DefaultThresholds())
	jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{
		// A "supervisor" that reads its argv and exits without recording itself.
		SupervisorArgv: func(string) ([]string, error) { return []string{"/bin/sh", "-c", "cat >/dev/null"}, nil },
	})
	job, err := jobs.Run(f.ctx, supervisor.JobSpec{Session: "s", Command: []string{"sleep", "1"}}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	if lost, err := jobs.LostJobs(f.ctx); err != nil || len(lost) != 0 {
		t.Fatalf("lost within grace: %+v %v", lost, err)
	}
	clock.Advance(29 * time.Second)
	if lost, _ := jobs.LostJobs(f.ctx); len(lost) != 0 {
		t.Fatalf("lost at 29 s: %+v", lost)
	}
	clock.Advance(2 * time.Second)
	lost, err := jobs.LostJobs(f.ctx)
	if err != nil || len(lost) != 1 || lost[0].ID != job.ID {
		t.Fatalf("lost at 31 s: %+v %v", lost, err)
	}
	if ok, err := jobs.MarkJobLost(f.ctx, lost[0], ""); !ok || err != nil {
		t.Fatalf("mark: %v %v", ok, err)
	}
	j := f.get(job.ID)
	_, evs, _ := jobs.GetJob(f.ctx, job.ID)
	last := evs[len(evs)-1]
	if j.Status != core.JobLost || last.Actor != core.ActorSweeper || !strings.Contains(last.Reason, "never started") {
		t.Errorf("job %s, last event %+v", j.Status, last)
	}
}

func TestCanTransitionJob(t *testing.T) {
	sup, sw, op := core.ActorSupervisor, core.ActorSweeper, core.Actor("op@host")
	for _, tc := range []struct {
		from, to core.JobStatus
		actor    core.Actor
		ok       bool
	}{
		{core.JobPending, core.JobRunning, sup, true},
		{core.JobPending, core.JobRunning, op, false},
		{core.JobRunning, core.JobPending, sup, false},
		{core.JobRunning, core.JobRunning, sup, false},
		{core.JobRunning, core.JobCompleted, sup, true},
		{core.JobRunning, core.JobCancelled, op, true},
		{core.JobPending, core.JobReaped, op, true},
		{core.JobRunning, core.JobLost, sw, true},
		{core.JobRunning, core.JobLost, op, false},
		{core.JobLost, core.JobCompleted, sup, true},
		{core.JobLost, core.JobFailed, sup, true},
		{core.JobLost, core.JobCancelled, op, false},
		{core.JobLost, core.JobCompleted, op, false},
		{core.JobCancelled, core.JobFailed, sup, false},
		{core.JobReaped, core.JobCompleted, sup, false},
		{core.JobCompleted, core.JobFailed, sup, false},
		{core.JobTimedOut, core.JobCancelled, op, false},
	} {
		if ok, why := core.CanTransitionJob(tc.from, tc.to, tc.actor); ok != tc.ok || (!ok && why == "") {
			t.Errorf("%s → %s by %s: %v %q, want %v", tc.from, tc.to, tc.actor, ok, why, tc.ok)
		}
	}
}

func TestProcHelpers(t *testing.T) {
	start, err := supervisor.ProcStartTime(os.Getpid())
	if err != nil || start <= 0 {
		t.Fatalf("own start time: %d %v", start, err)
	}
	if !supervisor.ProcessAlive(os.Getpid(), start) || supervisor.ProcessAlive(os.Getpid(), start+1) {
		t.Error("ProcessAlive does not tell a reused pid")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pg := cmd.Process.Pid
	if m := supervisor.GroupMembers(pg); len(m) != 1 || m[0] != pg {
		t.Errorf("members %v", m)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if s := supervisor.KillGroups([]int{pg}, 5*time.Second); len(s) != 0 {
		t.Errorf("survivors %v", s)
	}
	<-done
	if supervisor.GroupAlive(pg) || supervisor.ProcessAlive(pg, 0) {
		t.Error("group alive after kill")
	}
	if err := supervisor.SignalGroup(1, syscall.SIGTERM); err == nil {
		t.Error("signalling group 1 must be refused")
	}
}

// SIGTERM to a supervisor (its ctx ends) stops the command like a cancel and
// still records how it ended.
func TestSuperviseStopsWithItsContext(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	dir := filepath.Join(t.TempDir(), "job")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	job := &core.Job{ID: core.NewShortID(), Session: "s", Status: core.JobPending, Cwd: dir,
		Command: []string{"sleep", "60"}, LogPath: filepath.Join(dir, tailer.CurrentLog), CreatedAt: core.TS(time.Now())}
	if err := f.db.Update(f.ctx, func(tx core.Tx) error { return tx.InsertJob(job) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan error, 1)
	go func() { done <- f.jobs.Supervise(ctx, job.ID, nil) }()
	f.waitFor(job.ID, 20*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("supervise did not stop")
	}
	j := f.get(job.ID)
	if j.Status != core.JobFailed || *j.ExitCode != 143 || supervisor.GroupAlive(j.PGID) {
		t.Errorf("status %s exit %v, group alive %v", j.Status, *j.ExitCode, supervisor.GroupAlive(j.PGID))
	}
}

// TestJobArgvBytes: arguments reach the command byte for byte, including
// bytes that are not UTF-8 (the supervisor gets argv over a pipe, not as
// JSON strings, which would turn them into U+FFFD).
func TestJobArgvBytes(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	out := filepath.Join(t.TempDir(), "arg")
	arg := "caf\xe9 \x9b2J ok"
	j := f.run("s1", 0, "sh", "-c", `printf '%s' "$1" > "$2"`, "sh", arg, out)
	if j = f.waitDone(j.ID, 20*time.Second); j.Status != core.JobCompleted {
		t.Fatalf("job %s: %s", j.ID, j.Status)
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != arg {
		t.Fatalf("command saw %q (%v), want %q", got, err, arg)
	}
}

// Job output reaches notifications without terminal escapes or control
// characters (README "Notifications", README "The console"): `notifications --json` and --notify-cmd pass the
// text on to consumers that may print it.
func TestJobNotificationSanitised(t *testing.T) {
	t.Parallel()
	f := newJobFixture(t)
	script := `printf 'alpha \033]52;c;ZXZpbA==\007bravo\n'` + // OSC 52 clipboard write
		`; printf '\033]0;evil title\033\\charlie\n'` + // OSC 0 title, ST
		`; printf '\033[2Jdelta \033[31mecho\033[0m\n'` + // CSI
		`; printf '\033Pq#0;2;0;0;0\033\\foxtrot\n'` + // DCS
		`; printf 'golf \233 hotel \302\235 india \007 juliet \001\177\n'` + // raw 0x9b, U+009D, BEL, SOH, DEL
		`; printf 'kilo\tlima \377 mike\n'` // invalid UTF-8
	job := f.run("s", 0, "sh", "-c", script)
	j := f.waitDone(job.ID, 20*time.Second)
	if j.Status != core.JobCompleted {
		t.Fatalf("status %s", j.Status)
	}
	var text string
	for _, n := range f.notifications("s") {
		if n.SubjectID == job.ID {
			text = n.Text
		}
	}
	if text == "" {
		t.Fatal("no notification")
	}
	for _, r := range text {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			t.Errorf("notification keeps control %U:\n%q", r, text)
		}
	}
	if strings.ContainsAny(text, "\x1b\x07") || !utf8.ValidString(text) {
		t.Errorf("notification keeps ESC/BEL or invalid UTF-8: %q", text)
	}
	// Tabs are expanded like a terminal would (termtext.Text).
	for _, w := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo    lima", "mike"} {
		if !strings.Contains(text, w) {
			t.Errorf("notification lost %q:\n%q", w, text)
		}
	}
	_, output, _ := strings.Cut(text, "\nOutput")
	for _, w := range []string{"ZXZpbA", "evil title", "#0;2"} {
		if strings.Contains(output, w) {
			t.Errorf("notification keeps escape payload %q:\n%q", w, text)
		}
	}
}
