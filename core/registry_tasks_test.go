package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestCreateTaskDefaults(t *testing.T) {
	f := registrytest.New(t)
	yes, no := true, false
	cases := []struct {
		name     string
		in       core.NewTask
		delivery core.DeliveryStatus
		expects  bool
		policy   core.NotifyPolicy
	}{
		{"subagent with owner", core.NewTask{Runtime: core.RuntimeSubagent, OwnerSession: "s"}, core.DeliveryPending, false, core.NotifyDoneOnly},
		{"cli without owner", core.NewTask{Runtime: core.RuntimeCLI}, core.DeliveryNotApplicable, false, core.NotifyDoneOnly},
		{"cron", core.NewTask{Runtime: core.RuntimeCron, OwnerSession: "s"}, core.DeliveryPending, true, core.NotifyDoneOnly},
		{"cron told no output", core.NewTask{Runtime: core.RuntimeCron, ExpectsOutput: &no}, core.DeliveryNotApplicable, false, core.NotifyDoneOnly},
		{"acp expects output, silent", core.NewTask{Runtime: core.RuntimeACP, ExpectsOutput: &yes, NotifyPolicy: core.NotifySilent}, core.DeliveryNotApplicable, true, core.NotifySilent},
	}
	for _, c := range cases {
		tk, err := f.Reg.CreateTask(f.Ctx, c.in, core.ActorRuntime)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if tk.Status != core.TaskQueued || tk.DeliveryStatus != c.delivery || tk.ExpectsOutput != c.expects ||
			tk.NotifyPolicy != c.policy || tk.CreatedAt != f.Now() || len(tk.ID) != core.TaskIDLen {
			t.Errorf("%s: %+v", c.name, tk)
		}
		if ev := f.LastEvent(core.EntityTask, tk.ID); !ev.Applied || ev.To != "queued" {
			t.Errorf("%s: journal %+v", c.name, ev)
		}
	}
	if _, err := f.Reg.CreateTask(f.Ctx, core.NewTask{ID: "my-task-1", Runtime: core.RuntimeCLI}, core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		in   core.NewTask
		want string
	}{
		{core.NewTask{ID: "my-task-1", Runtime: core.RuntimeCLI}, `task id "my-task-1" already exists`},
		{core.NewTask{Runtime: "robot"}, `"robot"`},
		{core.NewTask{}, "runtime is required"},
		{core.NewTask{Runtime: core.RuntimeCLI, NotifyPolicy: "loud"}, `"loud"`},
	} {
		_, err := f.Reg.CreateTask(f.Ctx, bad.in, core.ActorRuntime)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: err %v, want ErrInvalid containing %q", bad.in, err, bad.want)
		}
	}
}

