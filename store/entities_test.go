package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

func fullSession() *core.Session {
	return &core.Session{ID: "agent:main:1", Label: "main", State: core.SessionPassivated,
		CreatedAt: 1000, LastActivityAt: 2000, PassivatedAt: 3000}
}

func fullTask() *core.Task {
	return &core.Task{ID: "0193a1b2-0000-7000-8000-000000000001", Runtime: core.RuntimeCLI, Kind: "build",
		Status: core.TaskFailed, DeliveryStatus: core.DeliverySessionQueued, NotifyPolicy: core.NotifyStateChanges,
		RunID: "run-1", SourceID: "src-1", OwnerSession: "owner", ChildSession: "child", ParentTaskID: "parent",
		Label: "label", Task: "do it", Error: "boom", ResultSubtype: "error_max_turns", ProgressSummary: "halfway",
		ExpectsOutput: true, OutputCount: 7, CreatedAt: 1000, StartedAt: 2000, LastEventAt: 3000, EndedAt: 4000,
		CleanupAfter: 5000}
}

func fullRun() *core.Run {
	return &core.Run{RunID: "run-1", ChildSession: "child", RequesterSession: "req", Label: "lbl", StartedAt: 1000,
		LastProgressAt: 2000, InactivityBudgetMs: 60000, PendingApprovalWaits: 2, EndedAt: 3000,
		Outcome: core.OutcomeKilled, EndedReason: "operator", SuppressAnnounceReason: "killed",
		CleanupHandled: true, Error: "err", CleanupAfter: 4000}
}

func fullApproval() *core.Approval {
	return &core.Approval{ID: "a1b2c3d4e5f6", Session: "s", RunID: "run-1", TaskID: "task-1", Tool: "bash",
		Command: "git push origin main", Rationale: "ship", Cwd: "/src", Pattern: "git push", Status: core.ApprovalApproved,
		Scope: core.ScopeSession, Reason: "ok", DecidedBy: "me@host", RequestedAt: 1000, DecidedAt: 2000,
		ExpiresAt: 3000, CleanupAfter: 4000}
}

func fullJob() *core.Job {
	return &core.Job{ID: "0123456789ab", Session: "s", Command: []string{"sh", "-c", "echo 'hi there'"}, Cwd: "/tmp",
		Rationale: "why", Status: core.JobCompleted, ExitCode: ptr(3), TimeoutS: 30, PID: 11, PGID: 12,
		SupervisorPID: 13, SupervisorStart: 14, CreatedAt: 1000, StartedAt: 2000, CompletedAt: 3000,
		LogPath: "/logs/out.log", CaptureError: "disk full", SurfacedAt: 4000, CleanupAfter: 5000}
}

// roundTrip inserts v, reads it back and compares every field (Rev = 1).
func roundTrip[T any](t *testing.T, db *DB, v *T, insert func(core.Tx, *T) error, get func(core.Tx) (*T, error)) {
	t.Helper()
	update(t, db, func(tx core.Tx) error { return insert(tx, v) })
	view(t, db, func(tx core.Tx) error {
		got, err := get(tx)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, v) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, v)
		}
		return nil
	})
}

func TestRoundTripFull(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		s := fullSession()
		roundTrip(t, db, s, core.Tx.InsertSession, func(tx core.Tx) (*core.Session, error) { return tx.GetSession(s.ID) })
		k := fullTask()
		roundTrip(t, db, k, core.Tx.InsertTask, func(tx core.Tx) (*core.Task, error) { return tx.GetTask(k.ID) })
		r := fullRun()
		roundTrip(t, db, r, core.Tx.InsertRun, func(tx core.Tx) (*core.Run, error) { return tx.GetRun(r.RunID) })
		a := fullApproval()
		roundTrip(t, db, a, core.Tx.InsertApproval, func(tx core.Tx) (*core.Approval, error) { return tx.GetApproval(a.ID) })
		g := &core.Grant{ID: "g00000000001", Tool: "bash", Pattern: "git push", Scope: core.ScopeSession, Session: "s",
			CreatedBy: "me@host", CreatedAt: 1000}
		roundTrip(t, db, g, core.Tx.InsertGrant, func(tx core.Tx) (*core.Grant, error) { return tx.GetGrant(g.ID) })
		j := fullJob()
		roundTrip(t, db, j, core.Tx.InsertJob, func(tx core.Tx) (*core.Job, error) { return tx.GetJob(j.ID) })
		for _, v := range []int64{s.Rev, k.Rev, r.Rev, a.Rev, j.Rev} {
			if v != 1 {
				t.Errorf("insert set Rev = %d, want 1", v)
			}
		}
		// activity_at = last_event_at when set.
		var act int64
		if err := db.read.QueryRow(db.dialectSQL("SELECT activity_at FROM tasks WHERE id = ?"), k.ID).Scan(&act); err != nil {
			t.Fatal(err)
		}
		if act != 3000 {
			t.Errorf("activity_at = %d, want 3000 (last_event_at)", act)
		}
	})
}

