package core_test

import (
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// TestCanTransitionTaskTable checks every cell of the docs/contract.md "Entities and statuses" task transition
// table, for a runtime actor, the sweeper (maintenance), the watchdog and an
// operator. The expected matrix is written out literally, row = from,
// column = to, in the order queued, running, succeeded, failed, timed_out,
// cancelled, lost: "=" same status (refused as "already <s>"), "Y" allowed,
// "N" refused, "M" allowed for maintenance only.
func TestCanTransitionTaskTable(t *testing.T) {
	order := []core.TaskStatus{core.TaskQueued, core.TaskRunning, core.TaskSucceeded, core.TaskFailed, core.TaskTimedOut, core.TaskCancelled, core.TaskLost}
	matrix := map[core.TaskStatus]string{
		core.TaskQueued:    "= Y Y Y Y Y M",
		core.TaskRunning:   "Y = Y Y Y Y M",
		core.TaskSucceeded: "N N = N N N N",
		core.TaskFailed:    "N N N = N N N",
		core.TaskTimedOut:  "N N N N = N N",
		core.TaskCancelled: "N N N N N = N",
		core.TaskLost:      "N N Y Y Y Y =",
	}
	actors := []core.Actor{core.ActorRuntime, core.ActorSweeper, core.ActorWatchdog, core.ActorSupervisor, "alice@host from 10.0.0.1"}
	cells := 0
	for _, from := range order {
		row := strings.Fields(matrix[from])
		if len(row) != len(order) {
			t.Fatalf("matrix row %s has %d cells", from, len(row))
		}
		for i, to := range order {
			for _, actor := range actors {
				want := row[i] == "Y" || (row[i] == "M" && actor == core.ActorSweeper)
				ok, why := core.CanTransitionTask(from, to, actor)
				if ok != want {
					t.Errorf("%s → %s by %s: allowed=%v, want %v (reason %q)", from, to, actor, ok, want, why)
				}
				if ok && why != "" {
					t.Errorf("%s → %s by %s: allowed with a reason %q", from, to, actor, why)
				}
				if !ok && why == "" {
					t.Errorf("%s → %s by %s: refused without a reason", from, to, actor)
				}
				if row[i] == "=" && why != "already "+string(from) {
					t.Errorf("%s → %s: reason %q, want %q", from, to, why, "already "+string(from))
				}
				cells++
			}
		}
	}
	if cells != 7*7*len(actors) {
		t.Fatalf("checked %d cells", cells)
	}
}

// taskIn creates a task and drives it to status through the registry.
func taskIn(f *registrytest.Fixture, st core.TaskStatus) *core.Task {
	f.T.Helper()
	tk := f.Task(core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "s1", Label: "cell"})
	var err error
	switch st {
	case core.TaskQueued:
	case core.TaskRunning:
		_, _, err = f.Reg.StartTask(f.Ctx, tk.ID, "", core.ActorRuntime)
	case core.TaskLost:
		_, _, err = f.Reg.MarkTaskLost(f.Ctx, tk.ID, "backing session missing")
	default:
		_, _, err = f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Status: st}, core.ActorRuntime)
	}
	f.Must(err)
	got := f.GetTask(tk.ID)
	if got.Status != st {
		f.T.Fatalf("setup: task is %s, want %s", got.Status, st)
	}
	return got
}

