// Package gemini is clawpit's adapter for Gemini CLI hooks (issue 28;
// agents/NOTES.md): the payload reader (exact Gemini CLI event names), the
// mapping of its events onto the Claude Code adapter's Handler (BeforeTool
// as PreToolUse, AfterTool as PostToolUse, AfterAgent as Stop), its
// BeforeTool answer (deny or nothing, never "ask", which hangs a headless
// run) and the install into ~/.gemini/settings.json (timeouts in
// milliseconds). It never reads the hook's environment: Gemini CLI puts
// GEMINI_API_KEY there.
package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
)

// Hook event names (Gemini CLI hooks: hook_event_name), Gemini CLI 0.61.0.
const (
	EventSessionStart        = "SessionStart"
	EventSessionEnd          = "SessionEnd"
	EventBeforeAgent         = "BeforeAgent"
	EventAfterAgent          = "AfterAgent"
	EventBeforeModel         = "BeforeModel"
	EventAfterModel          = "AfterModel"
	EventBeforeToolSelection = "BeforeToolSelection"
	EventBeforeTool          = "BeforeTool"
	EventAfterTool           = "AfterTool"
	EventPreCompress         = "PreCompress"
	EventNotification        = "Notification"
)

// AllEvents are the events Gemini CLI 0.61.0 fires hooks for.
var AllEvents = []string{EventSessionStart, EventSessionEnd, EventBeforeAgent, EventAfterAgent, EventBeforeModel,
	EventAfterModel, EventBeforeToolSelection, EventBeforeTool, EventAfterTool, EventPreCompress, EventNotification}

// Events are the events clawpit installs, in the order written.
var Events = []string{EventBeforeTool, EventAfterTool, EventSessionStart, EventSessionEnd, EventAfterAgent}

// TaskKind is the kind of Gemini CLI task rows.
const TaskKind = "gemini-cli"

// DefaultGate is the BeforeTool matcher: the tools that change things
// (shell, file writes and edits, web fetches) and MCP tools.
const DefaultGate = "run_shell_command|write_file|replace|web_fetch|mcp_.*"

// HookTimeoutMs is the Gemini CLI `timeout` (milliseconds) of the
// non-gating hooks.
const HookTimeoutMs = 30000

// gateMargin: the gated hook's Gemini CLI timeout is the approval timeout
// plus this, so clawpit always answers first (a hook past its timeout lets
// the call run).
const gateMargin = 30 * time.Second

// claudeEvent is the Claude Code event whose mapping a Gemini CLI event
// shares ("" for none: the event is read and ignored).
var claudeEvent = map[string]string{EventBeforeTool: claude.EventPreToolUse, EventAfterTool: claude.EventPostToolUse,
	EventSessionStart: claude.EventSessionStart, EventSessionEnd: claude.EventSessionEnd, EventAfterAgent: claude.EventStop}

// ReadPayload reads one Gemini CLI hook payload within ctx: strict like
// Claude Code's (hookkit.CheckObject, claude.MaxPayloadBytes), the event
// exactly one of AllEvents. The payload comes back mapped for
// claude.Handler: HookEventName is the Claude Code event (empty for events
// clawpit does not record), and ToolUseID is empty since Gemini CLI gives
// no call id. Errors wrap core.ErrInvalid.
func ReadPayload(ctx context.Context, r io.Reader) (p *claude.Payload, event string, err error) {
	p, err = claude.ReadPayloadWithin(ctx, r)
	if err != nil {
		return nil, "", err
	}
	event = p.HookEventName
	if !slices.Contains(AllEvents, event) {
		return nil, "", core.Invalidf("hook_event_name %q is not a Gemini CLI hook event", hookkit.Clip(event, 64))
	}
	p.HookEventName = claudeEvent[event]
	p.ToolUseID = ""
	if p.ToolName == ToolInvokeAgent && (event == EventBeforeTool || event == EventAfterTool) {
		subagent(p, event)
	}
	return p, event, nil
}

// ToolInvokeAgent is Gemini CLI's sub-agent tool: its BeforeTool starts a
// sub-agent whose own calls follow in the parent's session, its AfterTool
// ends it.
const ToolInvokeAgent = "invoke_agent"

// RunPrefix starts the run id of a Gemini CLI sub-agent.
const RunPrefix = "gemini-agent-"

// subagent maps invoke_agent's BeforeTool onto SubagentStart and its
// AfterTool onto SubagentStop, with a run id made of the session and the
// call's input (Gemini CLI gives no call id; the same input in the same
// session is taken for the same sub-agent) and the agent_name as type.
func subagent(p *claude.Payload, event string) {
	sum := sha256.Sum256(append([]byte(p.SessionID+"\x00"), p.ToolInput...))
	p.AgentID = RunPrefix + hex.EncodeToString(sum[:6])
	var in struct {
		AgentName string `json:"agent_name"`
	}
	_ = json.Unmarshal(p.ToolInput, &in)
	p.AgentType = in.AgentName
	p.HookEventName = claude.EventSubagentStart
	if event == EventAfterTool {
		p.HookEventName = claude.EventSubagentStop
	}
}

// ReadGated reads the gated hook's payload (Gemini CLI hooks: BeforeTool):
// an error (answered with a deny) for anything else.
func ReadGated(ctx context.Context, r io.Reader) (*claude.Payload, error) {
	p, event, err := ReadPayload(ctx, r)
	if err != nil {
		return nil, err
	}
	if event != EventBeforeTool {
		return nil, core.Invalidf("the gated Gemini CLI hook decides only BeforeTool, got %q", hookkit.Clip(event, 64))
	}
	return p, nil
}

// Answer is what the gated hook prints for d (Gemini CLI hooks:
// BeforeTool): {"decision": "deny", "reason": R} and a newline for a deny,
// which Gemini CLI sends the model as "Tool execution blocked: R"; nothing
// for an allow ("allow" cannot skip Gemini CLI's own confirmation, and
// silence lets the call run). Never "ask".
func Answer(d claude.Decision) []byte {
	if d.Permission != claude.Deny {
		return nil
	}
	b, _ := json.Marshal(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{claude.Deny, d.Reason})
	return append(b, '\n')
}

// GateTimeoutMs is the gated hook's Gemini CLI timeout (milliseconds) for
// the approval timeout d: d + 30 s.
func GateTimeoutMs(d time.Duration) int { return int((d + gateMargin).Milliseconds()) }
