package agents

// Codex CLI 0.169.0 (CLAWPIT_CODEX) end to end against a Responses API
// stand-in, and the hook contract it keeps (no clawpit adapter yet: these
// are the ground truth the Codex adapter will be built on; NOTES.md).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/internal/agenttest"
)

// execCommand is a scripted call of Codex's shell tool (for a model outside
// its catalogue: the function exec_command {cmd}).
func execCommand(id, cmd string) agenttest.Turn {
	return agenttest.Turn{Tool: "exec_command", ID: id, Input: map[string]any{"cmd": cmd}}
}

// codexHookEvents are the events Codex 0.169.0 names in its hook engine.
var codexHookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
	"PostToolUse", "Stop", "SubagentStart", "SubagentStop", "SessionEnd", "PreCompact", "PostCompact"}

// writeCodexHooks writes $CODEX_HOME/hooks.json (Claude Code's format) with
// one group per event, no matcher, running command with no timeout set, and
// returns its path.
func writeCodexHooks(t *testing.T, a *agenttest.Agent, command string) string {
	t.Helper()
	hooks := map[string]any{}
	for _, ev := range codexHookEvents {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a.CodexHome(), "hooks.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// snake is a hook event's name in Codex's trust keys (PreToolUse →
// pre_tool_use).
func snake(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexDefaultTimeout is the timeout (seconds) Codex 0.169.0 gives a hook
// handler that sets none: 600, but 1 for SessionEnd (its app-server's
// hooks/list shows timeoutSec 1), and the trust hash covers it.
func codexDefaultTimeout(event string) int {
	if event == "SessionEnd" {
		return 1
	}
	return 600
}

// codexTrustHash is the trusted_hash Codex 0.169.0 records for one hook
// handler (issue 28): "sha256:" and the hex SHA-256 of the compact JSON,
// keys sorted, of {"event_name" (snake_case), "matcher" (absent when the
// group has none), "hooks": [{"type", "command", "timeout" (the default
// when unset), "async": false}]}.
func codexTrustHash(event, command string) string {
	v := map[string]any{"event_name": snake(event),
		"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": codexDefaultTimeout(event), "async": false}}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // serde_json does not escape <, >, &
	_ = enc.Encode(v)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// trustCodexHooks appends to config.toml the trust record of every hook
// writeCodexHooks wrote: [hooks.state."<hooks.json>:<event>:0:0"].
func trustCodexHooks(t *testing.T, a *agenttest.Agent, hooksPath, command string) {
	t.Helper()
	var b strings.Builder
	for _, ev := range codexHookEvents {
		key, _ := json.Marshal(fmt.Sprintf("%s:%s:0:0", hooksPath, snake(ev)))
		fmt.Fprintf(&b, "\n[hooks.state.%s]\ntrusted_hash = %q\n", key, codexTrustHash(ev, command))
	}
	f, err := os.OpenFile(filepath.Join(a.CodexHome(), "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
}

// TestCodexHookTrustAndPayloads: with a hook for every event in
// $CODEX_HOME/hooks.json, a plain `codex exec` skips the hooks nobody
// trusted; --dangerously-bypass-hook-trust runs them, and so does the trust
// record issue 28 describes. The payloads are logged (NOTES.md).
func TestCodexHookTrustAndPayloads(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvCodex, "@openai/codex")
	tests := []struct {
		name      string
		bypass    bool
		trust     bool // write the trust records
		wantHooks bool
	}{
		{name: "untrusted", wantHooks: false},
		{name: "bypass", bypass: true, wantHooks: true},
		{name: "trusted", trust: true, wantHooks: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const callID = "call_agents_codex_hooks_1"
			srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-HOOKS", Turns: []agenttest.Turn{
				execCommand(callID, "echo hooked > marker")}}})
			a := agenttest.NewCodex(t, srv.URL)
			dump := newHookDump(t)
			path := writeCodexHooks(t, a, dump.Script)
			if tc.trust {
				trustCodexHooks(t, a, path, dump.Script)
				for _, h := range codexHooksList(t, a) {
					if h.TrustStatus != "trusted" {
						t.Errorf("codex app-server hooks/list: %s is %q (timeout %d s), want trusted", h.Key, h.TrustStatus, h.TimeoutSec)
					}
				}
			}
			var args []string
			if tc.bypass {
				args = append(args, "--dangerously-bypass-hook-trust")
			}
			r := runCLI(t, a, "CODEX-HOOKS: run the command", args...)
			ps := dump.payloads(t)
			logPayloads(t, "codex-"+tc.name, ps)
			if !exists(filepath.Join(a.Work, "marker")) {
				t.Fatalf("the command did not run:\n%s", r)
			}
			if got := len(ps) > 0; got != tc.wantHooks {
				t.Fatalf("hooks ran: %v, want %v; stderr:\n%s", got, tc.wantHooks, r.Stderr)
			}
			if !tc.wantHooks {
				return
			}
			for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
				if len(byEvent(ps, ev)) == 0 {
					t.Errorf("no %s payload", ev)
				}
			}
			pre := byEvent(ps, "PreToolUse")
			if len(pre) != 1 {
				t.Fatalf("%d PreToolUse payloads, want 1", len(pre))
			}
			in, _ := pre[0].Fields["tool_input"].(map[string]any)
			if pre[0].Fields["tool_use_id"] != callID || in["command"] != "echo hooked > marker" {
				t.Errorf("PreToolUse payload: %s", pre[0].Raw)
			}
		})
	}
}

