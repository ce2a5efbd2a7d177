package sweep_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// swStart is the fake clock's start in every sweeper test.
var swStart = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// swFixture is a registry and sweeper over a fresh SQLite file with a fake
// clock (no test sleeps through a window).
type swFixture struct {
	t     testing.TB
	ctx   context.Context
	path  string
	db    *store.DB
	clock *core.FakeClock
	th    core.Thresholds
	reg   *core.Registry
	sw    *sweep.Sweeper
}

func newSwFixture(t testing.TB) *swFixture {
	t.Helper()
	f := &swFixture{t: t, ctx: context.Background(), path: storetest.Location(t, "registry.db"),
		clock: core.NewFakeClock(swStart), th: core.DefaultThresholds()}
	f.open()
	t.Cleanup(func() { f.db.Close() })
	return f
}

// open (re)opens the store and builds a new registry and sweeper: a restart.
func (f *swFixture) open() {
	f.t.Helper()
	db, err := store.Open(f.ctx, f.path, store.Options{})
	if err != nil {
		f.t.Fatalf("open store: %v", err)
	}
	f.db = db
	f.reg = core.NewRegistry(db, f.clock, f.th)
	f.sw = sweep.New(f.reg, nil)
}

func (f *swFixture) restart() {
	f.t.Helper()
	if err := f.db.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.open()
}

func (f *swFixture) now() core.Timestamp { return core.TS(f.clock.Now()) }

func (f *swFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *swFixture) session(id string) {
	f.t.Helper()
	_, _, err := f.reg.OpenSession(f.ctx, id, "", core.ActorRuntime)
	f.must(err)
}

func (f *swFixture) run(id, child string, budget time.Duration) *core.Run {
	f.t.Helper()
	r, err := f.reg.RegisterRun(f.ctx, core.NewRun{RunID: id, ChildSession: child, RequesterSession: "parent", InactivityBudget: budget}, core.ActorRuntime)
	f.must(err)
	return r
}

func (f *swFixture) task(nt core.NewTask, start bool) *core.Task {
	f.t.Helper()
	if nt.Runtime == "" {
		nt.Runtime = core.RuntimeSubagent
	}
	t, err := f.reg.CreateTask(f.ctx, nt, core.ActorRuntime)
	f.must(err)
	if start {
		_, res, err := f.reg.StartTask(f.ctx, t.ID, "", core.ActorRuntime)
		f.must(err)
		if !res.Applied {
			f.t.Fatalf("start %s: %+v", t.ID, res)
		}
	}
	return f.get(t.ID)
}

func (f *swFixture) get(id string) *core.Task {
	f.t.Helper()
	var t *core.Task
	f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) { t, err = tx.GetTask(id); return err }))
	return t
}

func (f *swFixture) exists(entity, id string) bool {
	f.t.Helper()
	var err error
	f.must(f.db.View(f.ctx, func(tx core.Tx) error {
		switch entity {
		case core.EntityTask:
			_, err = tx.GetTask(id)
		case core.EntityRun:
			_, err = tx.GetRun(id)
		case core.EntityJob:
			_, err = tx.GetJob(id)
		case core.EntityApproval:
			_, err = tx.GetApproval(id)
		}
		return nil
	}))
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		f.t.Fatal(err)
	}
	return err == nil
}

func (f *swFixture) getRun(id string) *core.Run {
	f.t.Helper()
	var r *core.Run
	f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) { r, err = tx.GetRun(id); return err }))
	return r
}

func (f *swFixture) events(entity, id string) []core.Event {
	f.t.Helper()
	var evs []core.Event
	f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) { evs, err = tx.Events(entity, id); return err }))
	return evs
}

