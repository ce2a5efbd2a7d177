package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// --agent and --gate-on are checked before anything runs: an unknown agent,
// ask mode for Gemini CLI (it has no permission-request event), and
// --config-dir for Claude Code are usage errors (exit 2) naming the reason.
func TestHooksAgentFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown agent", []string{"hooks", "install", "--agent", "aider"}, "want claude, codex or gemini"},
		{"ask for gemini", []string{"hooks", "install", "--agent", "gemini", "--gate-on", "ask"}, "no permission-request hook event"},
		{"bad gate-on", []string{"hooks", "install", "--gate-on", "sometimes"}, "want tool or ask"},
		{"config-dir for claude", []string{"hooks", "status", "--config-dir", dir}, "--config-dir is for --agent codex or gemini"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--db", filepath.Join(dir, "r.db")}, tc.args...)
			var o, e bytes.Buffer
			code := Run(context.Background(), args, strings.NewReader(""), &o, &e)
			if code != 2 || !strings.Contains(e.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, e.String(), tc.want)
			}
		})
	}
}

// The gated Codex and Gemini CLI hooks never answer allow: a payload they
// cannot read is denied in each agent's own shape, and nothing else is
// printed.
func TestHookAgentDeniesUnreadable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		agent, payload, want string
	}{
		{"codex", `{"hook_event_name":"PreToolUse","hook_event_name":"Stop"}`, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`},
		{"codex", `{"hook_event_name":"BeforeTool","session_id":"s"}`, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`},
		{"gemini", `{"hook_event_name":"PreToolUse","session_id":"s"}`, `{"decision":"deny"`},
		{"gemini", `not json`, `{"decision":"deny"`},
	} {
		t.Run(tc.agent+" "+tc.payload, func(t *testing.T) {
			var o, e bytes.Buffer
			code := Run(context.Background(), []string{"--db", filepath.Join(dir, "r.db"), "hook", "--agent", tc.agent, "--gated"},
				strings.NewReader(tc.payload), &o, &e)
			if code != 0 || !strings.HasPrefix(o.String(), tc.want) || strings.Count(o.String(), "\n") != 1 || strings.Contains(o.String(), "allow") {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and one line starting %q", code, o.String(), e.String(), tc.want)
			}
		})
	}
}

// Under --gate-on ask the gated Codex hook passes a plain PreToolUse at
// once with no answer (Codex's own rules decide it), and still holds an
// interactive shell: with an approval timeout of 1 ms nobody decides, so
// the shell is denied in PreToolUse's shape. A PermissionRequest nobody
// decides is denied in PermissionRequest's shape, with the reason as the
// message.
func TestHookCodexAsk(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, payload, want string
	}{
		{"plain call passes", `{"hook_event_name":"PreToolUse","session_id":"s","turn_id":"t","tool_name":"Bash","tool_input":{"command":"touch x"},"tool_use_id":"c1"}`, ``},
		{"interactive shell waits", `{"hook_event_name":"PreToolUse","session_id":"s","turn_id":"t","tool_name":"Bash","tool_input":{"command":"bash"},"tool_use_id":"c2"}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no operator decision within 1ms"}}` + "\n"},
		{"permission request waits", `{"hook_event_name":"PermissionRequest","session_id":"s","turn_id":"t","tool_name":"Bash","tool_input":{"command":"touch /etc/x","description":"why"}}`,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no operator decision within 1ms"}}}` + "\n"},
		{"other event refused", `{"hook_event_name":"Stop","session_id":"s"}`, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := Run(context.Background(), []string{"--db", filepath.Join(dir, "r.db"), "hook", "--agent", "codex", "--gated", "--gate-on", "ask", "--approval-timeout", "1ms"},
				strings.NewReader(tc.payload), &o, &e)
			if code != 0 || !strings.HasPrefix(o.String(), tc.want) || (tc.want == "") != (o.Len() == 0) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and stdout starting %q", code, o.String(), e.String(), tc.want)
			}
		})
	}
}

