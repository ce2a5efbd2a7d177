// Command idle measures what an idle console costs, side by side for a
// baseline build and this one: its CPU and the bytes it writes to the
// terminal, and the CPU of `clawpit serve` with 20 idle SSH sessions.
//
//	go run -tags sqlite_fts5 ./bench/idle [-base REV] [-tasks 30] [-idle 60s] [-sessions 20] [-rounds 1] [-keep]
//
// It builds clawpit from the working tree and from -base (a git revision,
// default the merge-base of HEAD and main: on a branch, the main it started
// from; extracted with `git archive` into a temporary directory, built with
// the same module cache), then for each build, -rounds times, alternating:
//
//   - Console: a fresh registry of -tasks tasks whose last activity is 3 to
//     3+tasks×7 minutes old (as on a console left open), the real console
//     (default flags: embedded sweeper every 60 s, watchdog every 5 s; its
//     own data_version reads at change hints, or every 200 ms in builds
//     without them) in a detached tmux window of 120×40. Once the tasks are
//     on screen and 5 s have passed, for -idle: its utime+stime (from /proc)
//     as a share of one core, and every byte it writes to the terminal
//     (tmux pipe-pane) per second.
//   - serve: `go run ./bench/serve -bin <build> -sessions N -idle D -n 1
//     -age 2h` (its registry of 1,000 tasks created two hours ago, sessions
//     under tmux over OpenSSH); its "server CPU" line.
//
// Both builds run on registries seeded by this tree's store, at its schema
// version; a build older than the last schema migration refuses them, so a
// -base that predates the last commit touching store/sqlite/migrations or
// store/postgres/migrations (store/migrations and store/pgmigrations
// before) is refused up front, naming that commit.
//
// Needs git, tmux and ssh. Bounds: console < 0.5% of a core and < 100 B/s;
// 20 idle SSH sessions < 1.5% in total.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/bench/internal/benchbin"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

func main() {
	base := flag.String("base", "", "git revision of the baseline build (default: git merge-base HEAD main)")
	tasks := flag.Int("tasks", 30, "tasks in the console's registry")
	idle := flag.Duration("idle", 60*time.Second, "measurement window with nothing happening")
	sessions := flag.Int("sessions", 20, "idle SSH sessions for the serve measurement (0 skips it)")
	rounds := flag.Int("rounds", 1, "measurements of each build, alternating")
	keep := flag.Bool("keep", false, "keep the temporary directory (and print it)")
	flag.Parse()
	if err := run(*base, *tasks, *idle, *sessions, *rounds, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench/idle:", err)
		os.Exit(1)
	}
}

type build struct{ name, bin string }

func run(base string, tasks int, idle time.Duration, sessions, rounds int, keep bool) error {
	for _, tool := range []string{"git", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is needed", tool)
		}
	}
	base, err := baseRev(base)
	if err != nil {
		return err
	}
	dir, cur, done, err := benchbin.Workdir("clawpit-bench-idle-", "", keep)
	if err != nil {
		return err
	}
	defer done()
	old, err := buildRev(dir, base)
	if err != nil {
		return err
	}
	var serveBench string
	if sessions > 0 {
		serveBench = filepath.Join(dir, "bench-serve")
		if err := goBuild(".", serveBench, "./bench/serve"); err != nil {
			return err
		}
	}
	builds := []build{{"before (" + base + ")", old}, {"after (working tree)", cur}}
	type figures struct{ cpu, bps, serve []float64 }
	res := make([]figures, len(builds))
	for r := range rounds {
		for i, b := range builds {
			cpu, bps, err := console(filepath.Join(dir, fmt.Sprintf("c%d-%d", r, i)), b.bin, tasks, idle)
			if err != nil {
				return fmt.Errorf("%s: console: %w", b.name, err)
			}
			res[i].cpu, res[i].bps = append(res[i].cpu, cpu), append(res[i].bps, bps)
			fmt.Printf("  round %d %-24s console %.2f%% of a core, %.0f B/s to the terminal\n", r+1, b.name, cpu, bps)
			if sessions > 0 {
				s, err := serve(serveBench, b.bin, sessions, idle)
				if err != nil {
					return fmt.Errorf("%s: serve: %w", b.name, err)
				}
				res[i].serve = append(res[i].serve, s)
				fmt.Printf("  round %d %-24s serve, %d idle SSH sessions: %.2f%% of a core\n", r+1, b.name, sessions, s)
			}
		}
	}
	fmt.Printf("idle console (%d tasks, 120×40, %s) and clawpit serve (%d idle SSH sessions, %s); load average %s\n",
		tasks, idle, sessions, idle, loadAvg())
	for i, b := range builds {
		line := fmt.Sprintf("  %-24s console CPU %s%%, terminal %s B/s", b.name, span(res[i].cpu, 2), span(res[i].bps, 0))
		if sessions > 0 {
			line += fmt.Sprintf("; serve CPU %s%%", span(res[i].serve, 2))
		}
		fmt.Println(line)
	}
	fmt.Println("  bounds: console < 0.5% and < 100 B/s; serve with 20 sessions < 1.5%")
	return nil
}