func (f *swFixture) notifications(kind core.NotificationKind) []core.Notification {
	f.t.Helper()
	var all []core.Notification
	f.must(f.db.View(f.ctx, func(tx core.Tx) (err error) {
		all, err = tx.ListNotifications(core.NotificationFilter{})
		return err
	}))
	var out []core.Notification
	for _, n := range all {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// sweep applies one sweep and fails the test on error.
func (f *swFixture) sweep() *sweep.Report {
	f.t.Helper()
	rep, err := f.sw.Sweep(f.ctx, false)
	if err != nil {
		f.t.Fatalf("sweep: %v", err)
	}
	return rep
}

// actionsFor returns the report's actions about entity id.
func actionsFor(rep *sweep.Report, entity, id string) []sweep.Action {
	var out []sweep.Action
	for _, a := range rep.Actions {
		if a.Entity == entity && a.ID == id {
			out = append(out, a)
		}
	}
	return out
}

func findingsFor(rep *sweep.Report, kind, id string) []sweep.Finding {
	var out []sweep.Finding
	for _, fd := range rep.Findings {
		if fd.Kind == kind && fd.ID == id {
			out = append(out, fd)
		}
	}
	return out
}

// TestSweepSeed000KillThenLateCompletion: after KillRun the next sweep marks
// the subagent row and the cli peer row lost at once (well inside the grace
// window), keeps a live run's rows, and a late CompleteRun ok upgrades both to
// succeeded with the lost error cleared (docs/contract.md "Kill is not completion", docs/contract.md "Late completion wins", docs/contract.md "Lost work").
func TestSweepSeed000KillThenLateCompletion(t *testing.T) {
	f := newSwFixture(t)
	f.session("parent")
	f.session("child")
	f.session("child2")
	killed := f.run("run-kill", "child", 0)
	live := f.run("run-live", "child2", 0)
	sub := f.task(core.NewTask{RunID: killed.RunID, OwnerSession: "parent", ChildSession: "child", Label: "research"}, true)
	peer := f.task(core.NewTask{Runtime: core.RuntimeCLI, SourceID: killed.RunID, OwnerSession: "child", Label: "research (cli)"}, true)
	liveSub := f.task(core.NewTask{RunID: live.RunID, OwnerSession: "parent", ChildSession: "child2"}, true)
	livePeer := f.task(core.NewTask{Runtime: core.RuntimeCLI, SourceID: live.RunID, OwnerSession: "child2"}, true)

	f.clock.Advance(5 * time.Second)
	if _, res, err := f.reg.KillRun(f.ctx, killed.RunID, "", core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("kill: %v %+v", err, res)
	}
	killedAt := f.now()
	f.clock.Advance(10 * time.Second) // far inside the 5-minute grace window; sessions still active
	rep := f.sweep()
	if rep.Counts.Lost != 2 {
		t.Fatalf("lost = %d, want 2\n%s", rep.Counts.Lost, rep.Text())
	}
	for _, tk := range []*core.Task{sub, peer} {
		got := f.get(tk.ID)
		if got.Status != core.TaskLost || got.Error != "subagent run ended (killed)" {
			t.Errorf("%s: status %s error %q, want lost / subagent run ended (killed)", tk.Label, got.Status, got.Error)
		}
		if got.EndedAt != killedAt || got.CleanupAfter != killedAt.Add(24*time.Hour) {
			t.Errorf("%s: ended_at %s cleanup_after %s, want %s and +24h", tk.Label, got.EndedAt, got.CleanupAfter, killedAt)
		}
		acts := actionsFor(rep, core.EntityTask, tk.ID)
		if len(acts) != 1 || acts[0].Rule != sweep.RuleEarlyLost || acts[0].Result != sweep.ActionApplied {
			t.Errorf("%s: actions %+v", tk.Label, acts)
		}
		ev := f.events(core.EntityTask, tk.ID)
		if last := ev[len(ev)-1]; last.Actor != core.ActorSweeper || last.To != "lost" || !last.Applied {
			t.Errorf("%s: last journal row %+v", tk.Label, last)
		}
	}
	for _, tk := range []*core.Task{liveSub, livePeer} {
		if got := f.get(tk.ID); got.Status != core.TaskRunning {
			t.Errorf("live run's task %s is %s, want running", tk.ID, got.Status)
		}
	}
	// A late completion wins over the inference (R2).
	f.clock.Advance(time.Minute)
	if _, _, res, err := f.reg.CompleteRun(f.ctx, killed.RunID, core.OutcomeOK, "", core.ActorRuntime); err != nil || !res.Applied {
		t.Fatalf("late complete: %v %+v", err, res)
	}
	for _, tk := range []*core.Task{sub, peer} {
		got := f.get(tk.ID)
		if got.Status != core.TaskSucceeded || got.Error != "" {
			t.Errorf("%s after late completion: %s %q, want succeeded with no error", tk.Label, got.Status, got.Error)
		}
	}
	// And the next sweep leaves them alone.
	if rep := f.sweep(); len(actionsFor(rep, core.EntityTask, sub.ID))+len(actionsFor(rep, core.EntityTask, peer.ID)) != 0 {
		t.Errorf("sweep after upgrade touched the rows:\n%s", rep.Text())
	}
}

// TestSweepGraceLost: an unbacked task is lost only once its last activity is
// older than the grace window; a task backed by a running run, a running job
// or an active session never is; a task naming no run, job or session is
// never inferred lost but reported by the audit (docs/contract.md "Lost work", docs/contract.md "Audit").
func TestSweepGraceLost(t *testing.T) {
	f := newSwFixture(t)
	f.session("live")
	f.session("parked")
	_, _, _, err := f.reg.PassivateSession(f.ctx, "parked", core.ActorRuntime)
	f.must(err)
	f.run("run-1", "gone-child", time.Hour) // a long budget: the watchdog stays out of this test
	f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
		return tx.InsertJob(&core.Job{ID: "0123456789ab", Session: "gone", Command: []string{"sleep", "1"},
			Status: core.JobRunning, CreatedAt: f.now(), SupervisorPID: os.Getpid()})
	}))
	cases := []struct {
		name string
		nt   core.NewTask
		lost bool
	}{
		{"missing session", core.NewTask{OwnerSession: "gone"}, true},
		{"passivated session", core.NewTask{OwnerSession: "live", ChildSession: "parked"}, true},
		{"unregistered run", core.NewTask{RunID: "never-registered"}, true},
		{"running run", core.NewTask{RunID: "run-1", OwnerSession: "gone"}, false},
		{"running job", core.NewTask{Runtime: core.RuntimeCLI, SourceID: "0123456789ab", OwnerSession: "gone"}, false},
		{"active session", core.NewTask{OwnerSession: "live"}, false},
		{"active child session", core.NewTask{OwnerSession: "gone", ChildSession: "live"}, false},
		{"no run, job or session", core.NewTask{}, false},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = f.task(c.nt, i%2 == 0).ID
	}
	check := func(at string, wantLost func(i int) bool) *sweep.Report {
		t.Helper()
		rep := f.sweep()
		for i, c := range cases {
			got := f.get(ids[i]).Status
			if want := wantLost(i); (got == core.TaskLost) != want {
				t.Errorf("%s: %s is %s, want lost=%v\n%s", at, c.name, got, want, rep.Text())
			}
		}
		return rep
	}
	f.clock.Advance(4*time.Minute + 59*time.Second)
	check("4m59s", func(int) bool { return false })
	f.clock.Advance(2 * time.Second)
	rep := check("5m01s", func(i int) bool { return cases[i].lost })
	for i, c := range cases {
		if !c.lost {
			continue
		}
		if got := f.get(ids[i]); got.Error != "backing session missing" {
			t.Errorf("%s: error %q", c.name, got.Error)
		}
		if acts := actionsFor(rep, core.EntityTask, ids[i]); len(acts) != 1 || acts[0].Rule != sweep.RuleGraceLost {
			t.Errorf("%s: actions %+v", c.name, acts)
		}
	}
	f.clock.Advance(time.Hour)
	rep = check("1h05m", func(i int) bool { return cases[i].lost })
	noRef := ids[len(ids)-1] // never started: queued
	if fs := findingsFor(rep, sweep.FindingStaleQueued, noRef); len(fs) != 1 || fs[0].Severity != sweep.SeverityWarning ||
		!strings.Contains(fs[0].Detail, "never inferred lost") {
		t.Errorf("no-backing task: findings %+v\n%s", fs, rep.Text())
	}
}

