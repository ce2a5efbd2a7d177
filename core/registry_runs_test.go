package core_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

const week = 7 * 24 * time.Hour

// seedRun sets up the shape of seed 000: session S (child), a running run R,
// its subagent task row and the child's cli peer row (source_id = R), both
// running, both delivery pending.
func seedRun(f *registrytest.Fixture) (run *core.Run, sub, peer *core.Task) {
	f.T.Helper()
	f.Session("parent")
	f.Session("child")
	run = f.Run("run-0001", "child")
	sub = f.Task(core.NewTask{Runtime: core.RuntimeSubagent, RunID: run.RunID, OwnerSession: "parent", ChildSession: "child", Label: "research"})
	peer = f.Task(core.NewTask{Runtime: core.RuntimeCLI, SourceID: run.RunID, OwnerSession: "child", Label: "research (cli)"})
	for _, tk := range []*core.Task{sub, peer} {
		if _, res, err := f.Reg.StartTask(f.Ctx, tk.ID, "", core.ActorRuntime); err != nil || !res.Applied {
			f.T.Fatalf("start %s: %v %+v", tk.ID, err, res)
		}
	}
	return run, f.GetTask(sub.ID), f.GetTask(peer.ID)
}

// TestR1KillIsNotCompletion: kill ends the run, leaves task status, sets
// delivery not_applicable, cancels pending approvals (decrementing the R6
// counter), and a second kill changes nothing.
func TestR1KillIsNotCompletion(t *testing.T) {
	f := registrytest.New(t)
	run, sub, peer := seedRun(f)
	a := f.Request("child", run.RunID, "git push --force origin")
	other := f.Request("parent", "", "ls")
	if got := f.GetRun(run.RunID).PendingApprovalWaits; got != 1 {
		t.Fatalf("pending_approval_waits %d after request, want 1", got)
	}
	f.Clock.Advance(10 * time.Second)
	killedAt := f.Now()
	got, res, err := f.Reg.KillRun(f.Ctx, run.RunID[:6], "", core.OperatorActor())
	if err != nil || !res.Applied {
		t.Fatalf("kill: %v %+v", err, res)
	}
	if got.EndedAt != killedAt || got.Outcome != core.OutcomeKilled || got.EndedReason != "subagent-killed" ||
		!got.CleanupHandled || got.SuppressAnnounceReason != "killed" || got.CleanupAfter != killedAt.Add(week) {
		t.Fatalf("killed run: %+v", got)
	}
	if got.PendingApprovalWaits != 0 {
		t.Fatalf("pending_approval_waits %d after kill, want 0", got.PendingApprovalWaits)
	}
	for _, tk := range []*core.Task{sub, peer} {
		after := f.GetTask(tk.ID)
		if after.Status != core.TaskRunning {
			t.Errorf("task %s status %s after kill, want running (kill is not completion)", tk.Label, after.Status)
		}
		if after.DeliveryStatus != core.DeliveryNotApplicable {
			t.Errorf("task %s delivery %s, want not_applicable", tk.Label, after.DeliveryStatus)
		}
	}
	if st := f.GetApproval(a.ID).Status; st != core.ApprovalCancelled {
		t.Fatalf("run's approval %s, want cancelled", st)
	}
	if st := f.GetApproval(other.ID).Status; st != core.ApprovalPending {
		t.Fatalf("unrelated approval %s, want pending", st)
	}
	f.FindEvent(core.EntityRun, run.RunID, "approval "+a.ID+" cancelled")

	// Idempotent second kill.
	before := f.GetRun(run.RunID)
	again, res, err := f.Reg.KillRun(f.Ctx, run.RunID, "", core.OperatorActor())
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied || res.Reason != "run already ended (killed)" {
		t.Fatalf("second kill: %+v", res)
	}
	if !reflect.DeepEqual(again, before) {
		t.Fatalf("second kill changed the run:\n%+v\n%+v", before, again)
	}
	if ev := f.LastEvent(core.EntityRun, run.RunID); ev.Applied || ev.Reason != res.Reason {
		t.Fatalf("second kill journal: %+v", ev)
	}
}