func TestRoundTripZeroValuesAreNull(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		s := &core.Session{ID: "s0", State: core.SessionActive, CreatedAt: 1}
		roundTrip(t, db, s, core.Tx.InsertSession, func(tx core.Tx) (*core.Session, error) { return tx.GetSession(s.ID) })
		for _, c := range []string{"last_activity_at", "passivated_at"} {
			if !isNull(t, db, "sessions", "id", "s0", c) {
				t.Errorf("sessions.%s not NULL", c)
			}
		}

		k := &core.Task{ID: "t0", Runtime: core.RuntimeCron, Status: core.TaskQueued,
			DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 10}
		roundTrip(t, db, k, core.Tx.InsertTask, func(tx core.Tx) (*core.Task, error) { return tx.GetTask(k.ID) })
		for _, c := range []string{"run_id", "source_id", "owner_session", "child_session", "parent_task_id",
			"started_at", "last_event_at", "ended_at", "cleanup_after"} {
			if !isNull(t, db, "tasks", "id", "t0", c) {
				t.Errorf("tasks.%s not NULL", c)
			}
		}

		r := &core.Run{RunID: "r0", StartedAt: 1, LastProgressAt: 1, InactivityBudgetMs: core.DefaultInactivityBudgetMs}
		roundTrip(t, db, r, core.Tx.InsertRun, func(tx core.Tx) (*core.Run, error) { return tx.GetRun(r.RunID) })
		for _, c := range []string{"ended_at", "cleanup_after"} {
			if !isNull(t, db, "runs", "run_id", "r0", c) {
				t.Errorf("runs.%s not NULL", c)
			}
		}

		a := &core.Approval{ID: "a0", Session: "s", Tool: "bash", Command: "ls", Status: core.ApprovalPending, RequestedAt: 1}
		roundTrip(t, db, a, core.Tx.InsertApproval, func(tx core.Tx) (*core.Approval, error) { return tx.GetApproval(a.ID) })
		for _, c := range []string{"run_id", "task_id", "decided_at", "expires_at", "cleanup_after"} {
			if !isNull(t, db, "approvals", "id", "a0", c) {
				t.Errorf("approvals.%s not NULL", c)
			}
		}

		// A nil argv is stored as an empty JSON array and reads back empty.
		j := &core.Job{ID: "j0", Session: "s", Status: core.JobPending, CreatedAt: 1}
		update(t, db, func(tx core.Tx) error { return tx.InsertJob(j) })
		view(t, db, func(tx core.Tx) error {
			got, err := tx.GetJob("j0")
			if err != nil {
				return err
			}
			if got.ExitCode != nil || len(got.Command) != 0 || got.StartedAt != 0 || got.SurfacedAt != 0 {
				t.Errorf("zero job read back as %+v", got)
			}
			return nil
		})
		var cmd string
		if err := db.read.QueryRow(db.dialectSQL("SELECT command FROM jobs WHERE id = 'j0'")).Scan(&cmd); err != nil {
			t.Fatal(err)
		}
		if cmd != "[]" {
			t.Errorf("command column = %q, want []", cmd)
		}
		for _, c := range []string{"exit_code", "started_at", "completed_at", "surfaced_at", "cleanup_after"} {
			if !isNull(t, db, "jobs", "id", "j0", c) {
				t.Errorf("jobs.%s not NULL", c)
			}
		}
		// Exit code 0 is a value, not NULL.
		j.ExitCode = ptr(0)
		update(t, db, func(tx core.Tx) error { return tx.UpdateJob(j) })
		if isNull(t, db, "jobs", "id", "j0", "exit_code") {
			t.Error("exit code 0 stored as NULL")
		}
	})
}

func TestTaskActivityAt(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		k := &core.Task{ID: "t1", Runtime: core.RuntimeSubagent, Status: core.TaskQueued,
			DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 100}
		activity := func() int64 {
			var v int64
			if err := db.read.QueryRow(db.dialectSQL("SELECT activity_at FROM tasks WHERE id = 't1'")).Scan(&v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		update(t, db, func(tx core.Tx) error { return tx.InsertTask(k) })
		if got := activity(); got != 100 {
			t.Errorf("activity_at = %d, want created_at 100", got)
		}
		k.StartedAt = 200
		update(t, db, func(tx core.Tx) error { return tx.UpdateTask(k) })
		if got := activity(); got != 200 {
			t.Errorf("activity_at = %d, want started_at 200", got)
		}
		k.LastEventAt = 300
		update(t, db, func(tx core.Tx) error { return tx.UpdateTask(k) })
		if got := activity(); got != 300 {
			t.Errorf("activity_at = %d, want last_event_at 300", got)
		}
	})
}