// TestWatchdogPausedByApprovalSeed004: a run waiting for an approval is not
// timed out at ten times its budget; after the last approval resolves
// (re-armed) it times out one budget later, not earlier, with its mirrored
// task timed_out and one run_timed_out notification (docs/contract.md "The inactivity watchdog pauses for approvals").
func TestWatchdogPausedByApprovalSeed004(t *testing.T) {
	f := newSwFixture(t)
	f.session("parent")
	f.session("child")
	run := f.run("run-w", "child", time.Minute)
	tk := f.task(core.NewTask{RunID: run.RunID, OwnerSession: "parent", ChildSession: "child"}, true)
	ask := func(cmd string) *core.Approval {
		a, err := f.reg.RequestApproval(f.ctx, core.NewApproval{Session: "child", RunID: run.RunID, Tool: "Bash", Command: cmd}, core.ActorRuntime)
		f.must(err)
		return a
	}
	a1, a2 := ask("git push"), ask("rm -rf build")
	f.clock.Advance(10 * time.Minute)
	for i := 0; i < 2; i++ {
		rep, err := f.sw.Watchdog(f.ctx)
		f.must(err)
		if rep.Counts.TimedOut != 0 {
			t.Fatalf("timed out while waiting for approvals:\n%s", rep.Text())
		}
		if rep := f.sweep(); rep.Counts.TimedOut != 0 {
			t.Fatalf("sweep timed out while waiting for approvals:\n%s", rep.Text())
		}
	}
	_, _, res, err := f.reg.ApproveApproval(f.ctx, a1.ID, core.ScopeOnce, core.OperatorActor())
	f.must(err)
	if !res.Applied {
		t.Fatal(res)
	}
	f.clock.Advance(10 * time.Minute) // one approval still pending: still paused
	if rep, err := f.sw.Watchdog(f.ctx); err != nil || rep.Counts.TimedOut != 0 {
		t.Fatalf("timed out with one approval pending: %v %+v", err, rep)
	}
	_, res, err = f.reg.DenyApproval(f.ctx, a2.ID, "no", core.OperatorActor())
	f.must(err)
	if !res.Applied {
		t.Fatal(res)
	}
	f.clock.Advance(59 * time.Second)
	if rep, err := f.sw.Watchdog(f.ctx); err != nil || rep.Counts.TimedOut != 0 {
		t.Fatalf("timed out 59s after re-arm (budget 60s): %v\n%s", err, rep.Text())
	}
	f.clock.Advance(1001 * time.Millisecond)
	rep, err := f.sw.Watchdog(f.ctx)
	f.must(err)
	if rep.Counts.TimedOut != 1 || rep.Step != "watchdog" {
		t.Fatalf("want one timeout 60s after re-arm:\n%s", rep.Text())
	}
	got := f.getRun(run.RunID)
	if got.Outcome != core.OutcomeTimeout || got.EndedReason != "no activity for 60s" || got.EndedAt != f.now() {
		t.Errorf("run after watchdog: %+v", got)
	}
	if st := f.get(tk.ID); st.Status != core.TaskTimedOut || st.Error == "" {
		t.Errorf("mirrored task: %s %q, want timed_out", st.Status, st.Error)
	}
	evs := f.events(core.EntityRun, run.RunID)
	if last := evs[len(evs)-1]; last.Actor != core.ActorWatchdog || last.To != "timeout" {
		t.Errorf("run journal: %+v", last)
	}
	for i := 0; i < 3; i++ {
		f.sweep()
		f.sw.Watchdog(f.ctx)
	}
	if ns := f.notifications(core.NotifyRunTimedOut); len(ns) != 1 || ns[0].SubjectID != run.RunID || ns[0].Session != "parent" {
		t.Errorf("run_timed_out notifications: %+v", ns)
	}
	if !strings.HasPrefix(rep.Text(), "Watchdog applied in ") {
		t.Errorf("watchdog text: %q", rep.Text())
	}
}

