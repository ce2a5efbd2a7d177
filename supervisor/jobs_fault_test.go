package supervisor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/supervisor"
)

// The job fault suite (issue 12): faults an adversary found, each reproduced.
// Every case is bounded in seconds.

// treeScript ignores SIGTERM and starts two grandchildren that leave the
// job's process group and session (setsid), each writing its pid to a file
// in the cwd; with exit it then exits, else it loops.
func treeScript(exit bool) string {
	tail := "while :; do sleep 0.1; done"
	if exit {
		tail = "exit 0"
	}
	return `trap "" TERM
setsid sh -c 'echo $$ > g1.tmp; mv g1.tmp g1; trap "" TERM; exec sleep 61' </dev/null &
setsid sh -c 'echo $$ > g2.tmp; mv g2.tmp g2; trap "" TERM; exec sleep 62' </dev/null &
while [ ! -f g1 ] || [ ! -f g2 ]; do sleep 0.02; done
echo ready
` + tail
}

// killJobOnCleanup ends whatever is left of job id — its supervisor, its
// group and every process carrying its marker — when the test ends, however
// it ends (a skip or a failure included).
func killJobOnCleanup(t *testing.T, f *jobFixture, id string) {
	t.Cleanup(func() {
		j, _, err := f.jobs.GetJob(f.ctx, id)
		if err != nil {
			return
		}
		if j.SupervisorPID > 0 && supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart) {
			_ = syscall.Kill(j.SupervisorPID, syscall.SIGKILL)
		}
		if j.PGID > 1 {
			_ = supervisor.SignalGroup(j.PGID, syscall.SIGKILL)
		}
		supervisor.KillJobTree(0, id, 0, 2*time.Second)
		if j.Cgroup != "" {
			_ = supervisor.KillCgroup(j.Cgroup, 2*time.Second)
		}
	})
}

type proc struct {
	pid   int
	start int64
}

