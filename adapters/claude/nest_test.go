package claude

import (
	"context"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// TestNestRunPrefix: with Config.NestRunPrefix (Gemini CLI) a PostToolUse
// or PreToolUse without agent_id is bound to the newest running run of its
// session with that prefix, and to none once it ended or when another
// prefix; the session records the configured agent.
func TestNestRunPrefix(t *testing.T) {
	ctx := context.Background()
	reg, _ := spoolFixture(t)
	cfg := Config{ApprovalTimeout: time.Minute, NestRunPrefix: "gemini-agent-", Agent: "gemini", TaskKind: "gemini-cli"}
	h := &Handler{Reg: reg, Cfg: cfg}
	for _, p := range []*Payload{
		{HookEventName: EventSessionStart, SessionID: "s", Cwd: "/w"},
		{HookEventName: EventSubagentStart, SessionID: "s", AgentID: "other-run", AgentType: "x"},
		{HookEventName: EventSubagentStart, SessionID: "s", AgentID: "gemini-agent-1", AgentType: "generalist"},
	} {
		if _, err := h.Handle(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		stopped bool // the run ended first
		want    string
	}{
		{name: "open run", want: "gemini-agent-1"},
		{name: "ended run", stopped: true, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.stopped {
				if _, err := h.Handle(ctx, &Payload{HookEventName: EventSubagentStop, SessionID: "s", AgentID: "gemini-agent-1"}); err != nil {
					t.Fatal(err)
				}
			}
			post := &Payload{HookEventName: EventPostToolUse, SessionID: "s", ToolName: "read_file"}
			if _, err := h.Handle(ctx, post); err != nil || post.AgentID != tc.want {
				t.Fatalf("PostToolUse bound to %q (%v), want %q", post.AgentID, err, tc.want)
			}
			pre := &Payload{HookEventName: EventPreToolUse, SessionID: "s", ToolName: "run_shell_command", ToolInput: []byte(`{"command":"ls ` + tc.name + `"}`)}
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, _ = h.Handle(cctx, pre) // no one decides: it is withdrawn at ctx's end
			aps, err := reg.ListApprovals(ctx, core.ApprovalFilter{Session: "s"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, a := range aps {
				if a.Command == "ls "+tc.name {
					found = true
					if a.RunID != tc.want {
						t.Errorf("approval bound to %q, want %q", a.RunID, tc.want)
					}
				}
			}
			if !found {
				t.Fatalf("no approval for %q in %+v", "ls "+tc.name, aps)
			}
		})
	}
	s, _, err := reg.GetSession(ctx, "s")
	if err != nil || s.Agent != "gemini" {
		t.Fatalf("session %+v (%v), want agent gemini", s, err)
	}
}
