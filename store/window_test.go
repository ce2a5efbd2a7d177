package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/sqlite"
	"github.com/clawpit/clawpit/store/storetest"
)

// idSink records the ids of the rows a window sends.
type idSink struct{ ids []string }

func (s *idSink) Task(t *core.Task)         { s.ids = append(s.ids, t.ID) }
func (s *idSink) Run(r *core.Run)           { s.ids = append(s.ids, r.RunID) }
func (s *idSink) Approval(a *core.Approval) { s.ids = append(s.ids, a.ID) }
func (s *idSink) Job(j *core.Job)           { s.ids = append(s.ids, j.ID) }
func (s *idSink) Alert(n *core.Notification) {
	s.ids = append(s.ids, fmt.Sprint(n.ID))
}

// windowFixture inserts n tasks and n notifications with few distinct sort
// values (many ties), so pages split inside runs of equal keys.
func windowFixture(t testing.TB, n int) *DB {
	t.Helper()
	db := openTest(t)
	r := rand.New(rand.NewPCG(1, 2))
	statuses := []core.TaskStatus{core.TaskRunning, core.TaskQueued, core.TaskLost, core.TaskFailed, core.TaskSucceeded}
	update(t, db, func(tx core.Tx) error {
		for i := range n {
			st := statuses[r.IntN(len(statuses))]
			k := &core.Task{ID: fmt.Sprintf("t%04d", r.IntN(10000)*10+i%10), Runtime: core.RuntimeCLI, Status: st,
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
				Label: []string{"alpha", "beta", "", "gamma"}[r.IntN(4)], Task: "do x",
				CreatedAt: core.Timestamp(1000 + r.IntN(5)), LastEventAt: core.Timestamp(2000 + r.IntN(5))}
			if !st.Active() {
				k.EndedAt = core.Timestamp(1990 + r.IntN(20))
				k.DeliveryStatus = []core.DeliveryStatus{core.DeliveryDelivered, core.DeliveryFailed, core.DeliveryPending}[r.IntN(3)]
			}
			if st == core.TaskFailed {
				k.Error = []string{"exit 1: lint", "killed", "Ünïcode failed"}[r.IntN(3)]
			}
			if err := tx.InsertTask(k); err != nil && !strings.Contains(err.Error(), "exists") {
				return err
			}
			nt := &core.Notification{Kind: core.NotifyTaskFailed, Text: "task failed " + k.Label, DedupKey: fmt.Sprint("d", i),
				CreatedAt: core.Timestamp(1000 + i)}
			if i%3 == 0 {
				nt.DeliveredAt = 5000
			}
			if _, err := tx.InsertNotification(nt); err != nil {
				return err
			}
			if i%2 == 1 {
				continue // half as many runs, approvals and jobs
			}
			run := &core.Run{RunID: fmt.Sprintf("run-%04d", i), ChildSession: "child", RequesterSession: "req",
				Label: []string{"a", "b", ""}[r.IntN(3)], StartedAt: core.Timestamp(1000 + r.IntN(5)),
				LastProgressAt: core.Timestamp(1100 + r.IntN(5)), InactivityBudgetMs: 60000,
				PendingApprovalWaits: int64(r.IntN(2))}
			if r.IntN(2) == 0 {
				run.EndedAt = core.Timestamp(1200 + r.IntN(5))
				run.Outcome = []core.RunOutcome{"ok", "error", "killed", ""}[r.IntN(4)]
			}
			if err := tx.InsertRun(run); err != nil {
				return err
			}
			ap := &core.Approval{ID: fmt.Sprintf("ap%010d", i), Session: "s", Tool: []string{"Bash", "Edit"}[r.IntN(2)],
				Command: "make " + k.Label, Status: []core.ApprovalStatus{core.ApprovalPending, core.ApprovalApproved}[r.IntN(2)],
				RequestedAt: core.Timestamp(1000 + r.IntN(5))}
			if err := tx.InsertApproval(ap); err != nil {
				return err
			}
			j := &core.Job{ID: fmt.Sprintf("%012x", i), Session: "s", Command: []string{"make", []string{"x", "y"}[r.IntN(2)]},
				Status:    []core.JobStatus{core.JobRunning, core.JobCompleted, core.JobLost, core.JobFailed}[r.IntN(4)],
				CreatedAt: core.Timestamp(1000 + r.IntN(5))}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
	return db
}

// allInOrder is every row id in the sort's order, read without a window.
func allInOrder(t testing.TB, db *DB, entity string, sort winSort, filter string) []string {
	t.Helper()
	w, _ := winTableOf(entity)
	q, args := w.selectWindow(db.dialect, sort, core.WindowQuery{Filter: filter}, nil, false, false, 1<<30)
	q = strings.Replace(q, "SELECT "+w.cols, "SELECT "+w.id, 1)
	rows, err := db.read.Query(db.dialectSQL(q), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

// pages reads every window of entity in sort s with filter, forwards
// (windows of 38 rows from the last one's last row) and backwards from the
// end (31 rows before the first row read), and returns both lists of ids.
func pages(t *testing.T, db *DB, entity string, s winSort, filter string) (forward, backward []string) {
	t.Helper()
	ctx := context.Background()
	q := core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, After: 37}
	var got []string
	err := db.View(ctx, func(tx core.Tx) error {
		wt := tx.(core.WindowTx)
		for {
			var sk idSink
			page, err := wt.Window(q, &sk)
			if err != nil {
				return err
			}
			if q.Anchor != "" && len(sk.ids) > 0 {
				sk.ids = sk.ids[1:] // the anchor row was the last one of the previous page
			}
			got = append(got, sk.ids...)
			if !page.MoreAfter {
				return nil
			}
			q.Anchor, q.After = got[len(got)-1], 38
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	err = db.View(ctx, func(tx core.Tx) error {
		wt := tx.(core.WindowTx)
		var sk idSink
		page, err := wt.Window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, After: 29, End: true}, &sk)
		if err != nil {
			return err
		}
		back = sk.ids
		for page.MoreBefore {
			sk = idSink{}
			page, err = wt.Window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, Anchor: back[0], Before: 31}, &sk)
			if err != nil {
				return err
			}
			back = append(sk.ids[:page.Before], back...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, back
}

// TestWindowPagesEverySort pages forwards and backwards through every sort,
// with and without a filter, and gets every row exactly once in order, on
// both stores.
func TestWindowPagesEverySort(t *testing.T) { storetest.Each(t, testWindowPagesEverySort) }

func testWindowPagesEverySort(t *testing.T) {
	db := windowFixture(t, 600)
	ctx := context.Background()
	// The default caps read the task filter's index candidates and small
	// statuses;
	// tiny ones take the common-text and large-status arms; a short look
	// near the anchor with room for candidates tests the order's index
	// against them: within a time budget (the default), without one (sort
	// cap 1), or past it at once (budget 1 ns: the candidates sorted).
	caps := []filterCaps{{}, {index: 3, vocab: 2}, {index: 3, vocab: 2, near: 5, probe: 1000}, {index: 3, vocab: 2, near: 5, probe: 20},
		{index: 3, vocab: 2, near: 5, probe: 1000, sort: 1}, {index: 3, vocab: 2, near: 5, probe: 1000, budget: 1}}
	for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification} {
		w, _ := winTableOf(entity)
		for _, s := range w.sorts {
			for _, fc := range caps {
				db.filterCap = fc
				for _, filter := range []string{"", "ALPHA", "a%", "A", "alp", "lost", "LoSt", "ailed", "t00", "zzz", "z", "ph",
					"un", "ta", "eta", "do x", "clI", "pend", "s", "é", "ü", "Ü", "lint", "deliv", "exit", "ed", "kil"} {
					want := allInOrder(t, db, entity, s, filter)
					if filter == "" && len(want) < 250 {
						t.Fatalf("%s: fixture has %d rows", entity, len(want))
					}
					got, back := pages(t, db, entity, s, filter)
					if !slices.Equal(got, want) {
						t.Fatalf("%s by %s filter %q: paged %d rows, want %d\n got %v\nwant %v", entity, s.name, filter, len(got), len(want), got, want)
					}
					if !slices.Equal(back, want) {
						t.Fatalf("%s by %s filter %q backwards: %d rows, want %d", entity, s.name, filter, len(back), len(want))
					}
					// The count agrees, exact under the limit and capped above it.
					for _, limit := range []int64{-1, 5, 10_000} {
						var n int64
						var capped bool
						if err := db.View(ctx, func(tx core.Tx) error {
							var err error
							n, capped, err = tx.(core.WindowTx).CountWindow(core.WindowQuery{Entity: entity, Filter: filter}, limit)
							return err
						}); err != nil {
							t.Fatal(err)
						}
						want := int64(len(want))
						wantCapped := limit >= 0 && want > limit
						if wantCapped {
							want = limit
						}
						if n != want || capped != wantCapped {
							t.Fatalf("%s filter %q (caps %v) count limit %d: %d capped %v, want %d capped %v",
								entity, filter, fc, limit, n, capped, want, wantCapped)
						}
					}
				}
			}
		}
	}
}

// TestWindowQueriesUseIndexes checks every window and header count reads
// through an index: no full scan, no sort in a temporary b-tree.
func TestWindowQueriesUseIndexes(t *testing.T) {
	db := openTest(t)
	for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification} {
		w, _ := winTableOf(entity)
		for _, s := range w.sorts {
			for _, anchor := range []bool{false, true} {
				var key []any
				if anchor {
					key = make([]any, len(s.keys))
					for i := range key {
						key[i] = 1
					}
				}
				q, args := w.selectWindow(db.dialect, s, core.WindowQuery{}, key, false, true, 10)
				plan := explain(t, db, q, args)
				rowid := entity == core.EntityNotification && s.name == "recent" // the table's own order
				// With an anchor the read must seek to it (SEARCH … (a,b,id)<(?,?,?)), not scan to it.
				if strings.Contains(plan, "TEMP B-TREE") || (!rowid && !strings.Contains(plan, "INDEX")) ||
					(anchor && !strings.HasPrefix(plan, "SEARCH")) {
					t.Errorf("%s by %s (anchor %v): plan\n%s", entity, s.name, anchor, plan)
				}
			}
		}
	}
}

// TestPGWindowQueriesUseIndexes is TestWindowQueriesUseIndexes on
// PostgreSQL: with sequential scans and sorts priced out (the test tables
// are small, where either is cheaper), every window reads an index in the
// sort's order, and with an anchor the (row-value) comparison is the index
// condition (a seek, not a scan to the anchor).
func TestPGWindowQueriesUseIndexes(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set")
	}
	db, err := Open(context.Background(), freshPGSchema(t, base), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification} {
		w, _ := winTableOf(entity)
		for _, s := range w.sorts {
			for _, anchor := range []bool{false, true} {
				var key []any
				if anchor {
					key = make([]any, len(s.keys))
					for i := range key {
						key[i] = int64(1)
						if k := s.keys[i]; k == w.id && entity != core.EntityNotification || k == taskName ||
							k == "label" || k == "tool" || k == "command" || k == "kind" || k == "win_program" {
							key[i] = "1"
						}
					}
				}
				q, args := w.selectWindow(db.dialect, s, core.WindowQuery{}, key, false, true, 10)
				plan := pgExplain(t, db, q, args)
				if strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Sort") || !strings.Contains(plan, "Index") ||
					(anchor && !strings.Contains(plan, "Index Cond: ")) {
					t.Errorf("%s by %s (anchor %v): plan\n%s", entity, s.name, anchor, plan)
				}
			}
		}
	}
	plan := pgExplain(t, db, headerCountsSQL, []any{int64(0)})
	if strings.Contains(plan, "Seq Scan") {
		t.Errorf("header counts scan a table:\n%s", plan)
	}
	// The task filter reads the trigram index (pgmigrations 0011) when the
	// server has pg_trgm: pgTaskHay must be the index's expression.
	var trgm bool
	db.read.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')").Scan(&trgm)
	if !trgm {
		t.Log("pg_trgm is not available on this server: no trigram index to check")
		return
	}
	w, _ := winTableOf(core.EntityTask)
	for _, sort := range w.sorts {
		q, args := w.selectWindow(db.dialect, sort, core.WindowQuery{Filter: "sess-4242"}, nil, false, true, 10)
		plan := pgExplainSet(t, db, "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off", q, args)
		if !strings.Contains(plan, "tasks_filter_trgm") {
			t.Errorf("filter by %s does not read tasks_filter_trgm:\n%s", sort.name, plan)
		}
		// A filter few rows pass: read through the index, then sorted.
		key := make([]any, len(sort.keys))
		for i, k := range sort.keys {
			key[i] = int64(1)
			if k == w.id || k == taskName {
				key[i] = "1"
			}
		}
		q, args = w.selectFew(db.dialect, sort, "sess-4242", key, false, true, 10)
		plan = pgExplainSet(t, db, "SET LOCAL enable_seqscan = off", q, args)
		if !strings.Contains(plan, "tasks_filter_trgm") || !strings.Contains(plan, "CTE Scan on m") {
			t.Errorf("few matches by %s: plan\n%s", sort.name, plan)
		}
		// One or two characters: the characters' index (pgmigrations 0013).
		for _, short := range []string{"z", "Zq"} {
			q, args = w.selectFew(db.dialect, sort, short, key, false, true, 10)
			plan = pgExplainSet(t, db, "SET LOCAL enable_seqscan = off", q, args)
			if !strings.Contains(plan, "tasks_filter_chars") || !strings.Contains(plan, "CTE Scan on m") {
				t.Errorf("few matches of %q by %s: plan\n%s", short, sort.name, plan)
			}
		}
	}
}

// pgExplain is PostgreSQL's plan of q (SQLite dialect) with sequential
// scans and sorts disabled, so a plan still holding one has no index for it.
func pgExplain(t *testing.T, db *DB, q string, args []any) string {
	t.Helper()
	return pgExplainSet(t, db, "SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off", q, args)
}

// pgExplainSet is PostgreSQL's plan of q (SQLite dialect) under the
// planner settings set.
func pgExplainSet(t *testing.T, db *DB, set, q string, args []any) string {
	t.Helper()
	tx, err := db.read.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(set); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query("EXPLAIN "+db.dialectSQL(q), args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHeaderCountsUseIndexes: the header's counts are indexed counts (the
// plan is checked on SQLite, TestPGWindowQueriesUseIndexes checks
// PostgreSQL's) and right on both stores.
func TestHeaderCountsUseIndexes(t *testing.T) { storetest.Each(t, testHeaderCountsUseIndexes) }

func testHeaderCountsUseIndexes(t *testing.T) {
	db := windowFixture(t, 50)
	plan := ""
	if db.dialect == dialectSQLite {
		plan = explain(t, db, strings.Replace(headerCountsSQL, "?1", "0", -1), nil)
	}
	for _, line := range strings.Split(plan, "\n") {
		partial := strings.Contains(line, "approvals_pending") || strings.Contains(line, "runs_running") ||
			strings.Contains(line, "notifications_undelivered") // indexes of the active rows only
		if strings.HasPrefix(line, "SCAN ") && line != "SCAN CONSTANT ROW" && !partial {
			t.Errorf("header counts scan a table: %q in\n%s", line, plan)
		}
	}
	var c core.HeaderCounts
	view(t, db, func(tx core.Tx) error {
		var err error
		c, err = tx.(core.WindowTx).HeaderCounts(1995)
		return err
	})
	var want core.HeaderCounts
	db.read.QueryRow(`SELECT (SELECT COUNT(*) FROM approvals WHERE status = 'pending'),
		(SELECT COUNT(*) FROM runs WHERE ended_at IS NULL), (SELECT COUNT(*) FROM jobs WHERE status IN ('running', 'pending'))`).
		Scan(&want.PendingApprovals, &want.RunningRuns, &want.ActiveJobs)
	db.read.QueryRow(`SELECT (SELECT COUNT(*) FROM tasks WHERE status = 'running'),
		(SELECT COUNT(*) FROM tasks WHERE status = 'failed' AND ended_at >= 1995),
		(SELECT COUNT(*) FROM tasks WHERE status = 'lost' AND ended_at >= 1995),
		(SELECT COUNT(*) FROM notifications WHERE delivered_at IS NULL)`).Scan(&want.RunningTasks, &want.Failed, &want.Lost, &want.Unread)
	if c != want || c.RunningTasks == 0 || c.Failed == 0 || c.Lost == 0 || c.Unread == 0 || c.PendingApprovals == 0 ||
		c.RunningRuns == 0 || c.ActiveJobs == 0 {
		t.Fatalf("HeaderCounts = %+v, want %+v", c, want)
	}
}

func explain(t *testing.T, db *DB, q string, args []any) string {
	t.Helper()
	if db.dialect == dialectPostgres { // CLAWPIT_TEST_STORE=postgres
		t.Skip("SQLite's query plan: TestPGWindowQueriesUseIndexes checks PostgreSQL's")
	}
	rows, err := db.read.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		rows.Scan(&id, &parent, &notused, &detail)
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// TestWindowMigrationAtomic: the window migration (the newest one) runs in
// one transaction. Made to fail on its last statement (an object of the same
// name exists), it leaves the registry at the version before it with none of
// its columns or indexes; once the obstacle is gone the next open runs it
// whole.
func TestWindowMigrationAtomic(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	// The window migration may be followed by later ones: the registry is
	// left just before it.
	prev := slices.IndexFunc(names, func(n string) bool { return strings.Contains(n, "window") })
	if prev < 0 {
		t.Fatalf("no window migration among %v: update this test", names)
	}
	last := names[prev]
	for _, name := range names[:prev] {
		body, _ := sqlite.MigrationSQL(name)
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	mustExec := func(q string) {
		t.Helper()
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec(fmt.Sprintf("PRAGMA user_version = %d", prev))
	mustExec(`INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, created_at, activity_at)
		VALUES ('t1', 'cli', 'running', 'pending', 'done_only', 1, 1)`)
	mustExec("CREATE INDEX notifications_win_kind ON tasks(id)") // the migration's last index
	state := func() (version, winCols int) {
		raw.QueryRow("PRAGMA user_version").Scan(&version)
		raw.QueryRow("SELECT COUNT(*) FROM pragma_table_xinfo('tasks') WHERE name LIKE 'win_%'").Scan(&winCols)
		return
	}
	if _, err := Open(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), last) {
		t.Fatalf("Open with the obstacle: %v, want %s's error", err, last)
	}
	if v, cols := state(); v != prev || cols != 0 {
		t.Fatalf("after the failed migration: version %d, %d win_ columns; want %d and none", v, cols, prev)
	}
	mustExec("DROP INDEX notifications_win_kind")
	raw.Close()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	db.read.QueryRow("PRAGMA user_version").Scan(&v)
	var urg int
	db.read.QueryRow("SELECT win_urgency FROM tasks WHERE id = 't1'").Scan(&urg)
	if v != len(names) || urg != 6 {
		t.Fatalf("after the retry: version %d, win_urgency %d", v, urg)
	}
}

// TestWindowPositions: a page's FirstKey places a later window where that
// page began, in every entity and sort, on both stores: the same rows, with
// and without a filter, after the first row has moved elsewhere in the
// order, and none past the end; a position that is not one is refused.
func TestWindowPositions(t *testing.T) { storetest.Each(t, testWindowPositions) }

func testWindowPositions(t *testing.T) {
	db := windowFixture(t, 300)
	ctx := context.Background()
	window := func(q core.WindowQuery) ([]string, core.WindowPage) {
		t.Helper()
		var s idSink
		var page core.WindowPage
		err := db.View(ctx, func(tx core.Tx) error {
			var err error
			page, err = tx.(core.WindowTx).Window(q, &s)
			return err
		})
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return s.ids, page
	}
	for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification} {
		w, _ := winTableOf(entity)
		for _, s := range w.sorts {
			for _, filter := range []string{"", "a"} {
				all := allInOrder(t, db, entity, s, filter)
				if len(all) < 30 {
					t.Fatalf("%s %s %q: fixture has %d rows", entity, s.name, filter, len(all))
				}
				// A page starting at row 10 (anchored there), its position,
				// and a window placed by it.
				ids, page := window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, Anchor: all[10], After: 8})
				if !slices.Equal(ids, all[10:18]) || page.FirstKey == "" {
					t.Fatalf("%s %s %q: page %v (key %q), want %v", entity, s.name, filter, ids, page.FirstKey, all[10:18])
				}
				again, p2 := window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, AnchorKey: page.FirstKey, After: 8, Before: 3})
				if !slices.Equal(again, all[7:18]) || p2.Before != 3 || p2.FirstKey == "" {
					t.Fatalf("%s %s %q: by position %v (before %d), want %v", entity, s.name, filter, again, p2.Before, all[7:18])
				}
				top, p3 := window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, After: 5})
				if !slices.Equal(top, all[:5]) || p3.FirstKey == "" {
					t.Fatalf("%s %s %q: first page %v, want %v", entity, s.name, filter, top, all[:5])
				}
				if end, p4 := window(core.WindowQuery{Entity: entity, Sort: s.name, Filter: filter, Anchor: all[len(all)-1], After: 5}); len(end) != 1 || p4.MoreAfter {
					t.Fatalf("%s %s %q: last page %v", entity, s.name, filter, end)
				}
			}
		}
	}
	// A PostgreSQL registry without the trigram index (a role that could
	// not create pg_trgm) reads a longer text by the pane's order: the same
	// rows. (On SQLite the flag is unused.)
	trgm := db.pgTrgm
	db.pgTrgm = false
	for _, filter := range []string{"alp", "t00", "zzz"} {
		tw, _ := winTableOf(core.EntityTask)
		for _, s := range tw.sorts {
			all := allInOrder(t, db, core.EntityTask, s, filter)
			if got, _ := window(core.WindowQuery{Entity: core.EntityTask, Sort: s.name, Filter: filter, After: 1000}); !slices.Equal(got, all) {
				t.Fatalf("without the trigram index, %q by %s: %d rows, want %d", filter, s.name, len(got), len(all))
			}
		}
	}
	db.pgTrgm = trgm
	// The first row moves (a running task that fails sorts lower): the
	// position still places the window where the page began.
	tw, _ := winTableOf(core.EntityTask)
	s, _ := tw.sort("urgency")
	all := allInOrder(t, db, core.EntityTask, s, "")
	ids, page := window(core.WindowQuery{Entity: core.EntityTask, Sort: "urgency", After: 6})
	if !slices.Equal(ids, all[:6]) {
		t.Fatalf("urgency first page %v, want %v", ids, all[:6])
	}
	update(t, db, func(tx core.Tx) error {
		k, err := tx.GetTask(all[0])
		if err != nil {
			return err
		}
		k.Status, k.EndedAt = core.TaskSucceeded, 1
		return tx.UpdateTask(k)
	})
	if now := allInOrder(t, db, core.EntityTask, s, ""); now[0] == all[0] {
		t.Fatal("the first task did not move")
	}
	if got, _ := window(core.WindowQuery{Entity: core.EntityTask, Sort: "urgency", AnchorKey: page.FirstKey, After: 5}); !slices.Equal(got, all[1:6]) {
		t.Fatalf("by the old position after the first row moved: %v, want %v", got, all[1:6])
	}
	for _, bad := range []string{"[1]", "nope", `[{"a":1},"x","y"]`} {
		var sk idSink
		err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityTask, Sort: "urgency", AnchorKey: bad, After: 5}, &sk)
			return err
		})
		if !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("position %q: %v, want ErrInvalid", bad, err)
		}
	}
}

// TestWindowAnchorNoRowCanHave: a notification window anchored on an id
// that is not an integer (no notification can have it) is empty on both
// engines, as for a row that is gone; PostgreSQL refused to compare it.
func TestWindowAnchorNoRowCanHave(t *testing.T) {
	storetest.Each(t, func(t *testing.T) {
		db := windowFixture(t, 20)
		for _, anchor := range []string{"abc", "12x", "99999999999999999999"} {
			var s idSink
			var page core.WindowPage
			err := db.View(context.Background(), func(tx core.Tx) error {
				var err error
				page, err = tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityNotification, Anchor: anchor, Before: 2, After: 5}, &s)
				return err
			})
			if err != nil || page.Rows != 0 || len(s.ids) != 0 {
				t.Errorf("anchor %q: %d rows %v, %v; want an empty window", anchor, page.Rows, s.ids, err)
			}
		}
	})
}
