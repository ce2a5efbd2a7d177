package store

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

func TestResolveID(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		update(t, db, func(tx core.Tx) error {
			for _, id := range []string{"abcd1111", "abcd2222", "abce3333", "abc", "zzzz9999"} {
				k := &core.Task{ID: id, Runtime: core.RuntimeCLI, Status: core.TaskQueued,
					DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 1}
				if err := tx.InsertTask(k); err != nil {
					return err
				}
			}
			for _, id := range []string{"run-aaaa-1", "run-aaaa-2", "run-bbbb"} {
				if err := tx.InsertRun(&core.Run{RunID: id, StartedAt: 1, LastProgressAt: 1, InactivityBudgetMs: 1}); err != nil {
					return err
				}
			}
			for i := 0; i < 8; i++ {
				id := "0123456789a" + string(rune('0'+i))
				if err := tx.InsertJob(&core.Job{ID: id, Session: "s", Status: core.JobPending, CreatedAt: 1}); err != nil {
					return err
				}
			}
			return errors.Join(
				tx.InsertSession(&core.Session{ID: "agent:main", State: core.SessionActive, CreatedAt: 1}),
				tx.InsertApproval(&core.Approval{ID: "ap0000000001", Session: "s", Tool: "t", Command: "c", Status: core.ApprovalPending, RequestedAt: 1}),
				tx.InsertGrant(&core.Grant{ID: "gr0000000001", Tool: "t", Pattern: "p", Scope: core.ScopeAlways, CreatedAt: 1}))
		})
		type result struct {
			id      string
			err     error
			matches []string
			count   int
		}
		resolve := func(entity, prefix string) result {
			var r result
			r.err = db.View(context.Background(), func(tx core.Tx) error {
				var err error
				r.id, err = tx.ResolveID(entity, prefix)
				return err
			})
			var amb *core.AmbiguousError
			if errors.As(r.err, &amb) {
				r.matches, r.count = amb.Matches, amb.Count
			}
			return r
		}
		cases := []struct {
			name, entity, prefix, want string
			wantErr                    error
			wantMatches                []string
			msg                        string
		}{
			{"exact", "task", "abcd1111", "abcd1111", nil, nil, ""},
			{"exact shorter than 4", "task", "abc", "abc", nil, nil, ""},
			{"unique prefix", "task", "abce", "abce3333", nil, nil, ""},
			{"unique longer prefix", "task", "abcd2", "abcd2222", nil, nil, ""},
			{"ambiguous", "task", "abcd", "", core.ErrAmbiguous, []string{"abcd1111", "abcd2222"}, `task id prefix "abcd" is ambiguous: 2 tasks match (abcd1111, abcd2222)`},
			{"unknown", "task", "ffff", "", core.ErrNotFound, nil, `no task matches id prefix "ffff"`},
			{"too short", "task", "ab", "", core.ErrInvalid, nil, `"ab"`},
			{"empty", "task", "", "", core.ErrInvalid, nil, ""},
			{"run prefix", "run", "run-b", "run-bbbb", nil, nil, ""},
			{"run ambiguous", "run", "run-a", "", core.ErrAmbiguous, []string{"run-aaaa-1", "run-aaaa-2"}, ""},
			{"job ambiguous lists five", "job", "0123", "", core.ErrAmbiguous,
				[]string{"0123456789a0", "0123456789a1", "0123456789a2", "0123456789a3", "0123456789a4"}, "8 jobs match (0123456789a0, 0123456789a1, 0123456789a2, 0123456789a3, 0123456789a4, …)"},
			{"session", "session", "agent", "agent:main", nil, nil, ""},
			{"approval", "approval", "ap00", "ap0000000001", nil, nil, ""},
			{"grant", "grant", "gr00", "gr0000000001", nil, nil, ""},
			{"wrong entity", "approval", "abcd", "", core.ErrNotFound, nil, "approval"},
			{"unknown entity", "widget", "abcd", "", core.ErrInvalid, nil, "widget"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := resolve(c.entity, c.prefix)
				if c.wantErr == nil {
					if r.err != nil || r.id != c.want {
						t.Fatalf("ResolveID(%s, %q) = %q, %v; want %q", c.entity, c.prefix, r.id, r.err, c.want)
					}
					return
				}
				if !errors.Is(r.err, c.wantErr) {
					t.Fatalf("ResolveID(%s, %q) err = %v, want %v", c.entity, c.prefix, r.err, c.wantErr)
				}
				if c.wantMatches != nil && !reflect.DeepEqual(r.matches, c.wantMatches) {
					t.Errorf("matches = %v, want %v", r.matches, c.wantMatches)
				}
				if c.wantErr == core.ErrAmbiguous && r.count < len(c.wantMatches) {
					t.Errorf("count = %d, want at least %d", r.count, len(c.wantMatches))
				}
				if !strings.Contains(r.err.Error(), c.msg) {
					t.Errorf("message %q should contain %q", r.err.Error(), c.msg)
				}
			})
		}
	})
}

