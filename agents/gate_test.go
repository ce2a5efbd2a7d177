package agents

// What every CLI must do alike, run against each real CLI in turn: run a
// scripted call against its stand-in, and the gate's decisions (approve,
// deny, approval timeout, a broken registry).

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// decisionLatency is the most a gated call may take to run after the
// operator's decision in these tests. The promise is within a second; it is
// measured by bench/hooks ("decision → hook exited"), not here: on a loaded
// CI machine a real CLI's own start of the command takes longer now and
// then. 5 s still fails a decision that reaches the hook by a slow poll.
const decisionLatency = 5 * time.Second

// gateCLI is one real CLI as the shared gate tests see it: how its gate is
// set up, its shell call, and how its answers reach the model.
type gateCLI struct {
	name    string
	newGate func(t *testing.T, timeout string, script agenttest.Script) *agentGate
	callID  string                                  // the scripted call's id, in the CLI's own style
	shell   func(id, command string) agenttest.Turn // a call of its shell tool
	tool    string                                  // the approval's tool name
	byID    bool                                    // the approval carries the call's id (Gemini CLI gives none)
	blocked string                                  // what every deny's tool result says ("" for none)
	isError bool                                    // a deny's tool result is flagged is_error (Claude Code)
}

// gateCLIs are the three CLIs (each test skips, saying why, when its CLI is
// not installed).
var gateCLIs = []gateCLI{
	{name: "claude", callID: "toolu_agents_gate_1", shell: bash, tool: "Bash", byID: true, isError: true,
		newGate: func(t *testing.T, timeout string, s agenttest.Script) *agentGate { return newClaudeGate(t, timeout, s) }},
	{name: "codex", callID: "call_agents_codex_gate_1", shell: execCommand, tool: "Bash", byID: true, blocked: "blocked by PreToolUse hook",
		newGate: func(t *testing.T, timeout string, s agenttest.Script) *agentGate { return newCodexGate(t, timeout, s) }},
	{name: "gemini", callID: "call_agents_gemini_gate_1", shell: shellCommand, tool: "run_shell_command", blocked: "blocked",
		newGate: newGeminiGate},
}

// TestRunsScriptedCall: Codex (`codex exec`) and Gemini CLI (`gemini
// --approval-mode yolo -p`), with no hooks, run the stand-in's shell call in
// their working directory and send the command's output back to the model.
func TestRunsScriptedCall(t *testing.T) {
	for _, c := range []struct {
		name   string
		server func(testing.TB, agenttest.Script) *agenttest.Server
		agent  func(testing.TB, string) *agenttest.Agent
		shell  func(id, command string) agenttest.Turn
		args   []string
	}{
		{name: "codex", server: agenttest.NewResponsesAPI, agent: agenttest.NewCodex, shell: execCommand},
		{name: "gemini", server: agenttest.NewGeminiAPI, agent: agenttest.NewGemini, shell: shellCommand, args: []string{"--approval-mode", "yolo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const callID = "call_agents_run_1"
			srv := c.server(t, agenttest.Script{{Match: "RUN-MAIN", Turns: []agenttest.Turn{c.shell(callID, "echo ran > marker; echo OUT-42")}}})
			a := c.agent(t, srv.URL)
			r := runCLI(t, a, "RUN-MAIN: run the command", c.args...)
			if !exists(filepath.Join(a.Work, "marker")) {
				t.Fatalf("the command did not run:\n%s", r)
			}
			if tr := result(t, srv, callID); !strings.Contains(tr.Content, "OUT-42") {
				t.Fatalf("the command's output did not reach the model: %q", tr.Content)
			}
			t.Logf("%s finished in %s", c.name, r.Elapsed.Round(time.Millisecond))
		})
	}
}

