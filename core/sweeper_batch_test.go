package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// txCounter is a core.Store that counts write transactions.
type txCounter struct {
	core.Store
	n int
}

func (c *txCounter) Update(ctx context.Context, fn func(core.Tx) error) error {
	c.n++
	return c.Store.Update(ctx, fn)
}

// TestSweepApplyInBatches: orphaned tasks marked lost and pruned in one
// sweep (OpenClaw's failure shape) are applied in runs — one statement per
// run — inside many short transactions; a runtime write between plan and
// apply still wins row by row, and the counts, journal and rows agree.
func TestSweepApplyInBatches(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batchSize int
		batchTime time.Duration
	}{
		{"one action per transaction", 1, time.Nanosecond},
		{"time-bounded", 0, time.Nanosecond},
		{"defaults", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSwFixture(t)
			const n = 40
			var ids []string
			for range n {
				ids = append(ids, f.task(core.NewTask{OwnerSession: "gone"}, true).ID)
			}
			f.clock.Advance(30 * time.Hour) // past grace and the 24 h lost retention
			plan, err := f.sw.Plan(f.ctx)
			f.must(err)
			if len(plan.Actions) != 2*n {
				t.Fatalf("plan has %d actions, want %d lost + %d pruned", len(plan.Actions), n, n)
			}
			// The runtime reports on every fifth task before apply: those race.
			winners := map[string]bool{}
			for i := 0; i < n; i += 5 {
				_, res, err := f.reg.FinishTask(f.ctx, ids[i], core.Finish{Status: core.TaskSucceeded}, core.ActorRuntime)
				f.must(err)
				if !res.Applied {
					t.Fatal(res)
				}
				winners[ids[i]] = true
			}
			cnt := &txCounter{Store: f.db}
			sw := core.NewSweeper(core.NewRegistry(cnt, f.clock, f.th), nil)
			sw.BatchSize, sw.BatchTime = tc.batchSize, tc.batchTime
			rep, err := sw.Apply(f.ctx, plan)
			f.must(err)
			w := len(winners)
			if c := rep.Counts; c.Lost != n-w || c.Pruned != n-w || c.Raced != 2*w {
				t.Fatalf("counts %+v, want %d lost, %d pruned, %d raced\n%s", c, n-w, n-w, 2*w, rep.Text())
			}
			if tc.batchTime == time.Nanosecond && cnt.n < 2 {
				t.Errorf("%d write transactions: the time bound did not split the apply", cnt.n)
			}
			for _, id := range ids {
				if winners[id] {
					if got := f.get(id); got.Status != core.TaskSucceeded {
						t.Errorf("task %s is %s, want the runtime's succeeded", id, got.Status)
					}
					continue
				}
				if f.exists(core.EntityTask, id) || len(f.events(core.EntityTask, id)) != 0 {
					t.Errorf("task %s (or its journal) not pruned", id)
				}
			}
			for _, a := range rep.Actions {
				if want := core.ActionApplied; winners[a.ID] {
					if a.Result != core.ActionRaced {
						t.Errorf("%s %s: %s, want raced", a.Rule, a.ID, a.Result)
					}
				} else if a.Result != want {
					t.Errorf("%s %s: %s, want %s", a.Rule, a.ID, a.Result, want)
				}
			}
			if rep := f.sweep(); len(rep.Actions) != 0 {
				t.Errorf("work left after apply:\n%s", rep.Text())
			}
		})
	}
}
