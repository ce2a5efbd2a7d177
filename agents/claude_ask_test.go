package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestClaudeGateOnAsk: with `hooks install --gate-on ask` only what Claude
// Code 2.1.328 would ask its user about waits in clawpit (its
// PermissionRequest, in a headless -p run too): a read-only Bash call (ls),
// which its rules allow, runs with no approval; one writing outside the
// working directory waits, and runs within a second of the approval.
func TestClaudeGateOnAsk(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	const insideID, outsideID = "toolu_agents_ask_inside", "toolu_agents_ask_outside"
	outside := filepath.Join(t.TempDir(), "outside-marker")
	g := newClaudeGate(t, "1m", agenttest.Script{{Match: "ASK-MAIN", Turns: []agenttest.Turn{
		bash(insideID, "ls"), bash(outsideID, "touch "+outside)}}}, "--gate-on", "ask")
	if err := os.WriteFile(filepath.Join(g.agent.Work, "visible-to-ls.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := g.start("ASK-MAIN: list, then write outside")
	a := g.pending(p, "")
	if a.Tool != "Bash" || a.Command != "touch "+outside {
		t.Fatalf("the approval is %q %q, want Bash touch %s", a.Tool, a.Command, outside)
	}
	if tr, ok := g.srv.Result(insideID); !ok || !strings.Contains(tr.Content, "visible-to-ls.txt") {
		t.Fatalf("the call Claude Code's own rules allow did not run before the one it asks about: %q", tr.Content)
	}
	if n := len(g.approvals()); n != 1 {
		t.Fatalf("%d approvals, want only the one Claude Code asked about", n)
	}
	decided := time.Now()
	g.cli.OK("approval", "approve", a.ID)
	ranWithin(t, p, outside, decided)
	finish(t, p)
}
