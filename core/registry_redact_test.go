package core_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/store"
)

// redactSecret is one planted secret of a docs/contract.md "Background jobs: Live, redacted log" kind: text carries it in
// the syntax that kind is recognised in; secret is the part that must never
// reach the database or a returned entity.
type redactSecret struct {
	kind   string
	text   string
	secret string
}

const redactJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJyZWRhY3QtdGVzdCJ9.c2lnbmF0dXJlLXJlZGFjdC10ZXN0"

var redactSecrets = []redactSecret{
	// The audit repro: a quoted Authorization header with a short token.
	{"authorization header", `curl -H 'Authorization: Bearer abc.def.ghi' https://api.example.com`, "abc.def.ghi"},
	{"bearer", "call api with Bearer BearerTok3nValue1234567 now", "BearerTok3nValue1234567"},
	{"password form", "curl --data user=bob&password=hunter2XYZ https://x.example", "hunter2XYZ"},
	{"ghp token", "push using ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"},
	{"anthropic key", "key sk-ant-api03-ZyXwVuTsRqPoNmLkJiHg-FeDcBa", "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHg-FeDcBa"},
	{"aws key id", "aws AKIAIOSFODNN7EXAMPLE configured", "AKIAIOSFODNN7EXAMPLE"},
	{"postgres url", "psql postgres://app:pgS3cretPassW0rd@db.internal:5432/app", "pgS3cretPassW0rd"},
	{"jwt", "session cookie " + redactJWT + " expired", redactJWT},
	{"env token", "export GITHUB_TOKEN=envT0kenValueQwerty", "envT0kenValueQwerty"},
}

// redactEnv is a registry over a SQLite file whose path the test knows, so
// the raw bytes can be searched.
type redactEnv struct {
	t     *testing.T
	ctx   context.Context
	path  string
	db    *store.DB
	reg   *core.Registry
	clock *core.FakeClock
	n     int
}

func newRedactEnv(t *testing.T) *redactEnv {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "redact.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	clock := core.NewFakeClock(registrytest.Start)
	reg := core.NewRegistry(db, clock, core.DefaultThresholds())
	return &redactEnv{t: t, ctx: ctx, path: path, db: db, reg: reg, clock: clock}
}

// uniq returns a fresh id with prefix p.
func (e *redactEnv) uniq(p string) string {
	e.n++
	return fmt.Sprintf("%s-%d", p, e.n)
}

// redactCase is one entry point that takes free text: it plants text and
// returns what the caller gets back (entities, journal) to check too.
type redactCase struct {
	name string
	run  func(e *redactEnv, text string) []any
}