func TestTaskProgressOutputDeliver(t *testing.T) {
	f := registrytest.New(t)
	tk := f.Task(core.NewTask{OwnerSession: "s", Label: "x"})
	f.Clock.Advance(time.Second)
	st, res, err := f.Reg.StartTask(f.Ctx, tk.ID[:8], "booting", core.ActorRuntime)
	if err != nil || !res.Applied || st.StartedAt != f.Now() || st.ProgressSummary != "booting" {
		t.Fatalf("start: %v %+v %+v", err, res, st)
	}
	f.Clock.Advance(time.Second)
	p, res, err := f.Reg.ProgressTask(f.Ctx, tk.ID, "step 2", core.ActorRuntime)
	if err != nil || !res.Applied || p.LastEventAt != f.Now() || p.ProgressSummary != "step 2" || p.Status != core.TaskRunning {
		t.Fatalf("progress: %v %+v %+v", err, res, p)
	}
	o, _, err := f.Reg.AddTaskOutput(f.Ctx, tk.ID, 3, core.ActorRuntime)
	if err != nil || o.OutputCount != 3 {
		t.Fatalf("output: %v %+v", err, o)
	}
	if _, _, err := f.Reg.AddTaskOutput(f.Ctx, tk.ID, 0, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("output 0: %v", err)
	}
	_, _, err = f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Subtype: "success", Text: "done"}, core.ActorRuntime)
	f.Must(err)
	if got := f.GetTask(tk.ID); got.OutputCount != 4 || got.ResultSubtype != "success" {
		t.Fatalf("after finish: %+v", got)
	}
	if _, res, _ := f.Reg.ProgressTask(f.Ctx, tk.ID, "", core.ActorRuntime); res.Applied || res.Reason != "progress refused: task already succeeded" {
		t.Fatalf("progress after end: %+v", res)
	}
	d, res, err := f.Reg.DeliverTask(f.Ctx, tk.ID, core.DeliveryDelivered, core.ActorRuntime)
	if err != nil || !res.Applied || d.DeliveryStatus != core.DeliveryDelivered {
		t.Fatalf("deliver: %v %+v", err, res)
	}
	if _, res, _ := f.Reg.DeliverTask(f.Ctx, tk.ID, core.DeliveryDelivered, core.ActorRuntime); res.Applied || res.Reason != "already delivered" {
		t.Fatalf("deliver again: %+v", res)
	}
	if _, _, err := f.Reg.DeliverTask(f.Ctx, tk.ID, "teleported", core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("bad delivery: %v", err)
	}
	noOwner := f.Task(core.NewTask{Runtime: core.RuntimeCLI})
	if _, res, _ := f.Reg.DeliverTask(f.Ctx, noOwner.ID, core.DeliveryDelivered, core.ActorRuntime); res.Applied {
		t.Fatalf("delivered a not_applicable task: %+v", res)
	}
	if _, _, err := f.Reg.GetTask(f.Ctx, "zzzzzzzz"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown prefix: %v", err)
	}
}

// TestR3CancelAlwaysEndsTheTask covers queued, running (with its run killed
// and its job cancelled) and terminal tasks.
func TestR3CancelAlwaysEndsTheTask(t *testing.T) {
	f := registrytest.New(t)
	q := f.Task(core.NewTask{OwnerSession: "s"})
	f.Clock.Advance(time.Second)
	got, res, err := f.Reg.CancelTask(f.Ctx, q.ID, "", core.OperatorActor())
	if err != nil || !res.Applied || got.Status != core.TaskCancelled || got.Error != "Cancelled by operator." ||
		got.EndedAt != f.Now() || got.CleanupAfter != f.Now().Add(week) {
		t.Fatalf("cancel queued: %v %+v %+v", err, res, got)
	}
	if ev := f.LastEvent(core.EntityTask, q.ID); ev.Actor != core.OperatorActor() || !ev.Applied {
		t.Fatalf("journal actor: %+v", ev)
	}

	// Running task backed by a run and a job: both are ended afterwards.
	run := f.Run("run-cancel", "child")
	f.InsertJob("0123456789ab", "child", core.JobRunning)
	r := f.Task(core.NewTask{RunID: run.RunID, SourceID: "0123456789ab", OwnerSession: "s"})
	_, _, err = f.Reg.StartTask(f.Ctx, r.ID, "", core.ActorRuntime)
	f.Must(err)
	f.Request("child", run.RunID, "make deploy")
	got, res, err = f.Reg.CancelTask(f.Ctx, r.ID, "user changed their mind", core.OperatorActor())
	if err != nil || !res.Applied || got.Status != core.TaskCancelled || got.Error != "user changed their mind" {
		t.Fatalf("cancel running: %v %+v %+v", err, res, got)
	}
	if !strings.Contains(res.Reason, "run run-cancel killed") || !strings.Contains(res.Reason, "job 0123456789ab cancelled") {
		t.Fatalf("cancel notes: %q", res.Reason)
	}
	if kr := f.GetRun(run.RunID); kr.Outcome != core.OutcomeKilled || kr.PendingApprovalWaits != 0 {
		t.Fatalf("run after cancel: %+v", kr)
	}
	if len(f.Jobs.Cancelled()) != 1 || f.Jobs.Cancelled()[0] != "0123456789ab" {
		t.Fatalf("jobs cancelled: %v", f.Jobs.Cancelled())
	}

	// Cancel with the run already gone still ends the task.
	gone := f.Task(core.NewTask{RunID: "never-registered", OwnerSession: "s"})
	if _, res, err := f.Reg.CancelTask(f.Ctx, gone.ID, "", core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("cancel unbacked: %v %+v", err, res)
	}

	// Terminal tasks: "already <status>", nothing changes.
	for _, st := range []core.TaskStatus{core.TaskSucceeded, core.TaskFailed, core.TaskTimedOut, core.TaskCancelled, core.TaskLost} {
		tk := taskIn(f, st)
		got, res, err := f.Reg.CancelTask(f.Ctx, tk.ID, "", core.OperatorActor())
		if err != nil || res.Applied || res.Reason != "already "+string(st) || got.Status != st || got.Rev != tk.Rev {
			t.Fatalf("cancel %s: %v %+v %+v", st, err, res, got)
		}
	}
}

