// Command p1 measures bench/README.md P1: one maintenance sweep over a registry of
// 1,000,000 terminal tasks and 10,000 active ones, against the same active set
// over 10,000 terminal tasks, side by side: time per sweep (dry run and
// applied) and peak resident memory of the sweeping process.
//
//	go run -tags sqlite_fts5 ./bench/p1 [-terminal 1000000] [-small 10000] [-active 10000] [-due 100]
//	                  [-runs 15] [-rounds 3] [-dir D] [-keep] [-json]
//
// Both registries are built first (bulk INSERT … SELECT in one transaction).
// Then, for -rounds rounds, a fresh child process (this program with
// -measure) sweeps the large one and another the small one, -runs/-rounds
// sweeps each: interleaving the two spreads a busy machine's load over both
// sides of the ratio. Each sweep is timed in wall time and in CPU time (user +
// system of the child, getrusage): CPU time barely moves with other load on
// the machine, wall time does. Peak RSS is the child's VmHWM. The child opens
// the registry as `clawpit sweep` does: store.Open, default thresholds, job
// liveness through supervisor.Jobs. In the first round the first applied sweep does
// the due work (-due idle orphans, marked lost and pruned); every other
// applied sweep is steady (nothing to do but read).
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
	"syscall"
	"time"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
)

// sample is one timed sweep.
type sample struct {
	WallMs float64 `json:"wall_ms"`
	CPUMs  float64 `json:"cpu_ms"`
}

// result is what a -measure child reports (JSON on stdout), and, merged over
// rounds, one column of the table.
type result struct {
	Terminal     int      `json:"terminal"`
	OpenMs       float64  `json:"open_ms"`
	Dry          []sample `json:"dry"`
	First        *sample  `json:"first_applied,omitempty"`
	FirstSummary string   `json:"first_applied_summary,omitempty"`
	// FirstMaxLockMs is the longest single write transaction (write lock
	// held: from BEGIN IMMEDIATE to the end of COMMIT) of the first applied
	// sweep; FirstTxs is how many it ran.
	FirstMaxLockMs float64  `json:"first_max_lock_ms,omitempty"`
	FirstTxs       int      `json:"first_txs,omitempty"`
	Steady         []sample `json:"steady"`
	PeakRSSKB      int64    `json:"peak_rss_kb"`
	DBBytes        int64    `json:"db_bytes"`
	BuildSeconds   float64  `json:"build_seconds"`
}

func main() {
	terminal := flag.Int("terminal", 1_000_000, "terminal tasks in the large registry")
	small := flag.Int("small", 10_000, "terminal tasks in the small registry")
	active := flag.Int("active", 10_000, "active tasks in both")
	due := flag.Int("due", 100, "idle orphans (due work) in both")
	runs := flag.Int("runs", 15, "sweeps per series and registry, over all rounds")
	rounds := flag.Int("rounds", 3, "alternations between the two registries")
	dir := flag.String("dir", "", "where to build the registries (default a temporary directory)")
	keep := flag.Bool("keep", false, "keep the registries")
	asJSON := flag.Bool("json", false, "print the results as JSON")
	measure := flag.String("measure", "", "internal: sweep this registry and report")
	first := flag.Bool("first", false, "internal: with -measure, do the first applied sweep (due work)")
	cpuProfile := flag.String("cpuprofile", "", "with -measure: write a CPU profile of the sweeps")
	flag.Parse()

	if *measure != "" {
		if *cpuProfile != "" {
			if f, err := os.Create(*cpuProfile); err == nil {
				pprof.StartCPUProfile(f)
				defer pprof.StopCPUProfile()
			}
		}
		if err := measureOne(*measure, *runs, *first); err != nil {
			fmt.Fprintln(os.Stderr, "p1 measure:", err)
			os.Exit(1)
		}
		return
	}
	if *rounds < 1 || *runs < *rounds {
		fmt.Fprintln(os.Stderr, "p1: want -rounds ≥ 1 and -runs ≥ -rounds")
		os.Exit(2)
	}
	if err := run(*terminal, *small, *active, *due, *runs, *rounds, *dir, *keep, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "p1:", err)
		os.Exit(1)
	}
}

func run(terminal, small, active, due, runs, rounds int, dir string, keep, asJSON bool) error {
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
	start, err := supervisor.ProcStartTime(os.Getpid())
	if err != nil {
		return fmt.Errorf("own start time: %w", err)
	}
	sizes := []int{terminal, small}
	results := make([]result, len(sizes))
	paths := make([]string, len(sizes))
	for i, n := range sizes {
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
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		results[i] = result{Terminal: n, DBBytes: fi.Size(), BuildSeconds: time.Since(t0).Seconds()}
		paths[i] = path
		fmt.Fprintf(os.Stderr, "  built in %.1f s (%d MB)\n", results[i].BuildSeconds, fi.Size()>>20)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for round := 0; round < rounds; round++ {
		per := runs / rounds
		if round < runs%rounds {
			per++
		}
		for i, path := range paths {
			fmt.Fprintf(os.Stderr, "round %d/%d: %d sweeps of %s in a child process\n", round+1, rounds, per, filepath.Base(path))
			args := []string{"-measure", path, "-runs", strconv.Itoa(per)}
			if round == 0 {
				args = append(args, "-first")
			}
			cmd := exec.Command(self, args...)
			cmd.Stderr = os.Stderr
			outb, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("measure %s: %w", path, err)
			}
			var r result
			if err := json.Unmarshal(outb, &r); err != nil {
				return fmt.Errorf("measure %s: %w (%s)", path, err, outb)
			}
			acc := &results[i]
			acc.Dry = append(acc.Dry, r.Dry...)
			acc.Steady = append(acc.Steady, r.Steady...)
			if r.First != nil {
				acc.First, acc.FirstSummary = r.First, r.FirstSummary
				acc.FirstMaxLockMs, acc.FirstTxs = r.FirstMaxLockMs, r.FirstTxs
			}
			acc.PeakRSSKB = max(acc.PeakRSSKB, r.PeakRSSKB)
			acc.OpenMs = max(acc.OpenMs, r.OpenMs)
		}
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	print(results, runs, rounds)
	return nil
}

func pick(s []sample, cpu bool) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.WallMs
		if cpu {
			out[i] = x.CPUMs
		}
	}
	return out
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