// TestSweepWatchdogBeforeLost: in a full sweep the watchdog step comes before
// the lost rules, so an idle run's rows become timed_out, not lost.
func TestSweepWatchdogBeforeLost(t *testing.T) {
	f := newSwFixture(t)
	f.session("parent")
	run := f.run("run-idle", "child-gone", time.Minute)
	tk := f.task(core.NewTask{RunID: run.RunID, OwnerSession: "parent"}, true)
	peer := f.task(core.NewTask{Runtime: core.RuntimeCLI, SourceID: run.RunID}, true)
	f.clock.Advance(10 * time.Minute)
	rep := f.sweep()
	if rep.Counts.TimedOut != 1 || rep.Counts.Lost != 0 {
		t.Fatalf("want 1 timed out, 0 lost:\n%s", rep.Text())
	}
	for _, id := range []string{tk.ID, peer.ID} {
		if st := f.get(id).Status; st != core.TaskTimedOut {
			t.Errorf("task %s: %s, want timed_out", id, st)
		}
	}
}

// TestSweepSilentSeed003: one task_silent notification for a scheduled task
// that ended without output, not repeated by more sweeps nor by a restart
// (docs/contract.md "Silent scheduled tasks").
func TestSweepSilentSeed003(t *testing.T) {
	f := newSwFixture(t)
	f.session("ops")
	finish := func(label string, st core.TaskStatus, outputs int64) *core.Task {
		tk := f.task(core.NewTask{Runtime: core.RuntimeCron, OwnerSession: "ops", Label: label}, true)
		if outputs > 0 {
			_, _, err := f.reg.AddTaskOutput(f.ctx, tk.ID, outputs, core.ActorRuntime)
			f.must(err)
		}
		_, res, err := f.reg.FinishTask(f.ctx, tk.ID, core.Finish{Status: st}, core.ActorRuntime)
		f.must(err)
		if !res.Applied {
			t.Fatal(res)
		}
		return tk
	}
	old := finish("last-week", core.TaskSucceeded, 0)
	f.clock.Advance(20 * time.Minute) // ended outside the 15-minute window by the next sweep
	brief := finish("morning-briefing", core.TaskSucceeded, 0)
	failed := finish("rate-limited", core.TaskFailed, 0)
	chatty := finish("chatty", core.TaskSucceeded, 2)
	f.clock.Advance(time.Minute)
	rep := f.sweep()
	if rep.Counts.Silent != 2 {
		t.Fatalf("silent = %d, want 2\n%s", rep.Counts.Silent, rep.Text())
	}
	ns := f.notifications(core.NotifyTaskSilent)
	bySubject := map[string]core.Notification{}
	for _, n := range ns {
		bySubject[n.SubjectID] = n
	}
	if n := bySubject[brief.ID]; n.Text != "Scheduled task morning-briefing produced no output and was marked succeeded" ||
		n.Session != "ops" || n.DedupKey != "task_silent:"+brief.ID {
		t.Errorf("notification: %+v", n)
	}
	if n := bySubject[failed.ID]; n.Text != "Scheduled task rate-limited produced no output and was marked failed" {
		t.Errorf("notification: %+v", n)
	}
	if _, ok := bySubject[chatty.ID]; ok {
		t.Error("task with output notified")
	}
	if _, ok := bySubject[old.ID]; ok {
		t.Error("task outside the silent window notified")
	}
	for i := 0; i < 3; i++ {
		f.clock.Advance(time.Minute)
		if rep := f.sweep(); rep.Counts.Silent != 0 || len(rep.Actions) != 0 {
			t.Fatalf("sweep %d repeated:\n%s", i+2, rep.Text())
		}
	}
	f.restart()
	if rep := f.sweep(); rep.Counts.Silent != 0 {
		t.Fatalf("sweep after restart repeated:\n%s", rep.Text())
	}
	if got := len(f.notifications(core.NotifyTaskSilent)); got != 2 {
		t.Fatalf("%d task_silent notifications after restart, want 2", got)
	}
}

