package claude

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

func TestParsePayloadFixtures(t *testing.T) {
	for _, tc := range []struct {
		file                     string
		event, tool, agent, want string // want: ToolCall's command
		rationale                string
	}{
		{"session_start.json", EventSessionStart, "", "", "", ""},
		{"pre_tool_use_bash.json", EventPreToolUse, "Bash", "", "npm run migrate -- --env staging", "Apply the pending database migrations to staging"},
		{"pre_tool_use_write.json", EventPreToolUse, "Write", "", "/home/dev/shop/src/config.ts", ""},
		{"pre_tool_use_subagent.json", EventPreToolUse, "Bash", "agent-7f3a9c21", "go test ./...", "Run the test suite"},
		{"post_tool_use.json", EventPostToolUse, "Write", "", "/home/dev/shop/src/config.ts", ""},
		{"subagent_start.json", EventSubagentStart, "", "agent-7f3a9c21", "", ""},
		{"subagent_stop.json", EventSubagentStop, "", "agent-7f3a9c21", "", ""},
		{"notification.json", EventNotification, "", "", "", ""},
		{"stop.json", EventStop, "", "", "", ""},
		{"session_end.json", EventSessionEnd, "", "", "", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := ReadPayload(f)
			if err != nil {
				t.Fatalf("ReadPayload: %v", err)
			}
			if p.HookEventName != tc.event || p.ToolName != tc.tool || p.AgentID != tc.agent {
				t.Fatalf("got event %q tool %q agent %q", p.HookEventName, p.ToolName, p.AgentID)
			}
			if p.SessionID != "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c" || p.Cwd != "/home/dev/shop" || p.PermissionMode != "default" {
				t.Fatalf("common fields: %+v", p)
			}
			if tc.tool != "" {
				cmd, why := p.ToolCall()
				if cmd != tc.want || why != tc.rationale {
					t.Fatalf("ToolCall = %q, %q; want %q, %q", cmd, why, tc.want, tc.rationale)
				}
			}
		})
	}
}

func TestParsePayloadFields(t *testing.T) {
	p, err := ParsePayload([]byte(`{"hook_event_name":"SessionStart","session_id":"s","model":{"id":"claude-opus-4-1","display_name":"Opus"},"source":"resume","stop_hook_active":true,"duration_ms":"x","future_field":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Model != "Opus" || p.Source != "resume" || !p.StopHookActive || p.DurationMs != 0 {
		t.Fatalf("got %+v", p)
	}
	p, err = ParsePayload([]byte(`{"hook_event_name":"Notification","session_id":"s","message":"Claude is waiting for your input","title":"Claude Code","notification_type":"idle_prompt"}`))
	if err != nil || p.Message != "Claude is waiting for your input" || p.NotificationType != "idle_prompt" || p.Title != "Claude Code" {
		t.Fatalf("notification: %+v %v", p, err)
	}
}

func TestParsePayloadRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":    "  \n",
		"array":    `[{"hook_event_name":"Stop"}]`,
		"null":     "null",
		"no event": `{"session_id":"s"}`,
		"broken":   `{"hook_event_name":"Stop"`,
		"two":      `{"hook_event_name":"Stop"} {}`,
	} {
		if _, err := ParsePayload([]byte(in)); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestReadPayloadCapsInput(t *testing.T) {
	big := `{"hook_event_name":"PostToolUse","session_id":"s","tool_input":{"content":"` + strings.Repeat("a", MaxPayloadBytes) + `"}}`
	r := &countingReader{r: strings.NewReader(big + strings.Repeat(" ", 10<<20))}
	if _, err := ReadPayload(r); !errors.Is(err, ErrPayloadTooLarge) {
		t.Fatalf("err = %v, want ErrPayloadTooLarge", err)
	}
	if r.n > MaxPayloadBytes+1 {
		t.Fatalf("read %d bytes, want at most %d", r.n, MaxPayloadBytes+1)
	}
	just := `{"hook_event_name":"Stop","session_id":"s","last_assistant_message":"` + strings.Repeat("b", MaxPayloadBytes-200) + `"}`
	if _, err := ReadPayload(strings.NewReader(just)); err != nil {
		t.Fatalf("payload under the cap: %v", err)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestToolCall(t *testing.T) {
	for _, tc := range []struct{ in, tool, cmd, why string }{
		{`{"url":"https://example.com/api","prompt":"Summarise the API"}`, "WebFetch", "https://example.com/api", "Summarise the API"},
		{`{"notebook_path":"/n/a.ipynb","new_source":"x"}`, "NotebookEdit", "/n/a.ipynb", ""},
		{`{"query":"select 1","db":"main"}`, "mcp__db__query", `{"query":"select 1","db":"main"}`, ""},
		{`{}`, "mcp__x__ping", "mcp__x__ping", ""},
		{``, "Bash", "Bash", ""},
	} {
		p := &Payload{ToolName: tc.tool, ToolInput: []byte(tc.in)}
		if tc.in == "" {
			p.ToolInput = nil
		}
		cmd, why := p.ToolCall()
		if cmd != tc.cmd || why != tc.why {
			t.Errorf("%s %s: got %q, %q; want %q, %q", tc.tool, tc.in, cmd, why, tc.cmd, tc.why)
		}
	}
	long := &Payload{ToolName: "mcp__x__y", ToolInput: []byte(`{"q":"` + strings.Repeat("é", 3000) + `"}`)}
	if cmd, _ := long.ToolCall(); len(cmd) > maxCommandChars+len("…") || !strings.HasSuffix(cmd, "…") {
		t.Fatalf("long MCP input not clipped: %d bytes", len(cmd))
	}
}

func TestDecisionJSON(t *testing.T) {
	got := string(Decision{Permission: Deny, Reason: `no "operator"`}.JSON())
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no \"operator\""}}` + "\n"
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

// FuzzParsePayload: the reader never panics, and whatever it accepts has an
// event name and a ToolCall that does not panic.
func FuzzParsePayload(f *testing.F) {
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_input":[1],"model":7}`))
	f.Add([]byte(`{"hook_event_name":"x","tool_input":{"command":1,"file_path":"\u0000"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPayload(bytes.NewReader(data))
		if err != nil {
			return
		}
		if p.HookEventName == "" {
			t.Fatal("accepted a payload without hook_event_name")
		}
		cmd, _ := p.ToolCall()
		if len(cmd) > MaxPayloadBytes {
			t.Fatalf("command longer than the payload cap: %d", len(cmd))
		}
	})
}
