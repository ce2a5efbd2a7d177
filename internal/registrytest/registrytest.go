// Package registrytest is the registry fixture of clawpit's tests: a
// core.Registry over a fresh store (storetest.Location: a SQLite file, or a
// PostgreSQL schema when the test runs on PostgreSQL) with a fake clock and
// a job controller without processes. core's tests and maintain/sweep's use
// it; only test files import it (arch_test.go), since it imports store,
// which core's code may not.
package registrytest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// Start is the fake clock's starting time in every fixture.
var Start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Fixture is a registry over a fresh store with a fake clock. Its helpers
// fail the test (T.Fatal) on any error, so a test reads as its steps.
type Fixture struct {
	T     testing.TB
	Ctx   context.Context // context.Background()
	DB    *store.DB
	Loc   string // the registry's file path or PostgreSQL URL (storetest.Location)
	Clock *core.FakeClock
	Reg   *core.Registry // with core.DefaultThresholds and Jobs as its job controller
	Jobs  *Jobs
}

// New opens a fresh registry for t (closed when t ends), its clock at
// Start.
func New(t testing.TB) *Fixture {
	t.Helper()
	ctx := context.Background()
	loc := storetest.Location(t, "r.db")
	db, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	clock := core.NewFakeClock(Start)
	reg := core.NewRegistry(db, clock, core.DefaultThresholds())
	jobs := &Jobs{db: db, clock: clock}
	reg.SetJobController(jobs)
	return &Fixture{T: t, Ctx: ctx, DB: db, Loc: loc, Clock: clock, Reg: reg, Jobs: jobs}
}

// Now is the fake clock's time as the registry stores it.
func (f *Fixture) Now() core.Timestamp { return core.TS(f.Clock.Now()) }

// Must fails the test on a non-nil err.
func (f *Fixture) Must(err error) {
	f.T.Helper()
	if err != nil {
		f.T.Fatal(err)
	}
}

// Session opens session id as the runtime.
func (f *Fixture) Session(id string) {
	f.T.Helper()
	if _, _, err := f.Reg.OpenSession(f.Ctx, id, "", core.ActorRuntime); err != nil {
		f.T.Fatal(err)
	}
}

// Run registers run id whose child session is child, as the runtime.
func (f *Fixture) Run(id, child string) *core.Run {
	f.T.Helper()
	r, err := f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: id, ChildSession: child}, core.ActorRuntime)
	if err != nil {
		f.T.Fatal(err)
	}
	return r
}

// Task creates nt as the runtime (a subagent's task unless nt names its
// runtime).
func (f *Fixture) Task(nt core.NewTask) *core.Task {
	f.T.Helper()
	if nt.Runtime == "" {
		nt.Runtime = core.RuntimeSubagent
	}
	t, err := f.Reg.CreateTask(f.Ctx, nt, core.ActorRuntime)
	if err != nil {
		f.T.Fatal(err)
	}
	return t
}

// GetTask is task id as the registry shows it.
func (f *Fixture) GetTask(id string) *core.Task {
	f.T.Helper()
	t, _, err := f.Reg.GetTask(f.Ctx, id)
	if err != nil {
		f.T.Fatal(err)
	}
	return t
}

// GetRun is run id as the registry shows it.
func (f *Fixture) GetRun(id string) *core.Run {
	f.T.Helper()
	r, _, err := f.Reg.GetRun(f.Ctx, id)
	if err != nil {
		f.T.Fatal(err)
	}
	return r
}

// GetApproval is the approval as stored (Registry.GetApproval shows an
// overdue one expired before anything records it).
func (f *Fixture) GetApproval(id string) *core.Approval {
	f.T.Helper()
	var a *core.Approval
	err := f.DB.View(f.Ctx, func(tx core.Tx) (err error) {
		a, err = tx.GetApproval(id)
		return err
	})
	if err != nil {
		f.T.Fatal(err)
	}
	return a
}

// Request asks, as the runtime, for approval of a Bash command in session
// (and run runID, when not empty).
func (f *Fixture) Request(session, runID, command string) *core.Approval {
	f.T.Helper()
	a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: session, RunID: runID, Tool: "Bash", Command: command}, core.ActorRuntime)
	if err != nil {
		f.T.Fatal(err)
	}
	return a
}

// Events returns the journal of one entity, oldest first.
func (f *Fixture) Events(entity, id string) []core.Event {
	f.T.Helper()
	var evs []core.Event
	f.Must(f.DB.View(f.Ctx, func(tx core.Tx) (err error) {
		evs, err = tx.Events(entity, id)
		return err
	}))
	return evs
}

// LastEvent returns the newest journal row of one entity, failing the test
// when it has none.
func (f *Fixture) LastEvent(entity, id string) core.Event {
	f.T.Helper()
	evs := f.Events(entity, id)
	if len(evs) == 0 {
		f.T.Fatalf("no journal rows for %s %s", entity, id)
	}
	return evs[len(evs)-1]
}

// FindEvent returns the first journal row of entity id whose reason
// contains substr, failing the test when none does.
func (f *Fixture) FindEvent(entity, id, substr string) core.Event {
	f.T.Helper()
	for _, e := range f.Events(entity, id) {
		if strings.Contains(e.Reason, substr) {
			return e
		}
	}
	f.T.Fatalf("no %s %s journal row with reason containing %q; have %+v", entity, id, substr, f.Events(entity, id))
	return core.Event{}
}

// Notifications returns the notifications of one kind, in the registry's
// order.
func (f *Fixture) Notifications(kind core.NotificationKind) []core.Notification {
	f.T.Helper()
	all, err := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{})
	f.Must(err)
	var out []core.Notification
	for _, n := range all {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// InsertJob stores a job row directly (the job supervisor is not under
// test).
func (f *Fixture) InsertJob(id, session string, st core.JobStatus) {
	f.T.Helper()
	f.Must(f.DB.Update(f.Ctx, func(tx core.Tx) error {
		return tx.InsertJob(&core.Job{ID: id, Session: session, Command: []string{"sleep", "60"},
			Status: st, CreatedAt: f.Now()})
	}))
}

// Jobs is a core.JobController that records its calls and updates job rows
// the way the supervisor would, without processes. Safe for concurrent use.
type Jobs struct {
	db    *store.DB
	clock core.Clock

	mu        sync.Mutex
	cancelled []string
	reaped    []string
}

// Cancelled is the ids of the jobs CancelJob was asked to cancel, in order.
func (j *Jobs) Cancelled() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.cancelled)
}

// Reaped is the sessions ReapSession was asked to reap, in order.
func (j *Jobs) Reaped() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.reaped)
}

// CancelJob records id and marks its row cancelled at the fake clock's
// time; the error is the store's (core.ErrNotFound for no such job).
func (j *Jobs) CancelJob(ctx context.Context, id string, actor core.Actor) (*core.Job, core.Result, error) {
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

// ReapSession records session and marks its pending and running jobs
// reaped at the fake clock's time.
func (j *Jobs) ReapSession(ctx context.Context, session string, actor core.Actor) (core.ReapReport, error) {
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
