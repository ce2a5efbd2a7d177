package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/termtext"
)

// Defaults of the hook command.
const (
	// DefaultApprovalTimeout is how long a gated tool call waits for an
	// operator before it is denied: 10 minutes.
	DefaultApprovalTimeout = 10 * time.Minute
	// DefaultRunInactivity is the watchdog budget of a sub-agent run: 10
	// minutes, since a model may think for minutes between tool calls.
	DefaultRunInactivity = 10 * time.Minute
	// TaskKind is the kind of the task rows the adapter creates.
	TaskKind = "claude-code"
)

// Permission decisions of PreToolUse (Claude Code hooks reference:
// hookSpecificOutput.permissionDecision).
const (
	Allow = "allow"
	Deny  = "deny"
)

// Decision is a PreToolUse answer.
type Decision struct {
	Permission string // Allow or Deny; "" passes (Pass)
	Reason     string // permissionDecisionReason: shown to Claude on deny
	// UpdatedPermissions, on an allow, is the permission suggestion the
	// operator approved with (one object of PermissionRequest's
	// permission_suggestions, as sent): PermissionRequestJSON answers it as
	// decision.updatedPermissions, which Claude Code applies.
	UpdatedPermissions json.RawMessage
}

// Pass reports whether d is no decision: the hook prints nothing and the
// agent's own permission rules decide (a tool outside Config.Gate, under
// budget).
func (d Decision) Pass() bool { return d.Permission == "" }

// JSON is the decision as Claude Code reads it from the hook's stdout:
// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":…,
// "permissionDecisionReason":…}} and a newline; nothing for Pass (Claude
// Code refuses an empty permissionDecision, and silence lets its own rules
// decide).
func (d Decision) JSON() []byte {
	if d.Pass() {
		return nil
	}
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{EventPreToolUse, d.Permission, d.Reason}})
	return append(b, '\n')
}

// PermissionRequestJSON is the decision as Claude Code reads a
// PermissionRequest hook's answer (Claude Code hooks: PermissionRequest):
// {"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":
// {"behavior":"allow"|"deny","message":…}}} and a newline, an allow with
// UpdatedPermissions adding "updatedPermissions": [it]. Anything but an
// allow is a deny.
func (d Decision) PermissionRequestJSON() []byte {
	type decision struct {
		Behavior           string            `json:"behavior"`
		Message            string            `json:"message,omitempty"`
		UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
	}
	type specific struct {
		HookEventName string   `json:"hookEventName"`
		Decision      decision `json:"decision"`
	}
	dec := decision{Behavior: Deny, Message: d.Reason}
	if d.Permission == Allow {
		dec.Behavior = Allow
		if len(d.UpdatedPermissions) > 0 && json.Valid(d.UpdatedPermissions) {
			dec.UpdatedPermissions = []json.RawMessage{d.UpdatedPermissions}
		}
	}
	b, err := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{EventPermissionRequest, dec}})
	if err != nil { // unreachable (valid JSON checked): fail closed
		return Decision{Permission: Deny, Reason: "clawpit could not encode its answer: " + err.Error()}.PermissionRequestJSON()
	}
	return append(b, '\n')
}

// DenyError is the fail-closed answer when a gated tool call cannot reach a
// decision (README "Use with Claude Code": deny on any internal error, never allow).
func DenyError(err error) Decision {
	return Decision{Permission: Deny, Reason: "clawpit could not record or decide this tool call, so it is denied: " + err.Error()}
}

// Config tunes a Handler.
type Config struct {
	ApprovalTimeout time.Duration // default DefaultApprovalTimeout
	RunInactivity   time.Duration // default DefaultRunInactivity
	// TaskKind is the kind of the sub-agent task rows (default TaskKind;
	// the Codex and Gemini adapters give theirs).
	TaskKind string
	// NestRunPrefix, when set, binds a PreToolUse without agent_id to the
	// newest running run of its session whose id starts with it (Gemini
	// CLI: a sub-agent's calls carry no agent id, so they are nested under
	// the open invoke_agent call's run).
	NestRunPrefix string
	// Agent is recorded on the sessions this opens (default AgentName).
	Agent string
	// Gate, when set, is the gate regex applied here rather than by the
	// agent's matcher (Claude Code's PreToolUse hook is then installed for
	// every tool): a tool call whose tool_name it does not match passes
	// (Decision.Pass: no answer, so the agent's own permission rules
	// decide) unless a budget with the action "gate" is crossed.
	Gate *regexp.Regexp
}

