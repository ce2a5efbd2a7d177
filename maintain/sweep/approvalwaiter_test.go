package sweep_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/supervisor"
)

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSweepWithdrawsApprovalsOfGoneWaiters: a pending approval whose waiter
// on this host has exited (or whose pid another process now holds) is
// cancelled, releasing its run's wait; a live waiter, another host's, an
// approval without one and one due for expiry are left to others. A dry run
// writes nothing; a decision landing between plan and apply wins.
func TestSweepWithdrawsApprovalsOfGoneWaiters(t *testing.T) {
	t.Setenv(core.EnvHost, "this-host")
	self, ok := supervisor.ThisProcess()
	if !ok {
		t.Skip("no /proc: waiters are not recorded here")
	}
	if self.Host != "this-host" {
		t.Fatalf("ThisProcess host %q", self.Host)
	}
	f := registrytest.New(t)
	run := f.Run("run-w", "s")
	dead := deadPID(t)
	// A zombie: exited, not yet reaped by its parent (this test).
	zcmd := exec.Command("true")
	if err := zcmd.Start(); err != nil {
		t.Fatal(err)
	}
	zstart, err := supervisor.ProcStartTime(zcmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zcmd.Wait() })
	waitZombie(t, zcmd.Process.Pid)
	ns := self.NS
	ask := func(runID, cmd string, w core.Waiter, expires time.Duration) *core.Approval {
		a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", RunID: runID, Tool: "Bash", Command: cmd,
			Waiter: w, ExpiresIn: expires}, core.ActorRuntime)
		f.Must(err)
		return a
	}
	cases := []struct {
		name string
		a    *core.Approval
		want core.ApprovalStatus
	}{
		{"dead waiter", ask(run.RunID, "make deploy", core.Waiter{Host: "this-host", PID: dead, Start: 1, NS: ns}, time.Hour), core.ApprovalCancelled},
		{"pid reused", ask("", "make a", core.Waiter{Host: "this-host", PID: self.PID, Start: self.Start + 1, NS: ns}, 0), core.ApprovalCancelled},
		{"live waiter", ask("", "make b", self, time.Hour), core.ApprovalPending},
		{"other host", ask("", "make c", core.Waiter{Host: "other-host", PID: dead, Start: 1, NS: ns}, time.Hour), core.ApprovalPending},
		{"no waiter", ask("", "make d", core.Waiter{}, time.Hour), core.ApprovalPending},
		{"due for expiry", ask("", "make e", core.Waiter{Host: "this-host", PID: dead, Start: 1, NS: ns}, time.Minute), core.ApprovalExpired},
		{"other namespace", ask("", "make f", core.Waiter{Host: "this-host", PID: dead, Start: 1, NS: "another-boot pid:[1]"}, time.Hour), core.ApprovalPending},
		{"zombie", ask("", "make g", core.Waiter{Host: "this-host", PID: zcmd.Process.Pid, Start: zstart, NS: ns}, time.Hour), core.ApprovalCancelled},
		{"unjudgeable pid", ask("", "make h", core.Waiter{Host: "this-host", PID: -5, NS: ns}, time.Hour), core.ApprovalPending},
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 1 {
		t.Fatalf("run waits %d", r.PendingApprovalWaits)
	}
	f.Clock.Advance(2 * time.Minute)
	// The supervisor's front end judges waiters (core.WaiterLiveness, from
	// /proc); its host is this-host, read from CLAWPIT_HOST above.
	sw := sweep.New(f.Reg, supervisor.NewJobs(f.Reg, supervisor.JobsOptions{Dir: t.TempDir()}))

	dry, err := sw.Sweep(f.Ctx, true)
	f.Must(err)
	if dry.Counts.Withdrawn != 3 || !strings.Contains(dry.Summary(), "· 3 withdrawn ·") {
		t.Fatalf("dry run: %+v\n%s", dry.Counts, dry.Text())
	}
	for _, c := range cases {
		if got := f.GetApproval(c.a.ID); got.Status != core.ApprovalPending {
			t.Fatalf("%s: %s after a dry run", c.name, got.Status)
		}
	}

	// A decision between plan and apply wins over the withdrawal.
	p, err := sw.Plan(f.Ctx)
	f.Must(err)
	_, _, res, err := f.Reg.ApproveApproval(f.Ctx, cases[1].a.ID, core.ScopeOnce, core.OperatorActor())
	if err != nil || !res.Applied {
		t.Fatalf("approve: %v %+v", err, res)
	}
	rep, err := sw.Apply(f.Ctx, p)
	f.Must(err)
	if rep.Counts.Withdrawn != 2 || rep.Counts.Raced != 1 || rep.Counts.Expired != 1 {
		t.Fatalf("applied: %+v\n%s", rep.Counts, rep.Text())
	}
	cases[1].want = core.ApprovalApproved
	for _, c := range cases {
		got := f.GetApproval(c.a.ID)
		if got.Status != c.want {
			t.Errorf("%s: %s, want %s", c.name, got.Status, c.want)
		}
		if c.want == core.ApprovalCancelled {
			want := "the hook waiting for it is gone (process " + strconv.Itoa(c.a.Waiter.PID) + " on this-host exited before a decision)"
			if got.Reason != want || got.DecidedBy != string(core.ActorSweeper) {
				t.Errorf("%s: %q by %s, want %q by the sweeper", c.name, got.Reason, got.DecidedBy, want)
			}
		}
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 0 {
		t.Fatalf("run still waits on a withdrawn approval: %+v", r)
	}
	if rep, err := sw.Sweep(f.Ctx, false); err != nil || rep.Counts.Withdrawn != 0 {
		t.Fatalf("second sweep: %v %+v", err, rep.Counts)
	}
}

// waitZombie waits until pid has exited and is a zombie (not yet reaped).
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not become a zombie", pid)
}

