package tui

import (
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// The approve dialog shows the command exactly (its CR as ␍, a warning that
// it holds controls) and, for each scope, exactly the grant approving
// creates; a command too long for the screen says where the rest is.
func TestScopeDialogShowsExactGrant(t *testing.T) {
	hs := newHarness(t, 80, 24)
	ctx := hs.m.ctx
	row := approvalRowOf(&core.Approval{ID: "ap0000000001", Session: "S1", Tool: "Bash",
		Command: "rm -rf ~ #\rgit log --oneline -n 20", Pattern: "rm", Status: core.ApprovalPending})
	d := newScopeDialog(approvalSpec.target(&row), nil)
	for _, c := range []struct {
		key, want string
	}{
		{"", "grant  none"},
		{"right", `grant  Bash "rm" in session S1`},
		{"right", `grant  Bash "rm" in any session`},
	} {
		if c.key != "" {
			d.update(ctx, keyMsg(c.key))
		}
		v := stripANSI(d.view(ctx, 80))
		for _, want := range []string{"Bash: rm -rf ~ #␍git log --oneline -n 20", "control or invisible characters", c.want} {
			if !strings.Contains(v, want) {
				t.Errorf("scope %s: dialog lacks %q:\n%s", core.Scopes[d.choice], want, v)
			}
		}
	}
	if g := grantText(Target{Tool: "Bash", Pattern: ""}, core.ScopeAlways); !strings.Contains(g, `Bash "" in any session`) || !strings.Contains(g, "matches no later request") {
		t.Errorf("empty pattern: %q", g)
	}

	long := approvalRowOf(&core.Approval{ID: "ap0000000002", Session: "S1", Tool: "Bash",
		Command: "git log " + strings.Repeat("x ", 1000) + "; rm -rf ~", Pattern: "git log", Status: core.ApprovalPending})
	v := stripANSI(newScopeDialog(approvalSpec.target(&long), nil).view(ctx, 80))
	if !strings.Contains(v, "more lines: the whole command is in its detail") {
		t.Errorf("a long command is cut without saying so:\n%s", v)
	}
	if n := len(strings.Split(v, "\n")); n > 24 {
		t.Errorf("the dialog is %d rows on a 24-row screen", n)
	}
}
