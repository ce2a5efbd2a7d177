package agents

// The Gemini CLI gate end to end: the real Gemini CLI 0.61.0
// (CLAWPIT_GEMINI), `gemini --approval-mode yolo -p` (headless runs offer
// shell and write tools only in yolo mode, so clawpit's BeforeTool hook is
// their only gate) against a Gemini API stand-in.

import (
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
// ~/.gemini/settings.json (`hooks install --agent gemini --settings FILE`);
// runs are `gemini --approval-mode yolo -p prompt` (headless runs offer
// shell and write tools only in yolo mode).
func newGeminiGate(t *testing.T, timeout string, script agenttest.Script) *agentGate {
	t.Helper()
	agenttest.RequireCLI(t, agenttest.EnvGemini, "@google/gemini-cli")
	srv := agenttest.NewGeminiAPI(t, script)
	g := &agentGate{t: t, cli: e2e.NewCLI(t, bin), srv: srv, agent: agenttest.NewGemini(t, srv.URL)}
	g.settings = g.agent.GeminiSettings()
	g.args = []string{"--approval-mode", "yolo"}
	g.cli.OK("hooks", "install", "--agent", "gemini", "--settings", g.settings, "--approval-timeout", timeout)
	return g
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
	p := g.start("GEMINI-GSUB: delegate to a sub-agent")
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
	ranWithin(t, p, marker, decided)
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
	r := finish(t, g.start("GEMINI-READ: read the notes"))
	if tr := result(t, g.srv, callID); !strings.Contains(tr.Content, "read me at once") {
		t.Fatalf("read_file result: %q", tr.Content)
	}
	if aps := g.approvals(); len(aps) != 0 {
		t.Fatalf("an ungated read recorded approvals: %+v", aps)
	}
	t.Logf("gemini finished in %s", r.Elapsed.Round(time.Millisecond))
	g.wantSessionAgent("gemini")
}
