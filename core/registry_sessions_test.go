package core_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestSessionLifecycle(t *testing.T) {
	f := newRegFixture(t)
	op := core.OperatorActor()
	s, res, err := f.reg.OpenSession(f.ctx, "sess-main", "main chat", core.ActorRuntime)
	if err != nil || !res.Applied || s.State != core.SessionActive || s.Label != "main chat" || s.CreatedAt != f.now() {
		t.Fatalf("open: %v %+v %+v", err, res, s)
	}
	if _, res, _ := f.reg.OpenSession(f.ctx, "sess-main", "", core.ActorRuntime); res.Applied || res.Reason != "already active" {
		t.Fatalf("reopen active: %+v", res)
	}
	if _, _, err := f.reg.OpenSession(f.ctx, "", "", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
	f.insertJob("aaaaaaaaaaaa", "sess-main", core.JobRunning)
	f.insertJob("bbbbbbbbbbbb", "sess-main", core.JobCompleted)
	f.insertJob("cccccccccccc", "other", core.JobRunning)
	f.clock.Advance(time.Minute)
	s, rep, res, err := f.reg.PassivateSession(f.ctx, "sess", op)
	if err != nil || !res.Applied || s.State != core.SessionPassivated || s.PassivatedAt != f.now() {
		t.Fatalf("passivate: %v %+v %+v", err, res, s)
	}
	if len(rep.Reaped) != 1 || rep.Reaped[0].ID != "aaaaaaaaaaaa" {
		t.Fatalf("reap report: %+v", rep)
	}
	if _, _, res, _ := f.reg.PassivateSession(f.ctx, "sess-main", op); res.Applied || res.Reason != "already passivated" {
		t.Fatalf("passivate twice: %+v", res)
	}
	if len(f.jobs.reaped) != 2 {
		t.Fatalf("reap calls: %v (passivation reaps idempotently)", f.jobs.reaped)
	}
	f.clock.Advance(time.Minute)
	s, jobs, res, err := f.reg.ResumeSession(f.ctx, "sess-main", op)
	if err != nil || !res.Applied || s.State != core.SessionActive {
		t.Fatalf("resume: %v %+v %+v", err, res, s)
	}
	if len(jobs) != 1 || jobs[0].ID != "aaaaaaaaaaaa" || jobs[0].SurfacedAt != f.now() {
		t.Fatalf("surfaced jobs: %+v", jobs)
	}
	_, jobs, res, err = f.reg.ResumeSession(f.ctx, "sess-main", op)
	if err != nil || res.Applied || res.Reason != "already active" || len(jobs) != 0 {
		t.Fatalf("second resume: %v %+v %+v", err, res, jobs)
	}
	// Reopening a passivated session re-activates it.
	_, _, _, err = f.reg.PassivateSession(f.ctx, "sess-main", op)
	f.must(err)
	if s, res, err := f.reg.OpenSession(f.ctx, "sess-main", "renamed", core.ActorRuntime); err != nil || !res.Applied || s.State != core.SessionActive || s.Label != "renamed" {
		t.Fatalf("reopen passivated: %v %+v %+v", err, res, s)
	}
	s, _, res, err = f.reg.CloseSession(f.ctx, "sess-main", op)
	if err != nil || !res.Applied || s.State != core.SessionClosed {
		t.Fatalf("close: %v %+v", err, res)
	}
	if _, res, _ := f.reg.OpenSession(f.ctx, "sess-main", "", core.ActorRuntime); res.Applied || res.Reason != "session closed" {
		t.Fatalf("reopen closed: %+v", res)
	}
	if _, _, res, _ := f.reg.ResumeSession(f.ctx, "sess-main", op); res.Applied || res.Reason != "session closed" {
		t.Fatalf("resume closed: %+v", res)
	}
	if _, _, res, _ := f.reg.CloseSession(f.ctx, "sess-main", op); res.Applied || res.Reason != "already closed" {
		t.Fatalf("close twice: %+v", res)
	}
	_, evs, err := f.reg.GetSession(f.ctx, "sess-main")
	f.must(err)
	if len(evs) < 6 {
		t.Fatalf("journal: %+v", evs)
	}
	list, err := f.reg.ListSessions(f.ctx, core.SessionFilter{States: []core.SessionState{core.SessionClosed}})
	f.must(err)
	if len(list) != 1 {
		t.Fatalf("closed sessions: %+v", list)
	}
	if _, _, _, err := f.reg.PassivateSession(f.ctx, "nope-nope", op); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("passivate unknown: %v", err)
	}
}

func TestNotificationsAck(t *testing.T) {
	f := newRegFixture(t)
	tk := f.task(core.NewTask{OwnerSession: "o"})
	_, _, err := f.reg.FinishTask(f.ctx, tk.ID, core.Finish{Subtype: "error_max_turns"}, core.ActorRuntime)
	f.must(err)
	ns, err := f.reg.ListNotifications(f.ctx, core.NotificationFilter{UndeliveredOnly: true})
	f.must(err)
	if len(ns) != 1 {
		t.Fatalf("%+v", ns)
	}
	ok, err := f.reg.AckNotification(f.ctx, ns[0].ID)
	if err != nil || !ok {
		t.Fatalf("ack: %v %v", ok, err)
	}
	if ok, _ := f.reg.AckNotification(f.ctx, ns[0].ID); ok {
		t.Fatal("second ack reported true")
	}
	if ns, _ := f.reg.ListNotifications(f.ctx, core.NotificationFilter{UndeliveredOnly: true}); len(ns) != 0 {
		t.Fatalf("still undelivered: %+v", ns)
	}
}

