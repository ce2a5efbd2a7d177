package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestLabelRespreadCost: labels that keep arriving at the end of the order
// (time stamps) after a rebuild. Each insert is its own Update; the re-keys
// one Update does should stay bounded, and their total linear.
func TestLabelRespreadCost(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	db.filterCap = filterCaps{bucket: 3, split: 6, chunk: 4, index: 3, near: 5}
	for i := range 3000 {
		if _, err := db.write.ExecContext(ctx, rawTaskSQL, fmt.Sprintf("old%04d", i), fmt.Sprintf("build %04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FoldLabels(ctx); err != nil { // rebuilt whole
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE rekeys (n INTEGER NOT NULL)`, `INSERT INTO rekeys VALUES (0)`,
		`CREATE TRIGGER count_rekeys AFTER UPDATE OF key ON tasks_label_keys BEGIN UPDATE rekeys SET n = n + 1; END`} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var total, worst, prev int64
	const inserts = 4000
	for i := 1; i <= inserts; i++ {
		update(t, db, func(tx core.Tx) error {
			return tx.InsertTask(labelTask(fmt.Sprintf("t%05d", i), fmt.Sprintf("zz %05d", i)))
		})
		db.read.QueryRow(`SELECT n FROM rekeys`).Scan(&total)
		worst = max(worst, total-prev)
		prev = total
	}
	checkLabelIndex(t, db, false)
	t.Logf("%d single-task inserts re-keyed %d tasks; one Update at most %d", inserts, total, worst)
	if worst > 100 || total > 10*inserts {
		t.Fatalf("%d single-task inserts re-keyed %d tasks; one Update re-keyed %d", inserts, total, worst)
	}
}
