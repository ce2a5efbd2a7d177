package store

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/sqlq"
	"github.com/clawpit/clawpit/store/sqlite"
)

// filterIDs is every task id passing filter in the urgency order, read
// through the planned filter (Window) a page at a time.
func filterIDs(t *testing.T, db *DB, filter string) []string {
	t.Helper()
	var got []string
	q := core.WindowQuery{Entity: core.EntityTask, Filter: filter, After: 50}
	err := db.View(context.Background(), func(tx core.Tx) error {
		for {
			var sk idSink
			page, err := tx.Window(q, &sk)
			if err != nil {
				return err
			}
			if q.Anchor != "" && len(sk.ids) > 0 {
				sk.ids = sk.ids[1:]
			}
			got = append(got, sk.ids...)
			if !page.MoreAfter {
				return nil
			}
			q.Anchor = got[len(got)-1]
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// TestTaskFilterPlans: each kind of query takes the arm it should, on each
// side of a window, and the arms read through indexes (no full scan of
// tasks).
func TestTaskFilterPlans(t *testing.T) {
	db := windowFixture(t, 600)
	ctx := context.Background()
	w, _ := winTableOf(core.EntityTask)
	probe := filterCaps{index: 3, near: 5, probe: 1000, sort: 1}
	// Up to the sort cap the probe runs within a time budget: its rows
	// when it finishes in time, the candidates sorted when not.
	race := func(budget time.Duration) filterCaps {
		return filterCaps{index: 3, near: 5, probe: 1000, sort: 1000, budget: int64(budget)}
	}
	cases := []struct {
		q       string
		caps    filterCaps
		text    int // planFilter's
		side    int // sideText's, from the start of the order, 51 rows
		classes []string
	}{
		{q: "zzz", text: textNone, side: textNone},
		{q: "z", text: textNone, side: textNone},
		{q: "alp", text: textScan, side: textScan}, // in a quarter of the rows
		{q: "ph", text: textScan, side: textScan},  // in a quarter of the rows: the sample says common
		{q: "LOST", text: textNone, side: textNone, classes: []string{"lost"}},
		{q: "ued", text: textNone, side: textNone, classes: []string{"queued", "session_queued"}},
		{q: "a", caps: filterCaps{index: 1000, vocab: 2}, text: textScan, side: textScan,
			classes: []string{"failed", "cancelled", "failed", "parent_missing", "not_applicable"}},
		{q: "lint", text: textIndex, side: textIndex},
		{q: "PEND", text: textNone, side: textNone, classes: []string{"pending"}},
		{q: "alp", caps: filterCaps{index: 3}, text: textScan, side: textScan},
		// Common, but not within the first five rows' reach: the order's
		// index is tested against the candidates, or (more than the probe
		// cap) read with LIKE after all.
		{q: "alp", caps: probe, text: textScan, side: textProbe},
		{q: "ph", caps: probe, text: textScan, side: textProbe},
		{q: "ph", caps: filterCaps{index: 3, near: 5, probe: 20}, text: textScan, side: textScan},
		{q: "alp", caps: race(time.Hour), text: textScan, side: textRows},
		{q: "alp", caps: race(time.Nanosecond), text: textScan, side: textIndex},
		{q: "lint", caps: race(time.Hour), text: textScan, side: textRows},
		{q: "lint", caps: race(time.Nanosecond), text: textScan, side: textIndex},
		{q: "lint", caps: probe, text: textScan, side: textProbe},
		{q: "lint", caps: filterCaps{near: 5}, text: textIndex, side: textIndex},
		// One or two characters: the vocabulary's trigrams, unless too many.
		{q: "a", caps: filterCaps{index: 3, near: 5, probe: 1000, vocab: 2}, text: textScan, side: textScan,
			classes: []string{"failed", "cancelled", "failed", "parent_missing", "not_applicable"}},
	}
	for _, tc := range cases {
		db.filterCap = tc.caps
		for _, s := range w.sorts {
			err := db.View(ctx, func(ctx core.Tx) error {
				p, err := ctx.(*tx).planFilter(taskFilter, s, tc.q, false, nil)
				if err != nil {
					return err
				}
				var classes []string
				for _, c := range p.classes {
					classes = append(classes, c.value)
				}
				if p.text != tc.text || !slices.Equal(classes, tc.classes) {
					t.Errorf("%q by %s: text arm %d classes %v, want %d %v", tc.q, s.name, p.text, classes, tc.text, tc.classes)
				}
				side, rows, err := ctx.(*tx).sideText(w, p, s, nil, false, false, 51)
				if err != nil {
					return err
				}
				if side != tc.side {
					t.Errorf("%q by %s (caps %+v): side's text arm %d, want %d", tc.q, s.name, tc.caps, side, tc.side)
				}
				key := []any{int64(4), int64(1), "x"}[3-len(s.keys):] // urgency 4: lost
				for _, anchor := range [][]any{nil, key} {
					sq, args := w.selectFiltered(p, side, s, anchor, false, true, 51, rows)
					plan := explain(t, db, sq, args)
					// A status in the urgency order seeks to the anchor
					// inside its range.
					if anchor != nil && s.name == "urgency" && slices.Contains(tc.classes, "lost") &&
						!strings.Contains(plan, "tasks_win_urgency (win_urgency=? AND (win_last,id)<(?,?))") {
						t.Errorf("%q by urgency from an anchor: no seek in\n%s", tc.q, plan)
					}
					// The probe reads the order's index and the candidates
					// (an ephemeral index of their rowids), no other way.
					order := " tasks USING INDEX " + taskFilter.sortIndex[s.name] + "\n" // SCAN from the start
					if anchor != nil {
						order = " tasks USING INDEX " + taskFilter.sortIndex[s.name] + " (" // SEARCH from the anchor
					}
					if side == textProbe && (!strings.Contains(plan+"\n", order) ||
						!strings.Contains(plan, "LIST SUBQUERY") || !strings.Contains(plan, "VIRTUAL TABLE INDEX 0:M")) {
						t.Errorf("%q by %s: the probe does not read the order's index against the candidates:\n%s", tc.q, s.name, plan)
					}
					for _, line := range strings.Split(plan, "\n") {
						// A full read of tasks is allowed only as the
						// common text's read of the order (an index).
						if l := strings.TrimLeft(line, " |-`"); (l == "SCAN tasks" || strings.HasPrefix(l, "SCAN tasks ")) && !strings.Contains(l, "USING") {
							t.Errorf("%q by %s: full scan in\n%s", tc.q, s.name, plan)
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTaskFilterCountRechecks: a row holding all of a query's trigrams
// but not the text is a candidate, never a match: the window leaves it
// out, and the count, exact or capped, counts only the rows that contain
// the text, whatever the caps.
func TestTaskFilterCountRechecks(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	update(t, db, func(tx core.Tx) error {
		for i := range 30 {
			label := "xabcxbcaxcabx" // abc, bca and cab, apart
			if i%10 == 0 {
				label = "an abcab here"
			}
			err := tx.InsertTask(&core.Task{ID: fmt.Sprintf("t%03d", i), Runtime: core.RuntimeCLI, Status: core.TaskSucceeded,
				DeliveryStatus: core.DeliveryDelivered, NotifyPolicy: core.NotifyDoneOnly, Label: label, CreatedAt: core.Timestamp(1000 + i)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	for _, caps := range []filterCaps{{}, {index: 1}, {index: 5}, {index: 1, near: 2, probe: 100},
		{index: 1, near: 2, probe: 100, sort: 1}, {index: 1, near: 2, probe: 100, budget: 1}} {
		db.filterCap = caps
		if got := filterIDs(t, db, "abcab"); !slices.Equal(got, []string{"t000", "t010", "t020"}) {
			t.Errorf("caps %+v: window %v, want the three rows holding the text", caps, got)
		}
		for _, tc := range []struct {
			limit  int64
			n      int64
			capped bool
		}{{10, 3, false}, {3, 3, false}, {2, 2, true}} {
			var n int64
			var capped bool
			err := db.View(ctx, func(tx core.Tx) error {
				var err error
				n, capped, err = tx.CountWindow(core.WindowQuery{Entity: core.EntityTask, Filter: "abcab"}, tc.limit)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.n || capped != tc.capped {
				t.Errorf("caps %+v: count up to %d = %d (capped %v), want %d (capped %v)", caps, tc.limit, n, capped, tc.n, tc.capped)
			}
		}
	}
}

// TestTaskFilterIndexInStep: the triggers keep the trigram index in step
// with inserts, updates of every searched field and deletes, in the
// writing transaction; one- and two-character queries find text at a
// value's end.
func TestTaskFilterIndexInStep(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	task := func(id, label string) *core.Task {
		return &core.Task{ID: id, Runtime: core.RuntimeCLI, Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending,
			NotifyPolicy: core.NotifyDoneOnly, Label: label, Task: "t", OwnerSession: "sess-" + id, CreatedAt: 1000}
	}
	a, b := task("ta01", "needle in a haystack"), task("tb02", "plain hay endq")
	update(t, db, func(tx core.Tx) error {
		if err := tx.InsertTask(a); err != nil {
			return err
		}
		return tx.InsertTask(b)
	})
	check := func(filter string, want ...string) {
		t.Helper()
		slices.Sort(want)
		if got := filterIDs(t, db, filter); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("filter %q: %v, want %v", filter, got, want)
		}
	}
	check("NEEDLE", "ta01")
	check("q", "tb02")
	check("dq", "tb02")
	check("Q", "tb02")
	check("sess-tb", "tb02")
	check("ta0", "ta01")
	// An update of a searched field reindexes the row.
	update(t, db, func(tx core.Tx) error {
		a.Label, a.Error = "renamed", "boom: disk"
		return tx.UpdateTask(a)
	})
	check("needle")
	check("renamed", "ta01")
	check("boom", "ta01")
	check("ed", "ta01") // "renamed"; no status contains "ed" among running tasks
	// A write that rolls back leaves the index as it was.
	err := db.Update(ctx, func(tx core.Tx) error {
		b.Label = "rolled back"
		if err := tx.UpdateTask(b); err != nil {
			return err
		}
		return fmt.Errorf("abort")
	})
	if err == nil {
		t.Fatal("the aborted update committed")
	}
	b.Rev--
	check("rolled")
	check("endq", "tb02")
	// A delete removes the row from the index.
	if _, err := db.write.Exec("DELETE FROM tasks WHERE id = 'tb02'"); err != nil {
		t.Fatal(err)
	}
	check("endq")
	check("q")
	var ok string
	if err := db.read.QueryRow("INSERT INTO tasks_fts(tasks_fts, rank) VALUES ('integrity-check', 1) RETURNING 'ok'").Scan(&ok); err != nil && err != sql.ErrNoRows {
		t.Errorf("trigram index integrity-check: %v", err)
	}
}

// registryAt is a registry file at schema version at (the migrations
// before it run by hand) holding n finished tasks (row: the i-th's id and
// label), and a raw connection to it.
func registryAt(t *testing.T, at, n int, row func(i int) (id, label string)) (string, *sql.DB) {
	t.Helper()
	path := t.TempDir() + "/registry.db"
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	names, _ := migrations()
	for _, name := range names[:at] {
		body, _ := sqlite.MigrationSQL(name)
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for i := range n {
		id, label := row(i)
		if _, err := raw.Exec(rawTaskSQL, id, label); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", at)); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestTaskFilterMigration: migration 0009 builds the index from the rows a
// registry already holds, in one transaction: made to fail on its last
// statement, it leaves the version and the schema as they were, and the
// next open runs it whole.
func TestTaskFilterMigration(t *testing.T) {
	ctx := context.Background()
	names, _ := migrations()
	at := slices.IndexFunc(names, func(n string) bool { return strings.Contains(n, "task_filter_index") })
	if at < 0 {
		t.Fatalf("no task filter migration among %v", names)
	}
	path, raw := registryAt(t, at, 300, func(i int) (string, string) { return fmt.Sprintf("old%03d", i), fmt.Sprintf("history %d", i) })
	// An object of the name of the migration's third statement: the
	// first two (the index and its vocabulary) must roll back with it.
	if _, err := raw.Exec("CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN SELECT 1; END"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), names[at]) {
		t.Fatalf("Open with the obstacle: %v, want %s's error", err, names[at])
	}
	var v, objects int
	raw.QueryRow("PRAGMA user_version").Scan(&v)
	raw.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'tasks_fts%'").Scan(&objects)
	if v != at || objects != 1 {
		t.Fatalf("after the failed migration: version %d, %d tasks_fts objects; want %d and only the obstacle", v, objects, at)
	}
	if _, err := raw.Exec("DROP TRIGGER tasks_fts_delete"); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := filterIDs(t, db, "history 29"); !slices.Equal(got, []string{"old029", "old290", "old291", "old292", "old293",
		"old294", "old295", "old296", "old297", "old298", "old299"}) {
		t.Errorf("filter over the migrated rows: %v", got)
	}
	if got := filterIDs(t, db, "7"); len(got) != countContaining(300, "7") {
		t.Errorf("one-character filter over the migrated rows: %d rows", len(got))
	}
}

// countContaining counts i in [0, n) whose "old%03d" id or "history %d"
// label contains s.
func countContaining(n int, s string) int {
	c := 0
	for i := range n {
		if strings.Contains(fmt.Sprintf("old%03d", i), s) || strings.Contains(fmt.Sprintf("history %d", i), s) {
			c++
		}
	}
	return c
}

// TestTaskFilterIndexOlderSQLiteCLI: a registry stays writable by an older
// sqlite3 CLI (Debian 12 ships SQLite 3.40): the index's triggers use only
// FTS5 features it has, and its writes keep the index in step.
func TestTaskFilterIndexOlderSQLiteCLI(t *testing.T) {
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed (apt-get install -y sqlite3)")
	}
	db := openTest(t)
	if db.dialect != dialectSQLite {
		t.Skip("SQLite only")
	}
	update(t, db, func(tx core.Tx) error {
		return tx.InsertTask(&core.Task{ID: "cli01", Runtime: core.RuntimeCLI, Status: core.TaskRunning,
			DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, Label: "before", CreatedAt: 1})
	})
	for _, q := range []string{
		"UPDATE tasks SET label = 'edited by hand', rev = rev + 1 WHERE id = 'cli01'",
		`INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		 VALUES ('cli02', 'cli', 'queued', 'pending', 'done_only', 'inserted by hand', 1, 1)`,
	} {
		if out, err := exec.Command(bin, db.path, q).CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 %q: %v\n%s", q, err, out)
		}
	}
	if got := filterIDs(t, db, "by hand"); !slices.Equal(got, []string{"cli01", "cli02"}) {
		t.Errorf("filter after the sqlite3 CLI's writes: %v", got)
	}
	if got := filterIDs(t, db, "before"); len(got) != 0 {
		t.Errorf("the old label still matches: %v", got)
	}
}

// FuzzTaskFilter: any query reads through the planned filter without an
// error (FTS5 query syntax never leaks through the quoting) and finds
// exactly the rows LIKE finds, in order, with the default and tiny caps.
func FuzzTaskFilter(f *testing.F) {
	for _, s := range []string{"alp", "a", "ph", `"`, `a"b`, "*", "AND", "NEAR(a b)", "a OR b", "\x00", "é", "Ü", "ǅ",
		"lost", "fail", "%", "_", `\`, "t00", "do x", "  ", "\xff", "lint", "İ", "ß", "ﬁ"} {
		f.Add(s, false)
	}
	db := windowFixture(f, 300)
	w, _ := winTableOf(core.EntityTask)
	f.Fuzz(func(t *testing.T, q string, tiny bool) {
		if q == "" || db.dialect != dialectSQLite {
			return
		}
		db.filterCap = filterCaps{}
		if tiny {
			db.filterCap = filterCaps{index: 3, vocab: 2, near: 5, probe: 100}
		}
		for _, s := range w.sorts {
			want := allInOrder(t, db, core.EntityTask, s, q)
			var got []string
			err := db.View(context.Background(), func(tx core.Tx) error {
				var sk idSink
				_, err := tx.Window(core.WindowQuery{Entity: core.EntityTask, Sort: s.name, Filter: q, After: 1000}, &sk)
				got = sk.ids
				return err
			})
			if err != nil {
				t.Fatalf("filter %q by %s: %v", q, s.name, err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("filter %q by %s: %v, want %v", q, s.name, got, want)
			}
		}
	})
}

// TestRarest: the filter asks the index for the query's rarest trigrams in
// the sample, in query order, and leaves out those in most rows (their
// lists are as long as the table) unless nothing rarer is left.
func TestRarest(t *testing.T) {
	cases := []struct {
		grams []string
		n     []int
		want  []string
	}{
		{[]string{"ses", "ess", "ss-", "s-4", "-42"}, []int{1000, 1000, 1000, 111, 11}, []string{"s-4", "-42"}},
		{[]string{"tas", "ask", "sk ", "k 4", " 42", "424"}, []int{1000, 1000, 1000, 111, 11, 1}, []string{"k 4", " 42", "424"}},
		{[]string{"abc", "bcd", "cde", "def"}, []int{5, 0, 7, 3}, []string{"abc", "bcd", "def"}},
		{[]string{"ses", "ess", "ss-"}, []int{1000, 990, 1000}, []string{"ess"}}, // all common: the rarest alone
		{[]string{"abc", "bcd"}, []int{500, 501}, []string{"abc"}},
		{[]string{"abc"}, []int{0}, []string{"abc"}},
	}
	for _, tc := range cases {
		if got := rarest(tc.grams, tc.n, maxTrigrams); !slices.Equal(got, tc.want) {
			t.Errorf("rarest(%v, %v) = %v, want %v", tc.grams, tc.n, got, tc.want)
		}
	}
}

// TestInterruptedReadKeepsTransaction: a read interrupted by its deadline
// (probeRows' time budget) leaves the read transaction usable, on its
// snapshot (a commit made elsewhere afterwards stays unseen), and the
// window read after it in the same transaction is whole.
func TestInterruptedReadKeepsTransaction(t *testing.T) {
	db := windowFixture(t, 600)
	ctx := context.Background()
	w, _ := winTableOf(core.EntityTask)
	s, _ := w.sort("urgency")
	want := allInOrder(t, db, core.EntityTask, s, "alp")
	err := db.View(ctx, func(x core.Tx) error {
		tx := x.(*tx)
		var before int64
		if err := tx.tx.QueryRowContext(ctx, "SELECT count(*) FROM tasks").Scan(&before); err != nil {
			return err
		}
		c, cancel := context.WithTimeout(tx.ctx, 5*time.Millisecond)
		defer cancel()
		start := time.Now()
		// Rows stream (each Next returns), so a deadline that lands
		// before the first step still ends the read at the next row.
		_, err := sqlq.QueryColumn[int64](c, tx.tx, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 2000000000) SELECT i FROM n")
		if err == nil || c.Err() == nil {
			t.Fatalf("a read of 2,000,000,000 rows was not interrupted (err %v)", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the interrupt took %v", d)
		}
		if err := db.Update(ctx, func(w core.Tx) error {
			return w.InsertTask(&core.Task{ID: "zz-new", Runtime: core.RuntimeCLI, Status: core.TaskQueued,
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, Task: "x", Label: "alpha new", CreatedAt: 5})
		}); err != nil {
			return err
		}
		var after int64
		if err := tx.tx.QueryRowContext(ctx, "SELECT count(*) FROM tasks").Scan(&after); err != nil {
			return err
		}
		if after != before {
			t.Errorf("snapshot lost: %d tasks before the interrupt, %d after a commit elsewhere", before, after)
		}
		var sk idSink
		if _, err := x.Window(core.WindowQuery{Entity: core.EntityTask, Sort: "urgency", Filter: "alp", After: 1000}, &sk); err != nil {
			return err
		}
		if !slices.Equal(sk.ids, want) {
			t.Errorf("window after the interrupt: %d rows, want %d", len(sk.ids), len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
