package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	// cores is how many CPUs the whole machine kept busy on average during
	// the run (/proc/stat), client the share of this process (getrusage):
	// the rest is PostgreSQL, plus whatever else the machine ran.
	cores, client float64
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
	pgbench := pgbenchPath()
	baseline := "pgbench, same statements"
	if pgbench == "" {
		baseline = "(no pgbench found)"
	}
	fmt.Printf("%7s  %-28s  %-28s  %-28s  %-28s  %s\n", "writers", "before (advisory lock)", "after (row conflicts only)", "after/before",
		fmt.Sprintf("CPUs busy after (of %d; this)", runtime.NumCPU()), baseline)
	var one, pgOne float64
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
		bcell := ""
		if pgbench != "" {
			tps, err := pgbenchOnce(ctx, pgbench, admin, base, n, d)
			if err != nil {
				return fmt.Errorf("%d pgbench clients: %w", n, err)
			}
			if n == 1 {
				pgOne = tps
			}
			bcell = pgbenchCell(tps, pgOne)
		}
		fmt.Printf("%7d  %-28s  %-28s  %-28s  %-28s  %s\n", n, cellText(cells[0]), cellText(cells[1]),
			fmt.Sprintf("%.1f×%s", cells[1].perSecond()/cells[0].perSecond(), scale),
			fmt.Sprintf("%.2f (%.2f)", cells[1].cores, cells[1].client), bcell)
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
	cpu0, self0 := machineCPU(), selfCPU()
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
	cpu1, self1 := machineCPU(), selfCPU()
	if cpu1.total > cpu0.total {
		r.cores = float64(runtime.NumCPU()) * float64(cpu1.busy-cpu0.busy) / float64(cpu1.total-cpu0.total)
	}
	r.client = (self1 - self0).Seconds() / r.elapsed.Seconds()
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

// cpuTicks is the machine's CPU time in clock ticks, all CPUs together.
type cpuTicks struct{ busy, total int64 }

// machineCPU reads the first line of /proc/stat: busy is every state but
// idle and iowait. Zero when it cannot be read (not Linux).
func machineCPU() cpuTicks {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var c cpuTicks
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i >= 8 { // guest time is counted in user time already
			break
		}
		c.total += n
		if i != 3 && i != 4 { // idle, iowait
			c.busy += n
		}
	}
	return c
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
