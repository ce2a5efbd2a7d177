package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
)

func TestReadPayload(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		gated     bool
		wantErr   bool
		wantEvent string
	}{
		{name: "pre tool use", in: `{"hook_event_name":"PreToolUse","session_id":"s","turn_id":"t1","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"call_1"}`, gated: true, wantEvent: "PreToolUse"},
		{name: "session end", in: `{"hook_event_name":"SessionEnd","session_id":"s","reason":"other"}`, wantEvent: "SessionEnd"},
		{name: "claude-only event", in: `{"hook_event_name":"Notification","session_id":"s"}`, wantErr: true},
		{name: "case folded", in: `{"hook_event_name":"pretooluse"}`, wantErr: true},
		{name: "repeated key", in: `{"hook_event_name":"PostToolUse","hook_event_name":"PreToolUse"}`, wantErr: true},
		{name: "two objects", in: `{"hook_event_name":"Stop"}{"hook_event_name":"Stop"}`, wantErr: true},
		{name: "gated gets another event", in: `{"hook_event_name":"Stop","session_id":"s"}`, gated: true, wantErr: true},
		{name: "not json", in: "\xff", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := ReadPayload
			if tc.gated {
				read = ReadGated
			}
			p, err := read(context.Background(), strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, core.ErrInvalid) {
					t.Errorf("error %v does not wrap ErrInvalid", err)
				}
				return
			}
			if p.HookEventName != tc.wantEvent {
				t.Errorf("event %q, want %q", p.HookEventName, tc.wantEvent)
			}
		})
	}
}

