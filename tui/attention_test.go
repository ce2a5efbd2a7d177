package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// sendCollect is harness.send that also returns every RawMsg the commands
// produced (the bell).
func (hs *harness) sendCollect(msg tea.Msg) []string {
	var raws []string
	var run func(tea.Cmd)
	deliver := func(msg tea.Msg) {
		_, cmd := hs.m.Update(msg)
		run(cmd)
	}
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		switch msg := cmd().(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		case tea.RawMsg:
			raws = append(raws, msg.Msg.(string))
		default:
			deliver(msg)
		}
	}
	deliver(msg)
	return raws
}

func TestAttention(t *testing.T) {
	newPending := func(s *fakeSource) []change {
		s.approvals = append(s.approvals, core.Approval{ID: "ap9new000009", Session: "sess-main", Tool: "Bash",
			Command: "make deploy", Status: core.ApprovalPending, RequestedAt: at(0)})
		return []change{{feed.KindApproval, "ap9new000009"}}
	}
	touchPending := func(s *fakeSource) []change {
		s.approvals[0].Rationale = "still waiting"
		return []change{{feed.KindApproval, s.approvals[0].ID}}
	}
	taskFails := func(s *fakeSource) []change {
		s.tasks[0].Status, s.tasks[0].EndedAt = core.TaskFailed, at(0)
		return []change{{feed.KindTask, s.tasks[0].ID}}
	}
	budget := func(s *fakeSource) []change {
		s.alerts = append(s.alerts, core.Notification{ID: 99, Session: "sess-main", Kind: core.NotifyBudgetExceeded, SubjectID: "sess-main",
			Text: "session over its budget of $5.00: $5.12 spent", CreatedAt: at(0), DedupKey: "budget:x"})
		return []change{{feed.KindAlert, "99"}}
	}
	on := func(a Attention) hopt { return func(o *Options) { o.Attention = a } }
	cases := []struct {
		name   string
		att    Attention
		mutate func(*fakeSource) []change
		ring   bool
		text   string
	}{
		{"new pending approval rings", Attention{Approvals: true}, newPending, true, "1 new pending approval"},
		{"an already pending approval does not", Attention{Approvals: true, Failures: true}, touchPending, false, ""},
		{"silent by default", Attention{}, newPending, false, ""},
		{"failed task rings when asked", Attention{Failures: true}, taskFails, true, "1 task failed or lost"},
		{"failed task silent for approvals only", Attention{Approvals: true}, taskFails, false, ""},
		{"crossed budget rings when asked", Attention{Budgets: true}, budget, true, "1 budget crossed"},
		{"crossed budget silent for approvals and failures", Attention{Approvals: true, Failures: true}, budget, false, ""},
	}
	for _, c := range cases {
		for _, full := range []bool{false, true} {
			name := c.name
			if full {
				// A reload of whole tables (a burst past MaxEvents, rows
				// pruned elsewhere) rings as a delta does.
				name += "/full reload"
			}
			t.Run(name, func(t *testing.T) {
				hs := newHarness(t, 100, 24, on(c.att))
				if hs.m.Attention() {
					t.Fatal("the first load highlighted the header")
				}
				hs.src.mutate(c.mutate)
				hs.m.forceFull = full
				raws := hs.sendCollect(RefreshMsg{})
				if got := strings.Join(raws, ""); (got == bell) != c.ring {
					t.Fatalf("raw output %q, want bell %v", got, c.ring)
				}
				if hs.m.Attention() != c.ring {
					t.Fatalf("header highlighted = %v, want %v", hs.m.Attention(), c.ring)
				}
				scr := hs.screen()
				lines := strings.SplitN(scr, "\n", 3)
				head := lines[0]
				// The note follows the counts, or (no room after them)
				// takes the registry path's place on the second line.
				if c.ring && !strings.Contains(lines[0]+lines[1], "◀ "+c.text) {
					t.Fatalf("header does not say %q:\n%s", c.text, scr)
				}
				if c.ring && !strings.Contains(head, "alerts") {
					t.Fatalf("the note covers the counts' end:\n%s", scr)
				}
				// The highlighted header keeps the layout: its width and its start.
				if w := lipgloss.Width(strings.SplitN(hs.m.render(), "\n", 2)[0]); w > 100 {
					t.Fatalf("header is %d cells wide at 100 columns", w)
				}
				// (A short note leaves room for the short form beside it.)
				if !regexp.MustCompile(`^\s*\d+ (pending )?approvals? `).MatchString(head) {
					t.Fatalf("highlighted header lost its start: %q", head)
				}
				// Once: the next load of the same rows is quiet, and the highlight ends.
				if raws := hs.sendCollect(RefreshMsg{}); len(raws) != 0 {
					t.Fatalf("rang again: %q", raws)
				}
				hs.clk.Advance(flashFor + time.Second)
				if hs.m.Attention() {
					t.Fatal("header still highlighted after the flash")
				}
			})
		}
	}
}

