// Command pg measures SQLite and PostgreSQL side by side in one run (bench/README.md, README "Many hosts: PostgreSQL"): P1's sweep over a long history, P2's CLI state change (process
// start to exit), the console's first screen over the same registry, and a
// change committed through one handle ("host") until another handle has
// noticed it and read the screen again.
//
//	.ci/pg start && eval "$(.ci/pg start)"     # or any server
//	go run -tags sqlite_fts5 ./bench/pg [-terminal 1000000] [-active 10000] [-url postgres://…]
//	go run -tags sqlite_fts5 ./bench/pg -writers 1,4,16,64 [-duration 3s]   # issue 30: writers in parallel
//
// The PostgreSQL registry is a copy of the SQLite one made with
// store.CopyToPostgres (what `clawpit migrate` runs), so both hold the same
// rows; ANALYZE follows the bulk copy, as autovacuum would.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/clawpit/clawpit/supervisor"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	terminal := flag.Int("terminal", 1_000_000, "terminal tasks (the history)")
	active := flag.Int("active", 10_000, "active tasks")
	due := flag.Int("due", 100, "idle orphans the first sweep marks lost")
	runs := flag.Int("runs", 7, "measured repetitions of each step")
	url := flag.String("url", os.Getenv(storetest.Env), "PostgreSQL server (default $"+storetest.Env+")")
	hosts := flag.Int("hosts", 0, "instead: this many sweepers (\"hosts\") at once over -due orphans on PostgreSQL; report applied, raced and time")
	writers := flag.String("writers", "", "instead: writes per second and p50/p99 with this many concurrent writers each (e.g. 1,4,16,64), before (registry-wide advisory lock) and after, side by side")
	duration := flag.Duration("duration", 3*time.Second, "with -writers: how long each cell writes")
	cpuProfile := flag.String("cpuprofile", "", "write this process's CPU profile to this file (go tool pprof)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pg:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *url == "" {
		fmt.Fprintln(os.Stderr, "pg: no PostgreSQL server: pass -url or set "+storetest.Env+" (.ci/pg start prints one)")
		os.Exit(2)
	}
	if *writers != "" {
		counts, err := parseWriters(*writers)
		if err == nil {
			err = concurrentWriters(context.Background(), *url, counts, *duration)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pg:", err)
			os.Exit(1)
		}
		return
	}
	if *hosts > 0 {
		if err := concurrentSweeps(*terminal, *active, *due, *hosts, *url); err != nil {
			fmt.Fprintln(os.Stderr, "pg:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*terminal, *active, *due, *runs, *url); err != nil {
		fmt.Fprintln(os.Stderr, "pg:", err)
		os.Exit(1)
	}
}

func run(terminal, active, due, runs int, base string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "clawpit-bench-pg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lite := filepath.Join(dir, "registry.db")

	t := time.Now()
	self, start := os.Getpid(), int64(0)
	if err := p1data.Build(ctx, lite, p1data.Shape{Terminal: terminal, Active: active, Due: due, PID: self, PIDStart: start}); err != nil {
		return err
	}
	fmt.Printf("built SQLite registry: %d terminal + %d active tasks in %s\n", terminal, active, time.Since(t).Round(time.Millisecond))

	schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		return err
	}
	defer admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	pgURL := withSearchPath(base, schema)

	src, err := store.Open(ctx, lite, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	dst, err := store.Open(ctx, pgURL, store.Options{})
	if err != nil {
		return err
	}
	t = time.Now()
	counts, err := store.CopyToPostgres(ctx, src, dst, "")
	if err != nil {
		return err
	}
	var total int64
	for _, c := range counts {
		total += c.Rows
	}
	copyTime := time.Since(t)
	t = time.Now()
	if _, err := admin.Exec("SET search_path = " + schema + "; ANALYZE"); err != nil {
		return err
	}
	fmt.Printf("copied to PostgreSQL (clawpit migrate): %d rows in %s (%.0f rows/s); ANALYZE %s\n",
		total, copyTime.Round(time.Millisecond), float64(total)/copyTime.Seconds(), time.Since(t).Round(time.Millisecond))
	src.Close()
	dst.Close()

	bin := filepath.Join(dir, "clawpit")
	if out, err := exec.Command("go", "build", "-tags", store.BuildTags, "-o", bin, ".").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}

	fmt.Printf("\n%-34s %14s %14s\n", "median (p90) of "+fmt.Sprint(runs), "SQLite", "PostgreSQL")
	rows := map[string][2]string{}
	order := []string{}
	for i, loc := range []string{lite, pgURL} {
		res, err := measure(ctx, loc, bin, runs)
		if err != nil {
			return fmt.Errorf("%s: %w", []string{"SQLite", "PostgreSQL"}[i], err)
		}
		for _, r := range res {
			if i == 0 {
				order = append(order, r.name)
			}
			v := rows[r.name]
			v[i] = r.text
			rows[r.name] = v
		}
	}
	for _, name := range order {
		fmt.Printf("%-34s %14s %14s\n", name, rows[name][0], rows[name][1])
	}
	return nil
}

type row struct{ name, text string }