// TestSweepRetention: a lost row is pruned once its 24 hours are over, with
// its journal; a row marked lost whose retention is already over is pruned in
// the same sweep; missing cleanup_after is stamped; a pruned job's log
// directory is deleted first, and a failed delete keeps the row (docs/contract.md "Retention").
func TestSweepRetention(t *testing.T) {
	f := newSwFixture(t)
	lost := f.task(core.NewTask{OwnerSession: "gone"}, true)
	f.clock.Advance(6 * time.Minute)
	if rep := f.sweep(); rep.Counts.Lost != 1 {
		t.Fatalf("want the task lost:\n%s", rep.Text())
	}
	got := f.get(lost.ID)
	wantCleanup := got.EndedAt.Add(24 * time.Hour)
	if got.CleanupAfter != wantCleanup || got.EndedAt != lost.StartedAt {
		t.Fatalf("lost row: ended_at %s (started %s) cleanup_after %s", got.EndedAt, lost.StartedAt, got.CleanupAfter)
	}
	f.clock.Set(wantCleanup.Time().Add(-time.Second))
	if rep := f.sweep(); rep.Counts.Pruned != 0 || !f.exists(core.EntityTask, lost.ID) {
		t.Fatalf("pruned before its 24 hours:\n%s", rep.Text())
	}
	f.clock.Set(wantCleanup.Time())
	if rep := f.sweep(); rep.Counts.Pruned != 1 || f.exists(core.EntityTask, lost.ID) {
		t.Fatalf("lost row not pruned after 24 hours:\n%s", rep.Text())
	}
	if evs := f.events(core.EntityTask, lost.ID); len(evs) != 0 {
		t.Errorf("pruned task kept %d journal rows", len(evs))
	}

	// Marked lost and pruned in the same sweep: last activity 30 hours ago.
	stale := f.task(core.NewTask{OwnerSession: "gone"}, true)
	f.clock.Advance(30 * time.Hour)
	rep := f.sweep()
	acts := actionsFor(rep, core.EntityTask, stale.ID)
	if len(acts) != 2 || acts[0].Rule != sweep.RuleGraceLost || acts[1].Rule != sweep.RulePrune ||
		acts[0].Result != sweep.ActionApplied || acts[1].Result != sweep.ActionApplied || f.exists(core.EntityTask, stale.ID) {
		t.Fatalf("want lost then pruned in one sweep, got %+v\n%s", acts, rep.Text())
	}

	// Stamping rows that lack cleanup_after, and pruning at once what is past it.
	now := f.now()
	f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
		return errors.Join(
			tx.InsertTask(&core.Task{ID: "unstamped-fresh", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now - 10, EndedAt: now - 5}),
			tx.InsertTask(&core.Task{ID: "unstamped-ancient", Runtime: core.RuntimeCLI, Status: core.TaskFailed,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: 1, EndedAt: 2}),
			tx.InsertRun(&core.Run{RunID: "run-old", StartedAt: now - 100, LastProgressAt: now - 100, InactivityBudgetMs: 1000,
				EndedAt: now - 50, Outcome: core.OutcomeOK}))
	}))
	rep = f.sweep()
	if got := f.get("unstamped-fresh"); got.CleanupAfter != (now - 5).Add(7*24*time.Hour) {
		t.Errorf("fresh row cleanup_after %s\n%s", got.CleanupAfter, rep.Text())
	}
	if f.exists(core.EntityTask, "unstamped-ancient") {
		t.Errorf("ancient unstamped row not pruned in the stamping sweep\n%s", rep.Text())
	}
	if got := f.getRun("run-old"); got.CleanupAfter != (now - 50).Add(7*24*time.Hour) {
		t.Errorf("ended run cleanup_after %s", got.CleanupAfter)
	}

	// Jobs: the log directory goes first; a failed delete keeps the row.
	jobsDir := t.TempDir()
	for _, id := range []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb"} {
		dir := filepath.Join(jobsDir, id)
		f.must(os.MkdirAll(dir, 0o700))
		f.must(os.WriteFile(filepath.Join(dir, "output.log"), []byte("hello\n"), 0o600))
		f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
			return tx.InsertJob(&core.Job{ID: id, Session: "s", Command: []string{"true"}, Status: core.JobCompleted,
				CreatedAt: now - 30, StartedAt: now - 20, CompletedAt: now - 10, LogPath: filepath.Join(dir, "output.log")})
		}))
	}
	f.sw.RemoveAll = func(p string) error {
		if filepath.Base(p) == "bbbbbbbbbbbb" {
			return errors.New("permission denied")
		}
		return os.RemoveAll(p)
	}
	f.sweep() // stamps: completed + 24h
	f.clock.Advance(25 * time.Hour)
	rep = f.sweep()
	if f.exists(core.EntityJob, "aaaaaaaaaaaa") {
		t.Error("job a not pruned")
	}
	if _, err := os.Stat(filepath.Join(jobsDir, "aaaaaaaaaaaa")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("job a's log directory survived: %v", err)
	}
	if !f.exists(core.EntityJob, "bbbbbbbbbbbb") {
		t.Error("job b pruned although its log could not be deleted")
	}
	if fs := findingsFor(rep, sweep.FindingPruneFailed, "bbbbbbbbbbbb"); len(fs) != 1 {
		t.Errorf("want a prune_failed finding:\n%s", rep.Text())
	}
	f.sw.RemoveAll = nil
	f.sweep()
	if f.exists(core.EntityJob, "bbbbbbbbbbbb") {
		t.Error("job b not pruned once its log could be deleted")
	}
}