// codexHook is one hook as `codex app-server`'s hooks/list shows it.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	TimeoutSec  int    `json:"timeoutSec"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // "trusted", "modified", "untrusted"
}

// codexHooksList asks `codex app-server` (JSON-RPC over stdio: initialize,
// initialized, hooks/list) how Codex sees the hooks of a.Work: the same
// trust status its UI shows.
func codexHooksList(t *testing.T, a *agenttest.Agent) []codexHook {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Bin, "app-server")
	cmd.Dir, cmd.Env = a.Work, a.Environ()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"clawpit-agents-test","version":"1"}}}
{"jsonrpc":"2.0","method":"initialized"}
{"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[%q]}}
`, a.Work)
	if _, err := io.WriteString(in, req); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []codexHook `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		if msg.Error != nil || len(msg.Result.Data) != 1 {
			t.Fatalf("hooks/list: %s", sc.Bytes())
		}
		return msg.Result.Data[0].Hooks
	}
	t.Fatalf("codex app-server gave no hooks/list answer (%v)", sc.Err())
	return nil
}

// TestCodexPreToolUseAnswers pins what Codex 0.169.0 does with each answer
// of a PreToolUse hook (issue 28; the Codex adapter must answer deny or
// nothing): permissionDecision "deny" and exit 2 block the call and send the
// reason to the model; silence, "allow" (treated as a failed hook) and a
// hook past its timeout let it run.
func TestCodexPreToolUseAnswers(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvCodex, "@openai/codex")
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"frozen by the operator"}}`
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine"}}`
	tests := []struct {
		name       string
		answer     hookAnswer
		timeout    int // the handler's timeout in seconds (0: unset, 600)
		wantRan    bool
		wantResult string // a substring of the tool result the model gets
	}{
		{name: "deny", answer: hookAnswer{Stdout: deny}, wantRan: false, wantResult: "frozen by the operator"},
		{name: "exit 2", answer: hookAnswer{Stderr: "blocked by exit 2", Code: 2}, wantRan: false, wantResult: "blocked by exit 2"},
		{name: "silence", answer: hookAnswer{}, wantRan: true},
		{name: "allow", answer: hookAnswer{Stdout: allow}, wantRan: true},
		{name: "timeout", answer: hookAnswer{Sleep: 3, Stdout: deny}, timeout: 1, wantRan: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const callID = "call_agents_codex_answer_1"
			srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-ANSWER", Turns: []agenttest.Turn{
				execCommand(callID, "echo ran > marker")}}})
			a := agenttest.NewCodex(t, srv.URL)
			handler := map[string]any{"type": "command", "command": tc.answer.script(t, t.TempDir())}
			if tc.timeout > 0 {
				handler["timeout"] = tc.timeout
			}
			b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"hooks": []any{handler}}}}})
			if err := os.WriteFile(filepath.Join(a.CodexHome(), "hooks.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			r := runCLI(t, a, "CODEX-ANSWER: run the command", "--dangerously-bypass-hook-trust")
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

// TestCodexPermissionRequestAnswers pins how `codex exec --approve-for-me`
// takes a PermissionRequest hook's answer for an escalated call: allow runs
// it; deny gives the model `Rejected("M")`; silence, or an answer in
// PreToolUse's shape (a failed hook), hands the request to Codex's automatic
// reviewer, a model call the stand-in cannot answer, so the call is
// rejected without the hook's reason.
func TestCodexPermissionRequestAnswers(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvCodex, "@openai/codex")
	tests := []struct {
		name       string
		stdout     string
		wantRan    bool
		wantResult string // a substring of the tool result the model gets
	}{
		{name: "allow", stdout: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`, wantRan: true},
		{name: "deny", stdout: `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"frozen by the operator"}}}`,
			wantResult: `Rejected(\"frozen by the operator\")`},
		{name: "silence", wantResult: "automatic approval review"},
		{name: "PreToolUse's shape", stdout: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"frozen by the operator"}}`,
			wantResult: "automatic approval review"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const callID = "call_agents_codex_pr_1"
			outside := filepath.Join(t.TempDir(), "outside-marker")
			srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-PR", Turns: []agenttest.Turn{
				{Tool: "exec_command", ID: callID, Input: map[string]any{"cmd": "touch " + outside,
					"sandbox_permissions": "require_escalated", "justification": "needs to write outside the workspace"}}}}})
			a := agenttest.NewCodex(t, srv.URL)
			handler := map[string]any{"type": "command", "command": hookAnswer{Stdout: tc.stdout}.script(t, t.TempDir())}
			b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PermissionRequest": []any{map[string]any{"hooks": []any{handler}}}}})
			if err := os.WriteFile(filepath.Join(a.CodexHome(), "hooks.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			r := runCLI(t, a, "CODEX-PR: write outside", "--dangerously-bypass-hook-trust", "--approve-for-me")
			tr := result(t, srv, callID)
			// The first result of a reviewed call is Codex's own refusal
			// under the reviewer's session; the one the model acts on is
			// the last.
			last := tr.Content
			for _, q := range srv.Requests() {
				for _, res := range q.Results {
					if res.CallID == callID {
						last = res.Content
					}
				}
			}
			t.Logf("tool result: %q", last)
			if got := exists(outside); got != tc.wantRan {
				t.Fatalf("the command ran: %v, want %v\n%s", got, tc.wantRan, r)
			}
			if !strings.Contains(last, tc.wantResult) {
				t.Fatalf("tool result %q does not contain %q", last, tc.wantResult)
			}
		})
	}
}

// codexSessionID finds the session id in exec_command's result for a
// process still running ("Process running with session ID N").
var codexSessionID = regexp.MustCompile(`session ID (\d+)`)

// TestCodexInteractiveShellBypassesHooks pins issue 28's finding: a shell
// opened with exec_command {"cmd": "bash", "tty": true} fires PreToolUse
// with only {"command": "bash"}, and what write_stdin types into it runs
// with no hook at all. So the Codex gate must not let an interactive shell
// open unapproved.
func TestCodexInteractiveShellBypassesHooks(t *testing.T) {
	const openID, typeID = "call_agents_codex_tty_1", "call_agents_codex_tty_2"
	srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-TTY", Turns: []agenttest.Turn{
		{Tool: "exec_command", ID: openID, Input: map[string]any{"cmd": "bash", "tty": true, "yield_time_ms": 500}},
		{Make: func(results []agenttest.ToolResult) agenttest.Turn {
			id := "0"
			for _, r := range results {
				if m := codexSessionID.FindStringSubmatch(r.Content); r.CallID == openID && m != nil {
					id = m[1]
				}
			}
			n, _ := strconv.Atoi(id)
			return agenttest.Turn{Tool: "write_stdin", ID: typeID, Input: map[string]any{
				"session_id": n, "chars": "touch tty-marker\n", "yield_time_ms": 1000}}
		}},
	}}})
	a := agenttest.NewCodex(t, srv.URL)
	dump := newHookDump(t)
	writeCodexHooks(t, a, dump.Script)
	r := runCLI(t, a, "CODEX-TTY: open a shell and type into it", "--dangerously-bypass-hook-trust")
	ps := dump.payloads(t)
	logPayloads(t, "codex-tty", ps)
	t.Logf("open: %q\ntype: %q", result(t, srv, openID).Content, result(t, srv, typeID).Content)
	if _, ok := waitFile(filepath.Join(a.Work, "tty-marker"), 5*time.Second); !ok {
		t.Fatalf("what write_stdin typed did not run (Codex changed: update NOTES.md):\n%s", r)
	}
	pre := byEvent(ps, "PreToolUse")
	if len(pre) != 1 {
		t.Fatalf("%d PreToolUse payloads, want 1 (for opening the shell; none for write_stdin)", len(pre))
	}
	in, _ := pre[0].Fields["tool_input"].(map[string]any)
	if pre[0].Fields["tool_use_id"] != openID || in["command"] != "bash" {
		t.Errorf("PreToolUse for the shell: %s", pre[0].Raw)
	}
}

// TestCodexNoTTYHasNoStdin pins why the interactive-shell rule needs only
// tty sessions and bare interactive commands: a shell started without
// "tty" (here behind sh -c, which the command rule does not catch) reads
// end of file at once and exits, so a write_stdin after it has nothing to
// type into.
func TestCodexNoTTYHasNoStdin(t *testing.T) {
	const openID, typeID = "call_agents_codex_notty_1", "call_agents_codex_notty_2"
	srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-NOTTY", Turns: []agenttest.Turn{
		{Tool: "exec_command", ID: openID, Input: map[string]any{"cmd": "sh -c 'exec bash'", "yield_time_ms": 500}},
		{Make: func(results []agenttest.ToolResult) agenttest.Turn {
			n := 0 // no session: write_stdin to none, which Codex refuses
			for _, r := range results {
				if m := codexSessionID.FindStringSubmatch(r.Content); r.CallID == openID && m != nil {
					n, _ = strconv.Atoi(m[1])
				}
			}
			return agenttest.Turn{Tool: "write_stdin", ID: typeID, Input: map[string]any{"session_id": n, "chars": "touch notty-marker\n", "yield_time_ms": 1000}}
		}},
	}}})
	a := agenttest.NewCodex(t, srv.URL)
	runCLI(t, a, "CODEX-NOTTY: start a shell without a terminal and type into it")
	open := result(t, srv, openID).Content
	t.Logf("open: %q\ntype: %q", open, result(t, srv, typeID).Content)
	if !strings.Contains(open, "Process exited with code 0") || codexSessionID.MatchString(open) {
		t.Errorf("a shell without a tty kept running (Codex changed: the interactive-shell rule must cover it; update NOTES.md): %q", open)
	}
	if _, ok := waitFile(filepath.Join(a.Work, "notty-marker"), 2*time.Second); ok {
		t.Error("write_stdin ran a command in a session opened without a tty")
	}
}

// codexAgentID finds the agent id in spawn_agent's result
// ({"agent_id": "…", "nickname": "…"}).
var codexAgentID = regexp.MustCompile(`"agent_id"\s*:\s*"([^"]+)"`)

