package supervisor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/clawpit/clawpit/supervisor"
)

// hostSide is one simulated host over a shared registry: its own store
// handle, registry, job front end (Host set) and sweeper.
type hostSide struct {
	db   *store.DB
	reg  *core.Registry
	jobs *supervisor.Jobs
	sw   *sweep.Sweeper
}

func newHostSide(t *testing.T, loc, host string) *hostSide {
	t.Helper()
	db, err := store.Open(context.Background(), loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{
		Host: host,
		Dir:  filepath.Join(t.TempDir(), "jobs"),
		SupervisorArgv: func(id string) ([]string, error) {
			return []string{os.Args[0], "-test.run=^TestHelperJobSupervisor$", "--", loc, id}, nil
		},
		SupervisorEnv: []string{envHelperSupervisor + "=1"},
	})
	reg.SetJobController(jobs)
	return &hostSide{db: db, reg: reg, jobs: jobs, sw: sweep.New(reg, jobs)}
}

func (h *hostSide) job(t *testing.T, id string) *core.Job {
	t.Helper()
	j, _, err := h.jobs.GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func waitJob(t *testing.T, h *hostSide, id, what string, ok func(*core.Job) bool) *core.Job {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		j := h.job(t, id)
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: timed out waiting for %s (status %s)", id, what, j.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJobLostOnlyByItsHost (README "Many hosts: PostgreSQL"): a job whose supervisor runs on host A
// is never marked lost by host B's sweep — B cannot see A's processes — and
// B's audit reports A as not sweeping; A's own sweep marks it lost once its
// supervisor is killed.
func TestJobLostOnlyByItsHost(t *testing.T) {
	storetest.Each(t, func(t *testing.T) {
		ctx := context.Background()
		loc := storetest.Location(t, "registry.db")
		a := newHostSide(t, loc, "host-a")
		b := newHostSide(t, loc, "host-b")

		job, err := a.jobs.Run(ctx, supervisor.JobSpec{Session: "s", Command: []string{"sh", "-c", "echo up; exec sleep 60"}, Cwd: t.TempDir()}, core.ActorRuntime)
		if err != nil {
			t.Fatal(err)
		}
		if job.Host != "host-a" {
			t.Fatalf("job host = %q, want host-a", job.Host)
		}
		j := waitJob(t, a, job.ID, "running", func(j *core.Job) bool { return j.Status == core.JobRunning && j.PGID > 1 })
		t.Cleanup(func() { _ = supervisor.SignalGroup(j.PGID, syscall.SIGKILL) })

		sweepB := func() *sweep.Report {
			t.Helper()
			rep, err := b.sw.Sweep(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, act := range rep.Actions {
				if act.ID == job.ID {
					t.Errorf("host B's sweep acted on host A's job: %+v", act)
				}
			}
			if got := b.job(t, job.ID).Status; got != core.JobRunning {
				t.Errorf("after host B's sweep the job is %s, want running", got)
			}
			return rep
		}
		sweepB()
		if err := syscall.Kill(j.SupervisorPID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); supervisor.ProcessAlive(j.SupervisorPID, j.SupervisorStart); {
			if time.Now().After(deadline) {
				t.Fatal("supervisor did not die")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// B sees a dead pid that is not its own: still no action, but the
		// audit says host A has not confirmed its jobs.
		rep := sweepB()
		found := false
		for _, f := range rep.Findings {
			if f.Kind == sweep.FindingHostSilent && f.ID == "host-a" && strings.Contains(f.Detail, "never swept") {
				found = true
			}
		}
		if !found {
			t.Errorf("host B's audit does not report host A: %+v", rep.Findings)
		}
		if lost, err := b.jobs.LostJobs(ctx); err != nil || len(lost) != 0 {
			t.Errorf("host B's LostJobs = %+v, %v; want none", lost, err)
		}
		// A's own sweep marks it lost and kills what its supervisor left.
		repA, err := a.sw.Sweep(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if repA.Counts.Lost < 1 {
			t.Errorf("host A's sweep: %s", repA.Summary())
		}
		if got := a.job(t, job.ID); got.Status != core.JobLost || got.Host != "host-a" {
			t.Errorf("after host A's sweep: status %s host %q, want lost on host-a", got.Status, got.Host)
		}
		if err := waitGroupGone(j.PGID, 5*time.Second); err != nil {
			t.Error(err)
		}
	})
}

// TestJobCancelFromAnotherHost: a cancel written on host B signals nothing
// on B; host A's supervisor sees the status and stops the command.
func TestJobCancelFromAnotherHost(t *testing.T) {
	storetest.Each(t, func(t *testing.T) {
		ctx := context.Background()
		loc := storetest.Location(t, "registry.db")
		a := newHostSide(t, loc, "host-a")
		b := newHostSide(t, loc, "host-b")
		job, err := a.jobs.Run(ctx, supervisor.JobSpec{Session: "s", Command: []string{"sh", "-c", "exec sleep 60"}, Cwd: t.TempDir()}, core.ActorRuntime)
		if err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, a, job.ID, "running", func(j *core.Job) bool { return j.Status == core.JobRunning && j.PGID > 1 })
		t.Cleanup(func() { _ = supervisor.SignalGroup(j.PGID, syscall.SIGKILL) })
		_, res, err := b.jobs.CancelJob(ctx, job.ID, core.ActorRuntime)
		if err != nil || !res.Applied || !strings.Contains(res.Reason, "host-a") {
			t.Fatalf("cancel from host B: %+v %v", res, err)
		}
		if err := waitGroupGone(j.PGID, 15*time.Second); err != nil {
			t.Error(err)
		}
		waitJob(t, a, job.ID, "the supervisor's report", func(j *core.Job) bool {
			return j.Status == core.JobCancelled && j.ExitCode != nil
		})
	})
}