// TestConditionalUpdates reads each entity twice, updates through the first
// copy, and expects the second (stale) copy to conflict.
func TestConditionalUpdates(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		update(t, db, func(tx core.Tx) error {
			return errors.Join(tx.InsertSession(fullSession()), tx.InsertTask(fullTask()), tx.InsertRun(fullRun()),
				tx.InsertApproval(fullApproval()), tx.InsertJob(fullJob()))
		})
		cases := []struct {
			name   string
			get    func(core.Tx) (any, error)
			update func(core.Tx, any) error
			rev    func(any) int64
		}{
			{"session",
				func(tx core.Tx) (any, error) { return tx.GetSession(fullSession().ID) },
				func(tx core.Tx, v any) error { s := v.(*core.Session); s.Label += "!"; return tx.UpdateSession(s) },
				func(v any) int64 { return v.(*core.Session).Rev }},
			{"task",
				func(tx core.Tx) (any, error) { return tx.GetTask(fullTask().ID) },
				func(tx core.Tx, v any) error { k := v.(*core.Task); k.OutputCount++; return tx.UpdateTask(k) },
				func(v any) int64 { return v.(*core.Task).Rev }},
			{"run",
				func(tx core.Tx) (any, error) { return tx.GetRun(fullRun().RunID) },
				func(tx core.Tx, v any) error { r := v.(*core.Run); r.PendingApprovalWaits++; return tx.UpdateRun(r) },
				func(v any) int64 { return v.(*core.Run).Rev }},
			{"approval",
				func(tx core.Tx) (any, error) { return tx.GetApproval(fullApproval().ID) },
				func(tx core.Tx, v any) error { a := v.(*core.Approval); a.Reason += "!"; return tx.UpdateApproval(a) },
				func(v any) int64 { return v.(*core.Approval).Rev }},
			{"job",
				func(tx core.Tx) (any, error) { return tx.GetJob(fullJob().ID) },
				func(tx core.Tx, v any) error { j := v.(*core.Job); j.PID++; return tx.UpdateJob(j) },
				func(v any) int64 { return v.(*core.Job).Rev }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var first, second any
				view(t, db, func(tx core.Tx) (err error) { first, err = c.get(tx); return })
				view(t, db, func(tx core.Tx) (err error) { second, err = c.get(tx); return })
				update(t, db, func(tx core.Tx) error { return c.update(tx, first) })
				if got := c.rev(first); got != 2 {
					t.Errorf("Rev after update = %d, want 2", got)
				}
				err := db.Update(context.Background(), func(tx core.Tx) error { return c.update(tx, second) })
				if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), c.name) {
					t.Errorf("stale update: err = %v, want ErrConflict naming %s", err, c.name)
				}
				if got := c.rev(second); got != 1 {
					t.Errorf("failed update changed Rev to %d", got)
				}
				var stored any
				view(t, db, func(tx core.Tx) (err error) { stored, err = c.get(tx); return })
				if !reflect.DeepEqual(stored, first) {
					t.Errorf("stored row %+v, want the first update %+v", stored, first)
				}
				// Updating the first copy again works: its Rev is current.
				update(t, db, func(tx core.Tx) error { return c.update(tx, first) })
				if got := c.rev(first); got != 3 {
					t.Errorf("Rev after second update = %d, want 3", got)
				}
			})
		}
	})
}

