// Package claude is clawpit's adapter for Claude Code hooks (README "Use with Claude Code"): the
// hook payload reader, the mapping of each hook event onto the registry's use
// cases (sessions, runs, tasks, approvals, notifications), and the merge of
// clawpit's hooks into a Claude Code settings file. It calls core only; it
// knows no SQL and no screen.
package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
)

// MaxPayloadBytes caps what ReadPayload reads from stdin: 1 MiB. A hook
// payload carries one tool call's input (a Write's content can be large), but
// anything past this is refused rather than buffered, so hostile input never
// costs more than this much memory.
const MaxPayloadBytes = 1 << 20

// Hook event names (Claude Code hooks reference: hook_event_name).
const (
	EventSessionStart  = "SessionStart"
	EventSessionEnd    = "SessionEnd"
	EventPreToolUse    = "PreToolUse"
	EventPostToolUse   = "PostToolUse"
	EventSubagentStart = "SubagentStart"
	EventSubagentStop  = "SubagentStop"
	EventStop          = "Stop"
	EventNotification  = "Notification"
)

// Payload is the one JSON object Claude Code writes to a hook command's stdin
// (Claude Code hooks reference: common input fields plus each event's own).
// Fields a given event does not carry stay empty; unknown fields are ignored.
type Payload struct {
	// Common fields.
	SessionID      string // session_id
	TranscriptPath string // transcript_path
	Cwd            string // cwd
	PermissionMode string // permission_mode
	HookEventName  string // hook_event_name
	AgentID        string // agent_id: inside a sub-agent, and SubagentStart/Stop
	AgentType      string // agent_type
	TurnID         string // turn_id (Codex hooks: turn events)

	// Note is not read from the payload: an adapter's warning about the
	// call (Codex: an interactive shell), put before the rationale an
	// approval shows.
	Note string

	// PreToolUse / PostToolUse.
	ToolName     string          // tool_name
	ToolInput    json.RawMessage // tool_input (object; shape by tool)
	ToolUseID    string          // tool_use_id
	ToolResponse json.RawMessage // tool_response (PostToolUse)
	DurationMs   int64           // duration_ms (PostToolUse)

	// PermissionRequest: the agent's suggested permission updates
	// (permission_suggestions, an array of objects), kept as sent.
	PermissionSuggestions json.RawMessage

	// SubagentStop / Stop.
	AgentTranscriptPath  string // agent_transcript_path
	LastAssistantMessage string // last_assistant_message
	StopHookActive       bool   // stop_hook_active

	// SessionStart / SessionEnd.
	Source string // source: startup|resume|clear|compact
	Model  string // model (a string, or an object's id/display_name)
	Reason string // reason (SessionEnd)

	// Notification.
	Message          string // message
	Title            string // title
	NotificationType string // notification_type, e.g. permission_prompt
}

// ErrPayloadTooLarge is returned for a payload over MaxPayloadBytes.
var ErrPayloadTooLarge = fmt.Errorf("%w: hook payload is larger than %d bytes", core.ErrInvalid, MaxPayloadBytes)

// PayloadReadTimeout bounds how long a hook waits for its payload: Claude
// Code writes the whole object at once and closes stdin, so a stdin still open
// after 3 s is a broken or hostile writer. The gated hook then denies, well
// inside Claude Code's own hook timeout (the approval timeout + 30 s), which
// would otherwise let the tool call through.
const PayloadReadTimeout = 3 * time.Second

// ErrPayloadTimeout is returned when stdin is not closed within the read
// deadline.
var ErrPayloadTimeout = fmt.Errorf("%w: hook payload not complete within the read deadline (stdin still open)", core.ErrInvalid)

// ReadPayload reads one hook payload from r, reading at most MaxPayloadBytes+1
// bytes (ErrPayloadTooLarge past the cap), then parses it with ParsePayload.
// It waits as long as r does: a hook reads through ReadPayloadWithin. Errors
// wrap core.ErrInvalid, except a failed read.
func ReadPayload(r io.Reader) (*Payload, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read hook payload: %w", err)
	}
	if len(data) > MaxPayloadBytes {
		return nil, ErrPayloadTooLarge
	}
	return ParsePayload(data)
}

// ReadPayloadWithin is ReadPayload bounded by ctx (the hook gives it
// PayloadReadTimeout): when ctx ends first it returns ErrPayloadTimeout
// (wrapping ctx's cause too) and leaves the read behind; the hook process
// answers and exits without it, since a read on a blocking pipe cannot be
// interrupted.
func ReadPayloadWithin(ctx context.Context, r io.Reader) (*Payload, error) {
	type result struct {
		p   *Payload
		err error
	}
	ch := make(chan result, 1) // buffered: the abandoned reader never blocks on it
	go func() {
		p, err := ReadPayload(r)
		ch <- result{p, err}
	}()
	select {
	case res := <-ch:
		return res.p, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w (%w)", ErrPayloadTimeout, context.Cause(ctx))
	}
}