// transcript is the format of the agent's transcript_path, by Agent:
// Claude Code's transcript, Codex's rollout ("codex"), Gemini CLI's chat
// record ("gemini"); ok false for another agent, whose record is not read.
func (c Config) transcript() (core.TranscriptFormat, bool) {
	switch c.agent() {
	case AgentName:
		return core.TranscriptClaude, true
	case string(core.TranscriptCodex):
		return core.TranscriptCodex, true
	case string(core.TranscriptGemini):
		return core.TranscriptGemini, true
	}
	return "", false
}

// CompileGate compiles the gate regex as Claude Code reads a hook matcher
// (Claude Code hooks: matcher): one made only of letters, digits, '_' and
// '|' ("Bash|Write") is a list of exact tool names, so it is anchored
// whole, ^(?:Bash|Write)$, and gates neither "BashOutput" nor "TodoWrite"
// nor "mcp__x__Bash"; any other is an unanchored regular expression
// ("mcp__.*" matches anywhere in the name). Errors are regexp's.
func CompileGate(gate string) (*regexp.Regexp, error) {
	if gate != "" && strings.Trim(gate, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_|") == "" {
		gate = "^(?:" + gate + ")$"
	}
	return regexp.Compile(gate)
}

// Outside reports whether tool is outside c.Gate (always false without one).
func (c Config) Outside(tool string) bool { return c.Gate != nil && !c.Gate.MatchString(tool) }

// AgentName is Claude Code's name in the registry's sessions.agent.
const AgentName = "claude"

func (c Config) agent() string {
	if c.Agent == "" {
		return AgentName
	}
	return c.Agent
}

// Handler maps hook events onto the registry (README "Use with Claude Code"). Its actor is
// core.ActorRuntime; operators' decisions keep their own identity.
type Handler struct {
	Reg *core.Registry
	Cfg Config
}

// Handle maps one event. For PreToolUse it returns the decision to print,
// never nil: Deny with the reason when anything fails (fail closed). For
// every other event the decision is nil and the error, if any, is only to be
// reported: such events never block Claude Code. Unknown events are ignored.
func (h *Handler) Handle(ctx context.Context, p *Payload) (*Decision, error) {
	if p.HookEventName != EventPreToolUse && !KnownEvent(p.HookEventName) {
		return nil, nil
	}
	if p.SessionID == "" && p.HookEventName != EventPreToolUse {
		return nil, core.Invalidf("%s payload has no session_id", p.HookEventName)
	}
	switch p.HookEventName {
	case EventPreToolUse:
		d, err := h.preToolUse(ctx, p)
		if err != nil {
			d = DenyError(err)
			if h.Cfg.Outside(p.ToolName) && IsBudgetUnread(err) {
				// A budget is a limit on spending, not a security
				// gate: a tool the gate lets through is not held up
				// by a registry that cannot say what was spent. Once
				// the call is held (over budget) it is denied on
				// failure as a gated call is: a failure while it
				// waits must not let it run undecided.
				d = Decision{}
			}
		}
		return &d, err
	case EventSessionStart:
		// `claude --resume` continues a conversation SessionEnd closed.
		reopen := p.Source == "resume"
		_, _, err := h.Reg.OpenAgentSession(ctx, p.SessionID, SessionLabel(p.Cwd, p.Model), h.Cfg.agent(), reopen, core.ActorRuntime)
		return nil, err
	case EventSessionEnd:
		// session_id is the runtime's: matched whole, never as a prefix.
		_, _, _, err := h.Reg.WholeIDs().CloseSession(ctx, p.SessionID, core.ActorRuntime)
		if errors.Is(err, core.ErrNotFound) {
			err = nil // never seen: nothing to close
		}
		if err != nil {
			return nil, err
		}
		// The last turn's tokens, counted after the close: a hook stopped
		// while reading a long transcript still closed the session.
		return nil, h.usage(ctx, p.TranscriptPath, p.SessionID, "")
	case EventPostToolUse:
		if err := h.nest(ctx, p); err != nil {
			return nil, err
		}
		_, err := h.Reg.RecordActivity(ctx, h.activity(p, "PostToolUse "+p.ToolName), core.ActorRuntime)
		return nil, err
	case EventStop:
		if _, err := h.Reg.RecordActivity(ctx, h.activity(p, "Stop"), core.ActorRuntime); err != nil {
			return nil, err
		}
		return nil, h.usage(ctx, p.TranscriptPath, p.SessionID, "")
	case EventSubagentStart:
		return nil, h.subagentStart(ctx, p)
	case EventSubagentStop:
		return nil, h.subagentStop(ctx, p)
	case EventNotification:
		return nil, h.notification(ctx, p)
	}
	return nil, nil
}