// A gated ask-mode hook that cannot read its payload or its command line
// still denies in the event's own shape: a PermissionRequest answered in
// PreToolUse's shape is a failed hook, and the agent would ask its own
// user or reviewer instead. An unreadable payload naming PermissionRequest
// anywhere gets PermissionRequest's deny (the shape that fails closed).
func TestHookAskDeniesUnreadableInShape(t *testing.T) {
	dir := t.TempDir()
	const permissionDeny = `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"`
	const preToolDeny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"`
	request := `{"hook_event_name":"PermissionRequest","session_id":"s","turn_id":"t","tool_name":"Bash","tool_input":{"command":"touch /etc/x"}}`
	for _, tc := range []struct {
		name    string
		args    []string
		payload string
		want    string
	}{
		{"repeated hook_event_name", []string{"--agent", "codex", "--gated", "--gate-on", "ask"},
			`{"hook_event_name":"PermissionRequest","hook_event_name":"PermissionRequest","session_id":"s"}`, permissionDeny},
		{"PermissionRequest beside PreToolUse", []string{"--agent", "codex", "--gated", "--gate-on", "ask"},
			`{"hook_event_name":"PreToolUse","hook_event_name":"PermissionRequest"}`, permissionDeny},
		{"unreadable PreToolUse", []string{"--agent", "codex", "--gated", "--gate-on", "ask"},
			`{"hook_event_name":"PreToolUse","hook_event_name":"PreToolUse"}`, preToolDeny},
		{"codex unknown flag", []string{"--agent", "codex", "--gated", "--gate-on", "ask", "--from-a-newer-clawpit"}, request, permissionDeny},
		{"codex bad approval timeout", []string{"--agent", "codex", "--gated", "--gate-on", "ask", "--approval-timeout", "9999h"}, request, permissionDeny},
		{"claude unknown flag", []string{"--gated", "--gate-on", "ask", "--from-a-newer-clawpit"}, request, permissionDeny},
		{"claude unknown flag, unreadable", []string{"--gated", "--gate-on", "ask", "--from-a-newer-clawpit"},
			`{"hook_event_name":"PermissionRequest","hook_event_name":"PermissionRequest"}`, permissionDeny},
		{"claude unknown flag, PreToolUse", []string{"--gated", "--from-a-newer-clawpit"},
			`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`, preToolDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			args := append([]string{"--db", filepath.Join(dir, "r.db"), "hook"}, tc.args...)
			code := Run(context.Background(), args, strings.NewReader(tc.payload), &o, &e)
			if code != 0 || !strings.HasPrefix(o.String(), tc.want) || strings.Count(o.String(), "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and one line starting %q", code, o.String(), e.String(), tc.want)
			}
		})
	}
}

// Under --gate-on ask a PreToolUse that the agent's own rules would decide
// (Codex: any but an interactive shell; Claude Code: every one) still
// waits while its session is over a budget with the action gate, as every
// tool call does then: nobody decides within 1 ms, so it is denied in
// PreToolUse's shape. Under the budget it passes with no answer.
func TestHookAskHoldsOverBudget(t *testing.T) {
	for _, agent := range []string{"codex", "claude"} {
		t.Run(agent, func(t *testing.T) { testHookAskHoldsOverBudget(t, agent) })
	}
}

func testHookAskHoldsOverBudget(t *testing.T, agent string) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	run := func(in string, args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := Run(ctx, append([]string{"--db", db}, args...), strings.NewReader(in), &o, &e)
		return code, o.String(), e.String()
	}
	if code, _, e := run("", "budget", "set", "--session-tokens", "1000", "--action", "gate"); code != 0 {
		t.Fatalf("budget set: exit %d, %s", code, e)
	}
	call := func(id string) string {
		return `{"hook_event_name":"PreToolUse","session_id":"s","turn_id":"t","tool_name":"Bash","tool_input":{"command":"touch x"},"tool_use_id":"` + id + `"}`
	}
	hook := []string{"hook", "--agent", agent, "--gated", "--gate-on", "ask", "--approval-timeout", "1ms"}
	if code, o, e := run(call("c1"), hook...); code != 0 || o != "" {
		t.Fatalf("under budget: exit %d, stdout %q, stderr %q; want a pass", code, o, e)
	}
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := core.NewRegistry(st, core.SystemClock{}, core.DefaultThresholds())
	err = reg.AddUsage(ctx, []core.UsageRow{{Scope: core.UsageSession, ID: "s", Model: "gpt-5", Tokens: core.Tokens{Input: 5000}, CountedAt: core.TS(time.Now())}})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no operator decision within 1ms"}}` + "\n"
	if code, o, e := run(call("c2"), hook...); code != 0 || o != want {
		t.Fatalf("over budget: exit %d, stdout %q, stderr %q; want %q", code, o, e, want)
	}
}