// TestR2LateCompletionWinsOverInference: kill → both rows marked lost →
// late `run complete ok` → both succeeded, error cleared, cleanup_after
// recomputed to ended_at + 7 d, run record kept; a later error does not
// downgrade.
func TestR2LateCompletionWinsOverInference(t *testing.T) {
	f := registrytest.New(t)
	run, sub, peer := seedRun(f)
	f.Clock.Advance(time.Second)
	if _, res, err := f.Reg.KillRun(f.Ctx, run.RunID, "", core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("kill: %v %+v", err, res)
	}
	killed := f.GetRun(run.RunID)
	f.Clock.Advance(30 * time.Second)
	lostAt := f.Now()
	for _, tk := range []*core.Task{sub, peer} {
		lt, res, err := f.Reg.MarkTaskLost(f.Ctx, tk.ID, "subagent run ended (killed)")
		if err != nil || !res.Applied {
			t.Fatalf("mark lost: %v %+v", err, res)
		}
		if lt.EndedAt != lostAt || lt.CleanupAfter != lostAt.Add(24*time.Hour) || lt.Error != "subagent run ended (killed)" {
			t.Fatalf("lost row: %+v", lt)
		}
	}
	f.Clock.Advance(time.Minute)
	gotRun, tasks, res, err := f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || !strings.Contains(res.Reason, "late completion (ok) after run ended (killed)") {
		t.Fatalf("late completion result: %+v", res)
	}
	if !reflect.DeepEqual(gotRun, killed) {
		t.Fatalf("late completion changed the run record:\n%+v\n%+v", killed, gotRun)
	}
	if ev := f.FindEvent(core.EntityRun, run.RunID, "late completion (ok) after run ended (killed)"); ev.Applied {
		t.Fatalf("late completion journaled as applied to the run: %+v", ev)
	}
	if len(tasks) != 2 {
		t.Fatalf("CompleteRun returned %d mirrored tasks, want 2", len(tasks))
	}
	for _, tk := range []*core.Task{sub, peer} {
		after := f.GetTask(tk.ID)
		if after.Status != core.TaskSucceeded || after.Error != "" {
			t.Fatalf("%s after late ok: status %s error %q", tk.Label, after.Status, after.Error)
		}
		if after.EndedAt != lostAt || after.CleanupAfter != lostAt.Add(week) {
			t.Fatalf("%s: ended_at %s cleanup_after %s, want %s and +7d", tk.Label, after.EndedAt, after.CleanupAfter, lostAt)
		}
		ev := f.LastEvent(core.EntityTask, tk.ID)
		if !ev.Applied || ev.From != "lost" || ev.To != "succeeded" || !strings.Contains(ev.Reason, "lost-derived error cleared") {
			t.Fatalf("upgrade journal: %+v", ev)
		}
	}
	// A stale error report never downgrades succeeded.
	f.Clock.Advance(time.Minute)
	_, tasks, res, err = f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeError, "boom", core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied {
		t.Fatalf("late error applied: %+v", res)
	}
	for _, tk := range tasks {
		if tk.Status != core.TaskSucceeded || tk.Error != "" {
			t.Fatalf("downgraded: %+v", tk)
		}
		if ev := f.LastEvent(core.EntityTask, tk.ID); ev.Applied || !strings.Contains(ev.Reason, "no downgrade") {
			t.Fatalf("refusal journal: %+v", ev)
		}
	}
}

func TestR2CompleteRunningRun(t *testing.T) {
	for _, c := range []struct {
		outcome core.RunOutcome
		want    core.TaskStatus
		err     string
	}{
		{core.OutcomeOK, core.TaskSucceeded, ""},
		{core.OutcomeError, core.TaskFailed, "tool crashed"},
		{core.OutcomeTimeout, core.TaskTimedOut, "subagent run ended (timeout)"},
	} {
		t.Run(string(c.outcome), func(t *testing.T) {
			f := registrytest.New(t)
			run, _, _ := seedRun(f)
			f.Clock.Advance(time.Second)
			errText := ""
			if c.outcome == core.OutcomeError {
				errText = c.err
			}
			got, tasks, res, err := f.Reg.CompleteRun(f.Ctx, run.RunID, c.outcome, errText, core.ActorRuntime)
			if err != nil || !res.Applied {
				t.Fatalf("%v %+v", err, res)
			}
			if got.Outcome != c.outcome || got.EndedAt != f.Now() || got.CleanupAfter != f.Now().Add(week) {
				t.Fatalf("run: %+v", got)
			}
			for _, tk := range tasks {
				if tk.Status != c.want || tk.Error != c.err {
					t.Fatalf("task %s: %s %q, want %s %q", tk.Label, tk.Status, tk.Error, c.want, c.err)
				}
			}
		})
	}
	f := registrytest.New(t)
	run, _, _ := seedRun(f)
	for _, o := range []core.RunOutcome{core.OutcomeKilled, core.OutcomeReset, core.OutcomeDeleted, "bogus"} {
		if _, _, _, err := f.Reg.CompleteRun(f.Ctx, run.RunID, o, "", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), string(o)) {
			t.Fatalf("outcome %s: err %v, want ErrInvalid naming it", o, err)
		}
	}
	if _, _, _, err := f.Reg.CompleteRun(f.Ctx, "nope-nope", core.OutcomeOK, "", core.ActorRuntime); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}