// ParsePayload parses one hook payload: exactly one JSON object, no member
// name twice in any object (Claude Code never writes one; two readers could
// take different values), with hook_event_name a non-empty JSON string. A
// member of an unexpected type other than hook_event_name is ignored rather
// than fatal, since a newer Claude Code may change what it sends; the event
// name is taken exactly (no trimming, no case folding). Errors wrap
// core.ErrInvalid.
func ParsePayload(data []byte) (*Payload, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, core.Invalidf("empty hook payload on stdin")
	}
	if err := hookkit.CheckObject(data); err != nil {
		return nil, core.Invalidf("hook payload: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, core.Invalidf("hook payload is not a JSON object: %v", err)
	}
	var event string
	if raw, ok := m["hook_event_name"]; !ok {
		return nil, core.Invalidf("hook payload has no hook_event_name")
	} else if err := json.Unmarshal(raw, &event); err != nil {
		return nil, core.Invalidf("hook payload's hook_event_name is %q, want a string", clip(string(raw), 40))
	}
	if event == "" {
		return nil, core.Invalidf("hook payload has an empty hook_event_name")
	}
	p := &Payload{
		SessionID: str(m, "session_id"), TranscriptPath: str(m, "transcript_path"), Cwd: str(m, "cwd"),
		PermissionMode: str(m, "permission_mode"), HookEventName: event,
		AgentID: str(m, "agent_id"), AgentType: str(m, "agent_type"), TurnID: str(m, "turn_id"),
		ToolName: str(m, "tool_name"), ToolUseID: str(m, "tool_use_id"),
		ToolInput: obj(m, "tool_input"), ToolResponse: m["tool_response"], PermissionSuggestions: m["permission_suggestions"],
		AgentTranscriptPath: str(m, "agent_transcript_path"), LastAssistantMessage: str(m, "last_assistant_message"),
		Source: str(m, "source"), Model: model(m["model"]), Reason: str(m, "reason"),
		Message: str(m, "message"), Title: str(m, "title"), NotificationType: str(m, "notification_type"),
	}
	_ = json.Unmarshal(m["duration_ms"], &p.DurationMs)
	_ = json.Unmarshal(m["stop_hook_active"], &p.StopHookActive)
	return p, nil
}

// KnownEvent reports whether name is exactly one of the hook events clawpit
// installs (Events).
func KnownEvent(name string) bool { return slices.Contains(Events, name) }

// CheckGated is the gated hook's rule (Claude Code hooks: PreToolUse): only
// a payload whose hook_event_name is exactly "PreToolUse" can be decided;
// any other event is an error wrapping core.ErrInvalid, which the gated hook
// answers with a deny. clawpit installs its gated hook for PreToolUse alone,
// so another event there is a misconfiguration or a forgery.
func CheckGated(p *Payload) error {
	if p.HookEventName != EventPreToolUse {
		return core.Invalidf("the gated hook decides only PreToolUse, got hook_event_name %q", clip(p.HookEventName, 64))
	}
	return nil
}

// ReadGated reads a gated hook's payload within ctx: the payload when it is
// a readable PreToolUse, else the deny to print and the reason. It never
// returns an allow.
func ReadGated(ctx context.Context, r io.Reader) (*Payload, *Decision, error) {
	p, err := ReadPayloadWithin(ctx, r)
	if err == nil {
		err = CheckGated(p)
	}
	if err != nil {
		d := DenyError(err)
		return nil, &d, err
	}
	return p, nil, nil
}

// str returns m[key] when it is a JSON string, else "".
func str(m map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := m[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// obj returns m[key] when it is a JSON object, else nil.
func obj(m map[string]json.RawMessage, key string) json.RawMessage {
	raw := bytes.TrimSpace(m[key])
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	return raw
}

// model reads SessionStart's model: a string, or an object naming it.
func model(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	}
	if json.Unmarshal(raw, &o) == nil {
		if o.DisplayName != "" {
			return o.DisplayName
		}
		return o.ID
	}
	return ""
}

// maxCommandChars bounds the command text taken from a tool input that has no
// single obvious field (MCP tools): its compact JSON, clipped.
const maxCommandChars = 2000

// ToolCall is what an approval shows of a tool call: the command (Bash's
// command, a file tool's path, WebFetch's URL, else the input's compact JSON)
// and the rationale (tool_input.description, else prompt).
func (p *Payload) ToolCall() (command, rationale string) {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(p.ToolInput, &in)
	for _, k := range []string{"command", "file_path", "notebook_path", "url", "path", "pattern"} {
		if v := strings.TrimSpace(str(in, k)); v != "" {
			command = v
			break
		}
	}
	if command == "" && len(p.ToolInput) > 0 {
		var b bytes.Buffer
		if json.Compact(&b, p.ToolInput) == nil && b.String() != "{}" {
			// Redact before clipping: a token cut by the clip is no longer
			// recognisable, and its first part would survive.
			command = clip(redact.Default().String(b.String()), maxCommandChars)
		}
	}
	if command == "" {
		command = p.ToolName // a tool called with no input still needs a command to show
	}
	rationale = str(in, "description")
	if rationale == "" {
		rationale = str(in, "prompt")
	}
	if p.Note != "" {
		rationale = strings.TrimSpace(p.Note + " " + rationale)
	}
	return command, rationale
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
