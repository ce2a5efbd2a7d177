package agents

// The Gemini CLI gate end to end: the real Gemini CLI 0.61.0
// (CLAWPIT_GEMINI), `gemini --approval-mode yolo -p` (headless runs offer
// shell and write tools only in yolo mode, so clawpit's BeforeTool hook is
// their only gate) against a Gemini API stand-in.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
	"github.com/clawpit/clawpit/internal/e2e"
)

// newGeminiGate installs clawpit's hooks into the scratch
// ~/.gemini/settings.json (`hooks install --agent gemini --settings FILE`).
func newGeminiGate(t *testing.T, timeout string, script agenttest.Script) *claudeGate {
	t.Helper()
	agenttest.RequireCLI(t, agenttest.EnvGemini, "@google/gemini-cli")
	srv := agenttest.NewGeminiAPI(t, script)
	g := &claudeGate{t: t, cli: e2e.NewCLI(t, bin), srv: srv, agent: agenttest.NewGemini(t, srv.URL)}
	g.settings = g.agent.GeminiSettings()
	g.cli.OK("hooks", "install", "--agent", "gemini", "--settings", g.settings, "--approval-timeout", timeout)
	return g
}

// startGemini starts `gemini --approval-mode yolo -p prompt`.
func (g *claudeGate) startGemini(prompt string) *agenttest.Proc {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	g.t.Cleanup(cancel)
	p, err := g.agent.Start(ctx, prompt, "--approval-mode", "yolo")
	if err != nil {
		g.t.Fatal(err)
	}
	return p
}

// TestGeminiGateDecisions: a gated run_shell_command (touch marker) waits
// in clawpit (no call id: found as the pending approval); approve runs it
// within a second, deny sends the reason to the model, a lapsed approval
// timeout denies and Gemini CLI finishes, a garbage registry denies.
func TestGeminiGateDecisions(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvGemini, "@google/gemini-cli")
	const callID = "call_agents_gemini_gate_1"
	tests := []struct {
		name       string
		timeout    string
		corrupt    bool
		decide     func(g *claudeGate, a core.Approval)
		wantRan    bool
		wantResult []string
	}{
		{name: "approve runs the call", timeout: "1m", wantRan: true,
			decide: func(g *claudeGate, a core.Approval) { g.cli.OK("approval", "approve", a.ID) }},
		{name: "deny sends the reason to the model", timeout: "1m",
			wantResult: []string{"blocked", "config is frozen until Friday"},
			decide: func(g *claudeGate, a core.Approval) {
				g.cli.OK("approval", "deny", a.ID, "--reason", "config is frozen until Friday")
			}},
		{name: "approval timeout denies", timeout: "3s", wantResult: []string{"no operator decision within 3s"}},
		{name: "garbage registry denies", timeout: "1m", corrupt: true, wantResult: []string{"blocked", "denied"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGeminiGate(t, tc.timeout, agenttest.Script{{Match: "GEMINI-GATE", Turns: []agenttest.Turn{shellCommand(callID, "touch marker")}}})
			marker := filepath.Join(g.agent.Work, "marker")
			if tc.corrupt {
				corruptRegistry(t, g.cli.DB)
			}
			started := time.Now()
			p := g.startGemini("GEMINI-GATE: make the marker")
			if tc.decide != nil {
				a := g.pending(p, "")
				if a.Tool != "run_shell_command" || a.Command != "touch marker" {
					t.Fatalf("approval shows tool %q command %q", a.Tool, a.Command)
				}
				if exists(marker) {
					t.Fatal("the gated call ran before any decision")
				}
				decided := time.Now()
				tc.decide(g, a)
				if tc.wantRan {
					at, ok := waitFile(marker, 10*time.Second)
					if !ok {
						t.Fatalf("approved, but the command never ran:\n%s", p.Wait())
					}
					if d := at.Sub(decided); d > decisionLatency {
						t.Errorf("the command ran %s after the decision, want within %s", d, decisionLatency)
					} else {
						t.Logf("decision → command ran: %s", d.Round(time.Millisecond))
					}
				}
			}
			r := finish(t, p)
			t.Logf("gemini finished in %s", r.Elapsed.Round(time.Millisecond))
			if got := exists(marker); got != tc.wantRan {
				t.Fatalf("marker exists = %v, want %v", got, tc.wantRan)
			}
			tr := result(t, g.srv, callID)
			t.Logf("tool result: %q", tr.Content)
			if !hasAll(tr.Content, tc.wantResult...) {
				t.Fatalf("tool result %q, want it to contain %q", tr.Content, tc.wantResult)
			}
			if tc.timeout == "3s" && time.Since(started) > runTimeout/2 {
				t.Errorf("a 3s approval timeout took %s to deny", time.Since(started))
			}
		})
	}
}

