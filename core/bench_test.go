package core_test

import (
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// BenchmarkTransitions measures registry state changes in-process on a real
// SQLite file: each op is StartTask (queued → running) plus FinishTask
// (running → succeeded), i.e. two transitions, each its own BEGIN IMMEDIATE
// transaction with its journal row. Task creation happens outside the timer.
func BenchmarkTransitions(b *testing.B) {
	f := registrytest.New(b)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = f.Task(core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "bench"}).ID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, res, err := f.Reg.StartTask(f.Ctx, ids[i], "", core.ActorRuntime); err != nil || !res.Applied {
			b.Fatalf("start: %v %+v", err, res)
		}
		if _, res, err := f.Reg.FinishTask(f.Ctx, ids[i], core.Finish{Subtype: "success"}, core.ActorRuntime); err != nil || !res.Applied {
			b.Fatalf("finish: %v %+v", err, res)
		}
	}
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(2*b.N)/s, "transitions/s")
	}
}