// TestCodexSubagentHooks: the main conversation spawns a sub-agent
// (multi_agent_v1 spawn_agent, then wait_agent); the stand-in tells the
// sub-agent's conversation by its message, and there asks for a shell call.
// The sub-agent's hooks carry agent_id and agent_type in the parent's
// session_id, between SubagentStart and SubagentStop.
func TestCodexSubagentHooks(t *testing.T) {
	const spawnID, waitID, subCall = "call_agents_codex_spawn", "call_agents_codex_wait", "call_agents_codex_sub_1"
	srv := agenttest.NewResponsesAPI(t, agenttest.Script{
		{Match: "SUBAGENT-TASK", Turns: []agenttest.Turn{execCommand(subCall, "touch sub-marker")}, Final: "sub-agent done"},
		{Match: "CODEX-SUB", Turns: []agenttest.Turn{
			{Tool: "spawn_agent", Namespace: "multi_agent_v1", ID: spawnID, Input: map[string]any{"message": "SUBAGENT-TASK: touch sub-marker"}},
			{Make: func(results []agenttest.ToolResult) agenttest.Turn {
				var targets []string
				for _, r := range results {
					if m := codexAgentID.FindStringSubmatch(r.Content); r.CallID == spawnID && m != nil {
						targets = append(targets, m[1])
					}
				}
				return agenttest.Turn{Tool: "wait_agent", Namespace: "multi_agent_v1", ID: waitID,
					Input: map[string]any{"targets": targets, "timeout_ms": 60000}}
			}},
		}},
	})
	a := agenttest.NewCodex(t, srv.URL)
	dump := newHookDump(t)
	writeCodexHooks(t, a, dump.Script)
	r := runCLI(t, a, "CODEX-SUB: delegate to a sub-agent", "--dangerously-bypass-hook-trust")
	ps := dump.payloads(t)
	logPayloads(t, "codex-subagent", ps)
	if !exists(filepath.Join(a.Work, "sub-marker")) {
		t.Fatalf("the sub-agent's command did not run:\n%s", r)
	}
	if tr := result(t, srv, waitID); !strings.Contains(tr.Content, "sub-agent done") {
		t.Errorf("wait_agent's result %q lacks the sub-agent's answer", tr.Content)
	}
	start, stop := byEvent(ps, "SubagentStart"), byEvent(ps, "SubagentStop")
	if len(start) != 1 || len(stop) != 1 {
		t.Fatalf("%d SubagentStart, %d SubagentStop payloads, want 1 each", len(start), len(stop))
	}
	agentID, parent := start[0].Fields["agent_id"], start[0].Fields["session_id"]
	var sub *payload
	for _, p := range byEvent(ps, "PreToolUse") {
		if p.Fields["tool_use_id"] == subCall {
			sub = &p
		}
	}
	switch {
	case agentID == nil || agentID == "" || stop[0].Fields["agent_id"] != agentID:
		t.Errorf("agent ids: start %v, stop %v", agentID, stop[0].Fields["agent_id"])
	case sub == nil:
		t.Errorf("no PreToolUse for the sub-agent's call")
	case sub.Fields["agent_id"] != agentID || sub.Fields["session_id"] != parent:
		t.Errorf("the sub-agent's PreToolUse has agent_id %v session_id %v, want %v in %v", sub.Fields["agent_id"], sub.Fields["session_id"], agentID, parent)
	}
}

