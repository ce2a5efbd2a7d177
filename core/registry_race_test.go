package core_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// TestConcurrentKillCompleteCancel races kill, late completion, lost
// inference and cancel on the same runs through two registries over two
// connections to one file (as separate processes would), then checks the
// bench/README.md invariants: no succeeded row was ever downgraded, every succeeded
// row has no error, every terminal row has ended_at and the right
// cleanup_after, and the approval wait counters equal the approvals still pending.
func TestConcurrentKillCompleteCancel(t *testing.T) {
	storetest.Each(t, testConcurrentKillCompleteCancel)
}

func testConcurrentKillCompleteCancel(t *testing.T) {
	f := registrytest.New(t)
	db2, err := store.Open(f.Ctx, f.Loc, store.Options{})
	f.Must(err)
	t.Cleanup(func() { db2.Close() })
	reg2 := core.NewRegistry(db2, f.Clock, core.DefaultThresholds())
	regs := []*core.Registry{f.Reg, reg2}

	const runs = 12
	type row struct {
		run       string
		sub, peer string
	}
	rows := make([]row, runs)
	for i := range rows {
		id := fmt.Sprintf("race-run-%02d", i)
		f.Run(id, "child")
		sub := f.Task(core.NewTask{RunID: id, OwnerSession: "parent"})
		peer := f.Task(core.NewTask{Runtime: core.RuntimeCLI, SourceID: id, OwnerSession: "child"})
		for _, tk := range []string{sub.ID, peer.ID} {
			_, _, err := f.Reg.StartTask(f.Ctx, tk, "", core.ActorRuntime)
			f.Must(err)
		}
		f.Request("child", id, "deploy")
		rows[i] = row{id, sub.ID, peer.ID}
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs*8)
	for i, rw := range rows {
		ops := []func(r *core.Registry) error{
			func(r *core.Registry) error {
				_, _, err := r.KillRun(f.Ctx, rw.run, "", core.OperatorActor())
				return err
			},
			func(r *core.Registry) error {
				_, _, _, err := r.CompleteRun(f.Ctx, rw.run, core.OutcomeOK, "", core.ActorRuntime)
				return err
			},
			func(r *core.Registry) error {
				_, _, err := r.MarkTaskLost(f.Ctx, rw.sub, "subagent run ended (killed)")
				return err
			},
			func(r *core.Registry) error {
				_, _, err := r.MarkTaskLost(f.Ctx, rw.peer, "subagent run ended (killed)")
				return err
			},
			func(r *core.Registry) error {
				_, _, _, err := r.CompleteRun(f.Ctx, rw.run, core.OutcomeError, "late boom", core.ActorRuntime)
				return err
			},
		}
		if i%3 == 0 {
			ops = append(ops, func(r *core.Registry) error {
				_, _, err := r.CancelTask(f.Ctx, rw.peer, "", core.OperatorActor())
				return err
			})
		}
		for j, op := range ops {
			wg.Add(1)
			go func(r *core.Registry, op func(*core.Registry) error) {
				defer wg.Done()
				if err := op(r); err != nil {
					errs <- err
				}
			}(regs[(i+j)%2], op)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	th := core.DefaultThresholds()
	for _, rw := range rows {
		run := f.GetRun(rw.run)
		pending, err := f.Reg.ListApprovals(f.Ctx, core.ApprovalFilter{RunID: rw.run, Statuses: []core.ApprovalStatus{core.ApprovalPending}})
		f.Must(err)
		// Completion does not cancel approvals (only kill and close do, R9),
		// so the counter must equal the approvals still pending.
		if run.Running() || run.PendingApprovalWaits != int64(len(pending)) {
			t.Errorf("run %s: %d pending approvals: %+v", rw.run, len(pending), run)
		}
		for _, id := range []string{rw.sub, rw.peer} {
			tk := f.GetTask(id)
			if tk.Status == core.TaskSucceeded && tk.Error != "" {
				t.Errorf("succeeded task %s kept error %q", id, tk.Error)
			}
			if tk.Status.Terminal() && (tk.EndedAt == 0 || tk.CleanupAfter != tk.EndedAt.Add(th.TaskRetention(tk.Status))) {
				t.Errorf("terminal task %s stamps: %+v", id, tk)
			}
			for _, e := range f.Events(core.EntityTask, id) {
				if e.Applied && e.From == string(core.TaskSucceeded) && e.To != e.From {
					t.Errorf("succeeded downgraded: %+v", e)
				}
			}
		}
	}
}