func TestSuccessor(t *testing.T) {
	for in, want := range map[string]string{"abcd": "abce", "ab\xff": "ac", "a\xff\xff": "b"} {
		if got, ok := successor(in); !ok || got != want {
			t.Errorf("successor(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := successor("\xff\xff"); ok {
		t.Error("successor of all-0xff should have no upper bound")
	}
}

// TestQueryPlansUseIndexes guards the partial-index predicates: a WHERE clause
// that stops matching its index silently degrades to a table scan.
func TestQueryPlansUseIndexes(t *testing.T) {
	db := openTest(t)
	cases := map[string]struct {
		q    string
		args []any
	}{
		"tasks_run_id":              {"SELECT id FROM tasks WHERE run_id = ? UNION SELECT id FROM tasks WHERE source_id = ? AND runtime = 'cli'", []any{"r", "r"}},
		"tasks_source_id":           {"SELECT id FROM tasks WHERE run_id = ? UNION SELECT id FROM tasks WHERE source_id = ? AND runtime = 'cli'", []any{"r", "r"}},
		"sqlite_autoindex_tasks_1":  {"SELECT id FROM tasks WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", []any{"abcd", "abce"}},
		"sqlite_autoindex_runs_1":   {"SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id LIMIT 6", []any{"abcd", "abce"}},
		"notifications_undelivered": {"SELECT id FROM notifications WHERE delivered_at IS NULL ORDER BY id", nil},
		"events_entity":             {"SELECT id FROM events WHERE entity = ? AND entity_id = ? ORDER BY id", []any{"task", "x"}},
	}
	for index, c := range cases {
		rows, err := db.read.Query("EXPLAIN QUERY PLAN "+c.q, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "\n"), index) {
			t.Errorf("%s: plan does not use %s:\n%s", c.q, index, strings.Join(plan, "\n"))
		}
	}
}

func TestListFiltersAndOrder(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		task := func(id string, rt core.Runtime, st core.TaskStatus, created core.Timestamp, runID, sourceID, owner, child string) *core.Task {
			return &core.Task{ID: id, Runtime: rt, Status: st, DeliveryStatus: core.DeliveryPending,
				NotifyPolicy: core.NotifyDoneOnly, CreatedAt: created, RunID: runID, SourceID: sourceID,
				OwnerSession: owner, ChildSession: child}
		}
		update(t, db, func(tx core.Tx) error {
			return errors.Join(
				tx.InsertTask(task("t1", core.RuntimeSubagent, core.TaskRunning, 10, "r1", "", "own", "kid")),
				tx.InsertTask(task("t2", core.RuntimeCLI, core.TaskQueued, 20, "", "r1", "own", "")),
				tx.InsertTask(task("t3", core.RuntimeCron, core.TaskSucceeded, 30, "", "r1", "", "")), // not cli: not mirrored
				tx.InsertTask(task("t4", core.RuntimeCLI, core.TaskFailed, 40, "r1", "r1", "other", "")),
				tx.InsertTask(task("t5", core.RuntimeACP, core.TaskLost, 50, "r2", "", "", "own")),

				tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1}),
				tx.InsertSession(&core.Session{ID: "s2", State: core.SessionClosed, CreatedAt: 2}),
				tx.InsertSession(&core.Session{ID: "s3", State: core.SessionActive, CreatedAt: 3}),

				tx.InsertRun(&core.Run{RunID: "r1", ChildSession: "kid", RequesterSession: "own", StartedAt: 1, LastProgressAt: 1, InactivityBudgetMs: 1}),
				tx.InsertRun(&core.Run{RunID: "r2", ChildSession: "x", RequesterSession: "y", StartedAt: 2, LastProgressAt: 1, InactivityBudgetMs: 1, EndedAt: 5, Outcome: core.OutcomeOK}),
				tx.InsertRun(&core.Run{RunID: "r3", ChildSession: "own", StartedAt: 3, LastProgressAt: 1, InactivityBudgetMs: 1}),

				tx.InsertApproval(&core.Approval{ID: "a1", Session: "s1", RunID: "r1", Tool: "t", Command: "c", Status: core.ApprovalPending, RequestedAt: 1}),
				tx.InsertApproval(&core.Approval{ID: "a2", Session: "s1", Tool: "t", Command: "c", Status: core.ApprovalDenied, RequestedAt: 2}),
				tx.InsertApproval(&core.Approval{ID: "a3", Session: "s2", RunID: "r1", Tool: "t", Command: "c", Status: core.ApprovalPending, RequestedAt: 3}),

				tx.InsertJob(&core.Job{ID: "j1", Session: "s1", Status: core.JobRunning, CreatedAt: 1}),
				tx.InsertJob(&core.Job{ID: "j2", Session: "s2", Status: core.JobCompleted, CreatedAt: 2}),
				tx.InsertJob(&core.Job{ID: "j3", Session: "s1", Status: core.JobPending, CreatedAt: 3}),
			)
		})
		ids := func(get func(core.Tx) ([]string, error)) []string {
			var out []string
			view(t, db, func(tx core.Tx) (err error) { out, err = get(tx); return })
			return out
		}
		taskIDs := func(f core.TaskFilter) []string {
			return ids(func(tx core.Tx) ([]string, error) {
				ts, err := tx.ListTasks(f)
				var out []string
				for _, k := range ts {
					out = append(out, k.ID)
				}
				return out, err
			})
		}
		check := func(name string, got []string, want ...string) {
			t.Helper()
			if len(got) == 0 && len(want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		check("all tasks", taskIDs(core.TaskFilter{}), "t5", "t4", "t3", "t2", "t1")
		check("limit", taskIDs(core.TaskFilter{Limit: 2}), "t5", "t4")
		check("statuses", taskIDs(core.TaskFilter{Statuses: []core.TaskStatus{core.TaskQueued, core.TaskRunning}}), "t2", "t1")
		check("runtime", taskIDs(core.TaskFilter{Runtime: core.RuntimeCLI}), "t4", "t2")
		check("session", taskIDs(core.TaskFilter{Session: "own"}), "t5", "t2", "t1")
		check("run", taskIDs(core.TaskFilter{RunID: "r1"}), "t4", "t1")
		check("combined", taskIDs(core.TaskFilter{Session: "own", Runtime: core.RuntimeCLI}), "t2")
		check("none", taskIDs(core.TaskFilter{RunID: "nope"}))

		check("mirrored r1", ids(func(tx core.Tx) ([]string, error) {
			ts, err := tx.MirroredTasks("r1")
			var out []string
			for _, k := range ts {
				out = append(out, k.ID)
			}
			return out, err
		}), "t1", "t2", "t4")

		check("sessions", ids(func(tx core.Tx) ([]string, error) {
			ss, err := tx.ListSessions(core.SessionFilter{States: []core.SessionState{core.SessionActive}})
			var out []string
			for _, s := range ss {
				out = append(out, s.ID)
			}
			return out, err
		}), "s3", "s1")

		runIDs := func(f core.RunFilter) []string {
			return ids(func(tx core.Tx) ([]string, error) {
				rs, err := tx.ListRuns(f)
				var out []string
				for _, r := range rs {
					out = append(out, r.RunID)
				}
				return out, err
			})
		}
		check("runs", runIDs(core.RunFilter{}), "r3", "r2", "r1")
		check("running runs", runIDs(core.RunFilter{RunningOnly: true}), "r3", "r1")
		check("runs by session", runIDs(core.RunFilter{Session: "own"}), "r3", "r1")
		check("runs limit", runIDs(core.RunFilter{Limit: 1}), "r3")

		approvalIDs := func(f core.ApprovalFilter) []string {
			return ids(func(tx core.Tx) ([]string, error) {
				as, err := tx.ListApprovals(f)
				var out []string
				for _, a := range as {
					out = append(out, a.ID)
				}
				return out, err
			})
		}
		check("approvals", approvalIDs(core.ApprovalFilter{}), "a3", "a2", "a1")
		check("pending approvals", approvalIDs(core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalPending}}), "a3", "a1")
		check("approvals by session", approvalIDs(core.ApprovalFilter{Session: "s1"}), "a2", "a1")
		check("approvals by run", approvalIDs(core.ApprovalFilter{RunID: "r1", Session: "s2"}), "a3")

		jobIDs := func(f core.JobFilter) []string {
			return ids(func(tx core.Tx) ([]string, error) {
				js, err := tx.ListJobs(f)
				var out []string
				for _, j := range js {
					out = append(out, j.ID)
				}
				return out, err
			})
		}
		check("jobs", jobIDs(core.JobFilter{}), "j3", "j2", "j1")
		check("active jobs of s1", jobIDs(core.JobFilter{Session: "s1", Statuses: []core.JobStatus{core.JobPending, core.JobRunning}}), "j3", "j1")
		check("jobs limit", jobIDs(core.JobFilter{Limit: 2}), "j3", "j2")
	})
}