func print(rs []result, runs, rounds int) {
	big, sm := rs[0], rs[1]
	col := func(n int) string { return fmt.Sprintf("%s terminal", group(n)) }
	fmt.Printf("P1: one sweep, %d sweeps per row and registry in %d interleaved rounds; median (min)\n\n", runs, rounds)
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
	series := func(name string, a, b []sample, target string) {
		line(name+", wall", median(pick(a, false)), minOf(pick(a, false)), median(pick(b, false)), minOf(pick(b, false)), "ms", target)
		line(name+", CPU", median(pick(a, true)), minOf(pick(a, true)), median(pick(b, true)), minOf(pick(b, true)), "ms", "")
	}
	series("dry run", big.Dry, sm.Dry, "< 100 ms, ratio ≤ 1.5×")
	series("applied (steady)", big.Steady, sm.Steady, "< 100 ms, ratio ≤ 1.5×")
	if big.First != nil && sm.First != nil {
		line("applied (first: due work), wall", big.First.WallMs, -1, sm.First.WallMs, -1, "ms", "")
		line("applied (first: due work), CPU", big.First.CPUMs, -1, sm.First.CPUMs, -1, "ms", "")
		line("  longest write-lock hold", big.FirstMaxLockMs, -1, sm.FirstMaxLockMs, -1, "ms", "≤ 100 ms")
		line("  write transactions", float64(big.FirstTxs), -1, float64(sm.FirstTxs), -1, "", "")
	}
	line("peak RSS of the sweeping process", float64(big.PeakRSSKB)/1024, -1, float64(sm.PeakRSSKB)/1024, -1, "MB", "< 100 MB")
	line("open registry (not in the sweep)", big.OpenMs, -1, sm.OpenMs, -1, "ms", "")
	line("registry file", float64(big.DBBytes)/(1<<20), -1, float64(sm.DBBytes)/(1<<20), -1, "MB", "")
	line("build (bulk insert, one tx)", big.BuildSeconds, -1, sm.BuildSeconds, -1, "s", "")
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("\nload average at the end: %s", b)
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

// measureOne sweeps one registry: runs dry runs, then (first) one applied
// sweep that does the due work, then runs steady applied sweeps; it prints a
// result as JSON.
func measureOne(path string, runs int, first bool) error {
	ctx := context.Background()
	var r result
	t0 := time.Now()
	db, err := store.Open(ctx, path, store.Options{MustExist: true})
	if err != nil {
		return err
	}
	defer db.Close()
	lt := &lockTimer{Store: db}
	reg := core.NewRegistry(lt, core.SystemClock{}, core.DefaultThresholds())
	jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{})
	reg.SetJobController(jobs)
	sw := sweep.New(reg, jobs)
	r.OpenMs = ms(time.Since(t0))
	timed := func(dry bool) (sample, *sweep.Report, error) {
		c, t := cpuTime(), time.Now()
		rep, err := sw.Sweep(ctx, dry)
		return sample{WallMs: ms(time.Since(t)), CPUMs: ms(cpuTime() - c)}, rep, err
	}
	for i := 0; i < runs; i++ {
		s, _, err := timed(true)
		if err != nil {
			return err
		}
		r.Dry = append(r.Dry, s)
	}
	if first {
		lt.reset()
		s, rep, err := timed(false)
		if err != nil {
			return err
		}
		r.First, r.FirstSummary = &s, rep.Summary()
		r.FirstMaxLockMs, r.FirstTxs = ms(lt.max), lt.n
	}
	for i := 0; i < runs; i++ {
		s, rep, err := timed(false)
		if err != nil {
			return err
		}
		if len(rep.Actions) != 0 {
			return fmt.Errorf("steady sweep still had work: %s", rep.Summary())
		}
		r.Steady = append(r.Steady, s)
	}
	r.PeakRSSKB = vmHWM()
	return json.NewEncoder(os.Stdout).Encode(r)
}

// lockTimer is a core.Store that times every write transaction: from the
// moment fn runs (BEGIN IMMEDIATE has taken the write lock) until Update
// returns (COMMIT done, lock released). Used by one goroutine at a time.
type lockTimer struct {
	core.Store
	max time.Duration
	n   int
}

func (l *lockTimer) reset() { l.max, l.n = 0, 0 }

func (l *lockTimer) Update(ctx context.Context, fn func(core.Tx) error) error {
	var t0 time.Time
	err := l.Store.Update(ctx, func(tx core.Tx) error {
		t0 = time.Now()
		return fn(tx)
	})
	if !t0.IsZero() {
		l.n++
		l.max = max(l.max, time.Since(t0))
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
