package store

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/labelindex"
)

// TestLabelMarkedBucketStaysMarked: a bucket marked (a negative count: it
// could not make room) whose writes would bring the count back into
// [0, split] stays marked, so MaintainLabels still splits it (a reviewer's
// case).
func TestLabelMarkedBucketStaysMarked(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5, rekeys: 1}
	add, _ := labelAdder(t, db)
	add(func(i int) string { return fmt.Sprintf("zzz after %d", i) }, 200)
	marked := func() (b, c int64) {
		db.read.QueryRow(`SELECT b, n FROM tasks_label_buckets WHERE n < 0 ORDER BY n LIMIT 1`).Scan(&b, &c)
		return
	}
	for range 300 {
		add(func(i int) string { return fmt.Sprintf("backup %05d", i) }, 5)
		if _, c := marked(); c < 0 {
			break
		}
	}
	b, c := marked()
	if c >= 0 {
		t.Skip("no bucket marked")
	}
	// -c more tasks at the end of that bucket (labels just after its last).
	var last string
	db.read.QueryRow(`SELECT win_name FROM tasks AS t JOIN tasks_label_keys AS k ON k.task = t.rowid WHERE k.key >> ? = ? ORDER BY win_name DESC LIMIT 1`, labelindex.Shift, b).Scan(&last)
	for i := int64(0); i < -c; i++ {
		add(func(int) string { return fmt.Sprintf("%s~%03d", last, i) }, 1)
	}
	var nb int64
	db.read.QueryRow(`SELECT n FROM tasks_label_buckets WHERE b = ?`, b).Scan(&nb)
	if _, _, err := db.MaintainLabels(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	var largest int64
	db.read.QueryRow(`SELECT max(c) FROM (SELECT count(*) AS c FROM tasks_label_keys GROUP BY key >> ?)`, labelindex.Shift).Scan(&largest)
	split := db.labelSizes().Resolved().Split
	t.Logf("marked bucket %d n=%d, now n=%d, largest after MaintainLabels %d", b, c, nb, largest)
	if largest > 2*split {
		t.Fatalf("bucket of %d tasks survives MaintainLabels (split %d)", largest, split)
	}
}

// TestLabelRespreadCapMarkedTarget: respread (labelindex) sums the counts to
// bound a writer's re-keying; a marked (negative) count must count as its
// size, or a writer renumbers past its cap (a reviewer's case).
func TestLabelRespreadCapMarkedTarget(t *testing.T) {
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5, rekeys: 4}
	add, _ := labelAdder(t, db)
	add(func(i int) string { return fmt.Sprintf("zzz after %d", i) }, 200)
	type bound struct{ name, id string }
	snap := func() (map[bound]int64, map[int64]int64) {
		bs, ks := map[bound]int64{}, map[int64]int64{}
		rows, _ := db.read.Query(`SELECT lo_name, lo_id, b FROM tasks_label_buckets`)
		for rows.Next() {
			var lb bound
			var b int64
			rows.Scan(&lb.name, &lb.id, &b)
			bs[lb] = b
		}
		rows.Close()
		rows, _ = db.read.Query(`SELECT task, key FROM tasks_label_keys`)
		for rows.Next() {
			var tk, k int64
			rows.Scan(&tk, &k)
			ks[tk] = k
		}
		rows.Close()
		return bs, ks
	}
	for i := range 600 {
		bs, ks := snap()
		add(func(i int) string { return fmt.Sprintf("backup %05d", i) }, 5)
		bs2, ks2 := snap()
		moved := map[int64]bool{} // old ids of renumbered buckets
		for lb, b := range bs {
			if b2, ok := bs2[lb]; ok && b2 != b {
				moved[b] = true
			}
		}
		rekeyed := 0
		for tk, k := range ks {
			if moved[k>>labelindex.Shift] && ks2[tk] != k {
				rekeyed++
			}
		}
		if rekeyed > 4+2*6 { // the cap, plus the split bucket's own tasks
			t.Fatalf("write %d: a writer renumbered %d tasks (cap 4)", i, rekeyed)
		}
	}
}

// TestLabelBlobID: a task whose id another program wrote as a BLOB (the
// column allows it) is never keyed, stays queued and is still found in
// label order, while splits around it go on.
func TestLabelBlobID(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 1}
	if _, err := db.write.ExecContext(ctx, rawTaskSQL, []byte("blob-id"), "a task 4 blob"); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx core.Tx) error {
		for i := range 60 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("t%02d", i), fmt.Sprintf("a task 4 %02d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	var queued int
	db.read.QueryRow(`SELECT count(*) FROM tasks_label_queue`).Scan(&queued)
	if queued != 1 {
		t.Fatalf("%d queued, want the BLOB id's task", queued)
	}
	sort := winSort{"label", []string{taskName, "id"}, false}
	want := allInOrder(t, db, core.EntityTask, sort, "task 4")
	got, back := pages(t, db, core.EntityTask, sort, "task 4")
	if !slices.Equal(got, want) || !slices.Equal(back, want) || len(want) != 61 {
		t.Fatalf("forwards %d, backwards %d, want %d (61)", len(got), len(back), len(want))
	}
	checkLabelIndex(t, db, false)
}
