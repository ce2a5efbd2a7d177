package store

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestLabelBlob: a name another program wrote as a BLOB sorts after every
// text in SQLite's order; the label index buckets it there, and windows
// page it in place.
func TestLabelBlob(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5}
	update(t, db, func(tx core.Tx) error {
		for i := range 200 {
			if err := tx.InsertTask(labelTask(fmt.Sprintf("t%03d", i), fmt.Sprintf("m task 1%03d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := db.write.ExecContext(ctx, `INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		VALUES ('blob', 'cli', 'succeeded', 'delivered', 'done_only', ?, 1, 1)`, []byte("a task 1")); err != nil {
		t.Fatal(err)
	}
	update(t, db, func(tx core.Tx) error { return nil })
	sort := winSort{"label", []string{taskName, "id"}, false}
	want := allInOrder(t, db, core.EntityTask, sort, "task 1")
	got, back := pages(t, db, core.EntityTask, sort, "task 1")
	if !slices.Equal(got, want) || !slices.Equal(back, want) {
		t.Fatalf("fwd %d (blob at %d) back %d (blob at %d) want %d (blob at %d)", len(got), slices.Index(got, "blob"), len(back), slices.Index(back, "blob"), len(want), slices.Index(want, "blob"))
	}
	checkLabelIndex(t, db, false)
}
