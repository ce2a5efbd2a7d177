package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
	"github.com/clawpit/clawpit/internal/e2e"
)

// runTimeout bounds one CLI run: generous for a loaded 2-core machine, far
// below go test's own timeout, so a hung CLI fails the test with its output.
const runTimeout = 90 * time.Second

// approvalWait bounds how long a test waits for a gated call to show up as
// a pending approval.
const approvalWait = 30 * time.Second

// agentGate is one real agent CLI with clawpit's hooks installed into its
// scratch configuration, against a scratch registry and a stand-in for its
// model API.
type agentGate struct {
	t        *testing.T
	cli      *e2e.CLI
	srv      *agenttest.Server
	agent    *agenttest.Agent
	settings string   // Claude Code's or Gemini CLI's settings file
	args     []string // the CLI's arguments of every run (agenttest.Agent.Start)
}

// newClaudeGate installs clawpit's hooks (`hooks install --settings FILE
// --approval-timeout timeout --on-failure block`, Claude Code 2.1.295 and
// later, then install's further flags) and sets Claude Code up against a
// stand-in answering script; runs get --settings FILE.
func newClaudeGate(t *testing.T, timeout string, script agenttest.Script, install ...string) *agentGate {
	t.Helper()
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	srv := agenttest.NewMessagesAPI(t, script)
	g := &agentGate{t: t, cli: e2e.NewCLI(t, bin), srv: srv, agent: agenttest.NewClaude(t, srv.URL)}
	g.settings = filepath.Join(t.TempDir(), "settings.json")
	g.args = []string{"--settings", g.settings}
	g.cli.OK(append([]string{"hooks", "install", "--settings", g.settings, "--approval-timeout", timeout, "--on-failure", "block"}, install...)...)
	return g
}

// start starts the CLI headless on prompt with g.args (`claude -p prompt
// --settings FILE …`, `codex exec …`, `gemini … -p prompt`); the run is
// bounded by runTimeout and by the test's end.
func (g *agentGate) start(prompt string) *agenttest.Proc {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	g.t.Cleanup(cancel)
	p, err := g.agent.Start(ctx, prompt, g.args...)
	if err != nil {
		g.t.Fatal(err)
	}
	return p
}

// approvals is `clawpit approval list --json`.
func (g *agentGate) approvals() []core.Approval {
	g.t.Helper()
	var aps []core.Approval
	if err := json.Unmarshal([]byte(g.cli.OK("--json", "approval", "list")), &aps); err != nil {
		g.t.Fatalf("approval list: %v", err)
	}
	return aps
}

// pending waits until the gated call toolUseID is a pending approval and
// returns it; it fails the test with the agent's output if the agent p
// exits first (nil p: an agent in a terminal, not watched) or approvalWait
// passes.
func (g *agentGate) pending(p *agenttest.Proc, toolUseID string) core.Approval {
	g.t.Helper()
	deadline := time.Now().Add(approvalWait)
	for time.Now().Before(deadline) {
		for _, a := range g.approvals() {
			if a.ToolUseID == toolUseID && a.Status == core.ApprovalPending {
				return a
			}
		}
		var exited <-chan struct{}
		if p != nil {
			exited = p.Done()
		}
		select {
		case <-exited:
			g.t.Fatalf("the agent exited before %s waited for approval:\n%s", toolUseID, p.Wait())
		case <-time.After(50 * time.Millisecond):
		}
	}
	g.t.Fatalf("no pending approval for %s after %s; approvals %+v", toolUseID, approvalWait, g.approvals())
	return core.Approval{}
}

// runCLI runs the CLI headless on prompt with args (agenttest.Agent.Run:
// `codex exec [args] prompt`, `gemini [args] -p prompt`) to the end,
// bounded by runTimeout, and requires exit 0.
func runCLI(t *testing.T, a *agenttest.Agent, prompt string, args ...string) agenttest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	r, err := a.Run(ctx, prompt, args...)
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 || r.TimedOut {
		t.Fatalf("%s: %s", a.Command(prompt, args...), r)
	}
	return r
}

// finish waits for the agent to exit and requires exit 0.
func finish(t *testing.T, p *agenttest.Proc) agenttest.Result {
	t.Helper()
	r := p.Wait()
	if r.Code != 0 || r.TimedOut {
		t.Fatalf("the agent did not finish cleanly: %s", r)
	}
	return r
}

// awaitResult waits up to runTimeout for the tool result of callID to reach
// the model (an agent in a terminal does not exit) and returns it.
func (g *agentGate) awaitResult(callID string) agenttest.ToolResult {
	g.t.Helper()
	deadline := time.Now().Add(runTimeout)
	for time.Now().Before(deadline) {
		if tr, ok := g.srv.Result(callID); ok {
			return tr
		}
		time.Sleep(50 * time.Millisecond)
	}
	return result(g.t, g.srv, callID)
}

// result is the tool result of callID the agent sent back to the model.
func result(t *testing.T, srv *agenttest.Server, callID string) agenttest.ToolResult {
	t.Helper()
	tr, ok := srv.Result(callID)
	if !ok {
		t.Fatalf("the agent never sent the model a result for %s; requests: %d", callID, len(srv.Requests()))
	}
	return tr
}

// waitFile waits up to d for path to exist and returns when it appeared.
func waitFile(path string, d time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return time.Now(), true
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// bash is a scripted Claude Code Bash call.
func bash(id, command string) agenttest.Turn {
	return agenttest.Turn{Tool: "Bash", ID: id, Input: map[string]any{"command": command, "description": "scripted by the agents test"}}
}

// hasAll reports whether s contains every one of subs.
func hasAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// decode unmarshals clawpit's --json output into v.
func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
}

// wantSessionAgent requires every session the run recorded to name agent
// (`clawpit session list --json`: sessions.agent, issue 28).
func (g *agentGate) wantSessionAgent(agent string) {
	g.t.Helper()
	var ss []core.Session
	decode(g.t, g.cli.OK("--json", "session", "list"), &ss)
	if len(ss) == 0 {
		g.t.Fatal("the run recorded no session")
	}
	for _, s := range ss {
		if s.Agent != agent {
			g.t.Errorf("session %s (%q) has agent %q, want %q", s.ID, s.Label, s.Agent, agent)
		}
	}
}
