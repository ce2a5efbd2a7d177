package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestRecordActivity(t *testing.T) {
	f := newRegFixture(t)
	// Unknown session: opened active with the label.
	res, err := f.reg.RecordActivity(f.ctx, core.Activity{Session: "cc-1", Label: "shop", Why: "PostToolUse Bash"}, core.ActorRuntime)
	f.must(err)
	s, _, err := f.reg.GetSession(f.ctx, "cc-1")
	f.must(err)
	if !res.Applied || s.State != core.SessionActive || s.Label != "shop" {
		t.Fatalf("created: %+v %+v", res, s)
	}
	run := f.run("agent-1", "cc-1")
	f.clock.Advance(30 * time.Second)
	_, err = f.reg.RecordActivity(f.ctx, core.Activity{Session: "cc-1", RunID: "agent-1", Why: "PostToolUse Edit"}, core.ActorRuntime)
	f.must(err)
	s, _, _ = f.reg.GetSession(f.ctx, "cc-1")
	if got := f.getRun(run.RunID); got.LastProgressAt != f.now() || s.LastActivityAt != f.now() || s.Label != "shop" {
		t.Fatalf("activity not recorded: run %v session %v now %v", got.LastProgressAt, s.LastActivityAt, f.now())
	}
	if ev := f.lastEvent(core.EntityRun, run.RunID); ev.Reason != "progress (activity: PostToolUse Edit)" || ev.Actor != core.ActorRuntime {
		t.Fatalf("run journal: %+v", ev)
	}
	// Unknown run: ignored; ended run: refused; closed session: refused.
	_, err = f.reg.RecordActivity(f.ctx, core.Activity{Session: "cc-1", RunID: "agent-unknown"}, core.ActorRuntime)
	f.must(err)
	_, _, _, err = f.reg.CompleteRun(f.ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
	f.must(err)
	f.clock.Advance(time.Second)
	_, err = f.reg.RecordActivity(f.ctx, core.Activity{Session: "cc-1", RunID: run.RunID}, core.ActorRuntime)
	f.must(err)
	if ev := f.lastEvent(core.EntityRun, run.RunID); ev.Applied || ev.Reason != "run already ended (ok)" {
		t.Fatalf("ended run: %+v", ev)
	}
	_, _, _, err = f.reg.CloseSession(f.ctx, "cc-1", core.ActorRuntime)
	f.must(err)
	res, err = f.reg.RecordActivity(f.ctx, core.Activity{Session: "cc-1"}, core.ActorRuntime)
	f.must(err)
	if res.Applied || res.Reason != "session closed" {
		t.Fatalf("closed session: %+v", res)
	}
	if _, err := f.reg.RecordActivity(f.ctx, core.Activity{}, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty session: %v", err)
	}
}

func TestRaiseNotification(t *testing.T) {
	f := newRegFixture(t)
	n, ok, err := f.reg.RaiseNotification(f.ctx, core.NewNotification{Session: "s", Kind: core.NotifyRuntimeNotice,
		SubjectID: "ap1", Text: "Claude needs your permission (token=ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789)"})
	f.must(err)
	if !ok || n.ID == 0 || n.DedupKey == "" || n.Text == "" || n.CreatedAt != f.now() {
		t.Fatalf("raised: %+v %v", n, ok)
	}
	got := f.notifications(core.NotifyRuntimeNotice)
	if len(got) != 1 || got[0].SubjectID != "ap1" || got[0].Text != n.Text {
		t.Fatalf("stored: %+v", got)
	}
	if containsSecret(got[0].Text) {
		t.Fatalf("text not redacted: %q", got[0].Text)
	}
	_, ok, err = f.reg.RaiseNotification(f.ctx, core.NewNotification{Session: "s", Kind: core.NotifyRuntimeNotice, Text: "again", DedupKey: n.DedupKey})
	if err != nil || ok {
		t.Fatalf("duplicate key: %v %v", ok, err)
	}
	for _, bad := range []core.NewNotification{{Kind: "gossip", Text: "x"}, {Kind: core.NotifyRuntimeNotice, Text: "  "}} {
		if _, _, err := f.reg.RaiseNotification(f.ctx, bad); !errors.Is(err, core.ErrInvalid) {
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
	f := newRegFixture(t)
	f.session("s")
	run := f.run("r1", "s")
	na := core.NewApproval{Session: "s", RunID: run.RunID, Tool: "Bash", Command: "make deploy", ToolUseID: "toolu_1", InputHash: "h1", ExpiresIn: time.Minute}
	a, err := f.reg.RequestApproval(f.ctx, na, core.ActorRuntime)
	f.must(err)
	if a.ToolUseID != "toolu_1" || f.getRun(run.RunID).PendingApprovalWaits != 1 {
		t.Fatalf("first: %+v", a)
	}
	again, err := f.reg.RequestApproval(f.ctx, na, core.ActorRuntime)
	f.must(err)
	if again.ID != a.ID || f.getRun(run.RunID).PendingApprovalWaits != 1 {
		t.Fatalf("repeat opened a new approval or counted a second wait: %+v", again)
	}
	_, _, err = f.reg.DenyApproval(f.ctx, a.ID, "no", "op@host")
	f.must(err)
	again, err = f.reg.RequestApproval(f.ctx, na, core.ActorRuntime)
	f.must(err)
	if again.ID != a.ID || again.Status != core.ApprovalDenied || again.Reason != "no" {
		t.Fatalf("repeat after decision: %+v", again)
	}
	if ev := f.lastEvent(core.EntityApproval, a.ID); ev.Applied || ev.Actor != core.ActorRuntime {
		t.Fatalf("repeat journal: %+v", ev)
	}
	list, err := f.reg.ListApprovals(f.ctx, core.ApprovalFilter{ToolUseID: "toolu_1"})
	f.must(err)
	if len(list) != 1 {
		t.Fatalf("%d approvals for toolu_1", len(list))
	}
}

func TestWaitApprovalNoticesDecisionQuickly(t *testing.T) {
	f := newRegFixture(t)
	f.session("s")
	a := f.request("s", "", "make deploy")
	got := make(chan time.Time, 1)
	go func() {
		if _, err := f.reg.WaitApproval(f.ctx, a.ID, 0); err == nil {
			got <- time.Now()
		}
		close(got)
	}()
	time.Sleep(300 * time.Millisecond)
	decided := time.Now()
	_, _, err := f.reg.DenyApproval(f.ctx, a.ID, "no", "op@host")
	f.must(err)
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