// ok fails the current subtest on err.
func (e *redactEnv) ok(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// applied fails the current subtest unless the mutation was applied.
func (e *redactEnv) applied(res core.Result, err error) {
	e.t.Helper()
	e.ok(err)
	if !res.Applied {
		e.t.Fatalf("not applied: %+v", res)
	}
}

func redactCases() []redactCase {
	return []redactCase{
		{"session label (open)", func(e *redactEnv, text string) []any {
			s, res, err := e.reg.OpenSession(e.ctx, e.uniq("sess"), "label "+text, core.ActorRuntime)
			e.applied(res, err)
			return e.sessionOut(s.ID, s)
		}},
		{"session label (relabel)", func(e *redactEnv, text string) []any {
			id := e.uniq("sess")
			_, res, err := e.reg.OpenSession(e.ctx, id, "", core.ActorRuntime)
			e.applied(res, err)
			_, _, res, err = e.reg.PassivateSession(e.ctx, id, core.ActorRuntime)
			e.applied(res, err)
			s, res, err := e.reg.OpenSession(e.ctx, id, "new label "+text, core.ActorRuntime)
			e.applied(res, err)
			return e.sessionOut(id, s)
		}},
		{"task kind, label, task", func(e *redactEnv, text string) []any {
			tk, err := e.reg.CreateTask(e.ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "owner",
				Kind: "kind " + text, Label: "label " + text, Task: "do this:\n" + text + "\nthen stop"}, core.ActorRuntime)
			e.ok(err)
			return e.taskOut(tk.ID, tk)
		}},
		{"task start summary", func(e *redactEnv, text string) []any {
			tk := e.task()
			t2, res, err := e.reg.StartTask(e.ctx, tk.ID, "starting "+text, core.ActorRuntime)
			e.applied(res, err)
			return e.taskOut(tk.ID, t2)
		}},
		{"task progress summary", func(e *redactEnv, text string) []any {
			tk := e.task()
			t2, res, err := e.reg.ProgressTask(e.ctx, tk.ID, "progress "+text, core.ActorRuntime)
			e.applied(res, err)
			return e.taskOut(tk.ID, t2)
		}},
		{"task finish error (status)", func(e *redactEnv, text string) []any {
			tk := e.task()
			t2, res, err := e.reg.FinishTask(e.ctx, tk.ID, core.Finish{Status: core.TaskFailed, Error: "failed: " + text}, core.ActorRuntime)
			e.applied(res, err)
			return append(e.taskOut(tk.ID, t2), e.notifications())
		}},
		{"task finish error (subtype)", func(e *redactEnv, text string) []any {
			tk := e.task()
			t2, res, err := e.reg.FinishTask(e.ctx, tk.ID, core.Finish{Subtype: "error_during_execution", Error: text}, core.ActorRuntime)
			e.applied(res, err)
			return append(e.taskOut(tk.ID, t2), e.notifications())
		}},
		{"task cancel reason (and its run kill)", func(e *redactEnv, text string) []any {
			rid := e.run("")
			tk, err := e.reg.CreateTask(e.ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: rid}, core.ActorRuntime)
			e.ok(err)
			t2, res, err := e.reg.CancelTask(e.ctx, tk.ID, "stop: "+text, core.OperatorActor())
			e.applied(res, err)
			run, _ := e.runOut(rid, nil)[1].(*core.Run)
			if run.Running() {
				e.t.Fatalf("run %s not killed by the cancel", rid)
			}
			return append(e.taskOut(tk.ID, t2), e.runOut(rid, nil)...)
		}},
		{"task lost reason", func(e *redactEnv, text string) []any {
			tk := e.task()
			t2, res, err := e.reg.MarkTaskLost(e.ctx, tk.ID, "lost: "+text)
			e.applied(res, err)
			return e.taskOut(tk.ID, t2)
		}},
		{"run label", func(e *redactEnv, text string) []any {
			rid := e.run("label " + text)
			return e.runOut(rid, nil)
		}},
		{"run complete error (and mirrored task)", func(e *redactEnv, text string) []any {
			rid := e.run("")
			tk, err := e.reg.CreateTask(e.ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: rid}, core.ActorRuntime)
			e.ok(err)
			run, tasks, res, err := e.reg.CompleteRun(e.ctx, rid, core.OutcomeError, "boom "+text, core.ActorRuntime)
			e.applied(res, err)
			return append(append(e.runOut(rid, run), tasks), e.taskOut(tk.ID, nil)...)
		}},
		{"run kill reason", func(e *redactEnv, text string) []any {
			rid := e.run("")
			run, res, err := e.reg.KillRun(e.ctx, rid, "kill: "+text, core.OperatorActor())
			e.applied(res, err)
			return e.runOut(rid, run)
		}},
		{"approval command, rationale, cwd", func(e *redactEnv, text string) []any {
			a, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: "s", Tool: "bash",
				Command: text, Rationale: "because " + text, Cwd: "/srv/" + text}, core.ActorRuntime)
			e.ok(err)
			return e.approvalOut(a.ID, a)
		}},
		{"approval deny reason", func(e *redactEnv, text string) []any {
			a, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: "s", Tool: "bash", Command: "ls"}, core.ActorRuntime)
			e.ok(err)
			a2, res, err := e.reg.DenyApproval(e.ctx, a.ID, "no: "+text, core.OperatorActor())
			e.applied(res, err)
			return e.approvalOut(a.ID, a2)
		}},
		{"approval session grant from a secret-bearing command", func(e *redactEnv, text string) []any {
			a, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: e.uniq("sess"), Tool: "bash", Command: "deploy " + text}, core.ActorRuntime)
			e.ok(err)
			a2, g, res, err := e.reg.ApproveApproval(e.ctx, a.ID, core.ScopeSession, core.OperatorActor())
			e.applied(res, err)
			grants, err := e.reg.ListGrants(e.ctx)
			e.ok(err)
			return append(e.approvalOut(a.ID, a2), g, grants)
		}},
		{"approval expiry notification", func(e *redactEnv, text string) []any {
			a, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: e.uniq("sess"), Tool: "bash",
				Command: text, ExpiresIn: time.Second}, core.ActorRuntime)
			e.ok(err)
			e.clock.Advance(time.Minute)
			a2, res, err := e.reg.ExpireApproval(e.ctx, a.ID)
			e.applied(res, err)
			return append(e.approvalOut(a.ID, a2), e.notifications())
		}},
	}
}

// run registers a fresh running run with label and returns its id.
func (e *redactEnv) run(label string) string {
	e.t.Helper()
	rid := e.uniq("run")
	_, err := e.reg.RegisterRun(e.ctx, core.NewRun{RunID: rid, ChildSession: "child", Label: label}, core.ActorRuntime)
	e.ok(err)
	return rid
}

func (e *redactEnv) task() *core.Task {
	e.t.Helper()
	tk, err := e.reg.CreateTask(e.ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "owner"}, core.ActorRuntime)
	e.ok(err)
	return tk
}

// The *Out helpers return what the caller got back plus the stored entity
// and its journal, as read back through the registry.

