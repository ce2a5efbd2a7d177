package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestRecordActivity(t *testing.T) {
	f := registrytest.New(t)
	// Unknown session: opened active with the label.
	res, err := f.Reg.RecordActivity(f.Ctx, core.Activity{Session: "cc-1", Label: "shop", Why: "PostToolUse Bash"}, core.ActorRuntime)
	f.Must(err)
	s, _, err := f.Reg.GetSession(f.Ctx, "cc-1")
	f.Must(err)
	if !res.Applied || s.State != core.SessionActive || s.Label != "shop" {
		t.Fatalf("created: %+v %+v", res, s)
	}
	run := f.Run("agent-1", "cc-1")
	f.Clock.Advance(30 * time.Second)
	_, err = f.Reg.RecordActivity(f.Ctx, core.Activity{Session: "cc-1", RunID: "agent-1", Why: "PostToolUse Edit"}, core.ActorRuntime)
	f.Must(err)
	s, _, _ = f.Reg.GetSession(f.Ctx, "cc-1")
	if got := f.GetRun(run.RunID); got.LastProgressAt != f.Now() || s.LastActivityAt != f.Now() || s.Label != "shop" {
		t.Fatalf("activity not recorded: run %v session %v now %v", got.LastProgressAt, s.LastActivityAt, f.Now())
	}
	if ev := f.LastEvent(core.EntityRun, run.RunID); ev.Reason != "progress (activity: PostToolUse Edit)" || ev.Actor != core.ActorRuntime {
		t.Fatalf("run journal: %+v", ev)
	}
	// Unknown run: ignored; ended run: refused; closed session: refused.
	_, err = f.Reg.RecordActivity(f.Ctx, core.Activity{Session: "cc-1", RunID: "agent-unknown"}, core.ActorRuntime)
	f.Must(err)
	_, _, _, err = f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
	f.Must(err)
	f.Clock.Advance(time.Second)
	_, err = f.Reg.RecordActivity(f.Ctx, core.Activity{Session: "cc-1", RunID: run.RunID}, core.ActorRuntime)
	f.Must(err)
	if ev := f.LastEvent(core.EntityRun, run.RunID); ev.Applied || ev.Reason != "run already ended (ok)" {
		t.Fatalf("ended run: %+v", ev)
	}
	_, _, _, err = f.Reg.CloseSession(f.Ctx, "cc-1", core.ActorRuntime)
	f.Must(err)
	res, err = f.Reg.RecordActivity(f.Ctx, core.Activity{Session: "cc-1"}, core.ActorRuntime)
	f.Must(err)
	if res.Applied || res.Reason != "session closed" {
		t.Fatalf("closed session: %+v", res)
	}
	if _, err := f.Reg.RecordActivity(f.Ctx, core.Activity{}, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty session: %v", err)
	}
}

func TestRaiseNotification(t *testing.T) {
	f := registrytest.New(t)
	n, ok, err := f.Reg.RaiseNotification(f.Ctx, core.NewNotification{Session: "s", Kind: core.NotifyRuntimeNotice,
		SubjectID: "ap1", Text: "Claude needs your permission (token=ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789)"})
	f.Must(err)
	if !ok || n.ID == 0 || n.DedupKey == "" || n.Text == "" || n.CreatedAt != f.Now() {
		t.Fatalf("raised: %+v %v", n, ok)
	}
	got := f.Notifications(core.NotifyRuntimeNotice)
	if len(got) != 1 || got[0].SubjectID != "ap1" || got[0].Text != n.Text {
		t.Fatalf("stored: %+v", got)
	}
	if containsSecret(got[0].Text) {
		t.Fatalf("text not redacted: %q", got[0].Text)
	}
	_, ok, err = f.Reg.RaiseNotification(f.Ctx, core.NewNotification{Session: "s", Kind: core.NotifyRuntimeNotice, Text: "again", DedupKey: n.DedupKey})
	if err != nil || ok {
		t.Fatalf("duplicate key: %v %v", ok, err)
	}
	for _, bad := range []core.NewNotification{{Kind: "gossip", Text: "x"}, {Kind: core.NotifyRuntimeNotice, Text: "  "}} {
		if _, _, err := f.Reg.RaiseNotification(f.Ctx, bad); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func containsSecret(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if s[i:i+4] == "ghp_" && i+10 < len(s) && s[i+4:i+10] == "abcdef" {
			return true
		}
	}
	return false
}

func TestRequestApprovalToolUseIDRepeat(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s")
	run := f.Run("r1", "s")
	na := core.NewApproval{Session: "s", RunID: run.RunID, Tool: "Bash", Command: "make deploy", ToolUseID: "toolu_1", InputHash: "h1", ExpiresIn: time.Minute}
	a, err := f.Reg.RequestApproval(f.Ctx, na, core.ActorRuntime)
	f.Must(err)
	if a.ToolUseID != "toolu_1" || f.GetRun(run.RunID).PendingApprovalWaits != 1 {
		t.Fatalf("first: %+v", a)
	}
	again, err := f.Reg.RequestApproval(f.Ctx, na, core.ActorRuntime)
	f.Must(err)
	if again.ID != a.ID || f.GetRun(run.RunID).PendingApprovalWaits != 1 {
		t.Fatalf("repeat opened a new approval or counted a second wait: %+v", again)
	}
	_, _, err = f.Reg.DenyApproval(f.Ctx, a.ID, "no", "op@host")
	f.Must(err)
	again, err = f.Reg.RequestApproval(f.Ctx, na, core.ActorRuntime)
	f.Must(err)
	if again.ID != a.ID || again.Status != core.ApprovalDenied || again.Reason != "no" {
		t.Fatalf("repeat after decision: %+v", again)
	}
	if ev := f.LastEvent(core.EntityApproval, a.ID); ev.Applied || ev.Actor != core.ActorRuntime {
		t.Fatalf("repeat journal: %+v", ev)
	}
	list, err := f.Reg.ListApprovals(f.Ctx, core.ApprovalFilter{ToolUseID: "toolu_1"})
	f.Must(err)
	if len(list) != 1 {
		t.Fatalf("%d approvals for toolu_1", len(list))
	}
}

func TestWaitApprovalNoticesDecisionQuickly(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s")
	a := f.Request("s", "", "make deploy")
	got := make(chan time.Time, 1)
	go func() {
		if _, err := f.Reg.WaitApproval(f.Ctx, a.ID, 0); err == nil {
			got <- time.Now()
		}
		close(got)
	}()
	time.Sleep(300 * time.Millisecond)
	decided := time.Now()
	_, _, err := f.Reg.DenyApproval(f.Ctx, a.ID, "no", "op@host")
	f.Must(err)
	select {
	case at, ok := <-got:
		if !ok {
			t.Fatal("wait failed")
		}
		if lag := at.Sub(decided); lag > 300*time.Millisecond {
			t.Fatalf("noticed after %s, want < 300ms", lag)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait never returned")
	}
}
