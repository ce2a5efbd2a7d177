package agents

// Gemini CLI 0.61.0 (CLAWPIT_GEMINI) end to end against a Gemini API
// stand-in, and the hook contract it keeps (no clawpit adapter yet: these
// are the ground truth the Gemini adapter will be built on; NOTES.md).

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/internal/agenttest"
)

// shellCommand is a scripted call of Gemini CLI's shell tool. Gemini CLI
// refuses command substitution ($(…), backticks) in it.
func shellCommand(id, command string) agenttest.Turn {
	return agenttest.Turn{Tool: "run_shell_command", ID: id, Input: map[string]any{"command": command}}
}

// geminiHookEvents are the events Gemini CLI 0.61.0 names (HookEventName).
var geminiHookEvents = []string{"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel",
	"AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress", "Notification"}

// geminiHooks is the settings.json "hooks" object running command for every
// event (no matcher; timeout in milliseconds).
func geminiHooks(command string) map[string]any {
	hooks := map[string]any{}
	for _, ev := range geminiHookEvents {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 30000}}}}
	}
	return hooks
}

// TestGeminiHookPayloads: with a hook for every event in
// ~/.gemini/settings.json, a headless run sends each its payload; the
// payloads are logged (NOTES.md) and the hook's environment holds
// GEMINI_API_KEY.
func TestGeminiHookPayloads(t *testing.T) {
	const callID = "call_agents_gemini_hooks_1"
	srv := agenttest.NewGeminiAPI(t, agenttest.Script{{Match: "GEMINI-HOOKS", Turns: []agenttest.Turn{
		shellCommand(callID, "echo hooked > marker")}}})
	a := agenttest.NewGemini(t, srv.URL)
	dump := newHookDump(t)
	if err := a.WriteGeminiSettings(map[string]any{"hooks": geminiHooks(dump.Script)}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, a, "GEMINI-HOOKS: run the command", "--approval-mode", "yolo")
	ps := dump.payloads(t)
	logPayloads(t, "gemini", ps)
	if !exists(filepath.Join(a.Work, "marker")) {
		t.Fatalf("the command did not run:\n%s", r)
	}
	for _, ev := range []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"} {
		if len(byEvent(ps, ev)) == 0 {
			t.Errorf("no %s payload", ev)
		}
	}
	before := byEvent(ps, "BeforeTool")
	if len(before) != 1 {
		t.Fatalf("%d BeforeTool payloads, want 1", len(before))
	}
	in, _ := before[0].Fields["tool_input"].(map[string]any)
	if before[0].Fields["tool_name"] != "run_shell_command" || in["command"] != "echo hooked > marker" {
		t.Errorf("BeforeTool payload: %s", before[0].Raw)
	}
	if !strings.Contains(" "+strings.Join(before[0].EnvVars, " ")+" ", " GEMINI_API_KEY ") {
		t.Errorf("the hook's environment no longer holds GEMINI_API_KEY (names: %v): update NOTES.md", before[0].EnvVars)
	}
}