func TestInsertDuplicateAndMissing(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		update(t, db, func(tx core.Tx) error {
			return errors.Join(tx.InsertSession(fullSession()), tx.InsertTask(fullTask()), tx.InsertRun(fullRun()),
				tx.InsertApproval(fullApproval()), tx.InsertJob(fullJob()),
				tx.InsertGrant(&core.Grant{ID: "g1", Tool: "bash", Pattern: "ls", Scope: core.ScopeAlways, CreatedAt: 1}))
		})
		dups := map[string]func(core.Tx) error{
			"session":  func(tx core.Tx) error { return tx.InsertSession(fullSession()) },
			"task":     func(tx core.Tx) error { return tx.InsertTask(fullTask()) },
			"run":      func(tx core.Tx) error { return tx.InsertRun(fullRun()) },
			"approval": func(tx core.Tx) error { return tx.InsertApproval(fullApproval()) },
			"job":      func(tx core.Tx) error { return tx.InsertJob(fullJob()) },
			"grant": func(tx core.Tx) error {
				return tx.InsertGrant(&core.Grant{ID: "g1", Tool: "x", Pattern: "y", Scope: core.ScopeAlways, CreatedAt: 1})
			},
			"grant same match": func(tx core.Tx) error {
				return tx.InsertGrant(&core.Grant{ID: "g2", Tool: "bash", Pattern: "ls", Scope: core.ScopeAlways, CreatedAt: 1})
			},
		}
		for name, fn := range dups {
			if err := db.Update(context.Background(), fn); !errors.Is(err, core.ErrConflict) {
				t.Errorf("duplicate %s: err = %v, want ErrConflict", name, err)
			}
		}
		// A CHECK violation is invalid input, not a conflict.
		err := db.Update(context.Background(), func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "bad", State: "sleeping", CreatedAt: 1})
		})
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("bad state: err = %v, want ErrInvalid", err)
		}

		missing := map[string]func(core.Tx) error{
			"session":  func(tx core.Tx) error { _, err := tx.GetSession("nope"); return err },
			"task":     func(tx core.Tx) error { _, err := tx.GetTask("nope"); return err },
			"run":      func(tx core.Tx) error { _, err := tx.GetRun("nope"); return err },
			"approval": func(tx core.Tx) error { _, err := tx.GetApproval("nope"); return err },
			"grant":    func(tx core.Tx) error { _, err := tx.GetGrant("nope"); return err },
			"job":      func(tx core.Tx) error { _, err := tx.GetJob("nope"); return err },
		}
		for name, fn := range missing {
			err := db.View(context.Background(), fn)
			if !errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "nope") {
				t.Errorf("get missing %s: err = %v, want ErrNotFound naming entity and id", name, err)
			}
		}
		// Updating a vanished row conflicts.
		err = db.Update(context.Background(), func(tx core.Tx) error {
			return tx.UpdateTask(&core.Task{ID: "gone", Runtime: core.RuntimeCLI, Status: core.TaskQueued,
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 1, Rev: 1})
		})
		if !errors.Is(err, core.ErrConflict) {
			t.Errorf("update of a missing row: err = %v, want ErrConflict", err)
		}
	})
}

func TestGrants(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		grants := []*core.Grant{
			{ID: "g3", Tool: "bash", Pattern: "git push", Scope: core.ScopeSession, Session: "s1", CreatedAt: 30},
			{ID: "g2", Tool: "bash", Pattern: "git push", Scope: core.ScopeAlways, CreatedAt: 20},
			{ID: "g1", Tool: "bash", Pattern: "git push", Scope: core.ScopeSession, Session: "s2", CreatedAt: 10},
			{ID: "g4", Tool: "edit", Pattern: "git push", Scope: core.ScopeAlways, CreatedAt: 5},
		}
		update(t, db, func(tx core.Tx) error {
			for _, g := range grants {
				if err := tx.InsertGrant(g); err != nil {
					return err
				}
			}
			return nil
		})
		find := func(tool, pattern, session string) string {
			var id string
			view(t, db, func(tx core.Tx) error {
				g, err := tx.FindGrant(tool, pattern, session)
				if g != nil {
					id = g.ID
				}
				return err
			})
			return id
		}
		for _, c := range []struct{ tool, pattern, session, want string }{
			{"bash", "git push", "s2", "g1"}, // oldest matching: its own session grant
			{"bash", "git push", "s1", "g2"}, // always grant is older than s1's session grant
			{"bash", "git push", "", "g2"},
			{"bash", "git pull", "s1", ""},
			{"edit", "git push", "s9", "g4"},
		} {
			if got := find(c.tool, c.pattern, c.session); got != c.want {
				t.Errorf("FindGrant(%q, %q, %q) = %q, want %q", c.tool, c.pattern, c.session, got, c.want)
			}
		}
		update(t, db, func(tx core.Tx) error { return tx.DeleteGrant("g2") })
		if got := find("bash", "git push", "s1"); got != "g3" {
			t.Errorf("after deleting g2: FindGrant = %q, want g3", got)
		}
		if got := find("bash", "git push", "s3"); got != "" {
			t.Errorf("another session's grant matched: %q", got)
		}
		if err := db.Update(context.Background(), func(tx core.Tx) error { return tx.DeleteGrant("g2") }); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("delete twice: err = %v, want ErrNotFound", err)
		}
		view(t, db, func(tx core.Tx) error {
			gs, err := tx.ListGrants()
			var ids []string
			for _, g := range gs {
				ids = append(ids, g.ID)
			}
			if want := []string{"g3", "g1", "g4"}; !reflect.DeepEqual(ids, want) {
				t.Errorf("ListGrants = %v, want %v (newest first)", ids, want)
			}
			return err
		})
	})
}