// TestAttentionNoteRoom: the attention note is always shown whole, and
// covers the header's counts only when the second line has no room for it:
// at 80 columns it takes the registry path's place there, at 200 it
// follows the counts, and at 72 a long note (both kinds) covers the
// counts' end.
func TestAttentionNoteRoom(t *testing.T) {
	failed := func(s *fakeSource) []change {
		s.tasks[0].Status, s.tasks[0].EndedAt = core.TaskFailed, at(0)
		return []change{{feed.KindTask, s.tasks[0].ID}}
	}
	both := func(s *fakeSource) []change {
		s.approvals = append(s.approvals, core.Approval{ID: "ap9new000009", Session: "sess-main", Tool: "Bash",
			Command: "make deploy", Status: core.ApprovalPending, RequestedAt: at(0)})
		return append(failed(s), change{feed.KindApproval, "ap9new000009"})
	}
	for _, tc := range []struct {
		w       int
		mutate  func(*fakeSource) []change
		note    string
		onFirst bool
	}{
		{80, failed, "◀ 1 task failed or lost", false},
		{100, failed, "◀ 1 task failed or lost", false},
		{200, failed, "◀ 1 task failed or lost", true},
		{80, both, "◀ 1 new pending approval, 1 task failed or lost", false},
		{72, both, "◀ 1 new pending approval, 1 task failed or lost", true},
	} {
		hs := newHarness(t, tc.w, 24, func(o *Options) { o.Attention = Attention{Approvals: true, Failures: true} })
		hs.src.mutate(tc.mutate)
		hs.sendCollect(RefreshMsg{})
		if !hs.m.Attention() {
			t.Fatalf("%d columns: no attention", tc.w)
		}
		lines := strings.SplitN(hs.screen(), "\n", 3)
		if strings.Contains(lines[0], tc.note) != tc.onFirst || strings.Contains(lines[1], tc.note) == tc.onFirst {
			t.Errorf("%d columns: %q whole on the first line %v, want %v:\n%s\n%s", tc.w, tc.note, strings.Contains(lines[0], tc.note), tc.onFirst, lines[0], lines[1])
		}
		for _, want := range []string{"lost", "alerts"} {
			if !strings.Contains(lines[0], want) && !(tc.onFirst && tc.w < 80) {
				t.Errorf("%d columns: the counts lost %q:\n%s", tc.w, want, lines[0])
			}
		}
		for i, l := range lines[:2] {
			if lw := lipgloss.Width(l); lw > tc.w {
				t.Errorf("%d columns: header line %d is %d cells wide", tc.w, i+1, lw)
			}
		}
	}
}

// RefreshMsg loads the delta at once (the shared watcher's push).
func TestRefreshMsgLoads(t *testing.T) {
	hs := newHarness(t, 80, 24)
	loads := hs.src.loads
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks[1].Status = core.TaskRunning
		return []change{{feed.KindTask, s.tasks[1].ID}}
	})
	hs.send(RefreshMsg{})
	if hs.src.loads != loads+1 {
		t.Fatalf("loads %d, want %d", hs.src.loads, loads+1)
	}
}

// SweepNote replaces the sweeper part of the header (a served session).
func TestSweepNote(t *testing.T) {
	hs := newHarness(t, 120, 24, func(o *Options) { o.SweepNote = "server sweeps every 1m0s" })
	if l := strings.Split(hs.screen(), "\n")[1]; !strings.Contains(l, "server sweeps every 1m0s") || strings.Contains(l, "next") {
		t.Fatalf("header line 2: %q", l)
	}
}
