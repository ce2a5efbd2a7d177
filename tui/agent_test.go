package tui

import (
	"context"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/themes"
)

// TestConsoleAgent: the Tasks, Runs and Approvals panes show each row's
// session's agent and the filter matches it, read from the store's windows
// (joined in by the store) and from its whole tables through the memory
// window (the agent looked up per session, agentFill), after a full load
// and after a delta; the detail view says it.
func TestConsoleAgent(t *testing.T) {
	t.Run("whole", func(t *testing.T) { testConsoleAgent(t, true) })
	t.Run("windows", func(t *testing.T) { testConsoleAgent(t, false) })
}

func testConsoleAgent(t *testing.T, whole bool) {
	ctx := context.Background()
	r := openReal(t)
	for _, s := range []struct{ id, agent string }{{"sess-x", "codex"}, {"sess-y", "claude"}, {"sess-z", ""}} {
		check(t, func() error {
			_, _, err := r.reg.OpenAgentSession(ctx, s.id, "", s.agent, false, core.ActorRuntime)
			return err
		}())
	}
	task := func(session, label string) *core.Task {
		return must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: session, Label: label}, core.ActorRuntime))
	}
	tx1, ty, tz := task("sess-x", "one"), task("sess-y", "two"), task("sess-z", "three")
	must[*core.Run](t)(r.reg.RegisterRun(ctx, core.NewRun{RunID: "run-1", ChildSession: "sub-1", RequesterSession: "sess-x", Label: "helper"}, core.ActorRuntime))
	must[*core.Run](t)(r.reg.RegisterRun(ctx, core.NewRun{RunID: "run-2", ChildSession: "sub-2", RequesterSession: "sess-y", Label: "helper"}, core.ActorRuntime))
	apx := must[*core.Approval](t)(r.reg.RequestApproval(ctx, core.NewApproval{Session: "sess-x", Tool: "Bash", Command: "make"}, core.ActorRuntime))
	apy := must[*core.Approval](t)(r.reg.RequestApproval(ctx, core.NewApproval{Session: "sess-y", Tool: "Bash", Command: "make"}, core.ActorRuntime))
	var src feed.Source = r.src
	if whole {
		src = wholeOnly{r.src}
	}
	hs := realHarnessOn(t, r, false, src)
	hs.send(teaSize(160, 40))
	// A delta: a task created after the first load.
	tx2 := task("sess-x", "four")
	hs.send(tickMsg{})

	agents := map[string]string{tx1.ID: "codex", tx2.ID: "codex", ty.ID: "claude", tz.ID: ""}
	for id, want := range agents {
		if got := hs.m.tasks.rows[hs.m.tasks.ids[id]].agent; got != want {
			t.Errorf("task %s: agent %q, want %q", id, got, want)
		}
	}
	cases := []struct {
		pane, filter string
		want         []string
	}{
		{"1", "", []string{tx1.ID, tx2.ID, ty.ID, tz.ID}},
		{"1", "COD", []string{tx1.ID, tx2.ID}},
		{"1", "claude", []string{ty.ID}},
		{"2", "codex", []string{"run-1"}},
		{"2", "laud", []string{"run-2"}},
		{"3", "codex", []string{apx.ID}},
		{"3", "claude", []string{apy.ID}},
	}
	for _, tc := range cases {
		hs.keys(tc.pane, "/")
		hs.typeText(tc.filter)
		hs.keys("enter")
		hs.send(tickMsg{})
		got := hs.visibleIDs()
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("pane %s filter %q: %v, want %v\n%s", tc.pane, tc.filter, got, want, hs.screen())
		}
		scr := hs.screen()
		if !strings.Contains(scr, "AGENT") || tc.filter != "" && !strings.Contains(scr, agents[tx1.ID]) && !strings.Contains(scr, "claude") {
			t.Errorf("pane %s: no AGENT column:\n%s", tc.pane, scr)
		}
		hs.keys("/")
		hs.keys("esc")
	}
	// The detail view: the agent after the session.
	hs.keys("3", "/")
	hs.typeText("codex")
	hs.keys("enter")
	hs.send(tickMsg{})
	hs.keys("enter")
	if scr := hs.screen(); !strings.Contains(scr, "agent") || !strings.Contains(scr, "codex") {
		t.Errorf("approval detail lacks its agent:\n%s", scr)
	}
}

