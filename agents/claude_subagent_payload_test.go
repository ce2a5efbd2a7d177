package agents

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestClaudeSubagentPreToolUsePayload records what Claude Code 2.1.328
// hands a hook on a sub-agent's PreToolUse: agent_id, agent_type and the
// parent's session_id, with transcript_path the parent's transcript (not the
// sub-agent's). The sub-agent's own transcript is the file
// <transcript_path without .jsonl>/subagents/agent-<agent_id>.jsonl, which
// already holds its answers by then and is the agent_transcript_path its
// SubagentStop names. clawpit counts a sub-agent's run mid-run from there.
func TestClaudeSubagentPreToolUsePayload(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	const agentCall, subRead = "toolu_agents_payload_agent_1", "toolu_agents_payload_sub_read_1"
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agenttest.NewMessagesAPI(t, agenttest.Script{
		{Match: "SUBAGENT-PAYLOAD", Turns: []agenttest.Turn{{Tool: "Read", ID: subRead, Input: map[string]any{"file_path": file},
			Usage: agenttest.Usage{Input: 321, Output: 45}}}, Final: "sub-agent done"},
		{Match: "PAYLOAD-MAIN", Turns: []agenttest.Turn{{Tool: "Agent", ID: agentCall, Input: map[string]any{
			"description": "read the notes", "subagent_type": "general-purpose",
			"prompt": "SUBAGENT-PAYLOAD: read the notes"}}}},
	})
	a := agenttest.NewClaude(t, srv.URL)
	dump := newHookDump(t)
	hook := []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": dump.Script}}}}
	settings := filepath.Join(t.TempDir(), "settings.json")
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": hook, "SubagentStop": []any{map[string]any{"hooks": hook[0].(map[string]any)["hooks"]}}}})
	if err := os.WriteFile(settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	r, err := a.Run(ctx, "PAYLOAD-MAIN: delegate reading the notes", "--settings", settings)
	if err != nil {
		t.Fatal(err)
	}
	ps := dump.payloads(t)
	logPayloads(t, "claude-subagent-pretooluse", ps)
	if r.Code != 0 {
		t.Fatalf("claude: %s", r)
	}
	var sub payload
	for _, p := range byEvent(ps, "PreToolUse") {
		if p.Fields["tool_use_id"] == subRead {
			sub = p
		}
	}
	if sub.Fields == nil {
		t.Fatalf("no PreToolUse for the sub-agent's Read among %d payloads", len(ps))
	}
	stops := byEvent(ps, "SubagentStop")
	if len(stops) != 1 {
		t.Fatalf("%d SubagentStop payloads, want 1", len(stops))
	}
	id, _ := sub.Fields["agent_id"].(string)
	tp, _ := sub.Fields["transcript_path"].(string)
	if id == "" || tp == "" {
		t.Fatalf("sub-agent PreToolUse without agent_id or transcript_path: %s", sub.Raw)
	}
	if _, ok := sub.Fields["agent_transcript_path"]; ok {
		t.Errorf("sub-agent PreToolUse now carries agent_transcript_path: %s", sub.Raw)
	}
	if stops[0].Fields["transcript_path"] != tp {
		t.Errorf("sub-agent PreToolUse transcript_path %q is not the parent's %v", tp, stops[0].Fields["transcript_path"])
	}
	want := filepath.Join(tp[:len(tp)-len(filepath.Ext(tp))], "subagents", "agent-"+id+".jsonl")
	if got := stops[0].Fields["agent_transcript_path"]; got != want {
		t.Errorf("SubagentStop agent_transcript_path %v, want %s (derived from the PreToolUse)", got, want)
	}
}