// TestRepeatedToolCallTakesOverTheWait: a tool call asked again (a resumed
// session) while its approval is pending makes the new asker its waiter, so
// a sweep does not withdraw it for the first asker's death.
func TestRepeatedToolCallTakesOverTheWait(t *testing.T) {
	self, ok := supervisor.ThisProcess()
	if !ok {
		t.Skip("no /proc")
	}
	f := registrytest.New(t)
	gone := core.Waiter{Host: self.Host, PID: deadPID(t), Start: 1, NS: self.NS}
	first, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make", ToolUseID: "toolu_1", InputHash: "h1", Waiter: gone}, core.ActorRuntime)
	f.Must(err)
	again, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make", ToolUseID: "toolu_1", InputHash: "h1", Waiter: self}, core.ActorRuntime)
	f.Must(err)
	if again.ID != first.ID || again.Waiter != self || f.GetApproval(first.ID).Waiter != self {
		t.Fatalf("repeated request: %+v, stored waiter %+v; want the same approval waited by %+v", again, f.GetApproval(first.ID).Waiter, self)
	}
	rep, err := sweep.New(f.Reg, supervisor.NewJobs(f.Reg, supervisor.JobsOptions{Dir: t.TempDir()})).Sweep(f.Ctx, false)
	f.Must(err)
	if rep.Counts.Withdrawn != 0 || f.GetApproval(first.ID).Status != core.ApprovalPending {
		t.Fatalf("sweep withdrew the approval its new asker waits for: %+v", rep.Counts)
	}
}

// TestSweepWithoutWaiterJudgeLeavesWaiters: core reads no process table, so
// a sweep whose job front end cannot judge waiters (none at all here, as in
// a registry tool without the supervisor) leaves a gone waiter's approval
// to its expiry rather than guessing.
func TestSweepWithoutWaiterJudgeLeavesWaiters(t *testing.T) {
	self, ok := supervisor.ThisProcess()
	if !ok {
		t.Skip("no /proc")
	}
	f := registrytest.New(t)
	gone := core.Waiter{Host: self.Host, PID: deadPID(t), Start: 1, NS: self.NS}
	a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make", Waiter: gone, ExpiresIn: time.Hour}, core.ActorRuntime)
	f.Must(err)
	rep, err := sweep.New(f.Reg, nil).Sweep(f.Ctx, false)
	f.Must(err)
	if rep.Counts.Withdrawn != 0 || f.GetApproval(a.ID).Status != core.ApprovalPending {
		t.Fatalf("a sweep without a judge withdrew %d approvals; status %s", rep.Counts.Withdrawn, f.GetApproval(a.ID).Status)
	}
	rep, err = sweep.New(f.Reg, supervisor.NewJobs(f.Reg, supervisor.JobsOptions{Dir: t.TempDir()})).Sweep(f.Ctx, false)
	f.Must(err)
	if rep.Counts.Withdrawn != 1 || f.GetApproval(a.ID).Status != core.ApprovalCancelled {
		t.Fatalf("with the supervisor's judge: withdrew %d, status %s; want 1, cancelled", rep.Counts.Withdrawn, f.GetApproval(a.ID).Status)
	}
}
