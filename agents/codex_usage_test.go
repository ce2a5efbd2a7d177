package agents

import (
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestCodexUsage: against the real Codex, a run whose stand-in reports
// known usage per response gives, in clawpit, exactly those tokens for the
// session (counted from the rollout at Stop and SessionEnd, once).
func TestCodexUsage(t *testing.T) {
	g := newCodexGate(t, "1m", agenttest.Script{{Match: "CODEX-USAGE", Turns: []agenttest.Turn{
		{Tool: "get_goal", ID: "call_codex_usage_1", Input: map[string]any{}, Usage: agenttest.Usage{Input: 1200, Output: 345, CacheRead: 5000}},
		{Tool: "get_goal", ID: "call_codex_usage_2", Input: map[string]any{}, Usage: agenttest.Usage{Input: 31, Output: 42, CacheRead: 7000}},
		{Text: "all done", Usage: agenttest.Usage{Input: 7, Output: 8, CacheRead: 9000}},
	}}})
	finish(t, g.start("CODEX-USAGE: read the goal twice"))
	want := core.Tokens{Input: 1238, Output: 395, CacheRead: 21000}
	sessions := g.usageBy("session")
	if len(sessions) != 1 {
		t.Fatalf("usage by session: %+v, want one session", sessions)
	}
	for id, got := range sessions {
		if got != want {
			t.Errorf("session %s: %+v, the stand-in reported %+v", id, got, want)
		}
	}
	if m := g.usageBy("model"); m["agenttest-model"] != want {
		t.Errorf("usage by model: %+v, want agenttest-model %+v", m, want)
	}
}
