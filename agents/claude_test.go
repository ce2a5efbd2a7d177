package agents

// The Claude Code gate end to end: the real Claude Code 2.1.328
// (CLAWPIT_CLAUDE) in headless -p mode with clawpit's hooks installed by
// `clawpit hooks install --settings FILE`, its model a scripted stand-in
// (agenttest.NewMessagesAPI) that asks for tool calls and records the tool
// results Claude Code sends back.

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
	"github.com/clawpit/clawpit/internal/agenttest"
)

// corruptRegistry replaces the registry (created by `hooks install`) with
// garbage bytes, its WAL and shared-memory files removed.
func corruptRegistry(t *testing.T, db string) {
	t.Helper()
	os.Remove(db + "-wal")
	os.Remove(db + "-shm")
	if err := os.WriteFile(db, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeGateSubagent: the main conversation starts a sub-agent (Claude
// Code's Agent tool, formerly Task); the stand-in tells the sub-agent's
// conversation by the prompt the Agent call gave it, and there asks for a
// gated Bash call. The call waits in clawpit, runs once approved, and the
// sub-agent appears as a run in `clawpit run list`.
func TestClaudeGateSubagent(t *testing.T) {
	const agentCall, subCall = "toolu_agents_agent_1", "toolu_agents_sub_bash_1"
	g := newClaudeGate(t, "1m", agenttest.Script{
		{Match: "SUBAGENT-TASK", Turns: []agenttest.Turn{bash(subCall, "touch sub-marker")}, Final: "sub-agent done"},
		{Match: "GATE-MAIN", Turns: []agenttest.Turn{{Tool: "Agent", ID: agentCall, Input: map[string]any{
			"description": "make the sub marker", "subagent_type": "general-purpose",
			"prompt": "SUBAGENT-TASK: run touch sub-marker"}}}},
	})
	marker := filepath.Join(g.agent.Work, "sub-marker")
	p := g.start("GATE-MAIN: delegate the marker to a sub-agent")
	a := g.pending(p, subCall)
	if a.Command != "touch sub-marker" {
		t.Fatalf("sub-agent approval: %+v", a)
	}
	var runs []core.Run
	decode(t, g.cli.OK("--json", "run", "list"), &runs)
	if len(runs) == 0 {
		t.Fatalf("no run while the sub-agent waits (approval %+v)", a)
	}
	if a.RunID == "" || a.RunID != runs[0].RunID {
		t.Errorf("the sub-agent's approval is bound to run %q; runs %+v", a.RunID, runs)
	}
	decided := time.Now()
	g.cli.OK("approval", "approve", a.ID)
	ranWithin(t, p, marker, decided)
	finish(t, p)
	if tr := result(t, g.srv, subCall); tr.IsError {
		t.Fatalf("the sub-agent's Bash result is an error: %q", tr.Content)
	}
	// Claude Code 2.1.328 runs sub-agents asynchronously: the Agent call's
	// result only says the agent was launched, and the sub-agent's answer
	// reaches the main conversation later, as a notification.
	if err := g.srv.WaitFor(t.Context(), "the sub-agent's answer in the main conversation", func(reqs []agenttest.Request) bool {
		for _, r := range reqs {
			if r.Conversation == 1 && bytes.Contains(r.Body, []byte("sub-agent done")) {
				return true
			}
		}
		return false
	}); err != nil {
		t.Error(err)
	}
	if tr := result(t, g.srv, agentCall); tr.IsError {
		t.Errorf("the Agent call failed: %q", tr.Content)
	}
}

// TestClaudeUngatedReadRunsAtOnce: a read-only tool outside the gate (Read)
// runs at once: its result reaches the model and no approval is recorded.
func TestClaudeUngatedReadRunsAtOnce(t *testing.T) {
	const callID = "toolu_agents_read_1"
	g := newClaudeGate(t, "1m", nil)
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("read me at once\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.SetScript(agenttest.Script{{Match: "READ-MAIN", Turns: []agenttest.Turn{
		{Tool: "Read", ID: callID, Input: map[string]any{"file_path": file}}}}})
	r := finish(t, g.start("READ-MAIN: read the notes"))
	if tr := result(t, g.srv, callID); tr.IsError || !strings.Contains(tr.Content, "read me at once") {
		t.Fatalf("Read result (error %v): %q", tr.IsError, tr.Content)
	}
	if aps := g.approvals(); len(aps) != 0 {
		t.Fatalf("an ungated Read recorded approvals: %+v", aps)
	}
	t.Logf("the agent finished in %s", r.Elapsed.Round(time.Millisecond))
	g.wantSessionAgent("claude")
}

// TestClaudePermissionRequestHeadless pins issue 28's finding for
// `--gate-on ask`: in a headless -p run Claude Code 2.1.328 fires
// PermissionRequest whenever its own rules would ask (here a Bash call
// outside the working directory): tool_name, tool_input,
// permission_suggestions, no tool_use_id; a hook that does not answer
// leaves the call refused, and {"behavior": "allow"} runs it.
func TestClaudePermissionRequestHeadless(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	for _, answer := range []string{"", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`} {
		name := map[bool]string{true: "no answer", false: "allow"}[answer == ""]
		t.Run(name, func(t *testing.T) {
			const callID = "toolu_agents_permreq_1"
			outside := filepath.Join(t.TempDir(), "outside-marker")
			srv := agenttest.NewMessagesAPI(t, agenttest.Script{{Match: "PERMREQ-MAIN", Turns: []agenttest.Turn{bash(callID, "touch "+outside)}}})
			a := agenttest.NewClaude(t, srv.URL)
			dump := newHookDump(t)
			cmd := fmt.Sprintf("%s; printf '%%s' %s", dump.Script, shellQuote(answer))
			settings := filepath.Join(t.TempDir(), "settings.json")
			b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
				"PermissionRequest": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}}}})
			if err := os.WriteFile(settings, b, 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			r, err := a.Run(ctx, "PERMREQ-MAIN: write outside", "--settings", settings)
			if err != nil {
				t.Fatal(err)
			}
			ps := dump.payloads(t)
			logPayloads(t, "claude-permission-request-"+strings.ReplaceAll(name, " ", "-"), ps)
			tr := result(t, srv, callID)
			t.Logf("tool result (error %v): %q", tr.IsError, tr.Content)
			if r.Code != 0 {
				t.Fatalf("claude: %s", r)
			}
			pr := byEvent(ps, "PermissionRequest")
			if len(pr) != 1 {
				t.Fatalf("%d PermissionRequest payloads, want 1", len(pr))
			}
			in, _ := pr[0].Fields["tool_input"].(map[string]any)
			if pr[0].Fields["tool_name"] != "Bash" || in["command"] != "touch "+outside || pr[0].Fields["tool_use_id"] != nil {
				t.Errorf("PermissionRequest payload: %s", pr[0].Raw)
			}
			if got, want := exists(outside), answer != ""; got != want {
				t.Fatalf("the call ran: %v, want %v", got, want)
			}
		})
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
