package store

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/labelindex"
)

// TestVacuumKeepsTaskRowids: the label order's name index and the filter's
// trigram indexes key tasks by rowid, and `tasks` has no INTEGER PRIMARY
// KEY, so SQLite's documentation allows VACUUM to renumber them. The
// SQLite clawpit embeds copies each table whole into the vacuumed file
// (its transfer optimisation), rowids included: an operator's
// `sqlite3 registry.db VACUUM` keeps every task's rowid and both indexes
// stay true. This test fails if an upgrade of go-sqlite3's SQLite changes
// that (README "Editing the registry by hand" says what holds).
func TestVacuumKeepsTaskRowids(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if db.lite == nil {
		t.Skip("SQLite only: PostgreSQL's indexes do not hold row ids")
	}
	update(t, db, func(tx core.Tx) error {
		for i := range 600 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("t%04d", i), fmt.Sprintf("nightly task %d of %s", i, []string{"build", "deploy", "backup"}[i%3]))); err != nil {
				return err
			}
		}
		return nil
	})
	// Gaps in the rowids: what a VACUUM would close if it renumbered.
	if _, err := db.write.ExecContext(ctx, `DELETE FROM tasks WHERE CAST(substr(id, 2) AS INTEGER) % 3 = 1`); err != nil {
		t.Fatal(err)
	}
	if err := db.FoldLabels(ctx); err != nil {
		t.Fatal(err)
	}
	rowids := func() map[string]int64 {
		m := map[string]int64{}
		rows, err := db.read.QueryContext(ctx, `SELECT id, rowid FROM tasks`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var r int64
			if err := rows.Scan(&id, &r); err != nil {
				t.Fatal(err)
			}
			m[id] = r
		}
		return m
	}
	find := func(sort, filter string) []string {
		var got idSink
		if err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityTask, Sort: sort, Filter: filter, After: 1000}, &got)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got.ids
	}
	before := rowids()
	byLabel, byText := find("label", "of backup"), find("urgency", "task 4")
	if _, err := db.write.ExecContext(ctx, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	if after := rowids(); !maps.Equal(before, after) {
		moved := 0
		for id, r := range before {
			if after[id] != r {
				moved++
			}
		}
		t.Fatalf("VACUUM renumbered %d of %d tasks' rowids: the label and filter indexes now point at other tasks", moved, len(before))
	}
	checkLabelIndex(t, db, true)
	if got := find("label", "of backup"); fmt.Sprint(got) != fmt.Sprint(byLabel) || len(got) != 200 {
		t.Fatalf("label order after VACUUM: %d tasks %v, before %d", len(got), got, len(byLabel))
	}
	if got := find("urgency", "task 4"); fmt.Sprint(got) != fmt.Sprint(byText) || len(got) == 0 {
		t.Fatalf("filter after VACUUM: %v, before %v", got, byText)
	}
}

// TestRebuildIndexes: indexes that point at the wrong rows (here: every
// task moved to another rowid behind the triggers' back, as a VACUUM that
// renumbered would) make the filter miss; RebuildIndexes makes both the
// filter's and the label order's indexes true again, and says how many
// tasks it indexed.
func TestRebuildIndexes(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if db.lite == nil {
		if r, err := db.RebuildIndexes(ctx); err != nil || r.Engine != "postgres" || r.Tasks != 0 {
			t.Fatalf("RebuildIndexes on PostgreSQL: %+v, %v; want nothing done", r, err)
		}
		return
	}
	update(t, db, func(tx core.Tx) error {
		for i := range 300 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("t%04d", i), fmt.Sprintf("weekly %s %d", []string{"report", "audit"}[i%2], i))); err != nil {
				return err
			}
		}
		return nil
	})
	find := func(sort, filter string) []string {
		var got idSink
		if err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityTask, Sort: sort, Filter: filter, After: 1000}, &got)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got.ids
	}
	wantAudit, wantLabel := len(find("urgency", "audit")), len(find("label", "weekly report"))
	if wantAudit != 150 || wantLabel != 150 {
		t.Fatalf("before: %d audits, %d reports; want 150 each", wantAudit, wantLabel)
	}
	// Move every task to a new rowid: the triggers fire on none of it.
	if _, err := db.write.ExecContext(ctx, `UPDATE tasks SET rowid = rowid + 100000`); err != nil {
		t.Fatal(err)
	}
	// What the indexes find, read from them directly (a table this small
	// is filtered without them).
	indexed := func() (fts int, labelErr error) {
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM tasks_fts JOIN tasks ON tasks.rowid = tasks_fts.rowid
			WHERE tasks_fts MATCH '"aud" AND "udi" AND "dit"' AND tasks.label LIKE '%audit%'`).Scan(&fts); err != nil {
			t.Fatal(err)
		}
		return fts, labelindex.Check(ctx, db.read, false, db.labelSizes())
	}
	if n, err := indexed(); n != 0 || err == nil {
		t.Fatalf("with every rowid moved the trigram index still finds %d audits and the label index checks %v: the test breaks nothing", n, err)
	}
	r, err := db.RebuildIndexes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Engine != "sqlite" || r.Tasks != 300 {
		t.Fatalf("RebuildIndexes: %+v, want 300 tasks on sqlite", r)
	}
	if n, err := indexed(); n != wantAudit || err != nil {
		t.Fatalf("after the rebuild the trigram index finds %d audits (want %d); the label index: %v", n, wantAudit, err)
	}
	if got, gotLabel := len(find("urgency", "audit")), len(find("label", "weekly report")); got != wantAudit || gotLabel != wantLabel {
		t.Fatalf("after the rebuild: %d audits, %d reports; want %d, %d", got, gotLabel, wantAudit, wantLabel)
	}
}
