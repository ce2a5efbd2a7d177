package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// --agent and --gate-on are checked before anything runs: an unknown agent,
// ask mode for an agent without a permission-request event, and
// --config-dir for Claude Code are usage errors (exit 2) naming the reason.
func TestHooksAgentFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown agent", []string{"hooks", "install", "--agent", "aider"}, "want claude, codex or gemini"},
		{"ask for codex", []string{"hooks", "install", "--agent", "codex", "--gate-on", "ask"}, "only in interactive runs"},
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
