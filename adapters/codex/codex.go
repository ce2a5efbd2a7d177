// Package codex is clawpit's adapter for Codex CLI hooks (issue 28;
// agents/NOTES.md): the payload reader (Claude Code's format with Codex's
// own events), the answers in Codex's contract (PreToolUse's deny or
// silence; PermissionRequest's allow or deny under --gate-on ask, paired
// with its call through the rollout), the interactive-shell rule, and the
// install of clawpit's hooks into $CODEX_HOME/hooks.json with the trust
// records Codex keeps in $CODEX_HOME/config.toml. The registry
// mapping (sessions, runs, approvals) is the Claude Code adapter's Handler,
// shared as it is since the payloads share their fields.
package codex

import (
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
)

// Hook event names (Codex hooks: hook_event_name), as Codex 0.169.0 names
// them in hooks.json and in its payloads.
const (
	EventSessionStart      = "SessionStart"
	EventUserPromptSubmit  = "UserPromptSubmit"
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
	EventPostToolUse       = "PostToolUse"
	EventStop              = "Stop"
	EventSubagentStart     = "SubagentStart"
	EventSubagentStop      = "SubagentStop"
	EventSessionEnd        = "SessionEnd"
	EventPreCompact        = "PreCompact"
	EventPostCompact       = "PostCompact"
)

// AllEvents are the events Codex 0.169.0 fires hooks for.
var AllEvents = []string{EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPermissionRequest,
	EventPostToolUse, EventStop, EventSubagentStart, EventSubagentStop, EventSessionEnd, EventPreCompact, EventPostCompact}

// TaskKind is the kind of the sub-agent task rows of Codex runs.
const TaskKind = "codex"

// ReadPayload reads one Codex hook payload within ctx (the hook gives it
// claude.PayloadReadTimeout): exactly one JSON object of at most
// claude.MaxPayloadBytes, no member named twice (hookkit.CheckObject),
// hook_event_name exactly one of AllEvents. Errors wrap core.ErrInvalid
// (claude.ErrPayloadTimeout when stdin stays open).
func ReadPayload(ctx context.Context, r io.Reader) (*claude.Payload, error) {
	p, err := claude.ReadPayloadWithin(ctx, r)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(AllEvents, p.HookEventName) {
		return nil, core.Invalidf("hook_event_name %q is not a Codex hook event", hookkit.Clip(p.HookEventName, 64))
	}
	return p, nil
}

// ReadGated reads the gated hook's payload (Codex hooks: PreToolUse): the
// payload when it is a readable PreToolUse, else an error (wrapping
// core.ErrInvalid) the gated hook answers with a deny.
func ReadGated(ctx context.Context, r io.Reader) (*claude.Payload, error) {
	p, err := ReadPayload(ctx, r)
	if err != nil {
		return nil, err
	}
	if p.HookEventName != EventPreToolUse {
		return nil, core.Invalidf("the gated Codex hook decides only PreToolUse, got %q", hookkit.Clip(p.HookEventName, 64))
	}
	return p, nil
}

// ReadAsk reads the gated hook's payload under --gate-on ask: a
// PermissionRequest (what Codex would ask its user about) or a PreToolUse
// (decided only by the interactive-shell rule, InteractiveShell); else an
// error (wrapping core.ErrInvalid) the hook answers with a deny.
func ReadAsk(ctx context.Context, r io.Reader) (*claude.Payload, error) {
	p, err := ReadPayload(ctx, r)
	if err != nil {
		return nil, err
	}
	if p.HookEventName != EventPreToolUse && p.HookEventName != EventPermissionRequest {
		return nil, core.Invalidf("the gated Codex hook under --gate-on ask decides only PermissionRequest and PreToolUse, got %q",
			hookkit.Clip(p.HookEventName, 64))
	}
	return p, nil
}

// AnswerPermission is what the PermissionRequest hook prints for d (Codex
// hooks: PermissionRequest; agents/NOTES.md): {"hookSpecificOutput":
// {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
// or, for anything but an allow, {"behavior": "deny", "message": R}, and a
// newline. Codex 0.169.0 runs the call on allow and gives the model
// `exec_command failed: … Rejected("R")` on deny; silence would hand the
// request to Codex's own reviewer (--approve-for-me), so there is always an
// answer. Codex offers no permission updates, so none are sent.
func AnswerPermission(d claude.Decision) []byte {
	type decision struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message,omitempty"`
	}
	type specific struct {
		HookEventName string   `json:"hookEventName"`
		Decision      decision `json:"decision"`
	}
	dec := decision{Behavior: claude.Allow}
	if d.Permission != claude.Allow {
		dec = decision{Behavior: claude.Deny, Message: d.Reason}
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{EventPermissionRequest, dec}})
	return append(b, '\n')
}

// Answer is what the gated hook prints for d (Codex hooks: PreToolUse):
// for a deny {"hookSpecificOutput": {"hookEventName": "PreToolUse",
// "permissionDecision": "deny", "permissionDecisionReason": R}} and a
// newline, which Codex shows the model as "Command blocked by PreToolUse
// hook: R"; for an allow nothing at all, since Codex 0.169.0 treats
// permissionDecision "allow" as a failed hook, and silence lets the call
// run. So this never prints an allow.
func Answer(d claude.Decision) []byte {
	if d.Permission != claude.Deny {
		return nil
	}
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{EventPreToolUse, claude.Deny, d.Reason}})
	return append(b, '\n')
}
