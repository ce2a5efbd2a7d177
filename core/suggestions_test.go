package core_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// Claude Code 2.1.328's PermissionRequest permission_suggestions for a
// Bash call outside the working directories (agents/NOTES.md).
const claudeSuggestions = `[{"type": "addDirectories", "directories": ["/tmp/outside"], "destination": "session"},
 {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]`

func TestCheckSuggestions(t *testing.T) {
	cases := []struct {
		in, want string
		err      bool
	}{
		{in: "", want: ""},
		{in: "null", want: ""},
		{in: "[]", want: ""},
		{in: claudeSuggestions, want: `[{"type":"addDirectories","directories":["/tmp/outside"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]`},
		{in: `{"type": "setMode"}`, err: true},
		{in: `["setMode"]`, err: true},
		{in: `[{"a":1}` + strings.Repeat(`,{"a":1}`, core.MaxSuggestions) + `]`, err: true},
		{in: `[{"a":"` + strings.Repeat("x", core.MaxSuggestionBytes) + `"}]`, err: true},
	}
	for _, tc := range cases {
		got, err := core.CheckSuggestions(json.RawMessage(tc.in))
		if tc.err != (err != nil) || tc.err && !errors.Is(err, core.ErrInvalid) || string(got) != tc.want {
			t.Errorf("CheckSuggestions(%.40q) = %s, %v; want %s (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestApproveWithSuggestion: an approval records the agent's suggestions
// exactly; approving with suggestion N approves once and names N, whose
// object ChosenSuggestion returns as sent; an N the approval does not offer
// is refused and leaves it pending; 0 is a plain approve once.
func TestApproveWithSuggestion(t *testing.T) {
	cases := []struct {
		name        string
		suggestions string
		n           int
		wantErr     bool
		want        string // the chosen suggestion
	}{
		{"first", claudeSuggestions, 1, false, `{"type":"addDirectories","directories":["/tmp/outside"],"destination":"session"}`},
		{"second", claudeSuggestions, 2, false, `{"type":"setMode","mode":"acceptEdits","destination":"session"}`},
		{"once", claudeSuggestions, 0, false, ""},
		{"past the end", claudeSuggestions, 3, true, ""},
		{"none offered", "", 1, true, ""},
		{"refused ones are not offered", `{"type":"setMode"}`, 1, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := registrytest.New(t)
			f.Session("s")
			a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "ls /tmp/outside",
				Suggestions: json.RawMessage(tc.suggestions)}, core.ActorRuntime)
			f.Must(err)
			got, _, err := f.Reg.ApproveWithSuggestion(f.Ctx, a.ID, tc.n, "op@host")
			if tc.wantErr {
				back, _, gerr := f.Reg.GetApproval(f.Ctx, a.ID)
				f.Must(gerr)
				if !errors.Is(err, core.ErrInvalid) || back.Status != core.ApprovalPending {
					t.Fatalf("suggestion %d: %v, status %s; want ErrInvalid, pending", tc.n, err, back.Status)
				}
				return
			}
			f.Must(err)
			back, _, err := f.Reg.GetApproval(f.Ctx, a.ID)
			f.Must(err)
			for _, x := range []*core.Approval{got, back} {
				if x.Status != core.ApprovalApproved || x.Scope != core.ScopeOnce || x.Suggestion != tc.n ||
					string(x.ChosenSuggestion()) != tc.want {
					t.Errorf("approved: status %s scope %s suggestion %d chosen %s; want approved once %d %s",
						x.Status, x.Scope, x.Suggestion, x.ChosenSuggestion(), tc.n, tc.want)
				}
			}
			if n := len(core.SuggestionList(back.Suggestions)); n != 2 {
				t.Errorf("recorded %d suggestions, want 2", n)
			}
		})
	}
}