func TestNotifications(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		n1 := &core.Notification{Session: "s1", Kind: core.NotifyJobFinished, SubjectID: "j1", Text: "job j1 finished",
			DedupKey: "job_finished:j1", CreatedAt: 100, CleanupAfter: 900}
		var inserted bool
		update(t, db, func(tx core.Tx) (err error) { inserted, err = tx.InsertNotification(n1); return })
		if !inserted || n1.ID == 0 {
			t.Fatalf("first insert: inserted=%v id=%d", inserted, n1.ID)
		}
		dup := &core.Notification{Session: "s1", Kind: core.NotifyJobFinished, SubjectID: "j1", Text: "again",
			DedupKey: "job_finished:j1", CreatedAt: 200}
		update(t, db, func(tx core.Tx) (err error) { inserted, err = tx.InsertNotification(dup); return })
		if inserted || dup.ID != 0 {
			t.Errorf("duplicate insert: inserted=%v id=%d, want false and 0", inserted, dup.ID)
		}
		n2 := &core.Notification{Session: "s2", Kind: core.NotifyTaskFailed, SubjectID: "t1", Text: "task failed",
			DedupKey: "task_failed:t1", CreatedAt: 300}
		n3 := &core.Notification{Session: "s1", Kind: core.NotifyApprovalExpired, SubjectID: "a1", Text: "expired",
			DedupKey: "approval_expired:a1", CreatedAt: 400}
		update(t, db, func(tx core.Tx) error {
			for _, n := range []*core.Notification{n2, n3} {
				if ok, err := tx.InsertNotification(n); err != nil || !ok {
					return errors.Join(err, errors.New("not inserted"))
				}
			}
			return nil
		})
		if err := db.Update(context.Background(), func(tx core.Tx) error {
			_, err := tx.InsertNotification(&core.Notification{Kind: core.NotifyJobLost, Text: "x", CreatedAt: 1})
			return err
		}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("empty dedup key: err = %v, want ErrInvalid", err)
		}

		list := func(f core.NotificationFilter) []core.Notification {
			var out []core.Notification
			view(t, db, func(tx core.Tx) (err error) { out, err = tx.ListNotifications(f); return })
			return out
		}
		all := list(core.NotificationFilter{})
		if len(all) != 3 || !reflect.DeepEqual(all[0], *n1) || all[1].ID != n2.ID || all[2].ID != n3.ID {
			t.Fatalf("ListNotifications = %+v, want n1 (unchanged), n2, n3 oldest first", all)
		}
		if got := list(core.NotificationFilter{Session: "s1"}); len(got) != 2 || got[1].ID != n3.ID {
			t.Errorf("by session: %+v", got)
		}
		if got := list(core.NotificationFilter{AfterID: n1.ID, Limit: 1}); len(got) != 1 || got[0].ID != n2.ID {
			t.Errorf("after id, limit 1: %+v", got)
		}

		mark := func(id int64, at core.Timestamp) (bool, error) {
			var ok bool
			err := db.Update(context.Background(), func(tx core.Tx) (err error) { ok, err = tx.MarkNotificationDelivered(id, at); return })
			return ok, err
		}
		if ok, err := mark(n1.ID, 500); !ok || err != nil {
			t.Errorf("first mark: %v, %v", ok, err)
		}
		if ok, err := mark(n1.ID, 600); ok || err != nil {
			t.Errorf("second mark: %v, %v; want false, nil", ok, err)
		}
		if _, err := mark(9999, 600); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("mark unknown: err = %v, want ErrNotFound", err)
		}
		und := list(core.NotificationFilter{UndeliveredOnly: true})
		if len(und) != 2 || und[0].ID != n2.ID {
			t.Errorf("undelivered = %+v, want n2, n3", und)
		}
		if got := list(core.NotificationFilter{Session: "s1"}); got[0].DeliveredAt != 500 {
			t.Errorf("delivered_at = %d, want 500 (the first mark wins)", got[0].DeliveredAt)
		}
	})
}