// TestGeminiGateSubagent: a sub-agent (invoke_agent, the generalist) asks
// for a gated shell call; it waits in clawpit nested under the
// invoke_agent call's run (Gemini CLI gives no agent id) and runs once
// approved; invoke_agent's AfterTool ends the run.
func TestGeminiGateSubagent(t *testing.T) {
	const invokeID, subCall = "call_agents_gemini_ginvoke", "call_agents_gemini_gsub_1"
	g := newGeminiGate(t, "1m", agenttest.Script{
		{Match: "SUBAGENT-TASK", Turns: []agenttest.Turn{
			shellCommand(subCall, "touch sub-marker"),
			{Tool: "complete_task", Input: map[string]any{"result": map[string]any{"response": "sub-agent done"}}},
		}},
		{Match: "GEMINI-GSUB", Turns: []agenttest.Turn{{Tool: "invoke_agent", ID: invokeID, Input: map[string]any{
			"agent_name": "generalist", "prompt": "SUBAGENT-TASK: run touch sub-marker"}}}},
	})
	marker := filepath.Join(g.agent.Work, "sub-marker")
	p := g.startGemini("GEMINI-GSUB: delegate to a sub-agent")
	a := g.pending(p, "")
	if a.Command != "touch sub-marker" {
		t.Fatalf("sub-agent approval: %+v", a)
	}
	var runs []core.Run
	decode(t, g.cli.OK("--json", "run", "list"), &runs)
	if len(runs) != 1 || a.RunID == "" || a.RunID != runs[0].RunID || runs[0].Label != "generalist" {
		t.Errorf("the sub-agent's approval is bound to run %q; runs %+v", a.RunID, runs)
	}
	decided := time.Now()
	g.cli.OK("approval", "approve", a.ID)
	at, ok := waitFile(marker, 10*time.Second)
	if !ok {
		t.Fatalf("approved, but the sub-agent's command never ran:\n%s", p.Wait())
	}
	if d := at.Sub(decided); d > decisionLatency {
		t.Errorf("the sub-agent's command ran %s after the decision, want within %s", d, decisionLatency)
	} else {
		t.Logf("decision → sub-agent's command ran: %s", d.Round(time.Millisecond))
	}
	finish(t, p)
	if tr := result(t, g.srv, invokeID); !strings.Contains(tr.Content, "sub-agent done") {
		t.Errorf("invoke_agent's result %q lacks the sub-agent's answer", tr.Content)
	}
	decode(t, g.cli.OK("--json", "run", "list"), &runs)
	if len(runs) != 1 || runs[0].Running() {
		t.Errorf("after invoke_agent's AfterTool the run is %+v, want ended", runs)
	}
}

// TestGeminiUngatedReadRunsAtOnce: read_file (outside the gate) runs at
// once with no approval recorded.
func TestGeminiUngatedReadRunsAtOnce(t *testing.T) {
	const callID = "call_agents_gemini_read_1"
	g := newGeminiGate(t, "1m", nil)
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("read me at once\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.SetScript(agenttest.Script{{Match: "GEMINI-READ", Turns: []agenttest.Turn{
		{Tool: "read_file", ID: callID, Input: map[string]any{"file_path": file}}}}})
	r := finish(t, g.startGemini("GEMINI-READ: read the notes"))
	if tr := result(t, g.srv, callID); !strings.Contains(tr.Content, "read me at once") {
		t.Fatalf("read_file result: %q", tr.Content)
	}
	if aps := g.approvals(); len(aps) != 0 {
		t.Fatalf("an ungated read recorded approvals: %+v", aps)
	}
	t.Logf("gemini finished in %s", r.Elapsed.Round(time.Millisecond))
	g.wantSessionAgent("gemini")
}