// readGrandchildren waits for the pids the tree script wrote.
func readGrandchildren(t *testing.T, dir string) []proc {
	t.Helper()
	var out []proc
	deadline := time.Now().Add(15 * time.Second)
	for _, name := range []string{"g1", "g2"} {
		for {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil {
				pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					t.Fatalf("%s: %q", name, b)
				}
				st, err := supervisor.ProcStartTime(pid)
				if err != nil {
					t.Fatalf("grandchild %d: %v", pid, err)
				}
				out = append(out, proc{pid, st})
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s: the tree script did not start its grandchildren", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Cleanup(func() {
		for _, p := range out {
			if supervisor.ProcessAlive(p.pid, p.start) {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	})
	return out
}

func waitProcsGone(t *testing.T, ps []proc, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, p := range ps {
		for supervisor.ProcessAlive(p.pid, p.start) {
			if time.Now().After(deadline) {
				t.Errorf("grandchild %d outlived its job", p.pid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// A job is its whole process tree: cancel, timeout, reap, the lost path and
// the command's own exit end grandchildren that left the process group and
// session and ignore SIGTERM — contained by a cgroup where this machine has
// a writable one, else by the supervisor as subreaper.
func TestJobFaultSetsidGrandchildren(t *testing.T) {
	t.Parallel()
	for _, contain := range []string{core.ContainCgroup, core.ContainSubreaper} {
		for _, path := range []string{"cancel", "timeout", "reap", "lost", "exit"} {
			t.Run(contain+"/"+path, func(t *testing.T) {
				t.Parallel()
				f := newJobFixture(t, supervisor.EnvJobContainment+"="+contain)
				opts := f.options(supervisor.EnvJobContainment + "=" + contain)
				opts.KillGrace = 300 * time.Millisecond
				jobs := supervisor.NewJobs(f.reg, opts)
				dir := t.TempDir()
				var timeout time.Duration
				if path == "timeout" {
					timeout = time.Second
				}
				job, err := jobs.Run(f.ctx, supervisor.JobSpec{Session: "tree-" + path, Cwd: dir, Timeout: timeout,
					Command: []string{"sh", "-c", treeScript(path == "exit")}}, core.ActorRuntime)
				if err != nil {
					t.Fatal(err)
				}
				killJobOnCleanup(t, f, job.ID)
				kids := readGrandchildren(t, dir)
				j := f.waitFor(job.ID, 15*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
				if contain == core.ContainCgroup && j.Containment != core.ContainCgroup {
					_, evs, _ := f.jobs.GetJob(f.ctx, job.ID)
					t.Skipf("no cgroup containment on this machine (%s): %v", j.Containment, evs)
				}
				if j.Containment != contain {
					t.Fatalf("containment %q, want %q", j.Containment, contain)
				}
				for _, k := range kids {
					if st, err := os.ReadFile("/proc/" + strconv.Itoa(k.pid) + "/stat"); err == nil && strings.Contains(string(st), " "+strconv.Itoa(j.PGID)+" ") {
						// Only a sanity check that the grandchild is no plain group member.
						if supervisor.GroupAlive(j.PGID) && contains(supervisor.GroupMembers(j.PGID), k.pid) {
							t.Fatalf("grandchild %d is still in the job's group", k.pid)
						}
					}
				}
				want := map[string]core.JobStatus{"cancel": core.JobCancelled, "timeout": core.JobTimedOut,
					"reap": core.JobReaped, "lost": core.JobLost, "exit": core.JobCompleted}[path]
				switch path {
				case "cancel":
					if _, res, err := jobs.CancelJob(f.ctx, job.ID, "op@host"); err != nil || !res.Applied {
						t.Fatalf("cancel: %+v %v", res, err)
					}
				case "reap":
					if _, err := jobs.ReapSession(f.ctx, "tree-reap", "op@host"); err != nil {
						t.Fatal(err)
					}
				case "lost":
					if err := syscall.Kill(j.SupervisorPID, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					for supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart) {
						time.Sleep(10 * time.Millisecond)
					}
					lost, err := jobs.LostJobs(f.ctx)
					if err != nil || len(lost) != 1 {
						t.Fatalf("LostJobs: %+v %v", lost, err)
					}
					if ok, err := jobs.MarkJobLost(f.ctx, lost[0], ""); !ok || err != nil {
						t.Fatalf("MarkJobLost: %v %v", ok, err)
					}
				}
				waitProcsGone(t, kids, 12*time.Second)
				// The group's own members are killed with it, but on a loaded
				// machine one may still be on its way out when the last
				// grandchild is gone: wait for the group as for the kids.
				for deadline := time.Now().Add(12 * time.Second); supervisor.GroupAlive(j.PGID); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Errorf("process group %d alive: %v", j.PGID, supervisor.GroupMembers(j.PGID))
						break
					}
				}
				end := f.waitFor(job.ID, 15*time.Second, "the end", func(j *core.Job) bool {
					return !j.Status.Active() && !supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart)
				})
				if end.Status != want {
					t.Errorf("status %s, want %s", end.Status, want)
				}
				if strings.Contains(end.CaptureError, "held open") {
					t.Errorf("capture_error: %s", end.CaptureError)
				}
				if end.Cgroup != "" {
					if _, err := os.Stat(end.Cgroup); err == nil {
						t.Errorf("cgroup %s left behind", end.Cgroup)
					}
				}
			})
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// No window between start and record: a supervisor killed after starting
// the command but before recording its pid (a test hook pauses it there)
// leaves no command behind — the start shim sees the handshake pipe close
// and exits without running it — and the sweep marks the job lost.
func TestJobFaultStartWindowKill(t *testing.T) {
	t.Parallel()
	hook := filepath.Join(t.TempDir(), "paused")
	f := newJobFixture(t, supervisor.EnvJobPauseAfterStart+"="+hook)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	job, err := f.jobs.Run(f.ctx, supervisor.JobSpec{Session: "s", Cwd: dir,
		Command: []string{"sh", "-c", "echo ran > ran; exec sleep 60"}}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	killJobOnCleanup(t, f, job.ID)
	var shim int
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(hook); err == nil && len(b) > 0 {
			if shim, err = strconv.Atoi(string(b)); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the supervisor never reached the start window")
		}
		time.Sleep(10 * time.Millisecond)
	}
	shimStart, _ := supervisor.ProcStartTime(shim)
	j := f.get(job.ID)
	if j.Status != core.JobPending || j.PID != 0 || j.SupervisorPID == 0 {
		t.Fatalf("in the window: status %s pid %d supervisor %d", j.Status, j.PID, j.SupervisorPID)
	}
	if err := syscall.Kill(j.SupervisorPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for supervisor.ProcessAlive(shim, shimStart) || supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart) {
		if time.Now().After(deadline) {
			t.Fatalf("the command (pid %d) outlived its dead supervisor unrecorded", shim)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran although its pid was never recorded")
	}
	lost, err := f.jobs.LostJobs(f.ctx)
	if err != nil || len(lost) != 1 || lost[0].ID != job.ID {
		t.Fatalf("LostJobs: %+v %v", lost, err)
	}
	if ok, err := f.jobs.MarkJobLost(f.ctx, lost[0], ""); !ok || err != nil {
		t.Fatalf("MarkJobLost: %v %v", ok, err)
	}
	if j := f.get(job.ID); j.Status != core.JobLost {
		t.Errorf("status %s", j.Status)
	}
}

// Helper-supervisor knobs of the full-disk case.
const (
	// envHelperFullWhen names a file: while it exists, the helper
	// supervisor's registry writes fail with ErrDiskFull (SQLITE_FULL).
	envHelperFullWhen = "CLAWPIT_TEST_HELPER_FULL_WHEN"
	// envHelperFinalRetryMS sets the helper supervisor's FinalRetry (ms).
	envHelperFinalRetryMS = "CLAWPIT_TEST_HELPER_FINAL_RETRY_MS"
	// envHelperPollMS sets the helper supervisor's PollInterval (ms).
	envHelperPollMS = "CLAWPIT_TEST_HELPER_POLL_MS"
)

// fullStore is a registry on a full disk while its trigger file exists:
// every write transaction fails as SQLite's SQLITE_FULL does; reads work.
type fullStore struct {
	core.Store
	trigger string
}

func (s fullStore) Update(ctx context.Context, fn func(core.Tx) error) error {
	if _, err := os.Stat(s.trigger); err == nil {
		return fmt.Errorf("%w: database or disk is full (injected)", core.ErrDiskFull)
	}
	return s.Store.Update(ctx, fn)
}

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory when this
// process may (root, mount allowed), else returns "".
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		t.Logf("cannot mount a tmpfs (%v): the log stays on the ordinary disk", err)
		return ""
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk writes to dir until the file system is full (ENOSPC).
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for i := 0; i < 1<<16; i++ {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return name
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the disk never filled")
	return ""
}

// A full disk names itself: with the registry full (and the log on a full
// tmpfs where the test may mount one), the supervisor keeps draining the
// command, retries its final write, then leaves "disk full" beside the log;
// the sweep's lost reason and notification say "disk full", not "supervisor
// gone".
func TestJobFaultDiskFull(t *testing.T) {
	t.Parallel()
	trigger := filepath.Join(t.TempDir(), "registry-full")
	f := newJobFixture(t, envHelperFullWhen+"="+trigger, envHelperFinalRetryMS+"=1500")
	opts := f.options(envHelperFullWhen+"="+trigger, envHelperFinalRetryMS+"=1500")
	logDisk := mountTmpfs(t, 256<<10)
	if logDisk != "" {
		opts.Dir = filepath.Join(logDisk, "jobs")
	}
	jobs := supervisor.NewJobs(f.reg, opts)
	cwd := t.TempDir()
	// 20,000 lines (~230 KB, more than a pipe holds): it finishes only if
	// the supervisor keeps draining after its writes fail.
	job, err := jobs.Run(f.ctx, supervisor.JobSpec{Session: "s", Cwd: cwd, Command: []string{"sh", "-c",
		`while [ ! -f go ]; do sleep 0.02; done; i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; echo done > finished`}},
		core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	killJobOnCleanup(t, f, job.ID)
	j := f.waitFor(job.ID, 15*time.Second, "running", func(j *core.Job) bool { return j.Status == core.JobRunning })
	if _, err := os.Stat(filepath.Join(filepath.Dir(j.LogPath), supervisor.SupervisorErrorFile)); err != nil {
		t.Fatalf("no reserved %s: %v", supervisor.SupervisorErrorFile, err)
	}
	var filler string
	if logDisk != "" {
		filler = fillDisk(t, logDisk)
	}
	if err := os.WriteFile(trigger, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart) {
		if time.Now().After(deadline) {
			t.Fatal("the supervisor did not give up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(cwd, "finished")); err != nil {
		t.Error("the command did not finish: its output was not drained")
	}
	msg := supervisor.ReadSupervisorError(j.LogPath)
	if !strings.HasPrefix(msg, "disk full: ") || !strings.Contains(msg, "exited with code 0") {
		t.Errorf("%s: %q", supervisor.SupervisorErrorFile, msg)
	}
	if j := f.get(job.ID); j.Status != core.JobRunning {
		t.Errorf("status %s: the injected full registry took a write", j.Status)
	}
	// Space comes back; the sweep says why the job is lost.
	os.Remove(trigger)
	if filler != "" {
		os.Remove(filler)
	}
	lost, err := jobs.LostJobs(f.ctx)
	if err != nil || len(lost) != 1 {
		t.Fatalf("LostJobs: %+v %v", lost, err)
	}
	reason := jobs.JobLostReason(&lost[0], core.TS(time.Now()))
	if !strings.Contains(reason, "disk full") || strings.Contains(reason, "is gone") {
		t.Errorf("lost reason %q", reason)
	}
	if ok, err := jobs.MarkJobLost(f.ctx, lost[0], ""); !ok || err != nil {
		t.Fatalf("MarkJobLost: %v %v", ok, err)
	}
	ns := f.notifications("s")
	if len(ns) != 1 || !strings.Contains(ns[0].Text, "disk full") {
		t.Errorf("notifications: %+v", ns)
	}
}

// Cancelling a still-pending job: the supervisor finds the job cancelled
// when it goes to record the pid and never releases the command; the end is
// recorded as soon as it looks, not at its next poll (here a minute away).
func TestJobFaultCancelPending(t *testing.T) {
	t.Parallel()
	hook := filepath.Join(t.TempDir(), "paused")
	f := newJobFixture(t, supervisor.EnvJobPauseAfterStart+"="+hook, envHelperPollMS+"=60000")
	dir := t.TempDir()
	job, err := f.jobs.Run(f.ctx, supervisor.JobSpec{Session: "s", Cwd: dir,
		Command: []string{"sh", "-c", "echo ran > ran; exec sleep 60"}}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	killJobOnCleanup(t, f, job.ID)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(hook); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the supervisor never reached the start window")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, res, err := f.jobs.CancelJob(f.ctx, job.ID, "op@host")
	if err != nil || !res.Applied || !strings.Contains(res.Reason, "stops the command as it starts") {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	if err := os.WriteFile(hook+".release", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	j := f.waitDone(job.ID, 15*time.Second)
	if el := time.Since(released); el > 3*time.Second {
		t.Errorf("the end was recorded %s after the supervisor could see the cancel", el)
	}
	if j.Status != core.JobCancelled || j.PID != 0 {
		t.Errorf("status %s pid %d", j.Status, j.PID)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command of a job cancelled while pending ran")
	}
	if ns := f.notifications("s"); len(ns) != 1 || !strings.Contains(ns[0].Text, "was cancelled") {
		t.Errorf("notifications: %+v", ns)
	}
}
