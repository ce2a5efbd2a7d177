package sweep_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
)

// Concurrency across OS processes (bench/README.md races): three sweepers and three
// runtime writers, each a child process running this test binary in a helper
// mode, hammer one registry; afterwards, and after one final sweep, every
// invariant holds. It runs for a minute (4 s with -short);
// CLAWPIT_SWEEP_STRESS=5m (any duration) overrides that.

const (
	envStressRole  = "CLAWPIT_SWEEP_HELPER" // sweeper | writer
	envStressDB    = "CLAWPIT_SWEEP_DB"
	envStressUntil = "CLAWPIT_SWEEP_UNTIL" // unix ms
	envStressSeed  = "CLAWPIT_SWEEP_SEED"
)

// stressThresholds: a short grace so grace-lost (and its late upgrade) happens
// within the run.
func stressThresholds() core.Thresholds {
	th := core.DefaultThresholds()
	th.Grace = 300 * time.Millisecond
	return th
}

func TestSweepConcurrentProcesses(t *testing.T) {
	// Issue 3 asks for three sweepers and runtime writers in separate
	// processes for a minute; -short (and CLAWPIT_SWEEP_STRESS) shorten it.
	d := time.Minute
	if testing.Short() {
		d = 4 * time.Second
	}
	if s := os.Getenv("CLAWPIT_SWEEP_STRESS"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("CLAWPIT_SWEEP_STRESS=%q: %v", s, err)
		}
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	until := time.Now().Add(d).UnixMilli()
	type child struct {
		name string
		cmd  *exec.Cmd
		out  strings.Builder
	}
	var kids []*child
	for i, role := range []string{"sweeper", "writer", "sweeper", "writer", "sweeper", "writer"} {
		k := &child{name: fmt.Sprintf("%s-%d", role, i)}
		k.cmd = exec.Command(os.Args[0], "-test.run=^TestSweepStressHelper$", "-test.count=1")
		k.cmd.Env = append(os.Environ(), envStressRole+"="+role, envStressDB+"="+path,
			envStressUntil+"="+strconv.FormatInt(until, 10), envStressSeed+"="+strconv.Itoa(i))
		k.cmd.Stdout, k.cmd.Stderr = &k.out, &k.out
		if err := k.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kids = append(kids, k)
	}
	var wg sync.WaitGroup
	for _, k := range kids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := k.cmd.Wait(); err != nil {
				t.Errorf("%s: %v\n%s", k.name, err, k.out.String())
			}
		}()
	}
	wg.Wait()
	for _, k := range kids {
		for _, l := range strings.Split(k.out.String(), "\n") {
			if strings.HasPrefix(l, "stats:") {
				t.Logf("%s %s", k.name, l)
			}
		}
	}

	// One final sweep, then the invariants.
	reg := core.NewRegistry(db, core.SystemClock{}, stressThresholds())
	rep, err := sweep.New(reg, nil).Sweep(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final sweep: %s", rep.Summary())
	raw := swRawDB(t, path)
	checks := []struct{ what, q string }{
		{"active task whose mirrored run ended", `SELECT t.id || ' ' || t.status FROM tasks t JOIN runs r
		   ON (r.run_id = t.run_id OR (t.runtime = 'cli' AND r.run_id = t.source_id))
		   WHERE t.status IN ('queued','running') AND r.ended_at IS NOT NULL`},
		{"succeeded downgraded (journal)", `SELECT entity_id || ' ' || to_state FROM events WHERE entity = 'task' AND applied = 1
		   AND from_state = 'succeeded' AND to_state IN ('queued','running','failed','timed_out','cancelled','lost')`},
		{"task once succeeded, now not", `SELECT t.id || ' ' || t.status FROM tasks t WHERE t.status <> 'succeeded' AND EXISTS
		   (SELECT 1 FROM events e WHERE e.entity = 'task' AND e.entity_id = t.id AND e.to_state = 'succeeded' AND e.applied = 1)`},
		{"succeeded task still carrying an error", `SELECT id || ' ' || error FROM tasks WHERE status = 'succeeded' AND error <> ''`},
		{"duplicate notification", `SELECT kind || ' ' || subject_id || ' x' || COUNT(*) FROM notifications GROUP BY kind, subject_id HAVING COUNT(*) > 1`},
		{"run timed out while waiting for approval", `SELECT r.run_id FROM runs r WHERE r.outcome = 'timeout' AND EXISTS
		   (SELECT 1 FROM approvals a WHERE a.run_id = r.run_id AND a.requested_at < r.ended_at
		    AND (a.decided_at IS NULL OR a.decided_at > r.ended_at))`},
	}
	for _, c := range checks {
		rows, err := raw.Query(c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		var bad []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			bad = append(bad, s)
		}
		rows.Close()
		if len(bad) > 0 {
			t.Errorf("%s: %d rows, e.g. %v", c.what, len(bad), bad[:min(5, len(bad))])
		}
	}
	var ic string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		t.Errorf("integrity_check: %q %v", ic, err)
	}
	var counts [4]int
	raw.QueryRow(`SELECT (SELECT COUNT(*) FROM tasks), (SELECT COUNT(*) FROM tasks WHERE status = 'lost'),
		(SELECT COUNT(*) FROM events WHERE reason LIKE '%replaces inferred lost%'), (SELECT COUNT(*) FROM notifications)`).
		Scan(&counts[0], &counts[1], &counts[2], &counts[3])
	t.Logf("tasks %d, lost now %d, lost→authoritative upgrades %d, notifications %d", counts[0], counts[1], counts[2], counts[3])
	if counts[0] < 20 {
		t.Errorf("only %d tasks written: the writers did not run", counts[0])
	}
}

