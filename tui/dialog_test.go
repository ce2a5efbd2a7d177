package tui

import (
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// The approve dialog shows the command exactly (its CR as ␍, a warning that
// it holds controls) and, for each scope, exactly the grant approving
// creates; a command too long for the screen says where the rest is.
func TestScopeDialogShowsExactGrant(t *testing.T) {
	hs := newHarness(t, 80, 24)
	ctx := hs.m.ctx
	row := approvalRowOf(&core.Approval{ID: "ap0000000001", Session: "S1", Tool: "Bash",
		Command: "rm -rf ~ #\rgit log --oneline -n 20", Pattern: "rm", Status: core.ApprovalPending,
		Cwd: "/srv/app\u200b", Rationale: "read the log\u202e;gol daer"})
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
		for _, want := range []string{"Bash: rm -rf ~ #␍git log --oneline -n 20", "control or invisible characters", c.want,
			"cwd /srv/app<U+200B>", "why read the log<U+202E>;gol daer"} {
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

// FuzzDecisionFields: whatever a runtime puts in an approval's command,
// tool, session or pattern, the Approvals row's cells and the approve
// dialog (its styling stripped) hold no control (but the dialog's own line
// breaks), DEL, C1, bidi, zero-width or other hidden character, and a
// carriage return or backspace in the command is always on screen as a
// symbol.
func FuzzDecisionFields(f *testing.F) {
	f.Add("rm -rf ~ #\rgit log --oneline -n 20", "Bash", "S1", "rm")
	f.Add("rm -rf ~\b\b\b\b\b\b\b\bls -la  ", "Bash\u202e", "S\u200b1", "")
	f.Add("x\x1b]0;t\x07\u009b2J\xff", "T\n", "s\r", "a\u2066b")
	hs := newHarness(f, 120, 40)
	ctx := hs.m.ctx
	f.Fuzz(func(t *testing.T, command, tool, session, pattern string) {
		row := approvalRowOf(&core.Approval{ID: "ap0000000001", Session: session, Tool: tool, Command: command,
			Pattern: pattern, Status: core.ApprovalPending})
		cells := approvalSpec.cells(&row, ctx, 0, nil)
		d := newScopeDialog(approvalSpec.target(&row), nil)
		views := []string{strings.Join(cells, " ")}
		for range core.Scopes {
			views = append(views, stripANSI(d.view(ctx, 120)))
			d.update(ctx, keyMsg("right"))
		}
		for i, v := range views {
			for _, r := range v {
				if r == '\n' && i > 0 {
					continue // the dialog's own lines
				}
				if r < 0x20 || r == 0x7f || termtext.IsHiddenExact(r) {
					t.Fatalf("%U reaches the screen in %q", r, v)
				}
			}
		}
		for _, c := range []struct {
			raw   string
			shown string
		}{{"\r", "␍"}, {"\b", "␈"}} {
			if strings.Contains(command, c.raw) && !strings.Contains(row.command, c.shown) {
				t.Fatalf("command %q: row %q hides %q", command, row.command, c.raw)
			}
		}
	})
}
