package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestCopyToPostgres: every table, ids, revisions, timestamps and the
// journal arrive unchanged; id sequences continue after the copied ids; a
// non-empty destination is refused with nothing copied.
func TestCopyToPostgres(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "registry.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	code := 3
	update(t, src, func(tx core.Tx) error {
		for _, err := range []error{
			tx.InsertSession(&core.Session{ID: "sess-1", Label: "l", State: core.SessionActive, CreatedAt: 10, LastActivityAt: 11}),
			tx.InsertTask(&core.Task{ID: "task-1", Runtime: core.RuntimeCLI, Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending,
				NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "sess-1", Label: "ünï", ExpectsOutput: true, CreatedAt: 20, StartedAt: 21}),
			tx.InsertRun(&core.Run{RunID: "run-1", ChildSession: "c", StartedAt: 30, LastProgressAt: 31, InactivityBudgetMs: 60000}),
			tx.InsertApproval(&core.Approval{ID: "appr-1", Session: "sess-1", Tool: "Bash", Command: "ls", Status: core.ApprovalPending, RequestedAt: 40, HoldsWait: true, ToolUseID: "tu1"}),
			tx.InsertGrant(&core.Grant{ID: "grant-1", Tool: "Bash", Pattern: "ls", Scope: core.ScopeAlways, CreatedAt: 50}),
			tx.InsertJob(&core.Job{ID: "0123456789ab", Session: "sess-1", Command: []string{"sleep", "1"}, Status: core.JobCompleted, ExitCode: &code, CreatedAt: 60, Host: "h1",
				Containment: core.ContainCgroup, Cgroup: "/sys/fs/cgroup/clawpit/0123456789ab"}),
			tx.TouchHost("h1", 70),
			// Keys out of name order: they come back in insertion order.
			tx.(core.OperatorTx).InsertOperator(&core.Operator{Name: "ann", Role: core.RoleOperator, CreatedBy: core.ActorRuntime, CreatedAt: 75,
				Keys: []core.OperatorKey{{Fingerprint: "SHA256:zz", Line: "ssh-ed25519 AAAZ ann@b"}, {Fingerprint: "SHA256:aa", Line: "ssh-ed25519 AAAA ann@a"}}}),
		} {
			if err != nil {
				return err
			}
		}
		if _, err := tx.InsertNotification(&core.Notification{Kind: core.NotifyJobFinished, Text: "x", DedupKey: "k1", CreatedAt: 80}); err != nil {
			return err
		}
		t1, _ := tx.GetTask("task-1")
		t1.OutputCount = 2
		if err := tx.UpdateTask(t1); err != nil { // rev 2
			return err
		}
		return tx.AppendEvents([]core.Event{
			{At: 90, Entity: core.EntityTask, EntityID: "task-1", From: "queued", To: "running", Actor: core.ActorRuntime, Applied: true},
			{At: 91, Entity: core.EntityTask, EntityID: "task-1", From: "running", To: "failed", Actor: core.ActorSweeper, Reason: "r", Applied: false},
		})
	})
	dst, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	counts, err := CopyToPostgres(ctx, src, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"sessions": 1, "tasks": 1, "runs": 1, "approvals": 1, "grants": 1, "jobs": 1, "notifications": 1, "events": 2, "hosts": 1,
		"operators": 1, "operator_keys": 2}
	for _, c := range counts {
		if c.Rows != want[c.Table] {
			t.Errorf("%s: copied %d rows, want %d", c.Table, c.Rows, want[c.Table])
		}
	}
	read := func(db *DB) map[string]any {
		out := map[string]any{}
		view(t, db, func(tx core.Tx) error {
			var err error
			get := func(k string, v any, e error) {
				out[k] = v
				if e != nil && err == nil {
					err = e
				}
			}
			s, e := tx.ListSessions(core.SessionFilter{})
			get("sessions", s, e)
			k, e := tx.ListTasks(core.TaskFilter{})
			get("tasks", k, e)
			r, e := tx.ListRuns(core.RunFilter{})
			get("runs", r, e)
			a, e := tx.ListApprovals(core.ApprovalFilter{})
			get("approvals", a, e)
			g, e := tx.ListGrants()
			get("grants", g, e)
			j, e := tx.ListJobs(core.JobFilter{})
			get("jobs", j, e)
			n, e := tx.ListNotifications(core.NotificationFilter{})
			get("notifications", n, e)
			ev, e := tx.EventsSince(0, 0)
			get("events", ev, e)
			h, e := tx.SweepHosts()
			get("hosts", h, e)
			o, e := tx.(core.OperatorTx).ListOperators()
			get("operators", o, e)
			return err
		})
		return out
	}
	a, b := read(src), read(dst)
	for k := range a {
		if !reflect.DeepEqual(a[k], b[k]) {
			t.Errorf("%s differ:\nsqlite   %+v\npostgres %+v", k, a[k], b[k])
		}
	}
	// New ids follow the copied ones.
	update(t, dst, func(tx core.Tx) error {
		n := &core.Notification{Kind: core.NotifyJobFinished, Text: "y", DedupKey: "k2", CreatedAt: 81}
		if _, err := tx.InsertNotification(n); err != nil {
			return err
		}
		if n.ID != 2 {
			t.Errorf("next notification id = %d, want 2", n.ID)
		}
		return nil
	})
	// A second copy into the now non-empty registry is refused.
	if _, err := CopyToPostgres(ctx, src, dst, ""); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("copy into a non-empty registry: err = %v, want ErrNotEmpty", err)
	}
}

// Jobs recorded before jobs had a host belong to the machine the SQLite
// registry served: the copy gives them its name; recorded hosts stay.
func TestCopyToPostgresStampsLegacyJobs(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "registry.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	update(t, src, func(tx core.Tx) error {
		if err := tx.InsertJob(&core.Job{ID: "aaaaaaaaaaaa", Session: "s", Status: core.JobRunning, CreatedAt: 1}); err != nil {
			return err
		}
		return tx.InsertJob(&core.Job{ID: "bbbbbbbbbbbb", Session: "s", Status: core.JobRunning, CreatedAt: 1, Host: "other"})
	})
	dst, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := CopyToPostgres(ctx, src, dst, "old-box"); err != nil {
		t.Fatal(err)
	}
	view(t, dst, func(tx core.Tx) error {
		for id, want := range map[string]string{"aaaaaaaaaaaa": "old-box", "bbbbbbbbbbbb": "other"} {
			j, err := tx.GetJob(id)
			if err != nil {
				return err
			}
			if j.Host != want {
				t.Errorf("job %s host %q, want %q", id, j.Host, want)
			}
		}
		return nil
	})
}
