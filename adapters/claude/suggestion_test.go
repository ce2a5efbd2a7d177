package claude

import (
	"encoding/json"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestPermissionRequestAnswer: PermissionRequest's answer (Claude Code
// hooks: PermissionRequest) allows or denies; an approval approved with
// suggestion N allows with that suggestion, exactly as the agent sent it,
// as decision.updatedPermissions; a deny never carries one.
func TestPermissionRequestAnswer(t *testing.T) {
	sugg := json.RawMessage(`[{"type":"addDirectories","directories":["/tmp/out side"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]`)
	h := &Handler{}
	cases := []struct {
		name string
		a    core.Approval
		want string
	}{
		{"once", core.Approval{Status: core.ApprovalApproved, Scope: core.ScopeOnce, DecidedBy: "op", Suggestions: sugg},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"approved in clawpit by op (once)"}}}`},
		{"with suggestion 1", core.Approval{Status: core.ApprovalApproved, Scope: core.ScopeOnce, DecidedBy: "op", Suggestions: sugg, Suggestion: 1},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"approved in clawpit by op (once, with suggestion 1)",` +
				`"updatedPermissions":[{"type":"addDirectories","directories":["/tmp/out side"],"destination":"session"}]}}}`},
		{"denied", core.Approval{Status: core.ApprovalDenied, DecidedBy: "op", Reason: "no", Suggestions: sugg, Suggestion: 1},
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"denied in clawpit by op: no"}}}`},
	}
	for _, tc := range cases {
		got := string(h.answer(&tc.a).PermissionRequestJSON())
		if got != tc.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	// The payload's suggestions are read as sent.
	p, err := ParsePayload([]byte(`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls /x"},"permission_suggestions":` + string(sugg) + `}`))
	if err != nil || string(p.PermissionSuggestions) != string(sugg) {
		t.Fatalf("payload suggestions %s, %v", p.PermissionSuggestions, err)
	}
}
