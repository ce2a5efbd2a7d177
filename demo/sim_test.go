package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
)

// simRun is one simulation on a FakeClock (no jobs, no processes): the
// registry side of every scenario, compressed from minutes into a second or
// two of real time.
type simRun struct {
	reg   *core.Registry
	sim   *Sim
	clock *core.FakeClock
	log   *bytes.Buffer
}

// simulate runs the simulator for d of fake time in 500 ms steps, with a
// sweep every 10 s and a watchdog pass every 5 s (the demo's settings), and
// returns the run for inspection.
func simulate(t *testing.T, seed uint64, d time.Duration) *simRun {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := core.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	th := core.DefaultThresholds()
	th.Grace = time.Minute
	reg := core.NewRegistry(db, clock, th)
	var log bytes.Buffer
	sim, err := New(Config{Registry: reg, Seed: seed, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sw := sweep.New(reg, nil)
	const step = 500 * time.Millisecond
	for el := step; el <= d; el += step {
		clock.Advance(step)
		sim.Step(ctx)
		if el%(5*time.Second) == 0 {
			if _, err := sw.Watchdog(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if el%(10*time.Second) == 0 {
			if _, err := sw.Sweep(ctx, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	sim.Stop(ctx)
	if st := sim.Stats(); st.Errors != 0 {
		t.Fatalf("%d registry calls failed; log:\n%s", st.Errors, log.String())
	}
	return &simRun{reg: reg, sim: sim, clock: clock, log: &log}
}

// TestScenarios checks that a few simulated minutes produce every situation
// of README "clawpit demo", with the sweeper doing its part: an expired approval, a
// watchdog timeout, a killed run whose tasks were marked lost, a lost →
// succeeded upgrade from a late completion, a silent scheduled task, an
// error_max_turns failure, a task lost after the grace window, approvals
// decided by the simulated operator while one stays pending for the real one.
func TestScenarios(t *testing.T) {
	r := simulate(t, 1, 150*time.Second)
	ctx := context.Background()
	log := r.log.String()

	aps, err := r.reg.ListApprovals(ctx, core.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byStatus := map[core.ApprovalStatus]int{}
	decided := 0
	for _, a := range aps {
		byStatus[a.Status]++
		if a.DecidedBy == string(DefaultOperator) {
			decided++
		}
	}
	if byStatus[core.ApprovalPending] < 1 {
		t.Errorf("no approval left pending for the operator: %v", byStatus)
	}
	if byStatus[core.ApprovalExpired] < 1 {
		t.Errorf("no approval expired: %v", byStatus)
	}
	if decided < 1 {
		t.Errorf("the simulated operator decided nothing: %v", byStatus)
	}

	runs, err := r.reg.ListRuns(ctx, core.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[core.RunOutcome]int{}
	running := 0
	for _, run := range runs {
		if run.Running() {
			running++
		} else {
			outcomes[run.Outcome]++
		}
	}
	if running < 1 || outcomes[core.OutcomeTimeout] < 1 || outcomes[core.OutcomeKilled] < 2 || outcomes[core.OutcomeOK] < 1 {
		t.Errorf("runs: %d running, ended %v; want running, timeout (watchdog), ≥2 killed, ok", running, outcomes)
	}

	tasks, err := r.reg.ListTasks(ctx, core.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[core.TaskStatus]int{}
	var maxTurns, graceLost, upgraded int
	for _, tk := range tasks {
		statuses[tk.Status]++
		if tk.ResultSubtype == "error_max_turns" && tk.Status == core.TaskFailed {
			maxTurns++
		}
		if tk.Status == core.TaskLost && strings.Contains(tk.Error, "backing session missing") {
			graceLost++
		}
		_, evs, err := r.reg.GetTask(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Applied && e.From == string(core.TaskLost) && e.To == string(core.TaskSucceeded) {
				upgraded++
				if tk.Error != "" {
					t.Errorf("task %s upgraded lost → succeeded kept error %q", tk.ID, tk.Error)
				}
			}
		}
	}
	for _, st := range []core.TaskStatus{core.TaskRunning, core.TaskSucceeded, core.TaskFailed, core.TaskLost, core.TaskTimedOut} {
		if statuses[st] == 0 {
			t.Errorf("no task %s: %v", st, statuses)
		}
	}
	if maxTurns < 1 || graceLost < 1 || upgraded < 1 {
		t.Errorf("error_max_turns %d, lost after grace %d, lost → succeeded %d; want each ≥ 1", maxTurns, graceLost, upgraded)
	}
	if n := len(tasks); n < 20 || n > 300 {
		t.Errorf("%d tasks after 150 s; want a busy but modest pane (20–300)", n)
	}

	ns, err := r.reg.ListNotifications(ctx, core.NotificationFilter{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[core.NotificationKind]int{}
	for _, n := range ns {
		kinds[n.Kind]++
	}
	for _, k := range []core.NotificationKind{core.NotifyTaskFailed, core.NotifyTaskSilent, core.NotifyRunTimedOut, core.NotifyApprovalExpired} {
		if kinds[k] == 0 {
			t.Errorf("no %s notification: %v", k, kinds)
		}
	}
	if t.Failed() {
		t.Logf("activity log:\n%s", log)
	}
}

// TestPendingApprovalAlways checks the promise to the operator: after the
// opening seconds there is always at least one pending approval to act on.
func TestPendingApprovalAlways(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := core.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	reg := core.NewRegistry(db, clock, core.DefaultThresholds())
	sim, err := New(Config{Registry: reg, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	sw := sweep.New(reg, nil)
	for el := time.Second; el <= 240*time.Second; el += time.Second {
		clock.Advance(time.Second)
		sim.Step(ctx)
		if el%(10*time.Second) == 0 {
			sw.Sweep(ctx, false)
		}
		if el < 10*time.Second {
			continue
		}
		list, err := reg.ListApprovals(ctx, core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalPending}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range list {
			if a.ExpiresAt == 0 {
				n++
			}
		}
		if n < 1 {
			t.Fatalf("at %s no approval is pending for the operator", el)
		}
	}
}

var hexID = regexp.MustCompile(`\b[0-9a-f]{12}\b`)

// TestDeterministic checks that the same seed and the same step times give the
// same activity (ids minted by the registry aside).
func TestDeterministic(t *testing.T) {
	a := hexID.ReplaceAllString(simulate(t, 42, 60*time.Second).log.String(), "<id>")
	b := hexID.ReplaceAllString(simulate(t, 42, 60*time.Second).log.String(), "<id>")
	if a != b {
		t.Fatalf("same seed, different activity:\n--- first\n%s\n--- second\n%s", a, b)
	}
	c := hexID.ReplaceAllString(simulate(t, 43, 60*time.Second).log.String(), "<id>")
	if a == c {
		t.Fatal("seeds 42 and 43 gave the same activity")
	}
}

// TestStartTwice and a nil registry are refused.
func TestNewAndStartErrors(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a registry succeeded")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.NewFakeClock(time.Now()), core.DefaultThresholds())
	sim, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err == nil {
		t.Fatal("second Start succeeded")
	}
	sim.Stop(ctx)
	sim.Step(ctx) // after Stop: a no-op
}

// Issue 26 item 8: the demo names each tool one way, as the runtime it
// plays says it (Claude Code: Bash, Write, WebFetch; claude.go asks for
// Bash too), so the console's TOOL column never shows bash beside Bash.
func TestToolNamesOneSpelling(t *testing.T) {
	r := simulate(t, 1, 150*time.Second)
	aps, err := r.reg.ListApprovals(context.Background(), core.ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	claude := map[string]bool{"Bash": true, "Write": true, "WebFetch": true}
	seen := map[string]string{}
	for _, a := range aps {
		if !claude[a.Tool] {
			t.Errorf("approval %s: tool %q is not a Claude Code tool name", a.ID, a.Tool)
		}
		if other, ok := seen[strings.ToLower(a.Tool)]; ok && other != a.Tool {
			t.Errorf("tool spelled both %q and %q", other, a.Tool)
		}
		seen[strings.ToLower(a.Tool)] = a.Tool
	}
	if len(aps) == 0 {
		t.Fatal("the demo asked for no approval")
	}
}
