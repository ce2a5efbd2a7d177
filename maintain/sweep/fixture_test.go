package sweep_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// The registry fixture of core's tests (core/registry_fixture_test.go),
// copied with what the sweep tests use of it: a test package cannot import
// another's test files.

// regStart is the fake clock's starting time in every registry test.
var regStart = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// regFixture is a registry over a fresh SQLite file with a fake clock.
type regFixture struct {
	t     testing.TB
	ctx   context.Context
	db    *store.DB
	loc   string // the registry's file path or PostgreSQL URL (storetest.Location)
	clock *core.FakeClock
	reg   *core.Registry
	jobs  *fakeJobs
}

func newRegFixture(t testing.TB) *regFixture {
	t.Helper()
	ctx := context.Background()
	loc := storetest.Location(t, "r.db")
	db, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	clock := core.NewFakeClock(regStart)
	reg := core.NewRegistry(db, clock, core.DefaultThresholds())
	jobs := &fakeJobs{db: db, clock: clock}
	reg.SetJobController(jobs)
	return &regFixture{t: t, ctx: ctx, db: db, loc: loc, clock: clock, reg: reg, jobs: jobs}
}

func (f *regFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *regFixture) run(id, child string) *core.Run {
	f.t.Helper()
	r, err := f.reg.RegisterRun(f.ctx, core.NewRun{RunID: id, ChildSession: child}, core.ActorRuntime)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *regFixture) getRun(id string) *core.Run {
	f.t.Helper()
	r, _, err := f.reg.GetRun(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// getApproval is the approval as stored (Registry.GetApproval shows an
// overdue one expired before anything records it).
func (f *regFixture) getApproval(id string) *core.Approval {
	f.t.Helper()
	var a *core.Approval
	err := f.db.View(f.ctx, func(tx core.Tx) (err error) {
		a, err = tx.GetApproval(id)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// fakeJobs is a JobController that records calls and updates job rows the way
// the supervisor would, without processes.
type fakeJobs struct {
	db    *store.DB
	clock core.Clock

	mu        sync.Mutex
	cancelled []string
	reaped    []string
}

func (j *fakeJobs) CancelJob(ctx context.Context, id string, actor core.Actor) (*core.Job, core.Result, error) {
	j.mu.Lock()
	j.cancelled = append(j.cancelled, id)
	j.mu.Unlock()
	var out *core.Job
	err := j.db.Update(ctx, func(tx core.Tx) error {
		job, err := tx.GetJob(id)
		if err != nil {
			return err
		}
		job.Status = core.JobCancelled
		job.CompletedAt = core.TS(j.clock.Now())
		out = job
		return tx.UpdateJob(job)
	})
	return out, core.Result{Applied: err == nil}, err
}

func (j *fakeJobs) ReapSession(ctx context.Context, session string, actor core.Actor) (core.ReapReport, error) {
	j.mu.Lock()
	j.reaped = append(j.reaped, session)
	j.mu.Unlock()
	var rep core.ReapReport
	err := j.db.Update(ctx, func(tx core.Tx) error {
		jobs, err := tx.ListJobs(core.JobFilter{Session: session, Statuses: []core.JobStatus{core.JobPending, core.JobRunning}})
		if err != nil {
			return err
		}
		for i := range jobs {
			jobs[i].Status = core.JobReaped
			jobs[i].CompletedAt = core.TS(j.clock.Now())
			if err := tx.UpdateJob(&jobs[i]); err != nil {
				return err
			}
			rep.Reaped = append(rep.Reaped, jobs[i])
		}
		return nil
	})
	return rep, err
}