// TestAgentColumnDroppedFirst: as the screen narrows, the AGENT column is
// the first the Tasks, Runs and Approvals panes drop (README "The console": narrow
// terminals drop the least important columns first).
func TestAgentColumnDroppedFirst(t *testing.T) {
	for _, spec := range []struct {
		name string
		cols []column
	}{{"tasks", taskSpec.columns}, {"runs", runSpec.columns}, {"approvals", approvalSpec.columns}} {
		agent := slices.IndexFunc(spec.cols, func(c column) bool { return c.Title == "AGENT" })
		if agent < 0 {
			t.Fatalf("%s: no AGENT column", spec.name)
		}
		// SPENT (What it costs), where a pane has it, goes first, then AGENT.
		order := []int{agent}
		if spent := slices.IndexFunc(spec.cols, func(c column) bool { return c.Title == "SPENT" }); spent >= 0 {
			order = []int{spent, agent}
		}
		all := len(spec.cols)
		next := 0
		for w := 220; w >= 40 && next < len(order); w-- {
			widths := layoutColumns(spec.cols, w)
			shown := 0
			for _, x := range widths {
				if x > 0 {
					shown++
				}
			}
			if shown < all-next {
				col := order[next]
				if widths[col] != 0 || shown != all-next-1 {
					t.Errorf("%s at %d cells: %d of %d columns shown, %s %d cells wide", spec.name, w, shown, all, spec.cols[col].Title, widths[col])
				}
				next++
			}
		}
	}
}

// TestApproveDialogSuggestions: the approve dialog offers the agent's
// suggested permission updates after the scopes, shows the chosen one
// exactly, and approves once with it (ApproveWithSuggestion); with none it
// offers the scopes alone.
func TestApproveDialogSuggestions(t *testing.T) {
	k := testKeys()
	th, _ := themes.Get("dark")
	ctx := &Context{Keys: &k, Theme: th, Width: 120, Height: 40}
	sugg := `[{"type":"addDirectories","directories":["/tmp/out"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]`
	cases := []struct {
		suggestions string
		rights      int
		scope       core.Scope
		n           int
		shows       string
	}{
		{sugg, 0, core.ScopeOnce, 0, "this request only"},
		{sugg, 3, core.ScopeOnce, 1, `{"type":"addDirectories","directories":["/tmp/out"],"destination":"session"}`},
		{sugg, 4, core.ScopeOnce, 2, `{"type":"setMode","mode":"acceptEdits","destination":"session"}`},
		{sugg, 5, core.ScopeOnce, 0, "this request only"}, // wraps around
		{"", 3, core.ScopeOnce, 0, "this request only"},   // no suggestions: the scopes wrap
		{"", 2, core.ScopeAlways, 0, "in any session"},
	}
	for _, tc := range cases {
		var gotScope core.Scope
		gotN := -1
		d := newScopeDialog(Target{ID: "ap1", Short: "ap1", Tool: "Bash", Pattern: "touch", Suggestions: tc.suggestions},
			func(s core.Scope, n int) tea.Cmd { gotScope, gotN = s, n; return nil })
		for range tc.rights {
			d.update(ctx, keyMsg("right"))
		}
		// Wrapped in the box: compare without its borders and spaces.
		flat := func(x string) string { return strings.NewReplacer("│", "", " ", "", "\n", "").Replace(x) }
		if v := stripANSI(d.view(ctx, 120)); !strings.Contains(flat(v), flat(tc.shows)) ||
			tc.suggestions != "" && !strings.Contains(v, "suggestion 2") {
			t.Errorf("%d rights: the dialog does not show %s:\n%s", tc.rights, tc.shows, v)
		}
		d.update(ctx, keyMsg("enter"))
		if gotScope != tc.scope || gotN != tc.n {
			t.Errorf("%d rights: approved %s with suggestion %d, want %s %d", tc.rights, gotScope, gotN, tc.scope, tc.n)
		}
	}
}
