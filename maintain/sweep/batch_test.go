package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
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
			sw := sweep.New(core.NewRegistry(cnt, f.clock, f.th), nil)
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
				if want := sweep.ActionApplied; winners[a.ID] {
					if a.Result != sweep.ActionRaced {
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

// failingStore is a core.Store whose write transaction number failAt (from
// 1) runs and then rolls back with an error.
type failingStore struct {
	core.Store
	n, failAt int
}

var errInjected = errors.New("injected failure")

func (c *failingStore) Update(ctx context.Context, fn func(core.Tx) error) error {
	c.n++
	if c.n != c.failAt {
		return c.Store.Update(ctx, fn)
	}
	return c.Store.Update(ctx, func(tx core.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errInjected
	})
}

// TestSweepLostAndPrunedInOneWrite: a task found lost whose retention is
// already over is deleted by one conditional write that decides both its
// lost and its prune, and only while the rule still holds: a session that
// comes back between plan and apply keeps its tasks, and both of their
// actions are raced. A transaction that rolls back leaves its rows, and
// plans their lost and prune again, while the ones committed before it
// stay applied.
func TestSweepLostAndPrunedInOneWrite(t *testing.T) {
	t.Run("backing returns", func(t *testing.T) {
		f := newSwFixture(t)
		var gone, back []string
		for i := range 6 {
			sess := "gone"
			if i%2 == 0 {
				sess = "back"
			}
			id := f.task(core.NewTask{OwnerSession: sess}, true).ID
			if sess == "back" {
				back = append(back, id)
			} else {
				gone = append(gone, id)
			}
		}
		f.clock.Advance(30 * time.Hour)
		plan, err := f.sw.Plan(f.ctx)
		f.must(err)
		if len(plan.Actions) != 12 {
			t.Fatalf("plan has %d actions, want 6 lost + 6 pruned", len(plan.Actions))
		}
		f.session("back") // the session is active again before apply
		rep, err := f.sw.Apply(f.ctx, plan)
		f.must(err)
		if c := rep.Counts; c.Lost != 3 || c.Pruned != 3 || c.Raced != 6 {
			t.Fatalf("counts %+v, want 3 lost, 3 pruned, 6 raced\n%s", c, rep.Text())
		}
		for _, id := range back {
			if got := f.get(id); got.Status != core.TaskRunning {
				t.Errorf("task %s of the returned session is %s, want running", id, got.Status)
			}
		}
		for _, id := range gone {
			if f.exists(core.EntityTask, id) || len(f.events(core.EntityTask, id)) != 0 {
				t.Errorf("task %s (or its journal) not pruned", id)
			}
		}
	})
	// Windows of 10 actions: the first deletes ids[0:10], deciding their
	// prunes far later in the plan. A rollback must plan again exactly what
	// its own transaction decided: never the actions an earlier, committed
	// transaction decided, even where the rolled-back transaction's window
	// covers them (a window of prunes already applied, or the short
	// transactions of a BatchTime split).
	for _, tc := range []struct {
		name      string
		failAt    int
		batchTime time.Duration
		deleted   int // ids[:deleted] end deleted, the rest untouched
	}{
		// An hour: no window splits by time, however loaded the machine
		// (the 40 ms default split a window under load, so the injected
		// failure hit another transaction).
		{"second window", 2, time.Hour, 10},
		{"window of decided prunes", 5, time.Hour, 40},
		{"batch time split", 2, time.Nanosecond, 10},
		{"batch time split, next window", 11, time.Nanosecond, 10},
	} {
		t.Run("rollback/"+tc.name, func(t *testing.T) {
			f := newSwFixture(t)
			const n = 40
			var ids []string
			for range n {
				ids = append(ids, f.task(core.NewTask{OwnerSession: "gone"}, true).ID)
			}
			f.clock.Advance(30 * time.Hour)
			plan, err := f.sw.Plan(f.ctx)
			f.must(err)
			fs := &failingStore{Store: f.db, failAt: tc.failAt}
			sw := sweep.New(core.NewRegistry(fs, f.clock, f.th), nil)
			sw.BatchSize, sw.BatchTime = 10, tc.batchTime
			rep, err := sw.Apply(f.ctx, plan)
			if !errors.Is(err, errInjected) {
				t.Fatalf("apply: %v, want the injected failure", err)
			}
			k := tc.deleted
			if c := rep.Counts; c.Lost != k || c.Pruned != k || c.Raced != 0 {
				t.Fatalf("counts %+v, want %d lost and %d pruned\n%s", c, k, k, rep.Text())
			}
			decided := map[string]int{}
			for _, a := range rep.Actions {
				if a.Result == sweep.ActionApplied {
					decided[a.ID]++
				} else if a.Result != sweep.ActionPlanned {
					t.Errorf("%s %s: %s, want planned", a.Rule, a.ID, a.Result)
				}
			}
			for i, id := range ids {
				if i < k {
					if decided[id] != 2 || f.exists(core.EntityTask, id) {
						t.Errorf("task %d: %d actions applied, row kept %v; want both applied and the row gone", i, decided[id], f.exists(core.EntityTask, id))
					}
					continue
				}
				if decided[id] != 0 || f.get(id).Status != core.TaskRunning {
					t.Errorf("task %d: %d actions applied, status %s; want none and running", i, decided[id], f.get(id).Status)
				}
			}
			rep2 := f.sweep()
			if c := rep2.Counts; c.Lost != n-k || c.Pruned != n-k {
				t.Fatalf("the next sweep: %+v, want the other %d lost and pruned", c, n-k)
			}
		})
	}
}
