package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// checkFTSTracked: every trigram index entry is some task's key row (so a
// stale entry can always be found and removed), and every key row's key is
// in the index.
// checkFTSTracked checks every name index entry is some task's current or
// stale key in tasks_label_keys, and every key there is in the index.
func checkFTSTracked(t *testing.T, db *DB) {
	t.Helper()
	var untracked, missing int
	if err := db.read.QueryRow(`SELECT
		(SELECT count(*) FROM tasks_label_fts_docsize WHERE id NOT IN (SELECT key FROM tasks_label_keys)),
		(SELECT count(*) FROM tasks_label_keys WHERE key NOT IN (SELECT id FROM tasks_label_fts_docsize))`).Scan(&untracked, &missing); err != nil {
		t.Fatal(err)
	}
	if untracked != 0 || missing != 0 {
		t.Fatalf("%d index entries no key row tracks, %d key rows not in the index", untracked, missing)
	}
}

// TestLabelOrderRandom mixes every write the label order's index follows
// (inserts in transactions of every size, at hot spots, renames, deletes
// and inserts behind the store's back, reused rowids, MaintainLabels) with
// tiny buckets, and checks the index's invariants and label-order windows
// against LIKE as it goes.
func TestLabelOrderRandom(t *testing.T) {
	seeds := uint64(2)
	if raceEnabled {
		seeds = 1 // the race run: single-goroutine code, once is enough
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { labelRandom(t, seed) })
	}
}

func labelRandom(t *testing.T, seed uint64) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5}
	r := rand.New(rand.NewPCG(seed, 99))
	n := 0
	hot := []string{"backup ", "live task ", "zz ", "m task "}
	ctr := map[string]int{}
	label := func() string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf("task %d", r.IntN(500))
		}
		h := hot[r.IntN(len(hot))]
		ctr[h]++
		return fmt.Sprintf("%s%05d", h, ctr[h])
	}
	raw := func(q string, args ...any) {
		t.Helper()
		if _, err := db.write.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	sort := winSort{"label", []string{taskName, "id"}, false}
	check := func(step int, what string) {
		t.Helper()
		if step%10 != 0 {
			return
		}
		checkLabelIndex(t, db, false)
		checkFTSTracked(t, db)
		if step%50 != 0 {
			return
		}
		for _, f := range []string{"task 1", "backup 0", "live", "zz 00", "m task", "ask"} {
			want := allInOrder(t, db, core.EntityTask, sort, f)
			got, back := pages(t, db, core.EntityTask, sort, f)
			if !slices.Equal(got, want) || !slices.Equal(back, want) {
				t.Fatalf("step %d (%s): %q: fwd %d back %d want %d", step, what, f, len(got), len(back), len(want))
			}
		}
	}
	for step := 0; step < 300; step++ {
		what := ""
		switch op := r.IntN(10); {
		case op < 5:
			k := 1 + r.IntN(20)
			if r.IntN(10) == 0 {
				k = 100
			}
			what = fmt.Sprintf("insert %d", k)
			update(t, db, func(tx core.Tx) error {
				for range k {
					n++
					if err := tx.InsertTask(labelTask(fmt.Sprintf("t%05d", n), label())); err != nil {
						return err
					}
				}
				return nil
			})
		case op == 5:
			what = "rename"
			update(t, db, func(tx core.Tx) error {
				for range 5 {
					task, err := tx.GetTask(fmt.Sprintf("t%05d", 1+r.IntN(n+1)))
					if err != nil {
						continue
					}
					task.Label = label()
					if err := tx.UpdateTask(task); err != nil {
						return err
					}
				}
				return nil
			})
		case op == 6:
			what = "raw delete"
			raw(`DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks ORDER BY random() LIMIT ?)`, 1+r.IntN(10))
			if r.IntN(3) == 0 {
				raw(`DELETE FROM tasks WHERE rowid = (SELECT max(rowid) FROM tasks)`)
			}
		case op == 7:
			what = "raw insert/rename"
			for range 1 + r.IntN(5) {
				n++
				raw(rawTaskSQL, fmt.Sprintf("t%05d", n), label())
			}
			raw(`UPDATE tasks SET label = ? WHERE rowid = (SELECT rowid FROM tasks ORDER BY random() LIMIT 1)`, label())
		case op == 8:
			what = "maintain"
			if _, _, err := db.MaintainLabels(ctx, 1+r.IntN(50)); err != nil {
				t.Fatal(err)
			}
		case op == 9:
			what = "insert 1 hot"
			update(t, db, func(tx core.Tx) error {
				n++
				ctr["backup "]++
				return tx.InsertTask(labelTask(fmt.Sprintf("t%05d", n), fmt.Sprintf("backup %05d", ctr["backup "])))
			})
		}
		check(step, what)
	}
	if err := db.FoldLabels(ctx); err != nil {
		t.Fatal(err)
	}
	checkLabelIndex(t, db, true)
	checkFTSTracked(t, db)
	t.Logf("tasks %d", n)
}
