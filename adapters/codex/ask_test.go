package codex

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
)

func TestAnswerPermission(t *testing.T) {
	tests := []struct {
		d    claude.Decision
		want string
	}{
		// Codex offers no permission updates: an allow carries none.
		{claude.Decision{Permission: claude.Allow, Reason: "approved", UpdatedPermissions: []byte(`{"type":"setMode"}`)},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"},
		{claude.Decision{Permission: claude.Deny, Reason: "frozen"},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"frozen"}}}` + "\n"},
		{claude.Decision{}, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny"}}}` + "\n"},
	}
	for _, tc := range tests {
		if got := string(AnswerPermission(tc.d)); got != tc.want {
			t.Errorf("AnswerPermission(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestReadAsk(t *testing.T) {
	for in, wantErr := range map[string]bool{
		`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`: false,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`:        false,
		`{"hook_event_name":"PostToolUse","session_id":"s"}`:                                                        true,
		`{"hook_event_name":"PermissionRequest","hook_event_name":"PreToolUse"}`:                                    true,
	} {
		_, err := ReadAsk(context.Background(), strings.NewReader(in))
		if (err != nil) != wantErr || (err != nil && !errors.Is(err, core.ErrInvalid)) {
			t.Errorf("ReadAsk(%s) = %v, want error %v (ErrInvalid)", in, err, wantErr)
		}
	}
}

// TestPairCall: a PermissionRequest (no tool_use_id) is paired with the
// last unanswered function call of its turn running its command, as Codex
// 0.169.0 writes them to the rollout (agents/NOTES.md).
func TestPairCall(t *testing.T) {
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	call := func(id, turn, args string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":` + quote(args) +
			`,"call_id":"` + id + `","internal_chat_message_metadata_passthrough":{"turn_id":"` + turn + `"}}}` + "\n"
	}
	output := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":"done"}}` + "\n"
	}
	lines := `{"type":"session_meta","payload":{"id":"x"}}` + "\n" +
		call("c_old", "t1", `{"cmd":"touch /etc/x"}`) + output("c_old") + // answered: an earlier run of the same command
		call("c_other_turn", "t0", `{"cmd":"touch /etc/y"}`) +
		call("c_now", "t1", `{"cmd":"touch /etc/x","sandbox_permissions":"require_escalated"}`) +
		call("c_tty", "t1", `{"cmd":"sudo -i","tty":true}`) +
		"not json\n"
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, command, turn, transcript string
		wantID                          string
		wantTTY                         bool
	}{
		{"the unanswered call of the turn", "touch /etc/x", "t1", rollout, "c_now", false},
		{"a tty call", "sudo -i", "t1", rollout, "c_tty", true},
		{"another turn's command", "touch /etc/y", "t1", rollout, "", false},
		{"no turn given", "touch /etc/y", "", rollout, "c_other_turn", false},
		{"unknown command", "rm -rf /", "t1", rollout, "", false},
		{"no rollout", "touch /etc/x", "t1", filepath.Join(t.TempDir(), "missing.jsonl"), "", false},
		{"relative rollout", "touch /etc/x", "t1", "rollout.jsonl", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &claude.Payload{HookEventName: EventPermissionRequest, ToolName: "Bash", TurnID: tc.turn, TranscriptPath: tc.transcript,
				ToolInput: []byte(`{"command":` + quote(tc.command) + `,"description":"why"}`)}
			id, tty := PairCall(p)
			if id != tc.wantID || tty != tc.wantTTY {
				t.Errorf("PairCall = %q, %v; want %q, %v", id, tty, tc.wantID, tc.wantTTY)
			}
		})
	}
}

// TestInstallGateOnAsk: ask mode adds a gated PermissionRequest hook (the
// gate's matcher, the approval timeout + 30 s) beside a gated PreToolUse
// (the interactive-shell rule), every command with --gate-on ask, all
// trusted; installing in tool mode again removes PermissionRequest and its
// trust.
func TestInstallGateOnAsk(t *testing.T) {
	dir := t.TempDir()
	o := InstallOptions{Dir: dir, Binary: "/usr/bin/clawpit", DB: "/var/reg.db", GateOn: claude.GateOnAsk}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	hs, err := Status(dir)
	if err != nil || len(hs) != len(Events)+1 {
		t.Fatalf("status: %d hooks, %v; want %d trusted", len(hs), err, len(Events)+1)
	}
	seen := map[string]Hook{}
	for _, h := range hs {
		seen[h.Event] = h
		if !strings.Contains(h.Command, " --gate-on ask ") {
			t.Errorf("%s command %q lacks --gate-on ask", h.Event, h.Command)
		}
	}
	for _, ev := range []string{EventPermissionRequest, EventPreToolUse} {
		h := seen[ev]
		if h.Matcher != DefaultGate || h.Timeout != claude.GateTimeoutSeconds(claude.DefaultApprovalTimeout) || !strings.Contains(h.Command, " --gated ") {
			t.Errorf("%s hook %+v: want matcher %q, timeout %d, --gated", ev, h.Installed, DefaultGate, claude.GateTimeoutSeconds(claude.DefaultApprovalTimeout))
		}
	}
	if ch, err := Install(o); err != nil || ch.Changed {
		t.Fatalf("second ask install: %+v %v", ch, err)
	}
	o.GateOn = claude.GateOnTool
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	hs, err = Status(dir)
	if err != nil || len(hs) != len(Events) {
		t.Fatalf("after a tool-mode install: %d hooks, %v; want %d", len(hs), err, len(Events))
	}
	cfg, _ := os.ReadFile(ConfigPath(dir))
	if strings.Contains(string(cfg), ":permission_request:") {
		t.Errorf("PermissionRequest's trust left behind:\n%s", cfg)
	}
	for _, h := range hs {
		if strings.Contains(h.Command, "--gate-on") {
			t.Errorf("tool mode command %q", h.Command)
		}
	}
	o.GateOn = "sometimes"
	if _, err := Install(o); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("gate-on sometimes: %v, want ErrInvalid", err)
	}
}

// TestPairCallParallel: two unanswered calls of turn t1 run the same
// command in different workdirs (the PermissionRequest shows neither
// workdir), one of them with a tty. Neither request gets a call id, so an
// approval of the first is never replayed as the answer to the second
// (approvals are replayed by tool-call id); the tty warning is kept for
// both. Once call_A has its output, the request is call_B's alone.
func TestPairCallParallel(t *testing.T) {
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	call := func(id, args string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":` + quote(args) +
			`,"call_id":"` + id + `","internal_chat_message_metadata_passthrough":{"turn_id":"t1"}}}` + "\n"
	}
	lines := call("call_A", `{"cmd":"make deploy","workdir":"/srv/staging"}`) +
		call("call_B", `{"cmd":"make deploy","workdir":"/srv/prod","tty":true}`)
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &claude.Payload{HookEventName: EventPermissionRequest, ToolName: "Bash", TurnID: "t1", TranscriptPath: rollout,
		ToolInput: []byte(`{"command":"make deploy","description":"ship it"}`)}
	for _, req := range []string{"first request", "second request"} {
		if id, tty := PairCall(p); id != "" || !tty {
			t.Errorf("%s: PairCall = %q, %v; want \"\", true (ambiguous: no id, tty of either)", req, id, tty)
		}
	}
	out := `{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_A","output":"done"}}` + "\n"
	if err := os.WriteFile(rollout, []byte(lines+out), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, tty := PairCall(p); id != "call_B" || !tty {
		t.Errorf("after call_A's output: PairCall = %q, %v; want call_B, true", id, tty)
	}
}