func TestEvents(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		evs := []core.Event{
			{At: 1, Entity: core.EntityTask, EntityID: "t1", From: "", To: "queued", Actor: core.ActorRuntime, Applied: true},
			{At: 2, Entity: core.EntityTask, EntityID: "t2", From: "", To: "queued", Actor: "me@host", Applied: true},
			{At: 3, Entity: core.EntityTask, EntityID: "t1", From: "succeeded", To: "failed", Actor: core.ActorSweeper,
				Reason: "no downgrade", Applied: false},
			{At: 4, Entity: core.EntityRun, EntityID: "t1", To: "ok", Actor: core.ActorWatchdog, Applied: true},
		}
		update(t, db, func(tx core.Tx) error {
			for _, e := range evs {
				if err := tx.AppendEvent(e); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, db, func(tx core.Tx) error {
			got, err := tx.Events(core.EntityTask, "t1")
			if err != nil {
				return err
			}
			if len(got) != 2 {
				t.Fatalf("Events(task, t1) = %+v", got)
			}
			for i, want := range []core.Event{evs[0], evs[2]} {
				want.ID = got[i].ID
				if got[i] != want || got[i].ID == 0 {
					t.Errorf("event %d = %+v, want %+v", i, got[i], want)
				}
			}
			all, err := tx.EventsSince(0, 0)
			if err != nil {
				return err
			}
			if len(all) != 4 {
				t.Fatalf("EventsSince(0, 0) = %d rows, want 4", len(all))
			}
			some, err := tx.EventsSince(all[1].ID, 1)
			if err != nil {
				return err
			}
			if len(some) != 1 || some[0].ID != all[2].ID {
				t.Errorf("EventsSince(%d, 1) = %+v, want event %d", all[1].ID, some, all[2].ID)
			}
			none, err := tx.EventsSince(all[3].ID, 0)
			if len(none) != 0 {
				t.Errorf("EventsSince(last) = %+v, want none", none)
			}
			return err
		})
	})
}

// A prefix whose byte successor is not UTF-8 ("¿" ends in 0xBF): both
// stores still resolve it, and only ids that start with it match.
func TestResolveIDNonASCIIPrefix(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		update(t, db, func(tx core.Tx) error {
			for _, id := range []string{"ses¿1", "ses¿2", "ses¿x", "sesÀ1", "ses\u007f1"} {
				if err := tx.InsertSession(&core.Session{ID: id, State: core.SessionActive, CreatedAt: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, db, func(tx core.Tx) error {
			_, err := tx.ResolveID(core.EntitySession, "ses¿")
			var amb *core.AmbiguousError
			if !errors.As(err, &amb) || amb.Count != 3 {
				t.Errorf("ResolveID(ses¿) = %v, want ambiguous among 3", err)
			}
			if id, err := tx.ResolveID(core.EntitySession, "ses¿x"); err != nil || id != "ses¿x" {
				t.Errorf("ResolveID(ses¿x) = %q, %v", id, err)
			}
			if id, err := tx.ResolveID(core.EntitySession, "ses\u007f"); err != nil || id != "ses\u007f1" {
				t.Errorf("ResolveID(ses\\x7f) = %q, %v", id, err)
			}
			return nil
		})
	})
}