// swDueFixture builds a registry where one sweep has an action of every rule.
// It returns ids: grace, early, run, runTask, approval, silent, stamp, prune.
func swDueFixture(f *swFixture) map[string]string {
	f.t.Helper()
	ids := map[string]string{}
	f.session("parent")
	f.session("child")
	ids["grace"] = f.task(core.NewTask{OwnerSession: "gone"}, true).ID
	killed := f.run("run-killed", "child", time.Hour)
	ids["early"] = f.task(core.NewTask{RunID: killed.RunID, OwnerSession: "parent"}, true).ID
	idle := f.run("run-idle", "child", time.Minute)
	ids["run"] = idle.RunID
	ids["runTask"] = f.task(core.NewTask{RunID: idle.RunID, OwnerSession: "parent"}, true).ID
	a, err := f.reg.RequestApproval(f.ctx, core.NewApproval{Session: "parent", Tool: "Bash", Command: "make deploy", ExpiresIn: time.Minute}, core.ActorRuntime)
	f.must(err)
	ids["approval"] = a.ID
	silent := f.task(core.NewTask{Runtime: core.RuntimeCron, OwnerSession: "parent", Label: "nightly"}, true)
	_, _, err = f.reg.FinishTask(f.ctx, silent.ID, core.Finish{Status: core.TaskSucceeded}, core.ActorRuntime)
	f.must(err)
	ids["silent"] = silent.ID
	now := f.now()
	f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
		return errors.Join(
			tx.InsertTask(&core.Task{ID: "to-stamp", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded, OwnerSession: "parent",
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now - 10, EndedAt: now - 5}),
			tx.InsertTask(&core.Task{ID: "to-prune", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded, OwnerSession: "parent",
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now - 10, EndedAt: now - 5,
				CleanupAfter: now + 1000}))
	}))
	ids["stamp"], ids["prune"] = "to-stamp", "to-prune"
	_, _, err = f.reg.KillRun(f.ctx, killed.RunID, "", core.OperatorActor())
	f.must(err)
	f.clock.Advance(6 * time.Minute)
	return ids
}

// TestSweepDryRunWritesNothing: a dry run plans every rule but changes
// nothing — not PRAGMA data_version as another connection sees it, not a
// byte of the database file or its WAL.
func TestSweepDryRunWritesNothing(t *testing.T) {
	f := newSwFixture(t)
	swDueFixture(f)
	f.restart() // checkpoint the WAL on close, so the files are at rest
	observer, err := store.Open(f.ctx, f.path, store.Options{})
	f.must(err)
	defer observer.Close()
	version := func() int64 {
		v, err := observer.DataVersion(f.ctx)
		f.must(err)
		return v
	}
	files := func() map[string]string {
		out := map[string]string{}
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(f.path + suffix)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			out[suffix] = string(b)
		}
		return out
	}
	v0, files0 := version(), files()
	rep, err := f.sw.Sweep(f.ctx, true)
	f.must(err)
	if rep.Mode != sweep.ModeDryRun || !strings.HasPrefix(rep.Text(), "Sweep dry run in ") {
		t.Fatalf("mode %q text %q", rep.Mode, rep.Summary())
	}
	c := rep.Counts
	if c.Lost != 2 || c.TimedOut != 1 || c.Expired != 1 || c.Silent != 1 || c.Stamped < 1 || c.Raced != 0 {
		t.Fatalf("dry run plan incomplete:\n%s", rep.Text())
	}
	for _, a := range rep.Actions {
		if a.Result != sweep.ActionPlanned {
			t.Errorf("dry-run action %+v not marked planned", a)
		}
	}
	if v1 := version(); v1 != v0 {
		t.Errorf("data_version %d → %d after a dry run", v0, v1)
	}
	for k, v := range files() {
		if v != files0[k] {
			t.Errorf("registry file %q changed in a dry run", "registry.db"+k)
		}
	}
	// The same plan, applied, does write.
	rep = f.sweep()
	// On PostgreSQL the change notification arrives just after the commit.
	changed := false
	for deadline := time.Now().Add(2 * time.Second); !changed && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		changed = version() != v0
	}
	if rep.Counts.Lost != 2 || !changed {
		t.Errorf("applied sweep: %s", rep.Summary())
	}
}

