package sweep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
)

// BenchmarkSweepP1 is bench/README.md P1 at a smaller scale (bench/p1 runs the full
// one): one sweep over 2,000 active tasks with 10,000 and then 100,000
// terminal tasks of history. ns/op should be about the same at both sizes
// (history-independent); the full target is < 100 ms at 10,000 active over
// 1,000,000 terminal.
//
//	go test -run XXX -tags sqlite_fts5 -bench BenchmarkSweepP1 ./maintain/sweep/
func BenchmarkSweepP1(b *testing.B) {
	ctx := context.Background()
	start, err := supervisor.ProcStartTime(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	for _, terminal := range []int{10_000, 100_000} {
		path := filepath.Join(b.TempDir(), "registry.db")
		if err := p1data.Build(ctx, path, p1data.Shape{Terminal: terminal, Active: 2000, PID: os.Getpid(), PIDStart: start}); err != nil {
			b.Fatal(err)
		}
		db, err := store.Open(ctx, path, store.Options{MustExist: true})
		if err != nil {
			b.Fatal(err)
		}
		reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
		jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{})
		sw := sweep.New(reg, jobs)
		for _, dry := range []bool{true, false} {
			mode := "applied"
			if dry {
				mode = "dry_run"
			}
			b.Run(fmt.Sprintf("terminal=%d/%s", terminal, mode), func(b *testing.B) {
				for b.Loop() {
					rep, err := sw.Sweep(ctx, dry)
					if err != nil {
						b.Fatal(err)
					}
					if len(rep.Actions) != 0 {
						b.Fatalf("steady registry had work: %s", rep.Summary())
					}
				}
			})
		}
		db.Close()
	}
}