func (e *redactEnv) sessionOut(id string, returned *core.Session) []any {
	s, evs, err := e.reg.GetSession(e.ctx, id)
	e.ok(err)
	return []any{returned, s, evs}
}

func (e *redactEnv) taskOut(id string, returned *core.Task) []any {
	tk, evs, err := e.reg.GetTask(e.ctx, id)
	e.ok(err)
	return []any{returned, tk, evs}
}

func (e *redactEnv) runOut(id string, returned *core.Run) []any {
	run, evs, err := e.reg.GetRun(e.ctx, id)
	e.ok(err)
	return []any{returned, run, evs}
}

func (e *redactEnv) approvalOut(id string, returned *core.Approval) []any {
	a, evs, err := e.reg.GetApproval(e.ctx, id)
	e.ok(err)
	return []any{returned, a, evs}
}

func (e *redactEnv) notifications() []core.Notification {
	ns, err := e.reg.ListNotifications(e.ctx, core.NotificationFilter{})
	e.ok(err)
	return ns
}

// TestRegistryRedactsFreeText plants secrets of every docs/contract.md "Background jobs: Live, redacted log" kind in every
// free-text field a runtime or operator hands the registry, and checks that
// none reaches the database file (main and WAL), a returned entity or a
// journal row (bench/README.md Secrets).
func TestRegistryRedactsFreeText(t *testing.T) {
	e := newRedactEnv(t)
	for _, c := range redactCases() {
		for _, s := range redactSecrets {
			t.Run(c.name+"/"+s.kind, func(t *testing.T) {
				e.t = t
				out, err := json.Marshal(c.run(e, s.text))
				if err != nil {
					t.Fatal(err)
				}
				if i := bytes.Index(out, []byte(s.secret)); i >= 0 {
					t.Errorf("secret %q returned unredacted: …%s…", s.secret, out[max(0, i-200):min(len(out), i+len(s.secret)+40)])
				}
				if !bytes.Contains(out, []byte(redact.Redacted)) {
					t.Errorf("no %s in what was returned: %s", redact.Redacted, out)
				}
			})
		}
	}
	e.t = t

	checkFiles := func(when string, files ...string) {
		t.Helper()
		var all []byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		if len(all) == 0 {
			t.Fatalf("%s: database files are empty", when)
		}
		for _, s := range redactSecrets {
			if bytes.Contains(all, []byte(s.secret)) {
				t.Errorf("%s: secret %q (%s) is in the database file bytes", when, s.secret, s.kind)
			}
		}
		if !bytes.Contains(all, []byte(redact.Redacted)) {
			t.Errorf("%s: %s not found in the database file bytes", when, redact.Redacted)
		}
	}
	checkFiles("open (main + wal)", e.path, e.path+"-wal")
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	checkFiles("closed (checkpointed)", e.path, e.path+"-wal")
}

// TestGrantMatchesAfterRedaction: patterns are computed from the redacted
// command, which leaves an ordinary verb chain unchanged, so a session grant
// for "git push" still approves "git push --force origin" — also when a later
// argument carries a secret, which is stored redacted.
func TestGrantMatchesAfterRedaction(t *testing.T) {
	e := newRedactEnv(t)
	a, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: "s1", Tool: "bash", Command: "git push"}, core.ActorRuntime)
	e.ok(err)
	if a.Pattern != "git push" {
		t.Fatalf("pattern = %q, want %q", a.Pattern, "git push")
	}
	_, g, res, err := e.reg.ApproveApproval(e.ctx, a.ID, core.ScopeSession, core.OperatorActor())
	if e.applied(res, err); g == nil || g.Pattern != "git push" {
		t.Fatalf("grant = %+v, want pattern git push", g)
	}
	for _, c := range []struct {
		session, command string
		want             core.ApprovalStatus
	}{
		{"s1", "git push --force origin", core.ApprovalApproved},
		{"s1", "git push https://bob:pgS3cretPassW0rd@git.example.com/r.git", core.ApprovalApproved},
		{"s2", "git push --force origin", core.ApprovalPending}, // session grant: other sessions not covered
		{"s1", "git push; rm -rf ~", core.ApprovalPending},      // shell control never matches a grant
		{"s1", "git push token=abc;rm -rf ~", core.ApprovalPending},
	} {
		got, err := e.reg.RequestApproval(e.ctx, core.NewApproval{Session: c.session, Tool: "bash", Command: c.command}, core.ActorRuntime)
		e.ok(err)
		if got.Status != c.want {
			t.Errorf("%s %q: status %s, want %s (pattern %q)", c.session, c.command, got.Status, c.want, got.Pattern)
		}
		if c.want == core.ApprovalApproved && got.DecidedBy != "grant:"+g.ID {
			t.Errorf("%q: decided_by %q, want grant:%s", c.command, got.DecidedBy, g.ID)
		}
		if strings.Contains(got.Command, "pgS3cretPassW0rd") {
			t.Errorf("command stored unredacted: %q", got.Command)
		}
	}
}