// TestR4ResultSubtypes covers every R4 mapping and the task_failed
// notification (once; none under the silent policy).
func TestR4ResultSubtypes(t *testing.T) {
	cases := []struct {
		name    string
		fin     core.Finish
		policy  core.NotifyPolicy
		status  core.TaskStatus
		errText string
		subtype string
		notify  string // expected notification text; "" = none
		outputs int64
	}{
		{"success", core.Finish{Subtype: "success", Text: "all good"}, "", core.TaskSucceeded, "", "success", "", 1},
		{"success without text", core.Finish{Subtype: "success"}, "", core.TaskSucceeded, "", "success", "", 0},
		{"success but is_error", core.Finish{Subtype: "success", IsError: true, Text: "API Error: 500"}, "",
			core.TaskFailed, "Task did not complete: success (is_error: true)", "success",
			"Task nightly did not complete: success (is_error: true)", 1},
		{"error_max_turns", core.Finish{Subtype: "error_max_turns"}, "", core.TaskFailed,
			"Task did not complete: error_max_turns", "error_max_turns", "Task nightly did not complete: error_max_turns", 0},
		{"error_during_execution", core.Finish{Subtype: "error_during_execution", IsError: true}, core.NotifyStateChanges, core.TaskFailed,
			"Task did not complete: error_during_execution", "error_during_execution", "Task nightly did not complete: error_during_execution", 0},
		{"error_max_budget_usd with detail", core.Finish{Subtype: "error_max_budget_usd", Error: "spent $5"}, "", core.TaskFailed,
			"Task did not complete: error_max_budget_usd: spent $5", "error_max_budget_usd", "Task nightly did not complete: error_max_budget_usd", 0},
		{"error subtype, silent policy", core.Finish{Subtype: "error_max_turns"}, core.NotifySilent, core.TaskFailed,
			"Task did not complete: error_max_turns", "error_max_turns", "", 0},
		{"stream ended without result", core.Finish{Status: core.TaskFailed, Error: "stream ended without terminal result (last event: system/compact_boundary)"}, "",
			core.TaskFailed, "stream ended without terminal result (last event: system/compact_boundary)", "",
			"Task nightly did not complete: stream ended without terminal result (last event: system/compact_boundary)", 0},
		{"explicit timed_out", core.Finish{Status: core.TaskTimedOut, Error: "deadline"}, "", core.TaskTimedOut, "deadline", "", "", 0},
		{"explicit succeeded", core.Finish{Status: core.TaskSucceeded}, "", core.TaskSucceeded, "", "", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := registrytest.New(t)
			tk := f.Task(core.NewTask{Runtime: core.RuntimeCron, OwnerSession: "owner", Label: "nightly", NotifyPolicy: c.policy})
			_, _, err := f.Reg.StartTask(f.Ctx, tk.ID, "", core.ActorRuntime)
			f.Must(err)
			got, res, err := f.Reg.FinishTask(f.Ctx, tk.ID, c.fin, core.ActorRuntime)
			if err != nil || !res.Applied {
				t.Fatalf("%v %+v", err, res)
			}
			if got.Status != c.status || got.Error != c.errText || got.ResultSubtype != c.subtype || got.OutputCount != c.outputs {
				t.Fatalf("got %s %q %q outputs=%d", got.Status, got.Error, got.ResultSubtype, got.OutputCount)
			}
			// A repeated report changes nothing and never re-notifies.
			if _, res, _ := f.Reg.FinishTask(f.Ctx, tk.ID, c.fin, core.ActorRuntime); res.Applied {
				t.Fatalf("second finish applied: %+v", res)
			}
			ns := f.Notifications(core.NotifyTaskFailed)
			if c.notify == "" {
				if len(ns) != 0 {
					t.Fatalf("unexpected notifications: %+v", ns)
				}
				return
			}
			if len(ns) != 1 {
				t.Fatalf("%d task_failed notifications, want 1: %+v", len(ns), ns)
			}
			n := ns[0]
			if n.Text != c.notify || n.Session != "owner" || n.SubjectID != tk.ID || n.DedupKey != "task_failed:"+tk.ID {
				t.Fatalf("notification: %+v", n)
			}
		})
	}
}

