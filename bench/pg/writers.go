package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/termtext"
)

// writerResult is one measured cell: n writers in one mode.
type writerResult struct {
	writes        int
	errs          int
	elapsed       time.Duration
	p50, p99      time.Duration
	samples       int // pg_locks samples taken during the run
	advisoryWaits int // samples in which some backend waited on an advisory lock
}

func (r writerResult) perSecond() float64 { return float64(r.writes) / r.elapsed.Seconds() }

// parseWriters reads -writers: comma-separated positive counts ("1,4,16,64").
func parseWriters(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-writers %q: want positive counts separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// concurrentWriters measures writes per second and p50/p99 latency (ms) of
// n in-process writers for each n in counts, each writer its own
// store.DB (so its own connection: process start-up is not measured),
// each advancing its own task with `task progress`'s use case
// (Registry.ProgressTask: one conditional update and one journal row per
// call), for d. Each n runs twice on a fresh schema, "before" (every
// Update under the registry-wide advisory lock, store.Options.
// PGRegistryLock) and "after" (the default), and prints them side by side
// with how many pg_locks samples (every 10 ms) saw a backend waiting on an
// advisory lock (issue 30).
func concurrentWriters(ctx context.Context, base string, counts []int, d time.Duration) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	fmt.Printf("%d s per cell, each writer its own connection, ProgressTask on its own task\n", int(d.Seconds()))
	fmt.Printf("%7s  %-28s  %-28s  %s\n", "writers", "before (advisory lock)", "after (row conflicts only)", "after/before")
	var one float64
	for _, n := range counts {
		var cells [2]writerResult
		for i, lock := range []bool{true, false} {
			r, err := writersOnce(ctx, admin, base, n, d, lock)
			if err != nil {
				return fmt.Errorf("%d writers (registry lock %v): %w", n, lock, err)
			}
			cells[i] = r
		}
		if n == 1 {
			one = cells[1].perSecond()
		}
		scale := ""
		if one > 0 {
			scale = fmt.Sprintf("; %.1f× 1 writer", cells[1].perSecond()/one)
		}
		fmt.Printf("%7d  %-28s  %-28s  %.1f×%s\n", n, cellText(cells[0]), cellText(cells[1]),
			cells[1].perSecond()/cells[0].perSecond(), scale)
	}
	return nil
}

// cellText is "1,234/s p50 1.2 p99 9.8 ms" with errors and advisory-lock
// waits said when any.
func cellText(r writerResult) string {
	s := fmt.Sprintf("%s/s p50 %.1f p99 %.1f ms", termtext.Thousands(int64(r.perSecond())),
		float64(r.p50.Microseconds())/1000, float64(r.p99.Microseconds())/1000)
	if r.advisoryWaits > 0 {
		s += fmt.Sprintf(" adv %d/%d", r.advisoryWaits, r.samples)
	}
	if r.errs > 0 {
		s += fmt.Sprintf(" err %d", r.errs)
	}
	return s
}

// writersOnce runs n writers for d on a fresh schema.
func writersOnce(ctx context.Context, admin *sql.DB, base string, n int, d time.Duration, lock bool) (writerResult, error) {
	schema := fmt.Sprintf("bench_w_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return writerResult{}, err
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	u := withSearchPath(base, schema)
	regs := make([]*core.Registry, n)
	ids := make([]string, n)
	for i := range regs {
		db, err := store.Open(ctx, u, store.Options{PGRegistryLock: lock})
		if err != nil {
			return writerResult{}, err
		}
		defer db.Close()
		regs[i] = core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
		t, err := regs[i].CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: fmt.Sprintf("writer %d", i), Task: "bench"}, core.ActorRuntime)
		if err != nil {
			return writerResult{}, err
		}
		if _, _, err := regs[i].StartTask(ctx, t.ID, "start", core.ActorRuntime); err != nil {
			return writerResult{}, err
		}
		ids[i] = t.ID
	}
	sctx, stop := context.WithCancel(ctx)
	samples := make(chan [2]int, 1)
	go func() { samples <- sampleAdvisoryWaits(sctx, admin) }()

	lat := make([][]time.Duration, n)
	errs := make([]int, n)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := range regs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; time.Now().Before(deadline); k++ {
				t0 := time.Now()
				if _, _, err := regs[i].ProgressTask(ctx, ids[i], "step "+strconv.Itoa(k), core.ActorRuntime); err != nil {
					if errs[i] == 0 && i == 0 {
						fmt.Fprintln(os.Stderr, "pg: writer 0:", err)
					}
					errs[i]++
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	r := writerResult{elapsed: time.Since(start)}
	stop()
	s := <-samples
	r.samples, r.advisoryWaits = s[0], s[1]
	all := slices.Concat(lat...)
	slices.Sort(all)
	r.writes = len(all)
	for _, e := range errs {
		r.errs += e
	}
	if len(all) > 0 {
		r.p50 = all[len(all)*50/100]
		r.p99 = all[min(len(all)-1, len(all)*99/100)]
	}
	return r, nil
}

// sampleAdvisoryWaits samples pg_locks every 10 ms until ctx ends; it
// returns the samples taken and those in which a backend waited (granted
// false) on an advisory lock.
func sampleAdvisoryWaits(ctx context.Context, admin *sql.DB) [2]int {
	var taken, waited int
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return [2]int{taken, waited}
		case <-tick.C:
		}
		var w bool
		if err := admin.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)").Scan(&w); err != nil {
			continue
		}
		taken++
		if w {
			waited++
		}
	}
}
