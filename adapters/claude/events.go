package claude

// EventDoc documents one hook event clawpit handles: its hook_event_name,
// what clawpit records for it, and the payload fields it reads (beyond
// hook_event_name). `clawpit hook --help` prints these.
type EventDoc struct {
	Name    string   // hook_event_name
	Records string   // what clawpit does with it, under 60 characters
	Fields  []string // payload fields read; "session_id" is required for every event
}

// EventDocs documents the hook events clawpit installs (Events), in the
// order a session meets them (Claude Code hooks reference); an event
// outside them is an unknown event (KnownEvent).
func EventDocs() []EventDoc {
	return []EventDoc{
		{EventSessionStart, "opens the session; source \"resume\" reopens a closed one",
			[]string{"session_id", "cwd", "model", "source"}},
		{EventPreToolUse, "a gated tool waits for an operator: allow or deny on stdout",
			[]string{"session_id", "tool_name", "tool_input", "tool_use_id", "agent_id", "cwd"}},
		{EventPostToolUse, "records activity of the session and the sub-agent's run",
			[]string{"session_id", "tool_name", "agent_id", "cwd"}},
		{EventSubagentStart, "registers the sub-agent's run and its task",
			[]string{"session_id", "agent_id", "agent_type"}},
		{EventSubagentStop, "completes the sub-agent's run; counts its tokens",
			[]string{"session_id", "agent_id", "agent_transcript_path"}},
		{EventNotification, "raises an alert with the message",
			[]string{"session_id", "message", "title", "notification_type"}},
		{EventStop, "records activity; counts the turn's tokens",
			[]string{"session_id", "agent_id", "cwd", "transcript_path"}},
		{EventSessionEnd, "closes: approvals cancelled, jobs reaped; counts tokens",
			[]string{"session_id", "transcript_path"}},
	}
}

// SamplePayload is a PreToolUse payload as Claude Code writes it to the
// hook's stdin (Claude Code hooks reference: common fields, then the
// event's own).
const SamplePayload = `{
  "session_id": "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c",
  "transcript_path": "/home/dev/.claude/projects/-home-dev-shop/5f1c9a2e.jsonl",
  "cwd": "/home/dev/shop",
  "permission_mode": "default",
  "hook_event_name": "PreToolUse",
  "tool_name": "Bash",
  "tool_input": {"command": "npm run migrate -- --env staging", "description": "Apply the pending migrations"},
  "tool_use_id": "toolu_01ABC123"
}`
