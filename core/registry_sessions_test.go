package core_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestSessionLifecycle(t *testing.T) {
	f := registrytest.New(t)
	op := core.OperatorActor()
	s, res, err := f.Reg.OpenSession(f.Ctx, "sess-main", "main chat", core.ActorRuntime)
	if err != nil || !res.Applied || s.State != core.SessionActive || s.Label != "main chat" || s.CreatedAt != f.Now() {
		t.Fatalf("open: %v %+v %+v", err, res, s)
	}
	if _, res, _ := f.Reg.OpenSession(f.Ctx, "sess-main", "", core.ActorRuntime); res.Applied || res.Reason != "already active" {
		t.Fatalf("reopen active: %+v", res)
	}
	if _, _, err := f.Reg.OpenSession(f.Ctx, "", "", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
	f.InsertJob("aaaaaaaaaaaa", "sess-main", core.JobRunning)
	f.InsertJob("bbbbbbbbbbbb", "sess-main", core.JobCompleted)
	f.InsertJob("cccccccccccc", "other", core.JobRunning)
	f.Clock.Advance(time.Minute)
	s, rep, res, err := f.Reg.PassivateSession(f.Ctx, "sess", op)
	if err != nil || !res.Applied || s.State != core.SessionPassivated || s.PassivatedAt != f.Now() {
		t.Fatalf("passivate: %v %+v %+v", err, res, s)
	}
	if len(rep.Reaped) != 1 || rep.Reaped[0].ID != "aaaaaaaaaaaa" {
		t.Fatalf("reap report: %+v", rep)
	}
	if _, _, res, _ := f.Reg.PassivateSession(f.Ctx, "sess-main", op); res.Applied || res.Reason != "already passivated" {
		t.Fatalf("passivate twice: %+v", res)
	}
	if len(f.Jobs.Reaped()) != 2 {
		t.Fatalf("reap calls: %v (passivation reaps idempotently)", f.Jobs.Reaped())
	}
	f.Clock.Advance(time.Minute)
	s, jobs, res, err := f.Reg.ResumeSession(f.Ctx, "sess-main", op)
	if err != nil || !res.Applied || s.State != core.SessionActive {
		t.Fatalf("resume: %v %+v %+v", err, res, s)
	}
	if len(jobs) != 1 || jobs[0].ID != "aaaaaaaaaaaa" || jobs[0].SurfacedAt != f.Now() {
		t.Fatalf("surfaced jobs: %+v", jobs)
	}
	_, jobs, res, err = f.Reg.ResumeSession(f.Ctx, "sess-main", op)
	if err != nil || res.Applied || res.Reason != "already active" || len(jobs) != 0 {
		t.Fatalf("second resume: %v %+v %+v", err, res, jobs)
	}
	// Reopening a passivated session re-activates it.
	_, _, _, err = f.Reg.PassivateSession(f.Ctx, "sess-main", op)
	f.Must(err)
	if s, res, err := f.Reg.OpenSession(f.Ctx, "sess-main", "renamed", core.ActorRuntime); err != nil || !res.Applied || s.State != core.SessionActive || s.Label != "renamed" {
		t.Fatalf("reopen passivated: %v %+v %+v", err, res, s)
	}
	s, _, res, err = f.Reg.CloseSession(f.Ctx, "sess-main", op)
	if err != nil || !res.Applied || s.State != core.SessionClosed {
		t.Fatalf("close: %v %+v", err, res)
	}
	if _, res, _ := f.Reg.OpenSession(f.Ctx, "sess-main", "", core.ActorRuntime); res.Applied || res.Reason != "session closed" {
		t.Fatalf("reopen closed: %+v", res)
	}
	if _, _, res, _ := f.Reg.ResumeSession(f.Ctx, "sess-main", op); res.Applied || res.Reason != "session closed" {
		t.Fatalf("resume closed: %+v", res)
	}
	if _, _, res, _ := f.Reg.CloseSession(f.Ctx, "sess-main", op); res.Applied || res.Reason != "already closed" {
		t.Fatalf("close twice: %+v", res)
	}
	_, evs, err := f.Reg.GetSession(f.Ctx, "sess-main")
	f.Must(err)
	if len(evs) < 6 {
		t.Fatalf("journal: %+v", evs)
	}
	list, err := f.Reg.ListSessions(f.Ctx, core.SessionFilter{States: []core.SessionState{core.SessionClosed}})
	f.Must(err)
	if len(list) != 1 {
		t.Fatalf("closed sessions: %+v", list)
	}
	if _, _, _, err := f.Reg.PassivateSession(f.Ctx, "nope-nope", op); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("passivate unknown: %v", err)
	}
}

func TestNotificationsAck(t *testing.T) {
	f := registrytest.New(t)
	tk := f.Task(core.NewTask{OwnerSession: "o"})
	_, _, err := f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Subtype: "error_max_turns"}, core.ActorRuntime)
	f.Must(err)
	ns, err := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{UndeliveredOnly: true})
	f.Must(err)
	if len(ns) != 1 {
		t.Fatalf("%+v", ns)
	}
	ok, err := f.Reg.AckNotification(f.Ctx, ns[0].ID)
	if err != nil || !ok {
		t.Fatalf("ack: %v %v", ok, err)
	}
	if ok, _ := f.Reg.AckNotification(f.Ctx, ns[0].ID); ok {
		t.Fatal("second ack reported true")
	}
	if ns, _ := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{UndeliveredOnly: true}); len(ns) != 0 {
		t.Fatalf("still undelivered: %+v", ns)
	}
}