// TestTransitionsThroughRegistry applies representative cells of the status
// table through the registry and checks the journal row (applied true/false).
func TestTransitionsThroughRegistry(t *testing.T) {
	type op func(f *registrytest.Fixture, id string) (core.Result, error)
	finish := func(st core.TaskStatus) op {
		return func(f *registrytest.Fixture, id string) (core.Result, error) {
			_, res, err := f.Reg.FinishTask(f.Ctx, id, core.Finish{Status: st, Error: "late report"}, core.ActorRuntime)
			return res, err
		}
	}
	start := func(f *registrytest.Fixture, id string) (core.Result, error) {
		_, res, err := f.Reg.StartTask(f.Ctx, id, "go", core.ActorRuntime)
		return res, err
	}
	lost := func(f *registrytest.Fixture, id string) (core.Result, error) {
		_, res, err := f.Reg.MarkTaskLost(f.Ctx, id, "")
		return res, err
	}
	cancel := func(f *registrytest.Fixture, id string) (core.Result, error) {
		_, res, err := f.Reg.CancelTask(f.Ctx, id, "", core.OperatorActor())
		return res, err
	}
	cases := []struct {
		from core.TaskStatus
		name string
		op   op
		to   core.TaskStatus // status after
		ok   bool
	}{
		{core.TaskQueued, "start", start, core.TaskRunning, true},
		{core.TaskQueued, "finish succeeded", finish(core.TaskSucceeded), core.TaskSucceeded, true},
		{core.TaskQueued, "mark lost", lost, core.TaskLost, true},
		{core.TaskRunning, "start again", start, core.TaskRunning, false},
		{core.TaskRunning, "finish failed", finish(core.TaskFailed), core.TaskFailed, true},
		{core.TaskRunning, "finish timed_out", finish(core.TaskTimedOut), core.TaskTimedOut, true},
		{core.TaskRunning, "cancel", cancel, core.TaskCancelled, true},
		{core.TaskSucceeded, "late failure", finish(core.TaskFailed), core.TaskSucceeded, false},
		{core.TaskSucceeded, "mark lost", lost, core.TaskSucceeded, false},
		{core.TaskFailed, "late success", finish(core.TaskSucceeded), core.TaskFailed, false},
		{core.TaskTimedOut, "start", start, core.TaskTimedOut, false},
		{core.TaskCancelled, "late success", finish(core.TaskSucceeded), core.TaskCancelled, false},
		{core.TaskCancelled, "cancel again", cancel, core.TaskCancelled, false},
		{core.TaskLost, "late success", finish(core.TaskSucceeded), core.TaskSucceeded, true},
		{core.TaskLost, "late failure", finish(core.TaskFailed), core.TaskFailed, true},
		{core.TaskLost, "start", start, core.TaskLost, false},
		{core.TaskLost, "mark lost again", lost, core.TaskLost, false},
	}
	for _, c := range cases {
		t.Run(string(c.from)+"/"+c.name, func(t *testing.T) {
			f := registrytest.New(t)
			tk := taskIn(f, c.from)
			f.Clock.Advance(1e9)
			res, err := c.op(f, tk.ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.Applied != c.ok {
				t.Fatalf("applied=%v (%q), want %v", res.Applied, res.Reason, c.ok)
			}
			if !c.ok && res.Reason == "" {
				t.Fatal("refusal without a reason")
			}
			got := f.GetTask(tk.ID)
			if got.Status != c.to {
				t.Fatalf("status %s, want %s", got.Status, c.to)
			}
			ev := f.LastEvent(core.EntityTask, tk.ID)
			if ev.Applied != c.ok {
				t.Fatalf("journal applied=%v, want %v: %+v", ev.Applied, c.ok, ev)
			}
			if !c.ok {
				if ev.Reason != res.Reason {
					t.Fatalf("journal reason %q, result reason %q", ev.Reason, res.Reason)
				}
				if got.Rev != tk.Rev {
					t.Fatalf("refused change wrote the row: rev %d → %d", tk.Rev, got.Rev)
				}
			}
			if c.ok && c.to.Terminal() {
				if got.EndedAt == 0 {
					t.Fatal("terminal without ended_at")
				}
				if want := got.EndedAt.Add(core.DefaultThresholds().TaskRetention(c.to)); got.CleanupAfter != want {
					t.Fatalf("cleanup_after %s, want %s", got.CleanupAfter, want)
				}
			}
		})
	}
}
