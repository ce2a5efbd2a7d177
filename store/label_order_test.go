package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/labelindex"
)

// labelAdder returns add, which inserts k tasks in one transaction, the
// i-th task overall labelled label(i), and the count so far.
func labelAdder(t *testing.T, db *DB) (add func(label func(int) string, k int), n *int) {
	n = new(int)
	add = func(label func(int) string, k int) {
		t.Helper()
		update(t, db, func(tx core.Tx) error {
			for range k {
				*n++
				if err := tx.InsertTask(labelTask(fmt.Sprintf("t%05d", *n), label(*n))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return add, n
}

// hotSpot adds 200 tasks labelled "zzz after …", then 1,500 rising
// "backup …" labels five per transaction: labels arriving at one point
// inside the order, with others sorting after them.
func hotSpot(add func(label func(int) string, k int)) {
	add(func(i int) string { return fmt.Sprintf("zzz after %d", i) }, 200)
	for range 300 {
		add(func(i int) string { return fmt.Sprintf("backup %05d", i) }, 5)
	}
}

// labelTask is a running task with a label, for the label index's tests.
func labelTask(id, label string) *core.Task {
	return &core.Task{ID: id, Runtime: core.RuntimeCLI, Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending,
		NotifyPolicy: core.NotifyDoneOnly, Label: label, CreatedAt: 1, LastEventAt: 1}
}

// rawTaskSQL inserts a finished task (id, label) behind the store's back.
const rawTaskSQL = `INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
	VALUES (?, 'cli', 'succeeded', 'delivered', 'done_only', ?, 1, 1)`

// checkLabelIndex checks the label order index's invariants (label_order.go):
// every task queued or keyed in its bucket by the current bounds, its key in
// the trigram index, bucket ids rising with their bounds; with settled,
// also no queue and no stale key left (after FoldLabels).
func checkLabelIndex(t *testing.T, db *DB, settled bool) {
	t.Helper()
	if err := labelindex.Check(context.Background(), db.read, settled, db.labelSizes()); err != nil {
		t.Fatal(err)
	}
}

// TestLabelOrderIndex drives the label order's name index through the
// writes it must follow (inserts in transactions of every size, renames,
// deletes and inserts behind the store's back, a reused rowid, bucket
// splits) and checks after each that label-order windows with a filter page
// exactly the rows LIKE finds, in order, both ways.
func TestLabelOrderIndex(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	// Buckets of a few tasks, and reads of a few keys at a time: windows
	// span buckets, and a read stops inside one.
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5}
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"history task ", "live task ", "build ", "Ünïcode ", "", "task "}
	label := func() string { return words[r.IntN(len(words))] + fmt.Sprint(r.IntN(600)) }
	sort, _ := (&winTable{sorts: []winSort{{"label", []string{taskName, "id"}, false}}}).sort("label")
	check := func(phase string, settled bool) {
		t.Helper()
		checkLabelIndex(t, db, settled)
		for _, filter := range []string{"task 4", "task 1", "live", "ask", "Ünï", "ünï", "zzz", "d 1", "history task 49",
			"5", "ta", "t00", "lost", "do x"} {
			want := allInOrder(t, db, core.EntityTask, sort, filter)
			got, back := pages(t, db, core.EntityTask, sort, filter)
			if !slices.Equal(got, want) || !slices.Equal(back, want) {
				t.Fatalf("%s: filter %q: forwards %d, backwards %d rows, want %d\n got %v\nwant %v", phase, filter,
					len(got), len(back), len(want), got, want)
			}
		}
	}
	n := 0
	insert := func(k int) {
		update(t, db, func(tx core.Tx) error {
			for range k {
				n++
				st := []core.TaskStatus{core.TaskRunning, core.TaskLost, core.TaskSucceeded}[r.IntN(3)]
				task := &core.Task{ID: fmt.Sprintf("t%05d", n), Runtime: core.RuntimeCLI, Status: st,
					DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, Label: label(), Task: "do x",
					CreatedAt: 1000, LastEventAt: 2000}
				if !st.Active() {
					task.EndedAt = 1990
				}
				if err := tx.InsertTask(task); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for _, k := range []int{1, 50, 200, 1, 1, 3, 120} {
		insert(k)
	}
	check("inserted", false)
	if db.labelReads.Load() == 0 {
		t.Fatal("no window read names through the label order's index")
	}
	var buckets int
	db.read.QueryRow(`SELECT count(*) FROM tasks_label_buckets`).Scan(&buckets)
	if buckets < 376/6 {
		t.Fatalf("%d buckets for 376 tasks split at 6", buckets)
	}
	// Renames, through the store.
	update(t, db, func(tx core.Tx) error {
		for i := 1; i <= n; i += 4 {
			task, err := tx.GetTask(fmt.Sprintf("t%05d", i))
			if err != nil {
				return err
			}
			task.Label = label()
			if err := tx.UpdateTask(task); err != nil {
				return err
			}
		}
		return nil
	})
	check("renamed", false)
	raw := func(q string, args ...any) {
		t.Helper()
		if _, err := db.write.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// Behind the store's back: deletes leave stale keys, inserts and a
	// rename wait in the queue; the highest rowid deleted and taken again.
	raw(`DELETE FROM tasks WHERE rowid % 5 = 2`)
	raw(`DELETE FROM tasks WHERE rowid = (SELECT max(rowid) FROM tasks)`)
	for i := range 40 {
		raw(rawTaskSQL, fmt.Sprintf("x%03d", i), label())
	}
	raw(`UPDATE tasks SET label = 'history task 4 renamed' WHERE rowid = 3`)
	check("written outside", false)
	insert(1) // folds the queue, collects some stale keys
	check("folded", false)
	// More stale keys, and the collection's cursor past them: FoldLabels
	// still checks every key.
	raw(`DELETE FROM tasks WHERE rowid % 7 = 3`)
	raw(`INSERT OR REPLACE INTO tasks_label_gc (id, after) VALUES (1, (SELECT max(task) - 3 FROM tasks_label_keys))`)
	if err := db.FoldLabels(ctx); err != nil {
		t.Fatal(err)
	}
	check("settled", true)
	// A bulk load behind the store's back is rebuilt whole.
	for i := range 2000 {
		raw(rawTaskSQL, fmt.Sprintf("bulk%04d", i), label())
	}
	if err := db.FoldLabels(ctx); err != nil {
		t.Fatal(err)
	}
	check("rebuilt", true)
}

// TestLabelOrderMigration migrates a registry with tasks to the label
// order's index: its backfill keys every task (buckets of labelindex.BucketRows).
func TestLabelOrderMigration(t *testing.T) {
	ctx := context.Background()
	names, _ := migrations()
	at := slices.Index(names, labelindex.Migration)
	if at < 0 {
		t.Fatalf("no %s among %v", labelindex.Migration, names)
	}
	path, _ := registryAt(t, at, 1000, func(i int) (string, string) { return fmt.Sprintf("old%04d", i), fmt.Sprintf("history task %d", i) })
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkLabelIndex(t, db, true)
	var buckets int
	db.read.QueryRow(`SELECT count(*) FROM tasks_label_buckets`).Scan(&buckets)
	if want := (1000 + labelindex.BucketRows - 1) / labelindex.BucketRows; buckets != want {
		t.Errorf("%d buckets, want %d", buckets, want)
	}
	sort := winSort{"label", []string{taskName, "id"}, false}
	want := allInOrder(t, db, core.EntityTask, sort, "task 4")
	if got, _ := pages(t, db, core.EntityTask, sort, "task 4"); !slices.Equal(got, want) || len(want) != 111 {
		t.Errorf("label order, task 4: %d rows, want %d (111)", len(got), len(want))
	}
}

// TestLabelOrderReusedRowid: tasks deleted and their rowids taken by tasks
// inserted behind the store's back leave the old names' keys in the index
// under the new tasks' rowids; a read must not count the new tasks there
// (where they would stand in for rows they hide) but where their names
// sort.
func TestLabelOrderReusedRowid(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 1}
	update(t, db, func(tx core.Tx) error {
		for i, l := range []string{"a task 4 one", "a task 4 two", "b task 4", "c task 4", "d task 4", "e task 4", "a task 4 0", "a task 4 00"} {
			err := tx.InsertTask(labelTask(fmt.Sprintf("t%d", i), l))
			if err != nil {
				return err
			}
		}
		return nil
	})
	for _, q := range []string{`DELETE FROM tasks WHERE id IN ('t6', 't7')`,
		`INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		 VALUES ('t8', 'cli', 'running', 'pending', 'done_only', 'y task 4', 1, 1),
		        ('t9', 'cli', 'running', 'pending', 'done_only', 'z task 4', 1, 1)`} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var reused int
	db.read.QueryRow(`SELECT count(*) FROM tasks_label_keys AS k JOIN tasks AS t ON t.rowid = k.task WHERE t.id IN ('t8', 't9')`).Scan(&reused)
	if reused != 2 {
		t.Fatalf("%d of the new tasks took the deleted ones' rowids", reused)
	}
	var got idSink
	if err := db.View(ctx, func(tx core.Tx) error {
		_, err := tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityTask, Sort: "label", Filter: "task 4", After: 2}, &got)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"t0", "t1"}; !slices.Equal(got.ids, want) || db.labelReads.Load() == 0 {
		t.Fatalf("first window: %v, want %v (through the name index: %d reads)", got.ids, want, db.labelReads.Load())
	}
	checkLabelIndex(t, db, false)
}

// TestLabelOrderHotSpot: labels that keep arriving at one point inside the
// order (rising labels with others sorting after them) use up the bucket
// ids there after a few splits; the buckets around are then renumbered, so
// no bucket grows past the split size.
func TestLabelOrderHotSpot(t *testing.T) {
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5}
	add, n := labelAdder(t, db)
	hotSpot(add)
	split := db.labelSizes().Resolved().Split
	var largest, buckets int64
	if err := db.read.QueryRow(`SELECT max(c), count(*) FROM (SELECT count(*) AS c FROM tasks_label_keys GROUP BY key >> ?)`,
		labelindex.Shift).Scan(&largest, &buckets); err != nil {
		t.Fatal(err)
	}
	if largest > 2*split {
		t.Fatalf("%d tasks: the largest of %d buckets holds %d (split at %d)", *n, buckets, largest, split)
	}
	checkLabelIndex(t, db, false)
	sort := winSort{"label", []string{taskName, "id"}, false}
	for _, q := range []string{"backup 01", "up 00", "after 1"} {
		want := allInOrder(t, db, core.EntityTask, sort, q)
		if got, back := pages(t, db, core.EntityTask, sort, q); !slices.Equal(got, want) || !slices.Equal(back, want) {
			t.Fatalf("%q: forwards %d, backwards %d rows, want %d", q, len(got), len(back), len(want))
		}
	}
}

// TestLabelOrderLargeRowid: a task whose rowid has no room in a key (set
// explicitly by another program) stays queued and is still found.
func TestLabelOrderLargeRowid(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 1}
	update(t, db, func(tx core.Tx) error {
		for i := range 40 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("a%02d", i), fmt.Sprintf("aaa task 4 %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := db.write.ExecContext(ctx, `INSERT INTO tasks (rowid, id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		VALUES (?, 'big', 'cli', 'succeeded', 'delivered', 'done_only', 'aaa task 4 big', 1, 1)`, int64(1)<<labelindex.Shift|5); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx core.Tx) error { // folds the queue; the big one stays
		return tx.InsertTask(labelTask("next", "aaa task 4 next"))
	})
	sort := winSort{"label", []string{taskName, "id"}, false}
	want := allInOrder(t, db, core.EntityTask, sort, "task 4")
	if got, back := pages(t, db, core.EntityTask, sort, "task 4"); !slices.Equal(got, want) || !slices.Equal(back, want) || len(want) != 42 {
		t.Fatalf("forwards %d, backwards %d rows, want %d (42)", len(got), len(back), len(want))
	}
	if err := db.FoldLabels(ctx); err != nil {
		t.Fatal(err)
	}
	var queued int
	db.read.QueryRow(`SELECT count(*) FROM tasks_label_queue`).Scan(&queued)
	if queued != 2 { // the task after it took the next rowid
		t.Fatalf("%d queued after FoldLabels, want the 2 past the keys' room", queued)
	}
}

// TestMaintainLabels: the daemon's maintenance indexes tasks another
// program inserted and removes the keys of tasks deleted without writing to
// the index (pruned), a bounded number per call.
func TestMaintainLabels(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	update(t, db, func(tx core.Tx) error {
		for i := range 300 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("c%03d", i), fmt.Sprintf("task %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := db.write.ExecContext(ctx, `DELETE FROM tasks WHERE rowid % 3 = 0`); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := db.write.ExecContext(ctx, `INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
			VALUES (?, 'cli', 'succeeded', 'delivered', 'done_only', 'outside', 1, 1)`, fmt.Sprintf("o%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	indexed, removed, err := db.MaintainLabels(ctx, 150)
	if err != nil || indexed != 20 || removed != 50 {
		t.Fatalf("first call: %d indexed, %d removed (%v), want 20 and the 50 among the first 150 keys", indexed, removed, err)
	}
	// The rest; a fold also collects a few keys (when a folded rowid is a
	// multiple of labelindex.GCEvery), so one may be gone already.
	indexed, removed, err = db.MaintainLabels(ctx, 1<<20)
	if err != nil || indexed != 0 || removed < 49 || removed > 50 {
		t.Fatalf("second call: %d indexed, %d removed (%v), want 0 and the other 49 or 50", indexed, removed, err)
	}
	checkLabelIndex(t, db, true)
}

// TestLabelOrderRenumberingDeferred: where renumbering would re-key more
// tasks than a writer's transaction may, the bucket grows past the split
// size, and MaintainLabels (the daemon) renumbers and splits it.
func TestLabelOrderRenumberingDeferred(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5, rekeys: 1}
	add, _ := labelAdder(t, db)
	hotSpot(add)
	largest := func() (l int64) {
		t.Helper()
		if err := db.read.QueryRow(`SELECT max(c) FROM (SELECT count(*) AS c FROM tasks_label_keys GROUP BY key >> ?)`,
			labelindex.Shift).Scan(&l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	split := db.labelSizes().Resolved().Split
	before := largest()
	if before <= 2*split {
		t.Fatalf("the largest bucket holds %d tasks: the writers' cap never deferred a renumbering", before)
	}
	if m, err := db.MarkedLabelBuckets(ctx); err != nil || m == 0 {
		t.Fatalf("%d buckets marked (%v) with the largest at %d tasks", m, err, before)
	}
	if _, _, err := db.MaintainLabels(ctx, 1<<20); err != nil {
		t.Fatal(err)
	}
	if m, err := db.MarkedLabelBuckets(ctx); err != nil || m != 0 {
		t.Fatalf("%d buckets still marked (%v) after MaintainLabels", m, err)
	}
	if after := largest(); after > 2*split {
		t.Fatalf("after MaintainLabels the largest bucket holds %d tasks (before %d, split at %d)", after, before, split)
	}
	checkLabelIndex(t, db, true)
}
