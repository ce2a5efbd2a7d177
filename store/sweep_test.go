package store

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// sweepPopulate fills db with a registry shaped like a long-lived one: a large
// terminal history (tasks, ended runs, decided approvals, delivered
// notifications, finished jobs, journal rows) and a small active set, so the
// planner has a real choice between indexes and a scan.
func sweepPopulate(t *testing.T, db *DB) {
	t.Helper()
	stmts := []string{
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
		 INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, run_id, source_id, owner_session,
		   expects_output, output_count, created_at, started_at, last_event_at, ended_at, cleanup_after, activity_at)
		 SELECT printf('t%06d', i), CASE i % 4 WHEN 0 THEN 'cli' WHEN 1 THEN 'cron' ELSE 'subagent' END,
		   CASE i % 5 WHEN 0 THEN 'failed' WHEN 1 THEN 'lost' ELSE 'succeeded' END,
		   CASE i % 50 WHEN 0 THEN 'failed' ELSE 'delivered' END, 'done_only',
		   printf('r%06d', i % 5000), printf('r%06d', i % 5000), printf('s%04d', i % 500),
		   i % 2, i % 3, 1000 + i, 1100 + i, 1200 + i, 1300 + i,
		   CASE WHEN i % 100 = 0 THEN NULL ELSE 9000000 + i END, 1200 + i FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
		 INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, run_id, owner_session, child_session,
		   created_at, started_at, activity_at)
		 SELECT printf('a%06d', i), 'subagent', CASE i % 2 WHEN 0 THEN 'queued' ELSE 'running' END, 'pending', 'done_only',
		   printf('r%06d', 5000 + i), printf('s%04d', i), printf('c%04d', i), 500000 + i, 500100 + i, 500100 + i FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5200)
		 INSERT INTO runs (run_id, child_session, requester_session, started_at, last_progress_at, inactivity_budget_ms,
		   ended_at, outcome, cleanup_after)
		 SELECT printf('r%06d', i), printf('c%04d', i % 500), printf('s%04d', i % 500), 1000 + i, 1000 + i, 60000,
		   CASE WHEN i > 5000 THEN NULL ELSE 2000 + i END, CASE WHEN i > 5000 THEN '' ELSE 'ok' END,
		   CASE WHEN i > 5000 OR i % 100 = 0 THEN NULL ELSE 9000000 + i END FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
		 INSERT INTO sessions (id, state, created_at) SELECT printf('s%04d', i), CASE i % 3 WHEN 0 THEN 'closed' ELSE 'active' END, 1 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8000)
		 INSERT INTO approvals (id, session, run_id, tool, command, status, requested_at, decided_at, expires_at, cleanup_after)
		 SELECT printf('p%06d', i), printf('s%04d', i % 500), printf('r%06d', i % 5200), 'Bash', 'ls',
		   CASE WHEN i > 7950 THEN 'pending' ELSE 'approved' END, 1000 + i,
		   CASE WHEN i > 7950 THEN NULL ELSE 1100 + i END, CASE WHEN i % 7 = 0 THEN 5000 + i ELSE NULL END,
		   CASE WHEN i > 7950 THEN NULL ELSE 9000000 + i END FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
		 INSERT INTO jobs (id, session, command, status, created_at, started_at, completed_at, log_path, cleanup_after)
		 SELECT printf('j%011d', i), printf('s%04d', i % 500), '["true"]',
		   CASE WHEN i > 5980 THEN 'running' ELSE 'completed' END, 1000 + i, 1001 + i,
		   CASE WHEN i > 5980 THEN NULL ELSE 1002 + i END, '/tmp/jobs/x/output.log',
		   CASE WHEN i > 5980 THEN NULL ELSE 9000000 + i END FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
		 INSERT INTO notifications (session, kind, subject_id, text, dedup_key, created_at, delivered_at, cleanup_after)
		 SELECT printf('s%04d', i % 500), 'task_failed', printf('t%06d', i), 'x', printf('task_failed:t%06d', i), 1000 + i,
		   CASE WHEN i > 9900 THEN NULL ELSE 1100 + i END, CASE WHEN i > 9900 THEN NULL ELSE 9000000 + i END FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
		 INSERT INTO events (at, entity, entity_id, from_state, to_state, actor, reason, applied)
		 SELECT 1000 + i, 'task', printf('t%06d', i % 20000), 'running', 'succeeded', 'runtime', '', 1 FROM n`,
	}
	for _, q := range stmts {
		if _, err := db.write.Exec(q); err != nil {
			t.Fatalf("populate: %v\n%s", err, q)
		}
	}
}

// smallIndexes are the partial indexes whose rows are the active or due set
// by construction: scanning one is fine, it does not grow with history.
var smallIndexes = map[string]bool{
	"tasks_active": true, "tasks_delivery_failed": true, "tasks_unstamped": true, "tasks_silent": true,
	"tasks_inconsistent": true, "runs_running": true, "runs_unstamped": true, "runs_inconsistent": true,
	"approvals_pending_expiry": true, "approvals_pending_run": true, "approvals_unstamped": true,
	"approvals_inconsistent": true, "approvals_pending": true, "jobs_active": true, "jobs_unstamped": true, "jobs_inconsistent": true,
	"notifications_undelivered": true, "notifications_unstamped": true,
}

// historyIndexes span the whole history of a table: a search through one
// (say tasks_status_created for status = 'succeeded') grows with history even
// though EXPLAIN calls it SEARCH.
var historyIndexes = map[string]bool{
	"tasks_status_created": true, "tasks_owner_session": true, "tasks_child_session": true,
	"runs_started": true, "runs_ended": true, "runs_child_session": true, "approvals_requested": true,
	"approvals_session": true, "jobs_created": true, "jobs_session": true,
}

var (
	scanRE   = regexp.MustCompile(`^SCAN (\S+)(?: USING (?:COVERING )?INDEX (\S+))?`)
	searchRE = regexp.MustCompile(`^SEARCH (\S+) USING (?:COVERING )?INDEX (\S+)`)
	// argsRE is a scan of the statement's own argument list (the VALUES
	// rows of a batched write, or the "args" CTE naming them): its size is
	// the batch, not the history.
	argsRE = regexp.MustCompile(`^SCAN (?:\d+ CONSTANT ROWS|\d+-ROW VALUES CLAUSE|args)$`)
)

// TestSweepQueriesUseIndexes runs EXPLAIN QUERY PLAN on every sweep statement
// over a populated registry, before and after ANALYZE, and fails on any scan
// of a table (or of an index that grows with history): docs/contract.md "Maintenance" "every rule
// reads through an index".
func TestSweepQueriesUseIndexes(t *testing.T) {
	db := openTest(t)
	sweepPopulate(t, db)
	stmts := sweepStatements()
	names := make([]string, 0, len(stmts))
	for n := range stmts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := db.write.Exec("ANALYZE"); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			q := stmts[name]
			// Realistic values: the planner may use them (a LIMIT, say).
			args := make([]any, strings.Count(q, "?"))
			for i := range args {
				args[i] = time.Now().UnixMilli()
			}
			if strings.HasSuffix(strings.TrimSpace(q), "LIMIT ?") {
				args[len(args)-1] = int64(20000)
			}
			rows, err := db.write.Query("EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, q)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			t.Logf("analyzed=%v %s:\n  %s", analyzed, name, strings.Join(plan, "\n  "))
			for _, d := range plan {
				if m := searchRE.FindStringSubmatch(d); m != nil && historyIndexes[m[2]] {
					t.Errorf("analyzed=%v %s: %q searches a history-wide index\n%s", analyzed, name, d, q)
				}
				m := scanRE.FindStringSubmatch(d)
				if m == nil || argsRE.MatchString(d) {
					continue
				}
				if m[2] == "" || !smallIndexes[m[2]] {
					t.Errorf("analyzed=%v %s: %q scans history (want SEARCH, or a scan of an active/due partial index)\n%s",
						analyzed, name, d, q)
				}
			}
		}
	}
}

// TestSweepStampAndPruneAreConditional checks the write side: a stamp or prune
// applies only at the planned revision and only when due, and a prune deletes
// the row's journal.
func TestSweepStampAndPruneAreConditional(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		ctx := context.Background()
		k := &core.Task{ID: "task-1", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded,
			DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 10, EndedAt: 20}
		update(t, db, func(tx core.Tx) error {
			if err := tx.InsertTask(k); err != nil {
				return err
			}
			return tx.AppendEvent(core.Event{At: 20, Entity: core.EntityTask, EntityID: k.ID, To: "succeeded", Actor: core.ActorRuntime, Applied: true})
		})
		prune1 := func(s core.Tx, entity, id string, rev int64, now core.Timestamp) (bool, error) {
			ok, err := s.SweepPrune(entity, []core.RowKey{{ID: id, Rev: rev}}, now)
			if err != nil {
				return false, err
			}
			return ok[0], nil
		}
		sweepWrite := func(fn func(core.Tx) (bool, error)) bool {
			t.Helper()
			var ok bool
			if err := db.Update(ctx, func(tx core.Tx) (err error) {
				ok, err = fn(tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok
		}
		var rows []core.RetentionRow
		view(t, db, func(tx core.Tx) (err error) {
			rows, err = tx.SweepUnstamped(core.EntityTask, 0)
			return err
		})
		if len(rows) != 1 || rows[0].ID != k.ID || rows[0].EndAt != 20 || rows[0].Rev != 1 {
			t.Fatalf("unstamped = %+v", rows)
		}
		if sweepWrite(func(s core.Tx) (bool, error) { return s.SweepStamp(core.EntityTask, k.ID, 7, 100) }) {
			t.Fatal("stamp at a stale revision applied")
		}
		if !sweepWrite(func(s core.Tx) (bool, error) { return s.SweepStamp(core.EntityTask, k.ID, 1, 100) }) {
			t.Fatal("stamp at the current revision did not apply")
		}
		if sweepWrite(func(s core.Tx) (bool, error) { return s.SweepStamp(core.EntityTask, k.ID, 2, 200) }) {
			t.Fatal("second stamp applied over an existing cleanup_after")
		}
		if sweepWrite(func(s core.Tx) (bool, error) { return prune1(s, core.EntityTask, k.ID, 2, 99) }) {
			t.Fatal("prune before cleanup_after applied")
		}
		if !sweepWrite(func(s core.Tx) (bool, error) { return prune1(s, core.EntityTask, k.ID, 2, 100) }) {
			t.Fatal("due prune did not apply")
		}
		view(t, db, func(tx core.Tx) error {
			if _, err := tx.GetTask(k.ID); err == nil {
				t.Error("pruned task still present")
			}
			evs, err := tx.Events(core.EntityTask, k.ID)
			if len(evs) != 0 {
				t.Errorf("pruned task still has %d journal rows", len(evs))
			}
			return err
		})
		// Notifications have no revision; their id is an integer.
		n := &core.Notification{Kind: core.NotifyTaskSilent, Text: "x", DedupKey: "k", CreatedAt: 1, DeliveredAt: 5}
		update(t, db, func(tx core.Tx) error { _, err := tx.InsertNotification(n); return err })
		id := strconv.FormatInt(n.ID, 10)
		if !sweepWrite(func(s core.Tx) (bool, error) { return s.SweepStamp(core.EntityNotification, id, 0, 50) }) {
			t.Fatal("notification stamp did not apply")
		}
		if !sweepWrite(func(s core.Tx) (bool, error) { return prune1(s, core.EntityNotification, id, 0, 60) }) {
			t.Fatal("notification prune did not apply")
		}
		// Read-only transactions refuse sweep writes.
		err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.SweepStamp(core.EntityTask, "x", 1, 1)
			return err
		})
		if err == nil {
			t.Error("SweepStamp inside View succeeded")
		}
	})
}

// TestSweepBatchedWrites checks the batched sweep writes row by row: each
// mark or prune applies only at its row's revision and condition, the
// result says which did (in the order asked), and a batch larger than one
// statement takes is split without losing rows.
func TestSweepBatchedWrites(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		const n = 1203 // more than two statements' worth
		update(t, db, func(tx core.Tx) error {
			for i := range n {
				st := core.TaskQueued
				if i%3 == 2 {
					st = core.TaskSucceeded // finished: never marked lost
				}
				k := &core.Task{ID: fmt.Sprintf("t-%04d", i), Runtime: core.RuntimeCLI, Status: st,
					DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 10}
				if err := tx.InsertTask(k); err != nil {
					return err
				}
			}
			return nil
		})
		var marks []core.LostMark
		for i := range n {
			rev := int64(1)
			if i%3 == 1 {
				rev = 9 // stale revision: raced
			}
			marks = append(marks, core.LostMark{ID: fmt.Sprintf("t-%04d", i), Rev: rev, Reason: "gone", EndedAt: 50, CleanupAfter: 100})
		}
		marks = append(marks, core.LostMark{ID: "missing", Rev: 1, EndedAt: 50, CleanupAfter: 100})
		var ok []bool
		update(t, db, func(tx core.Tx) (err error) {
			ok, err = tx.SweepMarkLost(marks)
			return err
		})
		if len(ok) != len(marks) {
			t.Fatalf("got %d results for %d marks", len(ok), len(marks))
		}
		for i, m := range marks {
			if want := i < n && i%3 == 0; ok[i] != want {
				t.Fatalf("mark %s: applied=%v, want %v", m.ID, ok[i], want)
			}
		}
		view(t, db, func(tx core.Tx) error {
			k, err := tx.GetTask("t-0000")
			if err != nil {
				return err
			}
			if k.Status != core.TaskLost || k.Error != "gone" || k.EndedAt != 50 || k.CleanupAfter != 100 || k.Rev != 2 {
				t.Errorf("marked task = %+v", k)
			}
			if k, err = tx.GetTask("t-0001"); err != nil || k.Status != core.TaskQueued || k.Rev != 1 {
				t.Errorf("raced task changed: %+v, %v", k, err)
			}
			return nil
		})
		// Prune: the lost rows at their new revision are due at 100.
		var keys []core.RowKey
		for i := range n {
			if i%3 == 0 {
				rev := int64(2)
				if i%2 == 0 {
					rev = 1 // stale
				}
				keys = append(keys, core.RowKey{ID: fmt.Sprintf("t-%04d", i), Rev: rev})
			}
		}
		update(t, db, func(tx core.Tx) (err error) {
			for _, k := range keys {
				if err := tx.AppendEvent(core.Event{At: 60, Entity: core.EntityTask, EntityID: k.ID, To: "lost", Actor: core.ActorSweeper, Applied: true}); err != nil {
					return err
				}
			}
			if ok, err = tx.SweepPrune(core.EntityTask, keys, 99); err != nil {
				return err
			}
			for i, k := range keys {
				if ok[i] {
					t.Errorf("%s pruned before its cleanup_after", k.ID)
				}
			}
			ok, err = tx.SweepPrune(core.EntityTask, keys, 100)
			return err
		})
		view(t, db, func(tx core.Tx) error {
			for i, k := range keys {
				want := k.Rev == 2
				_, err := tx.GetTask(k.ID)
				evs, _ := tx.Events(core.EntityTask, k.ID)
				if ok[i] != want || (err == nil) == want || (len(evs) == 0) != want {
					t.Fatalf("prune %s rev %d: applied=%v, present=%v, %d journal rows", k.ID, k.Rev, ok[i], err == nil, len(evs))
				}
			}
			return nil
		})
	})
}