// baseRev resolves -base: rev itself, or by default the merge-base of HEAD
// and main (on main itself that is HEAD: before and after are then the
// same commit, plus the working tree's changes). Errors: rev unknown to
// git, or older than the last schema migration (its build would refuse the
// registries seeded here).
func baseRev(rev string) (string, error) {
	git := func(args ...string) (string, error) {
		b, err := exec.Command("git", args...).Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if rev == "" {
		mb, err := git("merge-base", "HEAD", "main")
		if err != nil {
			return "", fmt.Errorf("no -base and no merge-base with main: %w", err)
		}
		rev = mb
	}
	full, err := git("rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("-base %s: %w", rev, err)
	}
	mig, err := git("log", "-1", "--format=%h", "--", "store/migrations", "store/pgmigrations", "store/sqlite/migrations", "store/postgres/migrations")
	if err != nil {
		return "", err
	}
	if mig != "" {
		if err := exec.Command("git", "merge-base", "--is-ancestor", mig, full).Run(); err != nil {
			return "", fmt.Errorf("-base %s predates the last schema migration (%s): its build refuses the registries this tree seeds; use %s or later", rev, mig, mig)
		}
	}
	short, err := git("rev-parse", "--short", full)
	if err != nil {
		return "", err
	}
	return short, nil
}

// buildRev extracts rev with git archive into dir/base and builds it there.
func buildRev(dir, rev string) (string, error) {
	src := filepath.Join(dir, "base")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	arch := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, src)
	arch.Stderr = os.Stderr
	if err := arch.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %w", rev, err)
	}
	bin := filepath.Join(dir, "clawpit-base")
	return bin, goBuild(src, bin, ".")
}

func goBuild(dir, out, pkg string) error {
	c := exec.Command("go", "build", "-tags", store.BuildTags, "-o", out, pkg)
	c.Dir, c.Stdout, c.Stderr = dir, os.Stderr, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w", pkg, dir, err)
	}
	return nil
}

// console measures one idle console: CPU share (percent of a core) and
// bytes per second written to its terminal.
func console(dir, bin string, tasks int, idle time.Duration) (cpu, bps float64, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	db := filepath.Join(dir, "registry.db")
	if err := seed(db, tasks); err != nil {
		return 0, 0, err
	}
	sock := fmt.Sprintf("clawpit-bench-idle-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	tm := func(args ...string) (string, error) {
		c := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		c.Env = append(os.Environ(), "TMUX=")
		b, err := c.CombinedOutput()
		if err != nil {
			return string(b), fmt.Errorf("tmux %v: %v: %s", args, err, b)
		}
		return string(b), nil
	}
	defer tm("kill-server")
	cmd := fmt.Sprintf("exec env CLAWPIT_HOME='%s' TERM=screen-256color '%s' --db '%s'", filepath.Join(dir, "home"), bin, db)
	if _, err := tm("new-session", "-d", "-s", "b", "-x", "120", "-y", "40", cmd); err != nil {
		return 0, 0, err
	}
	if _, err := tm("set", "-g", "status", "off"); err != nil {
		return 0, 0, err
	}
	want := " 1 Tasks " + strconv.Itoa(tasks) + " "
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := tm("capture-pane", "-p", "-t", "b")
		if err != nil {
			return 0, 0, err
		}
		if strings.Contains(s, want) {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%q not on screen after 30 s:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err := tm("display-message", "-p", "-t", "b", "#{pane_pid}")
	if err != nil {
		return 0, 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, 0, fmt.Errorf("pane pid %q: %w", out, err)
	}
	time.Sleep(5 * time.Second) // the first load, sweep and header read settle
	log := filepath.Join(dir, "tty.out")
	if _, err := tm("pipe-pane", "-o", "-t", "b", "cat > '"+log+"'"); err != nil {
		return 0, 0, err
	}
	c0, t0 := cpuTicks(pid), time.Now()
	time.Sleep(idle)
	c1, el := cpuTicks(pid), time.Since(t0)
	if _, err := tm("pipe-pane", "-t", "b"); err != nil {
		return 0, 0, err
	}
	time.Sleep(200 * time.Millisecond)
	st, err := os.Stat(log)
	if err != nil {
		return 0, 0, err
	}
	return 100 * float64(c1-c0) / clkTck / el.Seconds(), float64(st.Size()) / el.Seconds(), nil
}

// seed creates a registry of n running tasks whose last activity is 3 to
// 3+7n minutes old.
func seed(path string, n int) error {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	now := time.Now()
	clk := core.NewFakeClock(now)
	reg := core.NewRegistry(db, clk, core.DefaultThresholds())
	if _, _, err := reg.OpenSession(ctx, "bench", "", "bench"); err != nil {
		return err
	}
	for i := range n {
		clk.Set(now.Add(-time.Duration(3+7*(n-i)) * time.Minute))
		if _, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "bench", Label: fmt.Sprintf("idle-%d", i)}, "bench"); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

var serveCPURe = regexp.MustCompile(`server CPU, all \d+ sessions idle for [^:]+: ([0-9.]+)% of one core`)

// serve runs bench/serve against bin and returns its idle CPU figure.
func serve(benchServe, bin string, sessions int, idle time.Duration) (float64, error) {
	c := exec.Command(benchServe, "-bin", bin, "-sessions", strconv.Itoa(sessions), "-idle", idle.String(), "-n", "1", "-age", "2h")
	c.Stderr = os.Stderr
	out, err := c.Output()
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, out)
	}
	m := serveCPURe.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no CPU figure in:\n%s", out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// clkTck is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clkTck = 100

// cpuTicks is utime+stime of pid in clock ticks.
func cpuTicks(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			return u + k
		}
	}
	return 0
}

// span is "x" for one figure, "min–max (median m)" for more.
func span(v []float64, prec int) string {
	if len(v) == 0 {
		return "-"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	if len(v) == 1 {
		return f(v[0])
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return f(lo) + "–" + f(hi) + " (median " + f(s[len(s)/2]) + ")"
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