// TestGeminiBeforeToolAnswers pins what Gemini CLI 0.61.0 does with each
// answer of a BeforeTool hook (issue 28): {"decision": "deny", "reason"} and
// exit 2 block the call and send the reason to the model; silence, "allow"
// and a hook past its timeout (milliseconds) let it run.
func TestGeminiBeforeToolAnswers(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvGemini, "@google/gemini-cli")
	tests := []struct {
		name       string
		answer     hookAnswer
		timeoutMs  int
		wantRan    bool
		wantResult string
	}{
		{name: "deny", answer: hookAnswer{Stdout: `{"decision":"deny","reason":"frozen by the operator"}`}, wantResult: "frozen by the operator"},
		{name: "exit 2", answer: hookAnswer{Stderr: "blocked by exit 2", Code: 2}, wantResult: "blocked by exit 2"},
		{name: "silence", answer: hookAnswer{}, wantRan: true},
		{name: "allow", answer: hookAnswer{Stdout: `{"decision":"allow"}`}, wantRan: true},
		{name: "timeout", answer: hookAnswer{Sleep: 3, Stdout: `{"decision":"deny","reason":"too late"}`}, timeoutMs: 1000, wantRan: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const callID = "call_agents_gemini_answer_1"
			srv := agenttest.NewGeminiAPI(t, agenttest.Script{{Match: "GEMINI-ANSWER", Turns: []agenttest.Turn{
				shellCommand(callID, "echo ran > marker")}}})
			a := agenttest.NewGemini(t, srv.URL)
			handler := map[string]any{"type": "command", "command": tc.answer.script(t, t.TempDir())}
			if tc.timeoutMs > 0 {
				handler["timeout"] = tc.timeoutMs
			}
			hooks := map[string]any{"BeforeTool": []any{map[string]any{"hooks": []any{handler}}}}
			if err := a.WriteGeminiSettings(map[string]any{"hooks": hooks}); err != nil {
				t.Fatal(err)
			}
			r := runCLI(t, a, "GEMINI-ANSWER: run the command", "--approval-mode", "yolo")
			tr := result(t, srv, callID)
			t.Logf("tool result: %q", tr.Content)
			if got := exists(filepath.Join(a.Work, "marker")); got != tc.wantRan {
				t.Fatalf("the command ran: %v, want %v\n%s", got, tc.wantRan, r)
			}
			if !strings.Contains(tr.Content, tc.wantResult) {
				t.Fatalf("tool result %q does not contain %q", tr.Content, tc.wantResult)
			}
		})
	}
}

// TestGeminiSubagentHooks: the main conversation calls invoke_agent (the
// built-in "generalist" agent); the stand-in tells the sub-agent's
// conversation by its prompt, and there asks for a shell call and then
// complete_task. The sub-agent's BeforeTool carries the parent's payload
// fields (same session_id, no agent id): the adapter must nest it under the
// invoke_agent call by order.
func TestGeminiSubagentHooks(t *testing.T) {
	const invokeID, subCall = "call_agents_gemini_invoke", "call_agents_gemini_sub_1"
	srv := agenttest.NewGeminiAPI(t, agenttest.Script{
		{Match: "SUBAGENT-TASK", Turns: []agenttest.Turn{
			shellCommand(subCall, "touch sub-marker"),
			{Tool: "complete_task", Input: map[string]any{"result": map[string]any{"response": "sub-agent done"}}},
		}},
		{Match: "GEMINI-SUB", Turns: []agenttest.Turn{{Tool: "invoke_agent", ID: invokeID, Input: map[string]any{
			"agent_name": "generalist", "prompt": "SUBAGENT-TASK: run touch sub-marker"}}}},
	})
	a := agenttest.NewGemini(t, srv.URL)
	dump := newHookDump(t)
	if err := a.WriteGeminiSettings(map[string]any{"hooks": geminiHooks(dump.Script)}); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, a, "GEMINI-SUB: delegate to a sub-agent", "--approval-mode", "yolo")
	ps := dump.payloads(t)
	logPayloads(t, "gemini-subagent", ps)
	if !exists(filepath.Join(a.Work, "sub-marker")) {
		t.Fatalf("the sub-agent's command did not run:\n%s", r)
	}
	if tr := result(t, srv, invokeID); !strings.Contains(tr.Content, "sub-agent done") {
		t.Errorf("invoke_agent's result %q lacks the sub-agent's answer", tr.Content)
	}
	var invoke, sub *payload
	for _, p := range byEvent(ps, "BeforeTool") {
		in, _ := p.Fields["tool_input"].(map[string]any)
		switch {
		case p.Fields["tool_name"] == "invoke_agent":
			invoke = &p
		case in["command"] == "touch sub-marker":
			sub = &p
		}
	}
	if invoke == nil || sub == nil {
		t.Fatalf("BeforeTool for invoke_agent: %v, for the sub-agent's command: %v", invoke != nil, sub != nil)
	}
	if sub.Fields["session_id"] != invoke.Fields["session_id"] {
		t.Errorf("the sub-agent's BeforeTool is in session %v, the parent's is %v", sub.Fields["session_id"], invoke.Fields["session_id"])
	}
}