// TestGateDecisions: for each CLI, a gated shell call (touch marker) waits
// in clawpit as a pending approval, and whatever happens to it is what the
// CLI does: approve runs it within a second, deny sends the operator's
// reason to the model and never runs it, a lapsed approval timeout denies
// and the agent finishes, a registry of garbage bytes denies.
func TestGateDecisions(t *testing.T) {
	tests := []struct {
		name    string
		timeout string // --approval-timeout
		// corrupt, when set, breaks the registry before the run.
		corrupt bool
		// decide acts on the pending approval; nil: nobody decides (or,
		// with corrupt, there is no approval to wait for).
		decide  func(g *agentGate, a core.Approval)
		wantRan bool
		// wantResult are substrings of the tool result the model gets
		// (with the CLI's own "blocked" text for a deny).
		wantResult []string
	}{
		{name: "approve runs the call", timeout: "1m", wantRan: true,
			decide: func(g *agentGate, a core.Approval) { g.cli.OK("approval", "approve", a.ID) }},
		{name: "deny sends the reason to the model", timeout: "1m", wantResult: []string{"config is frozen until Friday"},
			decide: func(g *agentGate, a core.Approval) {
				g.cli.OK("approval", "deny", a.ID, "--reason", "config is frozen until Friday")
			}},
		{name: "approval timeout denies", timeout: "3s", wantResult: []string{"no operator decision within 3s"}},
		{name: "garbage registry denies", timeout: "1m", corrupt: true, wantResult: []string{"denied"}},
	}
	for _, c := range gateCLIs {
		for _, tc := range tests {
			t.Run(c.name+"/"+tc.name, func(t *testing.T) {
				g := c.newGate(t, tc.timeout, agenttest.Script{{Match: "GATE-MAIN", Turns: []agenttest.Turn{c.shell(c.callID, "touch marker")}}})
				marker := filepath.Join(g.agent.Work, "marker")
				if tc.corrupt {
					corruptRegistry(t, g.cli.DB)
				}
				started := time.Now()
				p := g.start("GATE-MAIN: make the marker")
				if tc.decide != nil {
					id := ""
					if c.byID {
						id = c.callID
					}
					a := g.pending(p, id)
					if a.Tool != c.tool || a.Command != "touch marker" || a.Cwd != g.agent.Work {
						t.Fatalf("approval shows tool %q command %q cwd %q, want %s, touch marker, %s", a.Tool, a.Command, a.Cwd, c.tool, g.agent.Work)
					}
					if exists(marker) {
						t.Fatal("the gated call ran before any decision")
					}
					decided := time.Now()
					tc.decide(g, a)
					if tc.wantRan {
						ranWithin(t, p, marker, decided)
					}
				}
				r := finish(t, p)
				t.Logf("%s finished in %s", c.name, r.Elapsed.Round(time.Millisecond))
				if got := exists(marker); got != tc.wantRan {
					t.Fatalf("marker exists = %v, want %v", got, tc.wantRan)
				}
				want := tc.wantResult
				if !tc.wantRan && c.blocked != "" {
					want = append([]string{c.blocked}, want...)
				}
				tr := result(t, g.srv, c.callID)
				t.Logf("tool result (error %v): %q", tr.IsError, tr.Content)
				if !hasAll(tr.Content, want...) || (c.isError && tr.IsError == tc.wantRan) {
					t.Fatalf("tool result (error %v) %q, want it to contain %q (an error: %v)", tr.IsError, tr.Content, want, c.isError && !tc.wantRan)
				}
				if tc.timeout == "3s" && time.Since(started) > runTimeout/2 {
					t.Errorf("a 3s approval timeout took %s to deny", time.Since(started))
				}
			})
		}
	}
}

// ranWithin waits up to 10 s for marker, the sign that an approved call ran,
// and requires it within decisionLatency of decided; it fails the test with
// the agent's output (when p is not nil) when the call never runs.
func ranWithin(t *testing.T, p *agenttest.Proc, marker string, decided time.Time) {
	t.Helper()
	at, ok := waitFile(marker, 10*time.Second)
	if !ok && p == nil {
		t.Fatal("approved, but the command never ran")
	}
	if !ok {
		t.Fatalf("approved, but the command never ran:\n%s", p.Wait())
	}
	if d := at.Sub(decided); d > decisionLatency {
		t.Errorf("the command ran %s after the decision, want within %s", d, decisionLatency)
	} else {
		t.Logf("decision → command ran: %s", d.Round(time.Millisecond))
	}
}
