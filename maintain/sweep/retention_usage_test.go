package sweep_test

import (
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// TestRetentionPrunesUsage: the sweep that prunes an ended task or run
// deletes its usage rows (totals, counts, a run's transcript position and
// raised budget) with it; a session's stay, and so do another run's.
func TestRetentionPrunesUsage(t *testing.T) {
	f := newSwFixture(t)
	ctx := f.ctx
	_, _, err := f.reg.OpenSession(ctx, "s1", "", core.ActorRuntime)
	must(t, err)
	for _, id := range []string{"r1", "r2"} {
		_, err = f.reg.RegisterRun(ctx, core.NewRun{RunID: id, ChildSession: "s1:" + id, RequesterSession: "s1"}, core.ActorRuntime)
		must(t, err)
	}
	tk, err := f.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "s1"}, core.ActorRuntime)
	must(t, err)
	now := core.TS(f.clock.Now())
	u := func(scope core.UsageScope, id string) core.UsageRow {
		return core.UsageRow{Scope: scope, ID: id, Model: "m", Tokens: core.Tokens{Input: 1}, CountedAt: now}
	}
	must(t, f.reg.AddUsage(ctx, []core.UsageRow{u(core.UsageSession, "s1"), u(core.UsageRun, "r1"), u(core.UsageRun, "r2"), u(core.UsageTask, tk.ID)}))
	_, _, err = f.reg.RaiseBudget(ctx, core.UsageRun, "r1", core.Limit{Tokens: 10}, "op@host")
	must(t, err)
	must(t, f.db.Update(ctx, func(tx core.Tx) error {
		return tx.PutUsageSource(&core.UsageSource{Path: "/t/r1.jsonl", Session: "s1", RunID: "r1", ReadAt: now})
	}))
	_, _, _, err = f.reg.CompleteRun(ctx, "r1", core.OutcomeOK, "", core.ActorRuntime)
	must(t, err)
	_, _, err = f.reg.FinishTask(ctx, tk.ID, core.Finish{Status: core.TaskSucceeded}, core.ActorRuntime)
	must(t, err)
	f.sweep() // stamps cleanup_after
	f.clock.Advance(f.th.Retention + time.Hour)
	f.sweep() // prunes r1 and the task
	var rows, counts []core.UsageRow
	var src *core.UsageSource
	var raised core.Budgets
	must(t, f.db.View(ctx, func(tx core.Tx) (err error) {
		if rows, err = tx.ListUsage(core.UsageFilter{}); err != nil {
			return err
		}
		if counts, err = tx.SumUsage(core.UsageFilter{}); err != nil {
			return err
		}
		src, err = tx.GetUsageSource("/t/r1.jsonl")
		return err
	}))
	raised, err = f.reg.Budgets(ctx)
	must(t, err)
	keys := func(rs []core.UsageRow) string {
		var out []string
		for _, r := range rs {
			out = append(out, string(r.Scope)+":"+r.ID)
		}
		return strings.Join(out, ",")
	}
	if got := keys(rows); got != "run:r2,session:s1" {
		t.Errorf("totals left: %s, want run:r2,session:s1", got)
	}
	if got := keys(counts); got != "run:r2,session:s1" {
		t.Errorf("counts left: %s, want run:r2,session:s1", got)
	}
	if src != nil || len(raised.Raised) != 0 {
		t.Errorf("the pruned run's transcript position %+v, raised budgets %+v", src, raised.Raised)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