// TestSweepRacedActions: a runtime write landing between Plan and Apply wins:
// every action is skipped and counted raced, and the writes stand.
func TestSweepRacedActions(t *testing.T) {
	f := newSwFixture(t)
	ids := swDueFixture(f)
	plan, err := f.sw.Plan(f.ctx)
	f.must(err)
	rules := map[string]bool{}
	for _, a := range plan.Actions {
		rules[a.Rule] = true
	}
	for _, r := range []string{sweep.RuleEarlyLost, sweep.RuleGraceLost, sweep.RuleWatchdog, sweep.RuleApprovalExpiry,
		sweep.RuleSilentTask, sweep.RuleStamp, sweep.RulePrune} {
		if !rules[r] {
			t.Fatalf("plan lacks rule %s: %+v", r, plan.Actions)
		}
	}
	// The runtime writes, between plan and apply.
	for _, id := range []string{ids["grace"], ids["early"]} {
		_, _, err := f.reg.ProgressTask(f.ctx, id, "still here", core.ActorRuntime)
		f.must(err)
	}
	_, _, err = f.reg.ProgressRun(f.ctx, ids["run"], core.ActorRuntime)
	f.must(err)
	_, _, _, err = f.reg.ApproveApproval(f.ctx, ids["approval"], core.ScopeOnce, core.OperatorActor())
	f.must(err)
	_, _, err = f.reg.AddTaskOutput(f.ctx, ids["silent"], 1, core.ActorRuntime)
	f.must(err)
	for _, id := range []string{ids["stamp"], ids["prune"]} {
		_, res, err := f.reg.DeliverTask(f.ctx, id, core.DeliveryDelivered, core.ActorRuntime)
		f.must(err)
		if !res.Applied {
			t.Fatal(res)
		}
	}
	rep, err := f.sw.Apply(f.ctx, plan)
	f.must(err)
	if rep.Counts.Raced != len(plan.Actions) {
		t.Fatalf("raced %d of %d actions:\n%s", rep.Counts.Raced, len(plan.Actions), rep.Text())
	}
	for _, id := range []string{ids["grace"], ids["early"], ids["runTask"]} {
		if st := f.get(id).Status; st != core.TaskRunning {
			t.Errorf("task %s is %s after a raced sweep, want running", id, st)
		}
	}
	if r := f.getRun(ids["run"]); !r.Running() {
		t.Error("idle run ended although it made progress before apply")
	}
	if len(f.notifications(core.NotifyTaskSilent)) != 0 {
		t.Error("task_silent raised for a task that got output")
	}
	if !f.exists(core.EntityTask, ids["prune"]) || f.get(ids["stamp"]).CleanupAfter != 0 {
		t.Error("stamp or prune applied over a newer write")
	}
	// The next sweep sees the new state: the early-lost task still goes (its run
	// stays ended), and nothing raced.
	rep = f.sweep()
	if rep.Counts.Raced != 0 || f.get(ids["early"]).Status != core.TaskLost {
		t.Errorf("sweep after the race:\n%s", rep.Text())
	}
}

