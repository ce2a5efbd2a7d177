package agents

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestGeminiUsage: against the real Gemini CLI, a run whose stand-in
// reports known usage per answer gives, in clawpit, exactly those tokens
// for the session (counted from its chat record at AfterAgent and
// SessionEnd, each answer once though Gemini CLI writes some twice).
func TestGeminiUsage(t *testing.T) {
	g := newGeminiGate(t, "1m", nil)
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.SetScript(agenttest.Script{{Match: "GEMINI-USAGE", Turns: []agenttest.Turn{
		{Tool: "read_file", ID: "call_gemini_usage_1", Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 1200, Output: 345, CacheRead: 5000}},
		{Tool: "read_file", ID: "call_gemini_usage_2", Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 31, Output: 42, CacheRead: 7000}},
		{Text: "all done", Usage: agenttest.Usage{Input: 7, Output: 8, CacheRead: 9000}},
	}}})
	finish(t, g.start("GEMINI-USAGE: read the notes twice"))
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
}