// SessionLabel is a session's label: the cwd's last element and the model,
// "clawpit (claude-sonnet-4-5)".
func SessionLabel(cwd, model string) string {
	label := ""
	if cwd != "" {
		label = filepath.Base(cwd)
	}
	switch {
	case model != "" && label != "":
		label += " (" + model + ")"
	case model != "":
		label = model
	}
	return label
}

func (h *Handler) activity(p *Payload, why string) core.Activity {
	return core.Activity{Session: p.SessionID, Label: SessionLabel(p.Cwd, ""), RunID: p.AgentID, Why: why, Agent: h.Cfg.agent()}
}

func (h *Handler) approvalTimeout() time.Duration {
	if h.Cfg.ApprovalTimeout > 0 {
		return h.Cfg.ApprovalTimeout
	}
	return DefaultApprovalTimeout
}

// preToolUse records the tool call as an approval bound to the sub-agent's run
// (docs/contract.md "The inactivity watchdog pauses for approvals": its watchdog pauses), waits for the operator and answers. A grant
// answers at once; a repeated tool call (same tool_use_id, session, tool and
// input) is answered from its approval; past
// the approval timeout the approval expires and the answer is deny.
func (h *Handler) preToolUse(ctx context.Context, p *Payload) (Decision, error) {
	if p.SessionID == "" {
		return Decision{}, core.Invalidf("PreToolUse payload has no session_id")
	}
	if p.ToolName == "" {
		return Decision{}, core.Invalidf("PreToolUse payload has no tool_name")
	}
	if err := h.nest(ctx, p); err != nil {
		return Decision{}, &BudgetUnreadError{Err: err}
	}
	if err := h.countBeforeCall(ctx, p); err != nil {
		return Decision{}, &BudgetUnreadError{Err: err}
	}
	over, err := h.overBudget(ctx, p)
	if err != nil {
		return Decision{}, &BudgetUnreadError{Err: err}
	}
	if over == "" && h.Cfg.Outside(p.ToolName) {
		return Decision{}, nil // PostToolUse records its activity
	}
	if _, err := h.Reg.RecordActivity(ctx, h.activity(p, "PreToolUse "+p.ToolName), core.ActorRuntime); err != nil {
		return Decision{}, err
	}
	command, rationale := p.ToolCall()
	// The recorded answer of a tool_use_id answers only the same session,
	// tool and input (canonical JSON's SHA-256): another call reusing the
	// id is asked anew.
	inputHash, err := core.CanonicalInputHash(p.ToolInput)
	if err != nil {
		return Decision{}, err
	}
	// This process waits and answers: a sweep on this host withdraws the
	// approval if it is killed before it can do so itself.
	waiter, _ := supervisor.ThisProcess()
	a, err := h.Reg.RequestApproval(ctx, core.NewApproval{
		Session: p.SessionID, RunID: p.AgentID, Tool: p.ToolName, Command: command,
		Rationale: rationale, Cwd: p.Cwd, ExpiresIn: h.approvalTimeout(), ToolUseID: p.ToolUseID,
		InputHash: inputHash, Waiter: waiter, Suggestions: p.PermissionSuggestions, OverBudget: over,
	}, core.ActorRuntime)
	if err != nil {
		return Decision{}, err
	}
	if a.Status == core.ApprovalPending {
		got, err := h.wait(ctx, a)
		if err != nil {
			if ctx.Err() != nil {
				// Nobody will run this tool call: take it off the
				// operator's list rather than leave it pending until
				// it expires. The answer says what stopped the hook
				// ("stopped by SIGTERM"), as the withdrawal does, not
				// "context canceled".
				err = errors.Join(stoppedError(ctx, err), h.withdraw(ctx, a.ID))
			}
			return Decision{}, err
		}
		a = got
	}
	return h.answer(a), nil
}

