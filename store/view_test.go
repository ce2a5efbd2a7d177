package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/storetest"
	views "github.com/clawpit/clawpit/view" // package view (the tests hold a helper named view)
)

// TestMigrationsRankAsTheView: migration 0007's generated columns, read
// back from real rows on each engine, hold the view's values: a task, a
// job and an approval in every status, a run in every state the console
// shows, a notification read and unread. Equal values are equal orders:
// a window's urgency sort is the pane's.
func TestMigrationsRankAsTheView(t *testing.T) { storetest.Each(t, testMigrationsRankAsTheView) }

func testMigrationsRankAsTheView(t *testing.T) {
	db := openTest(t)
	tasks, runs, jobs, approvals := map[string]*core.Task{}, map[string]*core.Run{}, map[string]*core.Job{}, map[string]*core.Approval{}
	alerts := map[string]*core.Notification{}
	update(t, db, func(tx core.Tx) error {
		for i, st := range core.TaskStatuses {
			k := &core.Task{ID: "t-" + string(st), Runtime: core.RuntimeCLI, Status: st, DeliveryStatus: core.DeliveryPending,
				NotifyPolicy: core.NotifyDoneOnly, Task: "do x", CreatedAt: core.Timestamp(100 + i),
				LastEventAt: core.Timestamp(300 - 7*i)}
			switch i % 3 { // each source of the name
			case 0:
				k.Label = "label " + string(st)
			case 1:
				k.Kind = "kind " + string(st)
			}
			if !st.Active() {
				k.EndedAt = core.Timestamp(200 + 11*i) // before the last event for some, after for others
			}
			tasks[k.ID] = k
			if err := tx.InsertTask(k); err != nil {
				return err
			}
		}
		runStates := []struct {
			waits   int64
			ended   bool
			outcome core.RunOutcome
		}{{1, false, ""}, {0, false, ""}, {0, true, ""}}
		for _, o := range core.RunOutcomes {
			runStates = append(runStates, struct {
				waits   int64
				ended   bool
				outcome core.RunOutcome
			}{0, true, o})
		}
		for i, s := range runStates {
			r := &core.Run{RunID: fmt.Sprint("r-", i), ChildSession: "c", RequesterSession: "s", Label: "sub",
				StartedAt: core.Timestamp(100 + i), PendingApprovalWaits: s.waits, InactivityBudgetMs: 60000, Outcome: s.outcome}
			if i%2 == 0 {
				r.LastProgressAt = core.Timestamp(150 + i)
			}
			if s.ended {
				r.EndedAt = core.Timestamp(400 - i)
			}
			runs[r.RunID] = r
			if err := tx.InsertRun(r); err != nil {
				return err
			}
		}
		// Programs by path, by name, with escapes in JSON, none.
		commands := [][]string{{"make"}, {"/usr/bin/make", "test"}, {"./run.sh", "a/b"}, {"dir/"}, nil,
			{`we"ird/na\me`, "x"}, {"/opt/<a&b>/é", "ü"}, {"", "x"}}
		for i, st := range core.JobStatuses {
			j := &core.Job{ID: "j-" + string(st), Session: "s", Command: commands[i%len(commands)], Status: st, CreatedAt: core.Timestamp(100 + i)}
			jobs[j.ID] = j
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		for i, st := range core.ApprovalStatuses {
			a := &core.Approval{ID: "a-" + string(st), Session: "s", Tool: "Bash", Command: "make", Status: st,
				RequestedAt: core.Timestamp(100 + i)}
			approvals[a.ID] = a
			if err := tx.InsertApproval(a); err != nil {
				return err
			}
		}
		for i := range 2 {
			n := &core.Notification{Kind: core.NotifyTaskFailed, Text: "x", DedupKey: fmt.Sprint("d", i), CreatedAt: core.Timestamp(100 + i)}
			if i == 1 {
				n.DeliveredAt = 500
			}
			if _, err := tx.InsertNotification(n); err != nil {
				return err
			}
			alerts[n.DedupKey] = n
		}
		return nil
	})
	type gen struct {
		urgency, last int64
		name          string
	}
	read := func(q string) map[string]gen {
		t.Helper()
		rows, err := db.read.Query(db.dialectSQL(q))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		out := map[string]gen{}
		for rows.Next() {
			var id string
			var g gen
			if err := rows.Scan(&id, &g.urgency, &g.last, &g.name); err != nil {
				t.Fatal(err)
			}
			out[id] = g
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(what, id string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s of %s: the migration has %v, the view %v", what, id, got, want)
		}
	}
	all := func(table string, got map[string]gen, want int) map[string]gen {
		t.Helper()
		if len(got) != want {
			t.Fatalf("%s: read %d rows, inserted %d", table, len(got), want)
		}
		return got
	}
	for id, g := range all("tasks", read("SELECT id, win_urgency, win_last, win_name FROM tasks"), len(tasks)) {
		k := tasks[id]
		check("tasks.win_urgency", id, g.urgency, views.TaskUrgency(k.Status))
		check("tasks.win_last", id, g.last, int64(views.TaskLast(k)))
		check("tasks.win_name", id, g.name, views.TaskName(k))
	}
	for id, g := range all("runs", read("SELECT run_id, win_urgency, win_last, '' FROM runs"), len(runs)) {
		r := runs[id]
		check("runs.win_urgency", id+" ("+views.RunState(r)+")", g.urgency, views.RunUrgency(views.RunState(r)))
		check("runs.win_last", id, g.last, int64(views.RunLast(r.EndedAt, r.LastProgressAt, r.StartedAt)))
	}
	for id, g := range all("jobs", read("SELECT id, win_urgency, 0, win_program FROM jobs"), len(jobs)) {
		check("jobs.win_urgency", id, g.urgency, views.JobUrgency(jobs[id].Status))
		check("jobs.win_program", id, g.name, views.JobProgram(jobs[id].Command))
	}
	for id, g := range all("approvals", read("SELECT id, win_pending, 0, '' FROM approvals"), len(approvals)) {
		check("approvals.win_pending", id, g.urgency, views.ApprovalUrgency(approvals[id].Status))
	}
	for id, g := range all("notifications", read("SELECT dedup_key, win_unread, 0, '' FROM notifications"), len(alerts)) {
		check("notifications.win_unread", id, g.urgency, views.AlertUrgency(alerts[id].DeliveredAt))
	}
}

// TestPGTaskHayIsTheViews: PostgreSQL's one-text task filter (pgTaskHay)
// joins exactly the view's task fields, in its order, and migrations 0011
// and 0013 index that expression term for term (else the filter reads
// without its indexes).
func TestPGTaskHayIsTheViews(t *testing.T) {
	var parts []string
	for _, f := range views.SQLFields(core.EntityTask) {
		if f == taskName { // as the migrations wrote it: one NULL would void the whole text
			f = "coalesce(" + f + ", '')"
		}
		parts = append(parts, f)
	}
	want := `((` + strings.Join(parts, ` || chr(1) || `) + `) COLLATE "C")`
	if pgTaskHay != want {
		t.Fatalf("pgTaskHay\n%s\nthe view's fields\n%s", pgTaskHay, want)
	}
	for _, m := range []string{"0011_pg_task_filter_trgm.sql", "0013_pg_task_filter_chars.sql"} {
		b, err := os.ReadFile(filepath.Join("postgres", "migrations", m))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("migration %s does not index the view's task fields %s", m, want)
		}
	}
}
