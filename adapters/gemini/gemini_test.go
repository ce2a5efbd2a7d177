package gemini

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
)

func TestReadPayload(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		gated     bool
		wantErr   bool
		wantEvent string // the Claude Code event it maps onto
		wantAgent bool   // an invoke_agent call's run id
	}{
		{name: "before tool", in: `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, gated: true, wantEvent: "PreToolUse"},
		{name: "invoke_agent starts a run", in: `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"p"}}`, gated: true, wantEvent: "SubagentStart", wantAgent: true},
		{name: "invoke_agent's AfterTool ends it", in: `{"hook_event_name":"AfterTool","session_id":"s","tool_name":"invoke_agent","tool_input":{"agent_name":"generalist","prompt":"p"}}`, wantEvent: "SubagentStop", wantAgent: true},
		{name: "after tool", in: `{"hook_event_name":"AfterTool","session_id":"s","tool_name":"read_file"}`, wantEvent: "PostToolUse"},
		{name: "after agent is a stop", in: `{"hook_event_name":"AfterAgent","session_id":"s"}`, wantEvent: "Stop"},
		{name: "before model is read and ignored", in: `{"hook_event_name":"BeforeModel","session_id":"s"}`, wantEvent: ""},
		{name: "a call id is not taken", in: `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"x","tool_use_id":"forged"}`, gated: true, wantEvent: "PreToolUse"},
		{name: "claude event name", in: `{"hook_event_name":"PreToolUse","session_id":"s"}`, wantErr: true},
		{name: "gated gets AfterTool", in: `{"hook_event_name":"AfterTool","session_id":"s"}`, gated: true, wantErr: true},
		{name: "repeated key", in: `{"hook_event_name":"AfterTool","hook_event_name":"BeforeTool"}`, wantErr: true},
		{name: "trailing data", in: `{"hook_event_name":"BeforeTool"} x`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p *claude.Payload
			var err error
			if tc.gated {
				p, err = ReadGated(context.Background(), strings.NewReader(tc.in))
			} else {
				p, _, err = ReadPayload(context.Background(), strings.NewReader(tc.in))
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, core.ErrInvalid) {
					t.Errorf("error %v does not wrap ErrInvalid", err)
				}
				return
			}
			if p.HookEventName != tc.wantEvent || p.ToolUseID != "" || strings.HasPrefix(p.AgentID, RunPrefix) != tc.wantAgent {
				t.Errorf("mapped to %q, tool_use_id %q, agent %q", p.HookEventName, p.ToolUseID, p.AgentID)
			}
		})
	}
}

// TestSubagentRunID: an invoke_agent's BeforeTool and AfterTool give the
// same run; another session or input another.
func TestSubagentRunID(t *testing.T) {
	read := func(s string) string {
		p, _, err := ReadPayload(context.Background(), strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return p.AgentID
	}
	start := read(`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"invoke_agent","tool_input":{"prompt":"a"}}`)
	stop := read(`{"hook_event_name":"AfterTool","session_id":"s","tool_name":"invoke_agent","tool_input":{"prompt":"a"}}`)
	other := read(`{"hook_event_name":"BeforeTool","session_id":"t","tool_name":"invoke_agent","tool_input":{"prompt":"a"}}`)
	if start != stop || start == other {
		t.Fatalf("run ids: start %q stop %q other session %q", start, stop, other)
	}
}

func TestAnswerNeverAllowsOrAsks(t *testing.T) {
	tests := []struct {
		d    claude.Decision
		want string
	}{
		{claude.Decision{Permission: claude.Allow}, ""},
		{claude.Decision{Permission: "ask"}, ""},
		{claude.Decision{Permission: claude.Deny, Reason: "no"}, `{"decision":"deny","reason":"no"}` + "\n"},
	}
	for _, tc := range tests {
		if got := string(Answer(tc.d)); got != tc.want {
			t.Errorf("Answer(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestInstall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(path, []byte(`{"model":{"name":"m"},"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"mine"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := InstallOptions{Settings: path, Binary: "/bin/clawpit", DB: "/reg.db", ApprovalTimeout: time.Minute}
	if ch, err := Install(o); err != nil || !ch.Changed {
		t.Fatalf("install: %+v %v", ch, err)
	}
	hs, err := claude.Status(path)
	if err != nil || len(hs) != len(Events) {
		t.Fatalf("status: %+v %v", hs, err)
	}
	for _, h := range hs {
		want := HookTimeoutMs
		if h.Event == EventBeforeTool {
			want = 90000
			if !strings.Contains(h.Matcher, ToolInvokeAgent) || !strings.Contains(h.Command, "--gated") {
				t.Errorf("BeforeTool hook: %+v", h)
			}
		}
		if h.Timeout != want {
			t.Errorf("%s timeout %d ms, want %d", h.Event, h.Timeout, want)
		}
	}
	if ch, err := Install(o); err != nil || ch.Changed {
		t.Fatalf("second install: %+v %v", ch, err)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"mine"`)) || !bytes.Contains(data, []byte(`"model"`)) {
		t.Fatalf("install lost the user's settings:\n%s", data)
	}
}

// FuzzReadPayload: any bytes are a payload of a Gemini CLI event or an
// error; the gated reader passes only a BeforeTool, and a refused payload
// is answered with a deny.
func FuzzReadPayload(f *testing.F) {
	for _, s := range []string{`{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command"}`,
		`{"hook_event_name":"BeforeTool","tool_name":"invoke_agent","tool_input":{"prompt":"x"}}`,
		`{"hook_event_name":"AfterTool","hook_event_name":"BeforeTool"}`, `{"hook_event_name":"PreToolUse"}`,
		`[]`, `null`, "\xff", `{"hook_event_name":"BeforeTool"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, _, err := ReadPayload(context.Background(), bytes.NewReader(data))
		if (p == nil) == (err == nil) {
			t.Fatalf("payload %v and error %v", p, err)
		}
		gp, gerr := ReadGated(context.Background(), bytes.NewReader(data))
		if gerr == nil && gp.HookEventName != claude.EventPreToolUse && gp.HookEventName != claude.EventSubagentStart {
			t.Fatalf("gated reader passed %q as %q", data, gp.HookEventName)
		}
		if gerr != nil && len(Answer(claude.DenyError(gerr))) == 0 {
			t.Fatal("a refused payload gets no deny")
		}
	})
}
