// Command p1 measures SPEC §11 P1: one maintenance sweep over a registry of
// 1,000,000 terminal tasks and 10,000 active ones, against the same active set
// over 10,000 terminal tasks, side by side: time (median of -runs sweeps, dry
// run and applied) and peak resident memory of the sweeping process.
//
//	go run ./bench/p1 [-terminal 1000000] [-small 10000] [-active 10000] [-due 100] [-runs 7] [-dir D] [-keep]
//
// Each registry is built first (bulk INSERT … SELECT in one transaction), then
// swept by a fresh child process (this program with -measure) so its peak RSS
// (VmHWM) is the sweep's alone. The child opens the registry like `clawpit
// sweep` does: store.Open, the default thresholds, and job liveness through
// core.Jobs. The applied series: the first sweep does the due work (-due
// orphans marked lost and pruned); the median is over the steady sweeps that
// follow.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// result is what a -measure child reports (JSON on stdout).
type result struct {
	Terminal     int       `json:"terminal"`
	OpenMs       float64   `json:"open_ms"`
	DryMs        []float64 `json:"dry_ms"`
	DryActions   int       `json:"dry_actions"`
	FirstMs      float64   `json:"first_applied_ms"`
	FirstSummary string    `json:"first_applied"`
	SteadyMs     []float64 `json:"steady_ms"`
	PeakRSSKB    int64     `json:"peak_rss_kb"`
	DBBytes      int64     `json:"db_bytes"`
	BuildSeconds float64   `json:"build_seconds"`
}

func main() {
	terminal := flag.Int("terminal", 1_000_000, "terminal tasks in the large registry")
	small := flag.Int("small", 10_000, "terminal tasks in the small registry")
	active := flag.Int("active", 10_000, "active tasks in both")
	due := flag.Int("due", 100, "idle orphans (due work) in both")
	runs := flag.Int("runs", 7, "sweeps per series (median reported)")
	dir := flag.String("dir", "", "where to build the registries (default a temporary directory)")
	keep := flag.Bool("keep", false, "keep the registries")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	measure := flag.String("measure", "", "internal: sweep this registry and report")
	cpuProfile := flag.String("cpuprofile", "", "with -measure: write a CPU profile of the sweeps")
	flag.Parse()

	if *measure != "" {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if err := measureOne(*measure, *runs); err != nil {
			fmt.Fprintln(os.Stderr, "p1 measure:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*terminal, *small, *active, *due, *runs, *dir, *keep, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "p1:", err)
		os.Exit(1)
	}
}

func run(terminal, small, active, due, runs int, dir string, keep, asJSON bool) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "clawpit-p1-")
		if err != nil {
			return err
		}
		dir = d
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	start, err := core.ProcStartTime(os.Getpid())
	if err != nil {
		return fmt.Errorf("own start time: %w", err)
	}
	var results []result
	for _, n := range []int{terminal, small} {
		path := filepath.Join(dir, fmt.Sprintf("registry-%d.db", n))
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix)
		}
		fmt.Fprintf(os.Stderr, "building %s: %d terminal + %d active (+%d due) tasks ...\n", path, n, active, due)
		t0 := time.Now()
		// This process stays alive while the children sweep: it is the
		// supervisor the running jobs name, so job liveness finds them alive.
		if err := p1data.Build(ctx, path, p1data.Shape{Terminal: n, Active: active, Due: due, PID: os.Getpid(), PIDStart: start}); err != nil {
			return err
		}
		built := time.Since(t0)
		fi, _ := os.Stat(path)
		fmt.Fprintf(os.Stderr, "  built in %.1f s (%d MB); sweeping in a child process ...\n", built.Seconds(), fi.Size()>>20)
		self, err := os.Executable()
		if err != nil {
			return err
		}
		cmd := exec.Command(self, "-measure", path, "-runs", strconv.Itoa(runs))
		cmd.Stderr = os.Stderr
		outb, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("measure %s: %w", path, err)
		}
		var r result
		if err := json.Unmarshal(outb, &r); err != nil {
			return fmt.Errorf("measure %s: %w (%s)", path, err, outb)
		}
		r.Terminal, r.DBBytes, r.BuildSeconds = n, fi.Size(), built.Seconds()
		results = append(results, r)
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	print(results, runs)
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func print(rs []result, runs int) {
	big, sm := rs[0], rs[1]
	col := func(n int) string { return fmt.Sprintf("%s terminal", group(n)) }
	fmt.Printf("P1 sweep over the same active set; times: median (min) of %d sweeps\n\n", runs)
	fmt.Printf("%-34s %22s %22s %8s   %s\n", "", col(big.Terminal), col(sm.Terminal), "ratio", "target")
	line := func(name string, a, amin, b, bmin float64, unit, target string) {
		ratio := ""
		if b > 0 {
			ratio = fmt.Sprintf("%.2f×", a/b)
		}
		cell := func(v, m float64) string {
			if m < 0 {
				return fmt.Sprintf("%.1f %s", v, unit)
			}
			return fmt.Sprintf("%.1f (%.1f) %s", v, m, unit)
		}
		fmt.Printf("%-34s %22s %22s %8s   %s\n", name, cell(a, amin), cell(b, bmin), ratio, target)
	}
	line("sweep, dry run", median(big.DryMs), minOf(big.DryMs), median(sm.DryMs), minOf(sm.DryMs), "ms", "< 100 ms, ratio ≤ 1.5×")
	line("sweep, applied (steady)", median(big.SteadyMs), minOf(big.SteadyMs), median(sm.SteadyMs), minOf(sm.SteadyMs), "ms", "< 100 ms, ratio ≤ 1.5×")
	line("sweep, applied (first: due work)", big.FirstMs, -1, sm.FirstMs, -1, "ms", "")
	line("peak RSS of the sweeping process", float64(big.PeakRSSKB)/1024, -1, float64(sm.PeakRSSKB)/1024, -1, "MB", "< 100 MB")
	line("open registry (not in the sweep)", big.OpenMs, -1, sm.OpenMs, -1, "ms", "")
	line("registry file", float64(big.DBBytes)/(1<<20), -1, float64(sm.DBBytes)/(1<<20), -1, "MB", "")
	line("build (bulk insert, one tx)", big.BuildSeconds, -1, sm.BuildSeconds, -1, "s", "")
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("\nload average: %s", b)
	}
	fmt.Printf("first applied sweep, %s terminal: %s\n", group(big.Terminal), big.FirstSummary)
	fmt.Printf("first applied sweep, %s terminal: %s\n", group(sm.Terminal), sm.FirstSummary)
}

