package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

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

func (f *regFixture) now() core.Timestamp { return core.TS(f.clock.Now()) }

func (f *regFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *regFixture) session(id string) {
	f.t.Helper()
	if _, _, err := f.reg.OpenSession(f.ctx, id, "", core.ActorRuntime); err != nil {
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

func (f *regFixture) task(nt core.NewTask) *core.Task {
	f.t.Helper()
	if nt.Runtime == "" {
		nt.Runtime = core.RuntimeSubagent
	}
	t, err := f.reg.CreateTask(f.ctx, nt, core.ActorRuntime)
	if err != nil {
		f.t.Fatal(err)
	}
	return t
}

func (f *regFixture) getTask(id string) *core.Task {
	f.t.Helper()
	t, _, err := f.reg.GetTask(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return t
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

func (f *regFixture) request(session, runID, command string) *core.Approval {
	f.t.Helper()
	a, err := f.reg.RequestApproval(f.ctx, core.NewApproval{Session: session, RunID: runID, Tool: "Bash", Command: command}, core.ActorRuntime)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// events returns the journal of one entity.
func (f *regFixture) events(entity, id string) []core.Event {
	f.t.Helper()
	var evs []core.Event
	f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) {
		evs, err = tx.Events(entity, id)
		return err
	}))
	return evs
}

// lastEvent returns the newest journal row of one entity.
func (f *regFixture) lastEvent(entity, id string) core.Event {
	f.t.Helper()
	evs := f.events(entity, id)
	if len(evs) == 0 {
		f.t.Fatalf("no journal rows for %s %s", entity, id)
	}
	return evs[len(evs)-1]
}

// findEvent returns the first journal row of entity id whose reason contains
// substr, failing the test when none does.
func (f *regFixture) findEvent(entity, id, substr string) core.Event {
	f.t.Helper()
	for _, e := range f.events(entity, id) {
		if strings.Contains(e.Reason, substr) {
			return e
		}
	}
	f.t.Fatalf("no %s %s journal row with reason containing %q; have %+v", entity, id, substr, f.events(entity, id))
	return core.Event{}
}

func (f *regFixture) notifications(kind core.NotificationKind) []core.Notification {
	f.t.Helper()
	all, err := f.reg.ListNotifications(f.ctx, core.NotificationFilter{})
	f.must(err)
	var out []core.Notification
	for _, n := range all {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// insertJob stores a job row directly (the job supervisor is not under test).
func (f *regFixture) insertJob(id, session string, st core.JobStatus) {
	f.t.Helper()
	f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
		return tx.InsertJob(&core.Job{ID: id, Session: session, Command: []string{"sleep", "60"},
			Status: st, CreatedAt: f.now()})
	}))
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
