// Command openclaw benchmarks clawpit's OpenClaw adapter on a registry of
// 1,000,000 terminal + 10,000 orphaned running tasks (the shape OpenClaw
// 2026.9.6 was measured on: `openclaw tasks maintenance` preview 239 s and
// 3.9 GB peak RSS). It builds the fixture once (kept at -dir), builds
// clawpit, then times `clawpit openclaw audit --json` and
// `clawpit openclaw maintenance --json` as child processes (wall time and
// peak RSS from getrusage; CPU time user+system, which a loaded machine
// inflates less than wall time) and the console's first load (open + the Load a
// first screen needs) in a child of its own.
//
//	go run -tags sqlite_fts5 ./bench/openclaw [-dir /tmp/clawpit-openclaw-bench] [-terminal 1000000] [-orphans 10000] [-runs 3]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/adapters/openclaw"
	"github.com/clawpit/clawpit/bench/internal/benchbin"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "clawpit-openclaw-bench"), "state directory of the fixture (kept between runs)")
	terminal := flag.Int("terminal", 1_000_000, "terminal tasks")
	orphans := flag.Int("orphans", 10_000, "orphaned running tasks")
	runs := flag.Int("runs", 3, "runs per measurement (the median is printed)")
	live := flag.Bool("live", false, "hold a WAL connection open while measuring, as OpenClaw's running gateway does (clawpit then reads through -shm, not immutable)")
	child := flag.String("child", "", "internal: run one measurement in this process")
	flag.Parse()
	if *child != "" {
		if err := runChild(*child, *dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *terminal, *orphans, *runs, *live); err != nil {
		fmt.Fprintln(os.Stderr, "bench/openclaw:", err)
		os.Exit(1)
	}
}

func run(dir string, terminal, orphans, runs int, live bool) error {
	ctx := context.Background()
	db := filepath.Join(dir, filepath.FromSlash(openclaw.DBFile))
	stamp := filepath.Join(dir, fmt.Sprintf("spec-%d-%d", terminal, orphans))
	if _, err := os.Stat(stamp); err != nil {
		os.RemoveAll(dir)
		if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
			return err
		}
		t0 := time.Now()
		fmt.Printf("building fixture: %d terminal + %d orphaned running tasks …\n", terminal, orphans)
		if err := openclaw.WriteFixture(ctx, db, openclaw.FixtureSpec{Now: time.Now(), Shapes: true,
			Terminal: terminal, Orphans: orphans, WAL: true}); err != nil {
			return err
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			return err
		}
		fmt.Printf("fixture built in %s\n", time.Since(t0).Round(time.Millisecond))
	}
	st, err := os.Stat(db)
	if err != nil {
		return err
	}
	fmt.Printf("fixture: %s (%.0f MB)\n", db, float64(st.Size())/1e6)
	if live {
		gw, err := sql.Open("sqlite3", "file:"+db+"?_journal_mode=WAL")
		if err != nil {
			return err
		}
		gw.SetMaxOpenConns(1)
		var n int
		if err := gw.QueryRow("SELECT count(*) FROM schema_meta").Scan(&n); err != nil {
			return err
		}
		defer gw.Close()
		fmt.Println("live: a WAL connection holds the registry open (as OpenClaw's gateway does)")
	}
	bin, err := benchbin.Build(dir, "")
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, m := range []struct {
		name  string
		bound time.Duration
		cmd   func() *exec.Cmd
	}{
		{"audit --json", time.Second, func() *exec.Cmd { return exec.Command(bin, "openclaw", "audit", "--json", "--state-dir", dir) }},
		{"maintenance --json", time.Second, func() *exec.Cmd {
			return exec.Command(bin, "openclaw", "maintenance", "--json", "--state-dir", dir)
		}},
		{"maintenance (text)", time.Second, func() *exec.Cmd { return exec.Command(bin, "openclaw", "maintenance", "--state-dir", dir) }},
		{"console first load", 500 * time.Millisecond, func() *exec.Cmd { return exec.Command(self, "-child", "console", "-dir", dir) }},
	} {
		var walls, cpus []time.Duration
		var rss int64
		for i := 0; i < runs; i++ {
			c := m.cmd()
			c.Stdout, c.Stderr = io.Discard, os.Stderr
			t0 := time.Now()
			if err := c.Run(); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			walls = append(walls, time.Since(t0))
			if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = max(rss, ru.Maxrss) // KiB on Linux
			}
			cpus = append(cpus, c.ProcessState.UserTime()+c.ProcessState.SystemTime())
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
		med := walls[len(walls)/2]
		ok := "met"
		if med >= m.bound || rss >= 150*1024 {
			ok = "MISSED"
		}
		fmt.Printf("%-20s median %7.1f ms (min %.1f; CPU %.1f ms)  peak RSS %6.1f MB   bound < %s, < 150 MB: %s\n", m.name,
			ms(med), ms(walls[0]), ms(cpus[len(cpus)/2]), float64(rss)/1024, m.bound, ok)
	}
	fmt.Println("OpenClaw 2026.9.6 on the same shape: `openclaw tasks maintenance` preview 239 s, 3.9 GB peak RSS; `openclaw tasks list --json` fails (Invalid string length)")
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runChild does one console first load: open, then the Load the console's
// first screen waits for.
func runChild(what, dir string) error {
	if what != "console" {
		return fmt.Errorf("unknown -child %q", what)
	}
	ctx := context.Background()
	d, err := openclaw.Open(ctx, dir)
	if err != nil {
		return err
	}
	src := openclaw.NewSource(d)
	defer src.Close()
	var n counter
	if _, err := src.Load(ctx, feed.LoadRequest{Full: true}, &n); err != nil {
		return err
	}
	fmt.Println(n)
	return nil
}

type counter struct{ tasks, runs, approvals, alerts int }

func (c *counter) Task(*core.Task)                { c.tasks++ }
func (c *counter) Run(*core.Run)                  { c.runs++ }
func (c *counter) Approval(*core.Approval)        { c.approvals++ }
func (c *counter) Job(*core.Job)                  {}
func (c *counter) Alert(*core.Notification)       { c.alerts++ }
func (c *counter) Gone(kind feed.Kind, id string) {}