func TestR4InvalidFinish(t *testing.T) {
	f := registrytest.New(t)
	tk := f.Task(core.NewTask{})
	for _, bad := range []struct {
		fin  core.Finish
		want string
	}{
		{core.Finish{Subtype: "compact_boundary"}, `"compact_boundary"`},
		{core.Finish{}, "status or a result subtype"},
		{core.Finish{Status: core.TaskRunning}, `"running"`},
		{core.Finish{Status: core.TaskLost}, `"lost"`},
		{core.Finish{Status: "done"}, `"done"`},
		{core.Finish{Status: core.TaskFailed, Subtype: "error_max_turns"}, "not both"},
	} {
		_, _, err := f.Reg.FinishTask(f.Ctx, tk.ID, bad.fin, core.ActorRuntime)
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: err %v, want ErrInvalid containing %q", bad.fin, err, bad.want)
		}
	}
	if got := f.GetTask(tk.ID); got.Status != core.TaskQueued || got.Rev != tk.Rev {
		t.Fatalf("invalid finish wrote the task: %+v", got)
	}
	// is_error with a non-error subtype other than success still fails the task.
	got, _, err := f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Subtype: "weird", IsError: true}, core.ActorRuntime)
	f.Must(err)
	if got.Status != core.TaskFailed || got.Error != "Task did not complete: weird" {
		t.Fatalf("is_error weird: %+v", got)
	}
}

// TestR4LostUpgradeByFinish: a lost task that reports failure is upgraded to
// failed with the new error (lost-derived error replaced) and notifies.
func TestR4LostUpgradeByFinish(t *testing.T) {
	f := registrytest.New(t)
	tk := f.Task(core.NewTask{OwnerSession: "o", Label: "L"})
	_, _, err := f.Reg.MarkTaskLost(f.Ctx, tk.ID, "backing session missing")
	f.Must(err)
	got, res, err := f.Reg.FinishTask(f.Ctx, tk.ID, core.Finish{Subtype: "error_max_turns"}, core.ActorRuntime)
	if err != nil || !res.Applied || got.Status != core.TaskFailed || got.Error != "Task did not complete: error_max_turns" {
		t.Fatalf("%v %+v %+v", err, res, got)
	}
	if got.CleanupAfter != got.EndedAt.Add(week) {
		t.Fatalf("cleanup_after not recomputed: %+v", got)
	}
	if n := f.Notifications(core.NotifyTaskFailed); len(n) != 1 {
		t.Fatalf("notifications: %+v", n)
	}
}