// TestSweepStressHelper is the body of the child processes of
// TestSweepConcurrentProcesses; without its environment it does nothing.
func TestSweepStressHelper(t *testing.T) {
	role := os.Getenv(envStressRole)
	if role == "" {
		t.Skip("helper process for TestSweepConcurrentProcesses")
	}
	until, _ := strconv.ParseInt(os.Getenv(envStressUntil), 10, 64)
	seed, _ := strconv.Atoi(os.Getenv(envStressSeed))
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv(envStressDB), store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, stressThresholds())
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(time.Now().UnixNano())))
	done := func() bool { return time.Now().UnixMilli() >= until }
	switch role {
	case "sweeper":
		sw := sweep.New(reg, nil)
		sw.BatchSize = 1 + rng.IntN(8) // small batches: more interleaving
		var c sweep.Counts
		n := 0
		for !done() {
			var rep *sweep.Report
			if rng.IntN(3) == 0 {
				rep, err = sw.Watchdog(ctx)
			} else {
				rep, err = sw.Sweep(ctx, false)
			}
			if err != nil {
				t.Fatalf("sweep: %v", err)
			}
			n++
			c.Lost += rep.Counts.Lost
			c.TimedOut += rep.Counts.TimedOut
			c.Silent += rep.Counts.Silent
			c.Raced += rep.Counts.Raced
			time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
		}
		fmt.Printf("stats: %d passes, lost %d, timed out %d, silent %d, raced %d\n", n, c.Lost, c.TimedOut, c.Silent, c.Raced)
	case "writer":
		w := &stressWriter{t: t, ctx: ctx, reg: reg, rng: rng, prefix: fmt.Sprintf("w%d-", seed)}
		for !done() {
			w.step()
		}
		fmt.Printf("stats: %d steps\n", w.n)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// stressWriter plays an agent runtime (and an operator) through the registry.
type stressWriter struct {
	t      *testing.T
	ctx    context.Context
	reg    *core.Registry
	rng    *rand.Rand
	prefix string
	n      int
}

// check fails the helper on an error: refusals are Results, not errors, so
// any error here (a lock timeout included) is a real failure.
func (w *stressWriter) check(what string, err error) {
	if err != nil {
		w.t.Fatalf("%s: %v", what, err)
	}
}

func (w *stressWriter) step() {
	w.n++
	id := fmt.Sprintf("%s%d", w.prefix, w.n)
	r, actor := w.reg, core.ActorRuntime
	_, _, err := r.OpenSession(w.ctx, "parent", "", actor)
	w.check("open session", err)
	switch w.rng.IntN(4) {
	case 0, 1: // a sub-agent run with its two mirrored rows, then a random ending
		run := "run-" + id
		budget := time.Duration(100+w.rng.IntN(400)) * time.Millisecond
		_, err := r.RegisterRun(w.ctx, core.NewRun{RunID: run, ChildSession: "child-" + id, RequesterSession: "parent", InactivityBudget: budget}, actor)
		w.check("register", err)
		sub, err := r.CreateTask(w.ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: run, OwnerSession: "parent", ChildSession: "child-" + id}, actor)
		w.check("create", err)
		peer, err := r.CreateTask(w.ctx, core.NewTask{Runtime: core.RuntimeCLI, SourceID: run, OwnerSession: "child-" + id}, actor)
		w.check("create peer", err)
		for _, tk := range []*core.Task{sub, peer} {
			_, _, err := r.StartTask(w.ctx, tk.ID, "", actor)
			w.check("start", err)
		}
		if w.rng.IntN(3) == 0 {
			a, err := r.RequestApproval(w.ctx, core.NewApproval{Session: "child-" + id, RunID: run, Tool: "Bash", Command: "make " + id}, actor)
			w.check("request approval", err)
			time.Sleep(time.Duration(w.rng.IntN(600)) * time.Millisecond) // longer than the budget: the watchdog must wait
			if w.rng.IntN(2) == 0 {
				_, _, _, err = r.ApproveApproval(w.ctx, a.ID, core.ScopeOnce, core.OperatorActor())
			} else {
				_, _, err = r.DenyApproval(w.ctx, a.ID, "no", core.OperatorActor())
			}
			w.check("decide", err)
		}
		w.pause()
		switch w.rng.IntN(5) {
		case 0: // kill, then maybe a late completion (R1, R2)
			_, _, err := r.KillRun(w.ctx, run, "", core.OperatorActor())
			w.check("kill", err)
			w.pause()
			if w.rng.IntN(2) == 0 {
				_, _, _, err = r.CompleteRun(w.ctx, run, core.OutcomeOK, "", actor)
				w.check("late complete", err)
			}
		case 1:
			_, _, _, err := r.CompleteRun(w.ctx, run, core.OutcomeOK, "", actor)
			w.check("complete ok", err)
		case 2:
			_, _, _, err := r.CompleteRun(w.ctx, run, core.OutcomeError, "boom", actor)
			w.check("complete error", err)
		case 3:
			_, _, err := r.CancelTask(w.ctx, sub.ID, "", core.OperatorActor())
			w.check("cancel", err)
		default: // abandoned: the watchdog ends it
		}
	case 2: // an orphan (its session is gone): grace lost, sometimes upgraded later
		tk, err := r.CreateTask(w.ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "gone-" + id}, actor)
		w.check("create orphan", err)
		_, _, err = r.StartTask(w.ctx, tk.ID, "", actor)
		w.check("start orphan", err)
		time.Sleep(time.Duration(w.rng.IntN(700)) * time.Millisecond)
		st := []core.TaskStatus{core.TaskSucceeded, core.TaskFailed}[w.rng.IntN(2)]
		_, _, err = r.FinishTask(w.ctx, tk.ID, core.Finish{Status: st}, actor)
		w.check("finish orphan", err)
	default: // a scheduled task that ends without output (R7), twice reported
		tk, err := r.CreateTask(w.ctx, core.NewTask{Runtime: core.RuntimeCron, OwnerSession: "parent", Label: id}, actor)
		w.check("create cron", err)
		_, _, err = r.StartTask(w.ctx, tk.ID, "", actor)
		w.check("start cron", err)
		for i := 0; i < 2; i++ {
			_, _, err = r.FinishTask(w.ctx, tk.ID, core.Finish{Status: core.TaskSucceeded}, actor)
			w.check("finish cron", err)
		}
		// Another writer's run, to race kills and completions across processes.
		runs, err := r.ListRuns(w.ctx, core.RunFilter{RunningOnly: true, Limit: 10})
		w.check("list runs", err)
		if len(runs) > 0 {
			other := runs[w.rng.IntN(len(runs))].RunID
			if w.rng.IntN(2) == 0 {
				_, _, err = r.KillRun(w.ctx, other, "", core.OperatorActor())
			} else {
				_, _, _, err = r.CompleteRun(w.ctx, other, core.OutcomeOK, "", actor)
			}
			if err != nil && !errors.Is(err, core.ErrNotFound) { // pruned meanwhile is fine
				w.check("cross-process kill/complete", err)
			}
		}
	}
}

func (w *stressWriter) pause() {
	time.Sleep(time.Duration(w.rng.IntN(50)) * time.Millisecond)
}

// swRawDB opens a plain SQL connection to the registry file for invariant
// queries the Go API has no reason to offer.
func swRawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
