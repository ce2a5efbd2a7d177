package store

import (
	"fmt"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// BenchmarkInsertTask is one task inserted per transaction (a runtime's
// `task start`) into a registry of 20,000: with migration 0014 the
// transaction also indexes the task's name in label order (foldLabels).
func BenchmarkInsertTask(b *testing.B) {
	db := openTest(b)
	const base = 20_000
	update(b, db, func(tx core.Tx) error {
		for i := range base {
			if err := tx.InsertTask(benchTask(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := db.FoldLabels(b.Context()); err != nil { // none on older schemas
		b.Fatal(err)
	}
	i := base
	for b.Loop() {
		i++
		update(b, db, func(tx core.Tx) error { return tx.InsertTask(benchTask(i)) })
	}
}

func benchTask(i int) *core.Task {
	return labelTask(fmt.Sprintf("bench-%07d", i), fmt.Sprintf("history task %d", (i*7919)%1_000_003))
}