// session resume lists only the jobs the passivation reaped: a job the
// operator reaped while the session was active is not listed again.
func TestResumeListsOnlyPassivationReaps(t *testing.T) {
	f := registrytest.New(t)
	op := core.OperatorActor()
	_, _, err := f.Reg.OpenSession(f.Ctx, "s2", "", core.ActorRuntime)
	f.Must(err)
	f.InsertJob("aaaaaaaaaaaa", "s2", core.JobRunning)
	_, err = f.Jobs.ReapSession(f.Ctx, "s2", op) // the operator's `job reap`
	f.Must(err)
	f.Clock.Advance(time.Minute)
	f.InsertJob("bbbbbbbbbbbb", "s2", core.JobRunning)
	_, rep, _, err := f.Reg.PassivateSession(f.Ctx, "s2", op)
	if err != nil || len(rep.Reaped) != 1 || rep.Reaped[0].ID != "bbbbbbbbbbbb" {
		t.Fatalf("passivate: %v %+v", err, rep)
	}
	f.Clock.Advance(time.Minute)
	_, jobs, _, err := f.Reg.ResumeSession(f.Ctx, "s2", op)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "bbbbbbbbbbbb" {
		t.Fatalf("resume lists %+v (%v), want only the job the passivation reaped", jobs, err)
	}
}

// TestReopenSession: a runtime resuming a conversation re-opens its closed
// session (journaled); on an active or new one it is OpenSession.
func TestReopenSession(t *testing.T) {
	f := registrytest.New(t)
	op := core.OperatorActor()
	if s, res, err := f.Reg.ReopenSession(f.Ctx, "sess-r", "chat", core.ActorRuntime); err != nil || !res.Applied || s.State != core.SessionActive {
		t.Fatalf("reopen new: %v %+v %+v", err, res, s)
	}
	if _, res, _ := f.Reg.ReopenSession(f.Ctx, "sess-r", "", core.ActorRuntime); res.Applied || res.Reason != "already active" {
		t.Fatalf("reopen active: %+v", res)
	}
	_, _, _, err := f.Reg.CloseSession(f.Ctx, "sess-r", op)
	f.Must(err)
	f.Clock.Advance(time.Minute)
	s, res, err := f.Reg.ReopenSession(f.Ctx, "sess-r", "", core.ActorRuntime)
	if err != nil || !res.Applied || s.State != core.SessionActive || s.LastActivityAt != f.Now() || s.Label != "chat" {
		t.Fatalf("reopen closed: %v %+v %+v", err, res, s)
	}
	_, evs, err := f.Reg.GetSession(f.Ctx, "sess-r")
	f.Must(err)
	last := evs[len(evs)-1]
	if last.From != string(core.SessionClosed) || last.To != string(core.SessionActive) || last.Reason != "re-opened after close" || !last.Applied {
		t.Fatalf("journal: %+v", last)
	}
	if _, _, err := f.Reg.ReopenSession(f.Ctx, "", "", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
}

// Issue 26 item 6: the console reads one alert or all of them; each read is
// journaled with the operator's identity, and reading a read alert is
// refused with its reason.
func TestReadNotificationJournaled(t *testing.T) {
	f := registrytest.New(t)
	for _, owner := range []string{"o1", "o2", "o3"} {
		tk := f.Task(core.NewTask{OwnerSession: owner})
		_, _, err := f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Subtype: "error_max_turns"}, core.ActorRuntime)
		f.Must(err)
	}
	ns, err := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{UndeliveredOnly: true})
	f.Must(err)
	if len(ns) != 3 {
		t.Fatalf("want 3 unread, got %+v", ns)
	}
	ann := core.Actor("ann (ssh 10.0.0.1:22)")
	res, err := f.Reg.ReadNotification(f.Ctx, ns[0].ID, ann)
	if err != nil || !res.Applied {
		t.Fatalf("read one: %+v %v", res, err)
	}
	res, err = f.Reg.ReadNotification(f.Ctx, ns[0].ID, ann)
	if err != nil || res.Applied || !strings.Contains(res.Reason, "already read") {
		t.Fatalf("read again: %+v %v, want refused as already read", res, err)
	}
	if _, err := f.Reg.ReadNotification(f.Ctx, 999, ann); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("read unknown: %v, want not found", err)
	}
	n, err := f.Reg.ReadAllNotifications(f.Ctx, ann)
	if err != nil || n != 2 {
		t.Fatalf("read all: %d %v, want 2", n, err)
	}
	if n, _ := f.Reg.ReadAllNotifications(f.Ctx, ann); n != 0 {
		t.Fatalf("read all again marked %d", n)
	}
	if un, _ := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{UndeliveredOnly: true}); len(un) != 0 {
		t.Fatalf("still unread: %+v", un)
	}
	for i, nt := range ns {
		var evs []core.Event
		f.Must(f.DB.View(f.Ctx, func(tx core.Tx) (err error) {
			evs, err = tx.Events(core.EntityNotification, strconv.FormatInt(nt.ID, 10))
			return err
		}))
		want := 1
		if i == 0 {
			want = 2 // the read and the refused second read
		}
		if len(evs) != want || evs[0].Actor != ann || evs[0].From != "unread" || evs[0].To != "read" || !evs[0].Applied {
			t.Errorf("alert %d journal: %+v", nt.ID, evs)
		}
	}
}