func TestRegisterAndProgressRun(t *testing.T) {
	f := registrytest.New(t)
	r, err := f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: "r-abc", ChildSession: "c", InactivityBudget: 90 * time.Second}, core.ActorRuntime)
	f.Must(err)
	if r.InactivityBudgetMs != 90_000 || r.StartedAt != f.Now() || r.LastProgressAt != f.Now() {
		t.Fatalf("registered: %+v", r)
	}
	if _, err := f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: "r-abc", ChildSession: "c"}, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("duplicate run: %v", err)
	}
	for _, bad := range []core.NewRun{{ChildSession: "c"}, {RunID: "x"}, {RunID: "y", ChildSession: "c", InactivityBudget: -time.Second}} {
		if _, err := f.Reg.RegisterRun(f.Ctx, bad, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	d := f.Run("r-def", "c")
	if d.InactivityBudgetMs != core.DefaultInactivityBudgetMs {
		t.Fatalf("default budget %d", d.InactivityBudgetMs)
	}
	f.Clock.Advance(5 * time.Second)
	p, res, err := f.Reg.ProgressRun(f.Ctx, "r-abc", core.ActorRuntime)
	if err != nil || !res.Applied || p.LastProgressAt != f.Now() {
		t.Fatalf("progress: %v %+v %+v", err, res, p)
	}
	f.Must(func() error { _, _, err := f.Reg.KillRun(f.Ctx, "r-abc", "", core.ActorRuntime); return err }())
	if _, res, _ := f.Reg.ProgressRun(f.Ctx, "r-abc", core.ActorRuntime); res.Applied || res.Reason != "run already ended (killed)" {
		t.Fatalf("progress after kill: %+v", res)
	}
	runs, err := f.Reg.ListRuns(f.Ctx, core.RunFilter{RunningOnly: true})
	f.Must(err)
	if len(runs) != 1 || runs[0].RunID != "r-def" {
		t.Fatalf("running runs: %+v", runs)
	}
}

// TestSeed000Story replays seed 000 at core level: a subagent task and its
// cli peer row (source_id = run id) are running; the run is killed; the rows
// stay running with delivery not_applicable (the sweeper's R5 early-lost
// marks them lost, simulated here with MarkTaskLost); cancel says "already
// lost"; a late completion upgrades both to succeeded and clears the error.
func TestSeed000Story(t *testing.T) {
	f := registrytest.New(t)
	run, sub, peer := seedRun(f)
	mirrored, err := f.Reg.ListTasks(f.Ctx, core.TaskFilter{RunID: run.RunID})
	f.Must(err)
	if len(mirrored) < 1 {
		t.Fatalf("tasks by run id: %+v", mirrored)
	}
	f.Clock.Advance(2 * time.Second)
	_, res, err := f.Reg.KillRun(f.Ctx, run.RunID, "operator kill", core.OperatorActor())
	if err != nil || !res.Applied {
		t.Fatalf("kill: %v %+v", err, res)
	}
	for _, tk := range []*core.Task{sub, peer} {
		if got := f.GetTask(tk.ID); got.Status != core.TaskRunning || got.DeliveryStatus != core.DeliveryNotApplicable {
			t.Fatalf("%s after kill: %s / %s", tk.Label, got.Status, got.DeliveryStatus)
		}
	}
	f.Clock.Advance(time.Minute)
	for _, tk := range []*core.Task{sub, peer} {
		_, res, err := f.Reg.MarkTaskLost(f.Ctx, tk.ID, "subagent run ended (killed)")
		if err != nil || !res.Applied {
			t.Fatalf("lost: %v %+v", err, res)
		}
		_, res, err = f.Reg.CancelTask(f.Ctx, tk.ID, "", core.OperatorActor())
		if err != nil || res.Applied || res.Reason != "already lost" {
			t.Fatalf("cancel lost: %v %+v", err, res)
		}
	}
	f.Clock.Advance(time.Minute)
	_, tasks, res, err := f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
	if err != nil || !res.Applied {
		t.Fatalf("late complete: %v %+v", err, res)
	}
	if len(tasks) != 2 {
		t.Fatalf("mirrored: %d", len(tasks))
	}
	for _, tk := range tasks {
		if tk.Status != core.TaskSucceeded || tk.Error != "" || tk.DeliveryStatus != core.DeliveryNotApplicable {
			t.Fatalf("final %s: %+v", tk.Label, tk)
		}
	}
}