// BudgetUnreadError is a PreToolUse failure from before the call was known
// to be over budget or not (binding it to its run, counting the
// transcript, reading the budgets): for a tool outside Config.Gate the call
// then passes (Handler.Handle). Any later failure, once an over-budget call
// is held, is not one: it is denied as a gated call's is.
type BudgetUnreadError struct{ Err error }

func (e *BudgetUnreadError) Error() string { return e.Err.Error() }
func (e *BudgetUnreadError) Unwrap() error { return e.Err }

// IsBudgetUnread reports whether err (or an error it wraps) is a
// *BudgetUnreadError.
func IsBudgetUnread(err error) bool {
	var b *BudgetUnreadError
	return errors.As(err, &b)
}

// countBeforeCall counts the transcript's new tokens before a tool call is
// decided, when a budget is in force: a turn that loops through tool calls
// reaches no Stop, and a budget counted only there would never hold it. The
// session's transcript counts for the session; Codex gives a sub-agent's
// call its own rollout, which counts for its run too. A Claude Code
// sub-agent's call names only the parent's transcript and its agent_id: its
// own transcript (SubagentTranscriptPath) is counted for its run and
// session too, from the offset the same file's last count reached, so that
// SubagentStop later reads on from there. Without budgets nothing is read
// (the call pays for no read it does not need).
func (h *Handler) countBeforeCall(ctx context.Context, p *Payload) error {
	if p.TranscriptPath == "" {
		return nil
	}
	b, err := h.Reg.Budgets(ctx)
	if err != nil || b.Spec.IsZero() {
		return err
	}
	f, _ := h.Cfg.transcript()
	if f == core.TranscriptCodex {
		return h.usage(ctx, p.TranscriptPath, p.SessionID, p.AgentID)
	}
	if err := h.usage(ctx, p.TranscriptPath, p.SessionID, ""); err != nil {
		return err
	}
	if f != core.TranscriptClaude || p.AgentID == "" {
		return nil
	}
	sub := p.AgentTranscriptPath
	if sub == "" {
		sub = SubagentTranscriptPath(p.TranscriptPath, p.AgentID)
	}
	if sub == "" {
		return nil
	}
	if _, err := os.Stat(sub); err != nil {
		// Not written (yet), or laid out otherwise by another Claude
		// Code release: SubagentStop, which names the file, counts it.
		return nil
	}
	return h.usage(ctx, sub, p.SessionID, p.AgentID)
}

