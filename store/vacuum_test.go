package store

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/clawpit/clawpit/core"
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
