package e2e

// Many OS processes racing kill / complete / cancel / finish / sweep on the
// same runs (bench/README.md reliability: races), plus the maintenance API marking
// tasks lost in between. Afterwards every invariant holds.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/storetest"
)

// On PostgreSQL the processes run as two simulated hosts sharing the
// registry (two CLAWPIT_HOMEs, two CLAWPIT_HOSTs), sweeps from both.
func TestRaceKillCompleteCancelFinish(t *testing.T) {
	storetest.Each(t, testRaceKillCompleteCancelFinish)
}

func testRaceKillCompleteCancelFinish(t *testing.T) {
	const runs = 100
	c := newCLI(t)
	hosts := []*cli{c}
	if storetest.OnPostgres(t) {
		c.db = storetest.Location(t, "registry.db")
		c.env = []string{core.EnvHost + "=host-a"}
		b := *c
		b.home, b.env = filepath.Join(t.TempDir(), "home-b"), []string{core.EnvHost + "=host-b"}
		hosts = append(hosts, &b)
	}
	ctx := context.Background()

	// Setup through the Go API (fast): each run has a started subagent task
	// (run_id = R) and a started cli peer task (source_id = R).
	reg, closeReg := c.registry()
	type pair struct{ run, sub, peer string }
	pairs := make([]pair, runs)
	for i := range pairs {
		p := pair{run: fmt.Sprintf("run-%03d", i)}
		owner := "owner-" + p.run
		if _, _, err := reg.OpenSession(ctx, owner, "", core.ActorRuntime); err != nil {
			t.Fatal(err)
		}
		// A long inactivity budget keeps the sweeper's watchdog (R6) out of
		// this test's story.
		if _, err := reg.RegisterRun(ctx, core.NewRun{RunID: p.run, ChildSession: "child-" + p.run, RequesterSession: owner, InactivityBudget: time.Hour}, core.ActorRuntime); err != nil {
			t.Fatal(err)
		}
		sub, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: p.run, OwnerSession: owner}, core.ActorRuntime)
		if err != nil {
			t.Fatal(err)
		}
		peer, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, SourceID: p.run, OwnerSession: owner}, core.ActorRuntime)
		if err != nil {
			t.Fatal(err)
		}
		p.sub, p.peer = sub.ID, peer.ID
		for _, id := range []string{p.sub, p.peer} {
			if _, _, err := reg.StartTask(ctx, id, "", core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
		}
		pairs[i] = p
	}
	closeReg()

	// Each worker is a stream of OS processes of the binary, one command per
	// run, in its own random order; they all run at once.
	finishArgs := func(p pair, r *rand.Rand) []string {
		if r.IntN(2) == 0 {
			return []string{"task", "finish", p.peer, "--status", "failed", "--error", "late failure"}
		}
		return []string{"task", "finish", p.peer, "--subtype", "success"}
	}
	workers := map[string]func(p pair, r *rand.Rand) []string{
		"kill":     func(p pair, _ *rand.Rand) []string { return []string{"run", "kill", p.run} },
		"complete": func(p pair, _ *rand.Rand) []string { return []string{"run", "complete", p.run, "--outcome", "ok"} },
		"cancel":   func(p pair, _ *rand.Rand) []string { return []string{"task", "cancel", p.sub} },
		"finish":   finishArgs,
		"kill2": func(p pair, _ *rand.Rand) []string {
			return []string{"run", "kill", p.run, "--reason", "second operator"}
		},
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
	)
	seed := uint64(len(pairs))
	w := 0
	for name, mk := range workers {
		wg.Add(1)
		host := hosts[w%len(hosts)]
		w++
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(len(name))))
			for _, i := range r.Perm(runs) {
				args := mk(pairs[i], r)
				cmd := host.command(nil, args...)
				var so, se bytes.Buffer
				cmd.Stdout, cmd.Stderr = &so, &se
				err := cmd.Run()
				if err != nil || strings.Contains(se.String()+so.String(), "database is locked") {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s %v: %v\n%s%s", name, args, err, so.String(), se.String()))
					mu.Unlock()
				}
			}
		}()
	}
	// Maintenance sweeps (another OS process each) run throughout: R5 marks
	// the rows of killed runs lost early, racing the late completions.
	stopSweeps := make(chan struct{})
	sweepsDone := make(chan int)
	go func() {
		n := 0
		defer func() { sweepsDone <- n }()
		for {
			select {
			case <-stopSweeps:
				return
			default:
			}
			cmd := hosts[n%len(hosts)].command(nil, "sweep")
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			n++
			if err != nil || strings.Contains(se.String()+so.String(), "database is locked") {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("sweep: %v\n%s%s", err, so.String(), se.String()))
				mu.Unlock()
			}
		}
	}()
	// The maintenance API infers lost on whatever is still active meanwhile,
	// as a sweeper would after the kills (R5), so lost → succeeded upgrades
	// happen too.
	wg.Add(1)
	go func() {
		defer wg.Done()
		reg, closeReg := c.registry()
		defer closeReg()
		r := rand.New(rand.NewPCG(7, 7))
		for _, i := range r.Perm(runs) {
			time.Sleep(20 * time.Millisecond) // interleave with the CLI workers
			for _, id := range []string{pairs[i].sub, pairs[i].peer} {
				if _, _, err := reg.MarkTaskLost(ctx, id, "subagent run ended (killed)"); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("MarkTaskLost %s: %v", id, err))
					mu.Unlock()
				}
			}
		}
	}()
	wg.Wait()
	close(stopSweeps)
	t.Logf("%d concurrent sweeps", <-sweepsDone)
	for _, f := range failures {
		t.Error(f)
	}

	reg, closeReg = c.registry()
	defer closeReg()
	upgrades := 0
	for _, p := range pairs {
		run, _, err := reg.GetRun(ctx, p.run)
		if err != nil {
			t.Fatal(err)
		}
		if run.Running() {
			t.Errorf("run %s still running", p.run)
		}
		if run.Outcome == core.OutcomeKilled && (!run.CleanupHandled || run.SuppressAnnounceReason != "killed") {
			t.Errorf("killed run %s: %+v", p.run, run)
		}
		allowed := map[string][]core.TaskStatus{
			p.sub:  {core.TaskCancelled, core.TaskSucceeded},
			p.peer: {core.TaskFailed, core.TaskSucceeded},
		}
		for _, id := range []string{p.sub, p.peer} {
			tk, evs, err := reg.GetTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, s := range allowed[id] {
				ok = ok || tk.Status == s
			}
			if !ok {
				t.Errorf("task %s (%s) ended %s, want one of %v", id, tk.Runtime, tk.Status, allowed[id])
			}
			if tk.EndedAt == 0 || tk.CleanupAfter == 0 || tk.CleanupAfter.Sub(tk.EndedAt) != core.DefaultThresholds().TaskRetention(tk.Status) {
				t.Errorf("task %s %s: ended_at %s cleanup_after %s", id, tk.Status, tk.EndedAt, tk.CleanupAfter)
			}
			if tk.Status == core.TaskSucceeded && tk.Error != "" {
				t.Errorf("succeeded task %s keeps error %q", id, tk.Error)
			}
			if run.Outcome == core.OutcomeKilled && tk.DeliveryStatus != core.DeliveryNotApplicable {
				t.Errorf("task %s of killed run %s: delivery %s", id, p.run, tk.DeliveryStatus)
			}
			upgrades += checkJournal(t, tk, evs)
		}
	}
	t.Logf("%d lost → succeeded/failed upgrades exercised", upgrades)
}