func TestAnswerNeverAllows(t *testing.T) {
	tests := []struct {
		d    claude.Decision
		want string
	}{
		{claude.Decision{Permission: claude.Allow, Reason: "ok"}, ""},
		{claude.Decision{Permission: claude.Deny, Reason: "no"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}` + "\n"},
		{claude.Decision{}, ""},
	}
	for _, tc := range tests {
		if got := string(Answer(tc.d)); got != tc.want {
			t.Errorf("Answer(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestInteractiveShell(t *testing.T) {
	dir := t.TempDir()
	rollout := filepath.Join(dir, "rollout.jsonl")
	lines := `{"type":"session_meta","payload":{"id":"x"}}
{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat\",\"tty\":true}","call_id":"call_tty"}}
{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_plain"}}
`
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, command, id, transcript string
		want                                bool
	}{
		{"bare bash", "Bash", "bash", "x", "", true},
		{"login shell", "Bash", "/bin/zsh -l", "x", "", true},
		{"python repl", "Bash", "python3", "x", "", true},
		{"bash -c", "Bash", "bash -c 'ls'", "x", "", false},
		{"script", "Bash", "python3 x.py", "x", "", false},
		{"tty in rollout", "Bash", "cat", "call_tty", rollout, true},
		{"no tty in rollout", "Bash", "ls", "call_plain", rollout, false},
		{"relative transcript ignored", "Bash", "cat", "call_tty", "rollout.jsonl", false},
		{"other tool", "apply_patch", "bash", "x", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &claude.Payload{ToolName: tc.tool, ToolInput: []byte(`{"command":` + quote(tc.command) + `}`),
				ToolUseID: tc.id, TranscriptPath: tc.transcript}
			if got := InteractiveShell(p); got != tc.want {
				t.Errorf("InteractiveShell = %v, want %v", got, tc.want)
			}
		})
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestInstallTrust: install writes one trust table per hook and keeps other
// tables; a second install changes nothing; a trust record kept in another
// form is refused before anything is written; uninstall removes the tables.
func TestInstallTrust(t *testing.T) {
	dir := t.TempDir()
	cfg := ConfigPath(dir)
	orig := "model = \"m\"\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:ab\"\n"
	if err := os.WriteFile(cfg, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	o := InstallOptions{Dir: dir, Binary: "/usr/bin/clawpit", DB: "/var/reg.db"}
	ch, err := Install(o)
	if err != nil || !ch.Changed {
		t.Fatalf("install: %+v %v", ch, err)
	}
	hs, err := Status(dir)
	if err != nil || len(hs) != len(Events) {
		t.Fatalf("status: %d hooks, %v", len(hs), err)
	}
	data, _ := os.ReadFile(cfg)
	for _, h := range hs {
		if n := bytes.Count(data, []byte(h.Key)); n != 1 {
			t.Errorf("%s appears %d times in config.toml", h.Key, n)
		}
	}
	if !bytes.Contains(data, []byte("/elsewhere/hooks.json:stop:0:0")) {
		t.Error("another hooks file's trust record was removed")
	}
	if ch, err := Install(o); err != nil || ch.Changed {
		t.Fatalf("second install: %+v %v", ch, err)
	}
	// Untrusted: the status error says the step that trusts them.
	if err := os.WriteFile(cfg, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Status(dir); err == nil || !strings.Contains(err.Error(), "hooks install --agent codex") {
		t.Fatalf("status of untrusted hooks: %v", err)
	}
	inline := orig + "\n[hooks.state]\n\"" + HooksPath(dir) + ":pre_tool_use:0:0\" = { trusted_hash = \"sha256:00\" }\n"
	if err := os.WriteFile(cfg, []byte(inline), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(o); err == nil {
		t.Fatal("install over an inline trust record succeeded")
	}
	if got, _ := os.ReadFile(cfg); string(got) != inline {
		t.Fatal("a refused install changed config.toml")
	}
	if err := os.WriteFile(cfg, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(cfg); string(got) != orig {
		t.Fatalf("after uninstall config.toml is\n%s\nwant\n%s", got, orig)
	}
}

// FuzzReadPayload: any bytes are a payload of a Codex event or an error;
// the gated reader accepts only an exact PreToolUse.
func FuzzReadPayload(f *testing.F) {
	for _, s := range []string{`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash"}`,
		`{"hook_event_name":"PostToolUse","hook_event_name":"PreToolUse"}`, `{"hook_event_name":"Notification"}`,
		`[]`, `null`, "\xff", `{"hook_event_name":"PreToolUse"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPayload(context.Background(), bytes.NewReader(data))
		if (p == nil) == (err == nil) {
			t.Fatalf("payload %v and error %v", p, err)
		}
		gp, gerr := ReadGated(context.Background(), bytes.NewReader(data))
		if gerr == nil && (gp == nil || gp.HookEventName != EventPreToolUse) {
			t.Fatalf("gated reader accepted %q", data)
		}
		if gerr != nil && len(Answer(claude.DenyError(gerr))) == 0 {
			t.Fatal("a refused payload gets no deny")
		}
	})
}

// TestUninstallMovesOthersTrust: a hook of the user's after clawpit's in
// the same event keeps its trust when uninstall removes clawpit's group
// before it (Codex keys trust by position).
func TestUninstallMovesOthersTrust(t *testing.T) {
	dir := t.TempDir()
	o := InstallOptions{Dir: dir, Binary: "/usr/bin/clawpit", DB: "/var/reg.db"}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	// The user adds a PreToolUse hook after clawpit's and trusts it.
	path := HooksPath(dir)
	data, _ := os.ReadFile(path)
	var file map[string]map[string][]any
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	mine := map[string]any{"type": "command", "command": "audit-log", "timeout": 5}
	file["hooks"]["PreToolUse"] = append(file["hooks"]["PreToolUse"], map[string]any{"hooks": []any{mine}})
	b, _ := json.Marshal(file)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	hash := TrustHash(EventPreToolUse, nil, "audit-log", 5)
	f, _ := os.OpenFile(ConfigPath(dir), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, "\n[hooks.state.%q]\ntrusted_hash = %q\n", path+":pre_tool_use:1:0", hash)
	f.Close()
	if _, err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	got, err := readConfig(ConfigPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{path + ":pre_tool_use:0:0": hash}
	if len(got) != 1 || got[path+":pre_tool_use:0:0"] != hash {
		t.Fatalf("trust after uninstall %v, want %v", got, want)
	}
}