// SubagentTranscriptPath is where Claude Code writes the transcript of the
// sub-agent agentID of the session whose transcript is transcriptPath:
// "DIR/SESSION.jsonl" gives "DIR/SESSION/subagents/agent-AGENTID.jsonl"
// (observed in Claude Code 2.1.328, agents/NOTES.md: a sub-agent's
// PreToolUse carries agent_id and the parent's transcript_path, and its
// SubagentStop names that file as agent_transcript_path). "" when
// transcriptPath does not end in ".jsonl" or agentID is not a plain file
// name part (empty, ".", "..", or holding a path separator).
func SubagentTranscriptPath(transcriptPath, agentID string) string {
	if agentID == "" || agentID == "." || agentID == ".." || strings.ContainsAny(agentID, `/\`) {
		return ""
	}
	base, ok := strings.CutSuffix(transcriptPath, ".jsonl")
	if !ok || base == "" {
		return ""
	}
	return filepath.Join(base, "subagents", "agent-"+agentID+".jsonl")
}

// overBudget is why p's tool call must wait though the gate would not ask
// (BudgetBreach.Reason of the first budget its session, run or the hour
// crossed), "" when no budget with the action "gate" is crossed.
func (h *Handler) overBudget(ctx context.Context, p *Payload) (string, error) {
	breaches, b, err := h.Reg.BudgetBreaches(ctx, p.SessionID, p.AgentID)
	if err != nil {
		return "", fmt.Errorf("read budgets: %w", err)
	}
	if b.Spec.Action != core.BudgetGate || len(breaches) == 0 {
		return "", nil
	}
	return breaches[0].Reason(), nil
}

// nest binds p, when it names no agent, to the run Cfg.NestRunPrefix
// finds (its approval, its progress), if any.
func (h *Handler) nest(ctx context.Context, p *Payload) error {
	if p.AgentID != "" || h.Cfg.NestRunPrefix == "" {
		return nil
	}
	id, err := h.nestedRun(ctx, p.SessionID)
	p.AgentID = id
	return err
}

// nestedRun is the newest running run of session whose id starts with
// Cfg.NestRunPrefix, "" when none.
func (h *Handler) nestedRun(ctx context.Context, session string) (string, error) {
	runs, err := h.Reg.ListRuns(ctx, core.RunFilter{RunningOnly: true, Session: session, Limit: 50})
	if err != nil {
		return "", err
	}
	for _, r := range runs { // newest first
		if strings.HasPrefix(r.RunID, h.Cfg.NestRunPrefix) {
			return r.RunID, nil
		}
	}
	return "", nil
}

// stoppedError is err (ctx's own error, returned by a wait that ctx ended)
// told in words: "stopped before an operator decided (stopped by SIGTERM)",
// with context.Cause when it says more than "context canceled". It still
// matches err with errors.Is.
func stoppedError(ctx context.Context, err error) error {
	why := "stopped before an operator decided"
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) && !errors.Is(c, context.DeadlineExceeded) {
		why += " (" + c.Error() + ")"
	} else if errors.Is(err, context.DeadlineExceeded) {
		why += " (its deadline passed)"
	}
	return &causeError{msg: why, err: err}
}

// causeError is an error with its own message that unwraps to err.
type causeError struct {
	msg string
	err error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.err }

// withdrawTimeout bounds withdrawing an approval after the hook's context
// ended (a stopped hook must exit promptly). A registry whose write lock is
// held stretches it to SQLite's busy timeout (5 s): the busy wait does not
// see the context.
const withdrawTimeout = 2 * time.Second

// withdraw cancels the pending approval id after ctx ended before a
// decision (the hook was stopped: context.Cause says by what). An approval
// decided meanwhile is left as it is.
func (h *Handler) withdraw(ctx context.Context, id string) error {
	why := "the hook waiting for it stopped before a decision"
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) && !errors.Is(c, context.DeadlineExceeded) {
		why += " (" + c.Error() + ")"
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if _, _, err := h.Reg.WithdrawApproval(wctx, id, why, core.ActorRuntime); err != nil {
		return fmt.Errorf("withdraw approval %s: %w", id, err)
	}
	return nil
}

// wait blocks until a is decided or its expires_at passes; at the expiry
// the registry's waiter expires it itself (docs/contract.md "Approvals expire"; core.Registry.WaitApproval)
// unless a decision won the race.
func (h *Handler) wait(ctx context.Context, a *core.Approval) (*core.Approval, error) {
	return h.Reg.WaitApproval(ctx, a.ID, 0)
}

// answer turns a decided approval into the hook's decision.
func (h *Handler) answer(a *core.Approval) Decision {
	switch a.Status {
	case core.ApprovalApproved:
		if s := a.ChosenSuggestion(); s != nil {
			return Decision{Permission: Allow, Reason: fmt.Sprintf("approved in clawpit by %s (once, with suggestion %d)", a.DecidedBy, a.Suggestion),
				UpdatedPermissions: s}
		}
		return Decision{Permission: Allow, Reason: fmt.Sprintf("approved in clawpit by %s (%s)", a.DecidedBy, a.Scope)}
	case core.ApprovalDenied:
		return Decision{Permission: Deny, Reason: fmt.Sprintf("denied in clawpit by %s: %s", a.DecidedBy, a.Reason)}
	case core.ApprovalExpired:
		within := h.approvalTimeout()
		if a.ExpiresAt > a.RequestedAt {
			within = a.ExpiresAt.Sub(a.RequestedAt) // the timeout in force when it was asked
		}
		return Decision{Permission: Deny, Reason: "no operator decision within " + FormatDuration(within)}
	case core.ApprovalCancelled:
		return Decision{Permission: Deny, Reason: "cancelled in clawpit: " + a.Reason}
	}
	return Decision{Permission: Deny, Reason: "approval " + a.ID + " is still " + string(a.Status)}
}

// FormatDuration prints d the way people write it: "10m", "90s", "1h30m",
// "7d" (termtext.Duration).
func FormatDuration(d time.Duration) string { return termtext.Duration(d) }

// subagentStart registers the sub-agent as a run (agent_id as run id,
// agent_type as label) with its mirrored subagent task, running. A repeated
// SubagentStart for a known run changes nothing.
func (h *Handler) subagentStart(ctx context.Context, p *Payload) error {
	if p.AgentID == "" {
		return core.Invalidf("SubagentStart payload has no agent_id")
	}
	if _, err := h.Reg.RecordActivity(ctx, h.activity(p, "SubagentStart "+p.AgentType), core.ActorRuntime); err != nil {
		return err
	}
	budget := h.Cfg.RunInactivity
	if budget <= 0 {
		budget = DefaultRunInactivity
	}
	label := p.AgentType
	if label == "" {
		label = "subagent"
	}
	// agent_id is the runtime's: matched whole, so agent-7f3a is not taken
	// for a known agent-7f3a9c21.
	reg := h.Reg.WholeIDs()
	if _, _, err := reg.GetRun(ctx, p.AgentID); err == nil {
		return nil // seen before
	} else if !errors.Is(err, core.ErrNotFound) {
		return err
	}
	if _, err := reg.RegisterRun(ctx, core.NewRun{RunID: p.AgentID, ChildSession: p.SessionID,
		RequesterSession: p.SessionID, Label: label, InactivityBudget: budget}, core.ActorRuntime); err != nil {
		return err
	}
	kind := h.Cfg.TaskKind
	if kind == "" {
		kind = TaskKind
	}
	t, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: p.AgentID,
		OwnerSession: p.SessionID, Kind: kind, Label: label}, core.ActorRuntime)
	if err != nil {
		return err
	}
	_, _, err = reg.StartTask(ctx, t.ID, "", core.ActorRuntime)
	return err
}

// subagentStop completes the sub-agent's run with outcome ok (docs/contract.md "Late completion wins": its
// mirrored task becomes succeeded).
func (h *Handler) subagentStop(ctx context.Context, p *Payload) error {
	if p.AgentID == "" {
		return core.Invalidf("SubagentStop payload has no agent_id")
	}
	if err := h.usage(ctx, p.AgentTranscriptPath, p.SessionID, p.AgentID); err != nil {
		return err
	}
	// Matched whole: the stop of agent-7f3a never completes agent-7f3a9c21.
	_, _, _, err := h.Reg.WholeIDs().CompleteRun(ctx, p.AgentID, core.OutcomeOK, "", core.ActorRuntime)
	if errors.Is(err, core.ErrNotFound) {
		return fmt.Errorf("sub-agent %s stopped but its start was never recorded: %w", p.AgentID, err)
	}
	return err
}

// usage counts the tokens of the agent's transcript at path (a
// sub-agent's own when runID is set) since the last count (issue 27), in
// the agent's format (Config.transcript): Claude Code's transcript, Codex's
// rollout or Gemini CLI's chat record. A transcript that cannot be read is noted in
// the registry (usage_sources.note), never an error; the registry's own
// errors are returned (busy: the event is spooled and counted at the fold).
func (h *Handler) usage(ctx context.Context, path, session, runID string) error {
	format, ok := h.Cfg.transcript()
	if path == "" || !ok {
		return nil // another agent's transcript, in a format not read
	}
	_, err := h.Reg.RecordTranscriptUsage(ctx, core.TranscriptRef{Path: path, Session: session, RunID: runID, Format: format})
	return err
}

// notification raises a runtime notice in Alerts; a permission_prompt while
// an approval of the session is pending names that approval as its subject.
func (h *Handler) notification(ctx context.Context, p *Payload) error {
	text := strings.TrimSpace(p.Message)
	if t := strings.TrimSpace(p.Title); t != "" && text != "" && !strings.HasPrefix(text, t) {
		text = t + ": " + text
	} else if text == "" {
		text = t
	}
	if text == "" {
		text = "Claude Code notification (" + p.NotificationType + ")"
	}
	subject := ""
	if p.NotificationType == "permission_prompt" {
		pend, err := h.Reg.ListApprovals(ctx, core.ApprovalFilter{Session: p.SessionID,
			Statuses: []core.ApprovalStatus{core.ApprovalPending}, Limit: 1})
		if err != nil {
			return err
		}
		if len(pend) > 0 {
			subject = pend[0].ID
			text += " (clawpit approval " + pend[0].ID + " is pending)"
		}
	}
	_, _, err := h.Reg.RaiseNotification(ctx, core.NewNotification{Session: p.SessionID,
		Kind: core.NotifyRuntimeNotice, SubjectID: subject, Text: text})
	return err
}