// checkJournal verifies one task's journal: applied status changes chain
// (each from = the previous to), each is allowed by the transition rule for
// its actor, nothing leaves succeeded, refusals are applied=false with a
// reason, and the chain ends at the task's status. It returns the number of
// upgrades out of lost.
func checkJournal(t *testing.T, tk *core.Task, evs []core.Event) int {
	t.Helper()
	cur, upgrades := core.TaskStatus(""), 0
	for _, e := range evs {
		if strings.HasPrefix(e.From, "delivery_status=") || (e.Applied && e.From == e.To) {
			continue // delivery changes, progress and output rows
		}
		if !e.Applied {
			if e.Reason == "" {
				t.Errorf("task %s: refusal without reason: %+v", tk.ID, e)
			}
			continue
		}
		from, to := core.TaskStatus(e.From), core.TaskStatus(e.To)
		if from != cur {
			t.Errorf("task %s: journal jumps from %q to a change starting at %q: %+v", tk.ID, cur, from, e)
		}
		if cur != "" {
			if ok, why := core.CanTransitionTask(from, to, e.Actor); !ok {
				t.Errorf("task %s: applied change %s → %s by %s breaks the rule (%s)", tk.ID, from, to, e.Actor, why)
			}
		}
		if from == core.TaskSucceeded {
			t.Errorf("task %s: succeeded downgraded to %s", tk.ID, to)
		}
		if from == core.TaskLost {
			upgrades++
		}
		cur = to
	}
	if cur != tk.Status {
		t.Errorf("task %s: journal ends at %s, row says %s", tk.ID, cur, tk.Status)
	}
	return upgrades
}
