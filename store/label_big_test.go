package store

import (
	"context"
	"testing"
)

// TestLabelBigRowidDeleted: a task past the keys' room (never indexed,
// always queued) that is then deleted leaves no queue row behind once
// MaintainLabels ran.
func TestLabelBigRowidDeleted(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for _, q := range []string{
		`INSERT INTO tasks (rowid, id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		 VALUES (8589934600, 'big', 'cli', 'succeeded', 'delivered', 'done_only', 'x', 1, 1)`,
		`DELETE FROM tasks WHERE id = 'big'`} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.MaintainLabels(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	var queued, tasks int
	db.read.QueryRow(`SELECT (SELECT count(*) FROM tasks_label_queue), (SELECT count(*) FROM tasks)`).Scan(&queued, &tasks)
	if queued != 0 {
		t.Fatalf("%d queued for %d tasks: a deleted task past the keys' room stays queued", queued, tasks)
	}
}