// measure runs every step on the registry at loc.
func measure(ctx context.Context, loc, bin string, runs int) ([]row, error) {
	db, err := store.Open(ctx, loc, store.Options{MustExist: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{Dir: filepath.Join(os.TempDir(), "clawpit-bench-jobs")})
	reg.SetJobController(jobs)
	sw := sweep.New(reg, jobs)
	var out []row

	// P1: the first applied sweep does the due work; then steady sweeps.
	t := time.Now()
	rep, err := sw.Sweep(ctx, false)
	if err != nil {
		return nil, err
	}
	out = append(out, row{"P1 first sweep (due work)", msText(time.Since(t))})
	_ = rep
	var d []time.Duration
	for i := 0; i < runs; i++ {
		t := time.Now()
		rep, err := sw.Sweep(ctx, false)
		if err != nil {
			return nil, err
		}
		if len(rep.Actions) != 0 {
			return nil, fmt.Errorf("steady sweep still had work: %s", rep.Summary())
		}
		d = append(d, time.Since(t))
	}
	out = append(out, row{"P1 sweep, steady (applied)", stat(d)})

	// P2: `clawpit task start <id>` as a process, on fresh queued tasks.
	ids := make([]string, runs)
	for i := range ids {
		k, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "p2"}, core.ActorRuntime)
		if err != nil {
			return nil, err
		}
		ids[i] = k.ID
	}
	d = d[:0]
	for _, id := range ids {
		cmd := exec.Command(bin, "--db", loc, "task", "start", id)
		cmd.Env = append(os.Environ(), "CLAWPIT_HOME="+os.TempDir())
		t := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("task start: %v: %s", err, out)
		}
		d = append(d, time.Since(t))
	}
	out = append(out, row{"P2 `task start` process", stat(d)})

	// The console's first screen: the newest 50 tasks, and the table counts
	// the header and the reload check read.
	d = d[:0]
	var dc []time.Duration
	for i := 0; i < runs; i++ {
		t := time.Now()
		if err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.ListTasks(core.TaskFilter{Limit: 50})
			return err
		}); err != nil {
			return nil, err
		}
		d = append(d, time.Since(t))
		t = time.Now()
		if err := db.View(ctx, func(tx core.Tx) error { _, err := tx.CountRows(); return err }); err != nil {
			return nil, err
		}
		dc = append(dc, time.Since(t))
	}
	out = append(out, row{"first screen: newest 50 tasks", stat(d)}, row{"  + CountRows (all tables)", stat(dc)})

	// Cross-host: a commit through another handle until this handle's
	// DataVersion moved and the first screen was read again (polled every
	// 1 ms here; the console polls every 200 ms, which adds up to that).
	other, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		return nil, err
	}
	defer other.Close()
	reg2 := core.NewRegistry(other, core.SystemClock{}, core.DefaultThresholds())
	d = d[:0]
	for i := 0; i < runs; i++ {
		v0, err := db.DataVersion(ctx)
		if err != nil {
			return nil, err
		}
		t := time.Now()
		if _, err := reg2.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "x"}, core.ActorRuntime); err != nil {
			return nil, err
		}
		for {
			v, err := db.DataVersion(ctx)
			if err != nil {
				return nil, err
			}
			if v != v0 {
				break
			}
			if time.Since(t) > 5*time.Second {
				return nil, fmt.Errorf("change not seen after 5 s")
			}
			time.Sleep(time.Millisecond)
		}
		if err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.ListTasks(core.TaskFilter{Limit: 50})
			return err
		}); err != nil {
			return nil, err
		}
		d = append(d, time.Since(t))
	}
	out = append(out, row{"change on host A → screen on B", stat(d)})
	return out, nil
}

func withSearchPath(base, schema string) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

func msText(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// stat renders the median and p90 of d.
func stat(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	med := s[len(s)/2]
	p90 := s[min(len(s)-1, len(s)*9/10)]
	return fmt.Sprintf("%.1f (%.1f) ms", float64(med.Microseconds())/1000, float64(p90.Microseconds())/1000)
}

// concurrentSweeps measures what sweeping from every host at once costs:
// n sweepers, each on its own store handle, start together over the same
// due work (orphans to mark lost and prune). Conditional updates keep the
// result right; the waste is the work planned twice and counted raced.
func concurrentSweeps(terminal, active, due, n int, base string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "clawpit-bench-pg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lite := filepath.Join(dir, "registry.db")
	if err := p1data.Build(ctx, lite, p1data.Shape{Terminal: terminal, Active: active, Due: due}); err != nil {
		return err
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, k := range []int{1, n} {
		schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
		if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
			return err
		}
		u := withSearchPath(base, schema)
		src, err := store.Open(ctx, lite, store.Options{MustExist: true})
		if err != nil {
			return err
		}
		dst, err := store.Open(ctx, u, store.Options{})
		if err != nil {
			return err
		}
		if _, err := store.CopyToPostgres(ctx, src, dst, ""); err != nil {
			return err
		}
		src.Close()
		dst.Close()
		admin.Exec("SET search_path = " + schema + "; ANALYZE")
		sws := make([]*sweep.Sweeper, k)
		for i := range sws {
			db, err := store.Open(ctx, u, store.Options{MustExist: true})
			if err != nil {
				return err
			}
			defer db.Close()
			reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
			jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{Host: fmt.Sprintf("host-%d", i), Dir: filepath.Join(dir, "jobs")})
			reg.SetJobController(jobs)
			sws[i] = sweep.New(reg, jobs)
		}
		type res struct {
			rep *sweep.Report
			err error
		}
		out := make(chan res, k)
		start := make(chan struct{})
		for _, sw := range sws {
			go func() {
				<-start
				rep, err := sw.Sweep(ctx, false)
				out <- res{rep, err}
			}()
		}
		t := time.Now()
		close(start)
		var applied, raced int
		for range sws {
			r := <-out
			if r.err != nil {
				return r.err
			}
			raced += r.rep.Counts.Raced
			for _, a := range r.rep.Actions {
				if a.Result == sweep.ActionApplied {
					applied++
				}
			}
		}
		fmt.Printf("%d sweeper(s) at once over %d due orphans: %s wall, %d actions applied, %d raced\n",
			k, due, time.Since(t).Round(time.Millisecond), applied, raced)
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	}
	return nil
}