// TestSweepAuditFindings: audit findings are reported with their severity,
// never fixed; the report text has docs/contract.md "Maintenance"'s shape.
func TestSweepAuditFindings(t *testing.T) {
	f := newSwFixture(t)
	f.session("s")
	queued := f.task(core.NewTask{OwnerSession: "s"}, false)
	running := f.task(core.NewTask{OwnerSession: "s"}, true)
	now := f.now()
	f.must(f.db.Update(f.ctx, func(tx core.Tx) error {
		return errors.Join(
			tx.InsertTask(&core.Task{ID: "time-travel", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly,
				CreatedAt: now, StartedAt: now - 100, EndedAt: now - 200, CleanupAfter: now + 1e9}),
			tx.InsertTask(&core.Task{ID: "undead", Runtime: core.RuntimeCLI, Status: core.TaskRunning, OwnerSession: "s",
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now, StartedAt: now, EndedAt: now + 5}),
			tx.InsertTask(&core.Task{ID: "undelivered", Runtime: core.RuntimeCLI, Status: core.TaskSucceeded, OwnerSession: "s",
				DeliveryStatus: core.DeliveryFailed, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now, EndedAt: now, CleanupAfter: now + 1e9}),
			tx.InsertTask(&core.Task{ID: "endless", Runtime: core.RuntimeCLI, Status: core.TaskFailed,
				DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, CreatedAt: now}),
			tx.InsertRun(&core.Run{RunID: "run-backwards", StartedAt: now, LastProgressAt: now, InactivityBudgetMs: 1,
				EndedAt: now - 1, Outcome: core.OutcomeOK, CleanupAfter: now + 1e9}),
			tx.InsertJob(&core.Job{ID: "cccccccccccc", Session: "s", Command: []string{"x"}, Status: core.JobRunning,
				CreatedAt: now, StartedAt: now, CompletedAt: now + 1, SupervisorPID: os.Getpid()}))
	}))
	f.clock.Advance(31 * time.Minute)
	rep := f.sweep()
	want := []struct{ kind, severity, id, detail string }{
		{sweep.FindingStaleQueued, sweep.SeverityWarning, queued.ID, "queued for 31m"},
		{sweep.FindingStaleRunning, sweep.SeverityWarning, running.ID, "running for 31m"},
		{sweep.FindingInconsistentTimestamps, sweep.SeverityError, "time-travel", "started_at before created_at; ended_at before started_at"},
		{sweep.FindingInconsistentTimestamps, sweep.SeverityError, "undead", "running with ended_at set"},
		{sweep.FindingInconsistentTimestamps, sweep.SeverityError, "run-backwards", "ended_at before started_at"},
		{sweep.FindingInconsistentTimestamps, sweep.SeverityError, "cccccccccccc", "running with completed_at set"},
		{sweep.FindingDeliveryFailed, sweep.SeverityError, "undelivered", "delivery to session s failed"},
		{sweep.FindingMissingCleanup, sweep.SeverityWarning, "endless", "has no ended_at"},
	}
	for _, w := range want {
		fs := findingsFor(rep, w.kind, w.id)
		if len(fs) != 1 || fs[0].Severity != w.severity || !strings.Contains(fs[0].Detail, w.detail) {
			t.Errorf("finding %s %s: got %+v", w.kind, w.id, fs)
		}
	}
	// Warnings: stale_queued, stale_running twice ("undead" too), missing_cleanup.
	if rep.Counts.Errors != 5 || rep.Counts.Warnings != 4 {
		t.Errorf("audit counts %+v\n%s", rep.Counts, rep.Text())
	}
	re := regexp.MustCompile(`^Sweep applied in \d+ ms: \d+ lost · \d+ timed out · \d+ expired · \d+ silent · \d+ stamped · \d+ pruned · \d+ raced; audit: 5 errors · 4 warnings\n`)
	if !re.MatchString(rep.Text()) {
		t.Errorf("report text:\n%s", rep.Text())
	}
	if !strings.Contains(rep.Text(), "  audit error inconsistent_timestamps run run-backwards: ended_at before started_at\n") {
		t.Errorf("report text lacks the finding line:\n%s", rep.Text())
	}
	// Never fixed: a second sweep reports the same.
	if again := f.sweep(); again.Counts.Errors != 5 || f.get("undead").Status != core.TaskRunning {
		t.Errorf("audit changed something:\n%s", again.Text())
	}
}

// swGateStore blocks the first View until released, to overlap two sweeps.
type swGateStore struct {
	core.Store
	views   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *swGateStore) View(ctx context.Context, fn func(core.Tx) error) error {
	if g.views.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.Store.View(ctx, fn)
}

// TestSweepSingleFlight: a Sweep called while another is running in the same
// process joins it instead of running a second one.
func TestSweepSingleFlight(t *testing.T) {
	f := newSwFixture(t)
	gate := &swGateStore{Store: f.db, entered: make(chan struct{}), release: make(chan struct{})}
	sw := sweep.New(core.NewRegistry(gate, f.clock, f.th), nil)
	var wg sync.WaitGroup
	reps := make([]*sweep.Report, 2)
	wg.Add(1)
	go func() { defer wg.Done(); reps[0], _ = sw.Sweep(f.ctx, false) }()
	<-gate.entered
	wg.Add(1)
	go func() { defer wg.Done(); reps[1], _ = sw.Sweep(f.ctx, false) }()
	time.Sleep(50 * time.Millisecond) // let the second call find the flight (ordering only, not a speed target)
	close(gate.release)
	wg.Wait()
	if reps[0] == nil || reps[0] != reps[1] {
		t.Errorf("second sweep did not join the first: %p %p", reps[0], reps[1])
	}
	if n := gate.views.Load(); n != 1 {
		t.Errorf("%d plans ran, want 1", n)
	}
}