// group prints n with thousands separators.
func group(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// measureOne sweeps one registry: runs dry runs, then one applied sweep that
// does the due work, then runs steady applied sweeps; prints a result.
func measureOne(path string, runs int) error {
	ctx := context.Background()
	var r result
	t0 := time.Now()
	db, err := store.Open(ctx, path, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	jobs := core.NewJobs(reg, core.JobsOptions{})
	reg.SetJobController(jobs)
	sw := core.NewSweeper(reg, jobs)
	r.OpenMs = ms(time.Since(t0))
	timed := func(dry bool) (float64, *core.SweepReport, error) {
		t := time.Now()
		rep, err := sw.Sweep(ctx, dry)
		return ms(time.Since(t)), rep, err
	}
	for i := 0; i < runs; i++ {
		d, rep, err := timed(true)
		if err != nil {
			return err
		}
		r.DryMs = append(r.DryMs, d)
		r.DryActions = len(rep.Actions)
	}
	d, rep, err := timed(false)
	if err != nil {
		return err
	}
	r.FirstMs, r.FirstSummary = d, rep.Summary()
	for i := 0; i < runs; i++ {
		d, rep, err := timed(false)
		if err != nil {
			return err
		}
		if len(rep.Actions) != 0 {
			return fmt.Errorf("steady sweep still had work: %s", rep.Summary())
		}
		r.SteadyMs = append(r.SteadyMs, d)
	}
	r.PeakRSSKB = vmHWM()
	return json.NewEncoder(os.Stdout).Encode(r)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// vmHWM is the process's peak resident set size in KiB (/proc/self/status).
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}