// TestCodexExecNeverAsks pins why Codex's `--gate-on ask` needs `codex exec
// --approve-for-me` (TestCodexGateOnAsk): a plain exec 0.169.0 runs with
// approval policy "never" whatever config.toml or -c say, so a call asking
// for escalation (sandbox_permissions "require_escalated") is refused by
// Codex itself after PreToolUse, and PermissionRequest never fires.
func TestCodexExecNeverAsks(t *testing.T) {
	const callID = "call_agents_codex_escalate_1"
	outside := filepath.Join(t.TempDir(), "outside-marker")
	srv := agenttest.NewResponsesAPI(t, agenttest.Script{{Match: "CODEX-ESCALATE", Turns: []agenttest.Turn{
		{Tool: "exec_command", ID: callID, Input: map[string]any{"cmd": "touch " + outside,
			"sandbox_permissions": "require_escalated", "justification": "needs to write outside the workspace"}}}}})
	a := agenttest.NewCodex(t, srv.URL)
	dump := newHookDump(t)
	writeCodexHooks(t, a, dump.Script)
	r := runCLI(t, a, "CODEX-ESCALATE: write outside", "--dangerously-bypass-hook-trust",
		"--sandbox", "workspace-write", "-c", `approval_policy="on-request"`)
	ps := dump.payloads(t)
	logPayloads(t, "codex-escalate", ps)
	tr := result(t, srv, callID)
	t.Logf("tool result: %q", tr.Content)
	if exists(outside) {
		t.Fatal("the escalated command ran")
	}
	if n := len(byEvent(ps, "PermissionRequest")); n != 0 || !strings.Contains(tr.Content, "approval policy is Never") {
		t.Fatalf("a plain codex exec now asks (%d PermissionRequest payloads, result %q): --approve-for-me may no longer be needed for --gate-on ask; update NOTES.md and README\n%s", n, tr.Content, r.Stderr)
	}
	if len(byEvent(ps, "PreToolUse")) != 1 {
		t.Errorf("want one PreToolUse for the escalated call")
	}
}