// session resume lists only the jobs the passivation reaped: a job the
// operator reaped while the session was active is not listed again.
func TestResumeListsOnlyPassivationReaps(t *testing.T) {
	f := newRegFixture(t)
	op := core.OperatorActor()
	_, _, err := f.reg.OpenSession(f.ctx, "s2", "", core.ActorRuntime)
	f.must(err)
	f.insertJob("aaaaaaaaaaaa", "s2", core.JobRunning)
	_, err = f.jobs.ReapSession(f.ctx, "s2", op) // the operator's `job reap`
	f.must(err)
	f.clock.Advance(time.Minute)
	f.insertJob("bbbbbbbbbbbb", "s2", core.JobRunning)
	_, rep, _, err := f.reg.PassivateSession(f.ctx, "s2", op)
	if err != nil || len(rep.Reaped) != 1 || rep.Reaped[0].ID != "bbbbbbbbbbbb" {
		t.Fatalf("passivate: %v %+v", err, rep)
	}
	f.clock.Advance(time.Minute)
	_, jobs, _, err := f.reg.ResumeSession(f.ctx, "s2", op)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "bbbbbbbbbbbb" {
		t.Fatalf("resume lists %+v (%v), want only the job the passivation reaped", jobs, err)
	}
}

// TestReopenSession: a runtime resuming a conversation re-opens its closed
// session (journaled); on an active or new one it is OpenSession.
func TestReopenSession(t *testing.T) {
	f := newRegFixture(t)
	op := core.OperatorActor()
	if s, res, err := f.reg.ReopenSession(f.ctx, "sess-r", "chat", core.ActorRuntime); err != nil || !res.Applied || s.State != core.SessionActive {
		t.Fatalf("reopen new: %v %+v %+v", err, res, s)
	}
	if _, res, _ := f.reg.ReopenSession(f.ctx, "sess-r", "", core.ActorRuntime); res.Applied || res.Reason != "already active" {
		t.Fatalf("reopen active: %+v", res)
	}
	_, _, _, err := f.reg.CloseSession(f.ctx, "sess-r", op)
	f.must(err)
	f.clock.Advance(time.Minute)
	s, res, err := f.reg.ReopenSession(f.ctx, "sess-r", "", core.ActorRuntime)
	if err != nil || !res.Applied || s.State != core.SessionActive || s.LastActivityAt != f.now() || s.Label != "chat" {
		t.Fatalf("reopen closed: %v %+v %+v", err, res, s)
	}
	_, evs, err := f.reg.GetSession(f.ctx, "sess-r")
	f.must(err)
	last := evs[len(evs)-1]
	if last.From != string(core.SessionClosed) || last.To != string(core.SessionActive) || last.Reason != "re-opened after close" || !last.Applied {
		t.Fatalf("journal: %+v", last)
	}
	if _, _, err := f.reg.ReopenSession(f.ctx, "", "", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty id: %v", err)
	}
}

// Issue 26 item 6: the console reads one alert or all of them; each read is
// journaled with the operator's identity, and reading a read alert is
// refused with its reason.
func TestReadNotificationJournaled(t *testing.T) {
	f := newRegFixture(t)
	for _, owner := range []string{"o1", "o2", "o3"} {
		tk := f.task(core.NewTask{OwnerSession: owner})
		_, _, err := f.reg.FinishTask(f.ctx, tk.ID, core.Finish{Subtype: "error_max_turns"}, core.ActorRuntime)
		f.must(err)
	}
	ns, err := f.reg.ListNotifications(f.ctx, core.NotificationFilter{UndeliveredOnly: true})
	f.must(err)
	if len(ns) != 3 {
		t.Fatalf("want 3 unread, got %+v", ns)
	}
	ann := core.Actor("ann (ssh 10.0.0.1:22)")
	res, err := f.reg.ReadNotification(f.ctx, ns[0].ID, ann)
	if err != nil || !res.Applied {
		t.Fatalf("read one: %+v %v", res, err)
	}
	res, err = f.reg.ReadNotification(f.ctx, ns[0].ID, ann)
	if err != nil || res.Applied || !strings.Contains(res.Reason, "already read") {
		t.Fatalf("read again: %+v %v, want refused as already read", res, err)
	}
	if _, err := f.reg.ReadNotification(f.ctx, 999, ann); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("read unknown: %v, want not found", err)
	}
	n, err := f.reg.ReadAllNotifications(f.ctx, ann)
	if err != nil || n != 2 {
		t.Fatalf("read all: %d %v, want 2", n, err)
	}
	if n, _ := f.reg.ReadAllNotifications(f.ctx, ann); n != 0 {
		t.Fatalf("read all again marked %d", n)
	}
	if un, _ := f.reg.ListNotifications(f.ctx, core.NotificationFilter{UndeliveredOnly: true}); len(un) != 0 {
		t.Fatalf("still unread: %+v", un)
	}
	for i, nt := range ns {
		var evs []core.Event
		f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) {
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
