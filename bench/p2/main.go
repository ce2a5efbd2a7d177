// Command p2 measures bench/README.md P2: one CLI state change (`clawpit task
// start`), process start to exit, against a bare `sqlite3` UPDATE on the same
// database, run side by side (interleaved) so both see the same machine load.
//
//	go run -tags sqlite_fts5 ./bench/p2 [-n 200] [-tasks 5000] [-strict] [-before OLD]
//
// With -before, an older clawpit binary (OLD) is timed too, in the same
// rounds, on queued tasks of its own: before and after side by side.
// It builds clawpit, seeds a registry with -tasks tasks (mostly terminal
// history plus 2×n queued ones), then alternates: clawpit starts one queued
// task (queued → running, journaled), sqlite3 moves another queued task to
// running with one UPDATE (with clawpit's synchronous=NORMAL, so both skip
// the per-commit fsync). It prints medians, p90s and the ratio; target:
// median < 15 ms and ≤ 2× sqlite3. -strict exits 1 when a target is missed.
// Needs the sqlite3 CLI (apt-get install -y sqlite3).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawpit/clawpit/bench/internal/benchbin"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

func main() {
	n := flag.Int("n", 200, "timed runs of each command")
	total := flag.Int("tasks", 5000, "tasks in the seeded registry")
	strict := flag.Bool("strict", false, "exit 1 when P2 is missed")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	before := flag.String("before", "", "also time this clawpit binary (an older build), interleaved, on its own queued tasks")
	flag.Parse()
	if err := run(*n, *total, *strict, *keep, *before); err != nil {
		fmt.Fprintln(os.Stderr, "p2:", err)
		os.Exit(1)
	}
}

func run(n, total int, strict, keep bool, before string) error {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		return fmt.Errorf("the sqlite3 CLI is needed for the baseline: apt-get install -y sqlite3")
	}
	per := 2 // queued tasks per round: clawpit's and sqlite3's
	if before != "" {
		per = 3 // and the older build's
	}
	if total < per*n {
		total = per * n
	}
	dir, bin, done, err := benchbin.Workdir("clawpit-p2-", "", keep)
	if err != nil {
		return err
	}
	defer done()
	dbPath := filepath.Join(dir, "registry.db")
	queued, err := seed(dbPath, total, per*n)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}

	env := append(os.Environ(), "CLAWPIT_HOME="+dir)
	timeCmd := func(name string, args ...string) (time.Duration, error) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("%s %v: %v: %s", name, args, err, out)
		}
		return d, nil
	}
	// Warm the page cache and both binaries before timing.
	for i := 0; i < 5; i++ {
		if _, err := timeCmd(bin, "--db", dbPath, "task", "list", "--limit", "1"); err != nil {
			return err
		}
		if _, err := timeCmd(sqlite, dbPath, "SELECT count(*) FROM tasks"); err != nil {
			return err
		}
	}
	var cl, sq, tr, old []time.Duration
	now := time.Now().UnixMilli()
	for i := 0; i < n; i++ {
		d, err := timeCmd(bin, "--db", dbPath, "task", "start", queued[per*i])
		if err != nil {
			return err
		}
		cl = append(cl, d)
		if before != "" {
			if d, err = timeCmd(before, "--db", dbPath, "task", "start", queued[per*i+2]); err != nil {
				return err
			}
			old = append(old, d)
		}
		// Same durability as clawpit (WAL, synchronous=NORMAL: no fsync per
		// commit), so the ratio compares work, not fsync policy.
		upd := fmt.Sprintf("PRAGMA synchronous=NORMAL; UPDATE tasks SET status='running', started_at=%d, last_event_at=%d, rev=rev+1 WHERE id='%s' AND status='queued'",
			now+int64(i), now+int64(i), queued[per*i+1])
		if d, err = timeCmd(sqlite, dbPath, upd); err != nil {
			return err
		}
		sq = append(sq, d)
		if d, err = timeCmd("true"); err != nil {
			return err
		}
		tr = append(tr, d)
	}
	if err := verify(dbPath, queued); err != nil {
		return err
	}

	mc, ms := median(cl), median(sq)
	ratio := float64(mc) / float64(ms)
	fmt.Printf("P2: one CLI state change, process start to exit (%d runs each, interleaved; registry of %d tasks)\n", n, total)
	fmt.Printf("  %-28s median %6.2f ms   p90 %6.2f ms\n", "clawpit task start", ms2(mc), ms2(pct(cl, 90)))
	if before != "" {
		fmt.Printf("  %-28s median %6.2f ms   p90 %6.2f ms   (%s; ratio to sqlite3 %.2f×)\n", "clawpit task start, before", ms2(median(old)), ms2(pct(old, 90)),
			before, float64(median(old))/float64(ms))
	}
	fmt.Printf("  %-28s median %6.2f ms   p90 %6.2f ms\n", "sqlite3 UPDATE (bare)", ms2(ms), ms2(pct(sq, 90)))
	fmt.Printf("  (both: WAL, synchronous=NORMAL; machine load average %s)\n", loadAvg())
	fmt.Printf("  %-28s median %6.2f ms   (process start floor)\n", "true", ms2(median(tr)))
	ok := mc < 15*time.Millisecond && ratio <= 2
	verdict := "met"
	if !ok {
		verdict = "MISSED"
	}
	fmt.Printf("  ratio clawpit/sqlite3: %.2f×   target: median < 15 ms and ≤ 2× → %s\n", ratio, verdict)
	if strict && !ok {
		os.Exit(1)
	}
	return nil
}

// seed creates the registry with total tasks in one transaction: all but
// nQueued of them terminal history (succeeded), the rest queued. It returns
// the queued ids.
func seed(path string, total, nQueued int) ([]string, error) {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	now := core.TS(time.Now())
	var queued []string
	err = db.Update(ctx, func(tx core.Tx) error {
		for i := 0; i < total; i++ {
			t := &core.Task{
				ID: core.NewTaskID(), Runtime: core.RuntimeCLI, Status: core.TaskQueued,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly,
				Label: fmt.Sprintf("bench %d", i), CreatedAt: now,
			}
			if i >= nQueued {
				t.Status = core.TaskSucceeded
				t.StartedAt, t.EndedAt = now, now
				t.CleanupAfter = now.Add(7 * 24 * time.Hour)
			} else {
				queued = append(queued, t.ID)
			}
			if err := tx.InsertTask(t); err != nil {
				return err
			}
			if err := tx.AppendEvent(core.Event{At: now, Entity: core.EntityTask, EntityID: t.ID, To: string(t.Status), Actor: core.ActorRuntime, Reason: "seeded", Applied: true}); err != nil {
				return err
			}
		}
		return nil
	})
	return queued, err
}

// verify checks every timed command really changed its row.
func verify(path string, ids []string) error {
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(ctx, func(tx core.Tx) error {
		for _, id := range ids {
			t, err := tx.GetTask(id)
			if err != nil {
				return err
			}
			if t.Status != core.TaskRunning {
				return fmt.Errorf("task %s is %s after the run, want running", id, t.Status)
			}
		}
		return nil
	})
}

// loadAvg is the 1-minute load average from /proc/loadavg, "?" elsewhere:
// absolute times mean little on a busy machine, the ratio still does.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
