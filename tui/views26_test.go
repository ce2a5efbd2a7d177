package tui

import (
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// Issue 26 item 6: x marks the selected alert read, X marks every unread
// one after a confirmation, both as the console's operator; a read alert
// is refused with why, a read-only console refuses both.
func TestAlertKeys(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.keys("5")
	scr := hs.screen()
	for _, want := range []string{"5 Alerts 2/3", "alerts 2 unread", "2 unread of 3", "x mark read", "X mark all read"} {
		if !strings.Contains(scr, want) {
			t.Errorf("alerts pane lacks %q:\n%s", want, scr)
		}
	}
	sel, _ := hs.m.panes[feed.KindAlert].Selected()
	hs.keys("x")
	if c := hs.act.last(); c.op != "read" || c.id != sel.ID || c.actor != "op@host" {
		t.Errorf("x called %+v, want read of %s by op@host", c, sel.ID)
	}
	if s := hs.m.StatusText(); s != "alert "+sel.Short+" marked read" {
		t.Errorf("status %q", s)
	}
	hs.keys("X")
	if _, ok := hs.m.dialog.(*confirmDialog); !ok || !strings.Contains(hs.screen(), "Mark all 2 unread alerts read?") {
		t.Fatalf("X opened no confirmation:\n%s", hs.screen())
	}
	if c := hs.act.last(); c.op == "read_all" {
		t.Fatal("X acted before the confirmation")
	}
	hs.keys("y")
	if c := hs.act.last(); c.op != "read_all" || c.actor != "op@host" {
		t.Errorf("confirmed X called %+v", c)
	}
	if s := hs.m.StatusText(); s != "marked 2 alerts read" {
		t.Errorf("status %q", s)
	}

	// A read alert: refused with why, no call.
	hs.src.mutate(func(s *fakeSource) []change {
		for i := range s.alerts {
			s.alerts[i].DeliveredAt = at(0)
		}
		return nil
	})
	hs.send(RefreshMsg{})
	n := len(hs.act.calls)
	hs.keys("g", "x")
	if len(hs.act.calls) != n || !strings.Contains(hs.m.StatusText(), "is already read") {
		t.Errorf("x on a read alert: calls %d→%d, status %q", n, len(hs.act.calls), hs.m.StatusText())
	}
	hs.keys("X")
	if hs.m.dialog != nil || hs.m.StatusText() != "no unread alerts" {
		t.Errorf("X with nothing unread: dialog %v, status %q", hs.m.dialog, hs.m.StatusText())
	}
	if !strings.Contains(hs.screen(), "5 Alerts 3 ") || !strings.Contains(hs.screen(), "0 unread of 3") {
		t.Errorf("all read: tab and info line:\n%s", hs.screen())
	}

	ro := newHarness(t, 120, 40, readOnly)
	ro.keys("5", "x")
	if s := ro.m.StatusText(); s != "read-only console: mark read is disabled" {
		t.Errorf("read-only x: %q", s)
	}
	ro.keys("X")
	if s := ro.m.StatusText(); s != "read-only console: mark all read is disabled" || ro.m.dialog != nil {
		t.Errorf("read-only X: %q", s)
	}
}

// Issue 26 item 6: a read alert stays listed, drawn muted.
func TestReadAlertsDimmed(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.keys("5") // the cursor on the first row: the read alert is last
	muted := hs.m.ctx.paint(hs.m.ctx.Theme.Muted, "muted").pre
	var read, unread string
	for _, l := range strings.Split(hs.m.render(), "\n") {
		switch s := stripANSI(l); {
		case strings.Contains(s, " read ") && strings.Contains(s, "task_failed"):
			read = l
		case strings.Contains(s, " unread ") && strings.Contains(s, "job_finished"):
			unread = l
		}
	}
	if read == "" || !strings.HasPrefix(read, muted) {
		t.Errorf("read alert row not muted: %q", read)
	}
	if unread == "" || strings.HasPrefix(unread, muted) {
		t.Errorf("unread alert row muted: %q", unread)
	}
}

// Issue 26 item 7: at 40×10 every tab is on screen and named, the active
// one shown, and the header says its counts in words.
func TestSmallTerminal(t *testing.T) {
	hs := newHarness(t, 40, 10)
	for k := range feed.NumKinds {
		hs.keys(string(rune('1' + k)))
		lines := strings.Split(hs.screen(), "\n")
		if len(lines) != 10 {
			t.Fatalf("%d lines at 40×10", len(lines))
		}
		for i, l := range lines {
			if w := lipglossWidth(l); w > 40 {
				t.Errorf("line %d is %d cells: %q", i, w, l)
			}
		}
		for i, name := range shortTitles {
			if !strings.Contains(lines[2], string(rune('1'+i))+" "+name) {
				t.Errorf("pane %d: tab %q missing: %q", k, name, lines[2])
			}
		}
		head := lines[0]
		for _, soup := range []string{"appr ", "run ", "t ", "r ", "j "} {
			if strings.Contains(head, soup) && !strings.Contains(head, "approval") {
				t.Errorf("header soup %q: %q", soup, head)
			}
		}
		for _, want := range []string{"2 approvals", "24h 2 failed 2 lost"} {
			if !strings.Contains(head, want) {
				t.Errorf("header lacks %q: %q", want, head)
			}
		}
	}
}

// Issue 26 item 7: the tabs scroll, the active one always shown, where even
// the short titles do not fit.
func TestTabsScroll(t *testing.T) {
	hs := newHarness(t, 24, 10)
	for k := range feed.NumKinds {
		hs.keys(string(rune('1' + k)))
		tabs := strings.Split(hs.screen(), "\n")[2]
		if !strings.Contains(tabs, string(rune('1'+k))+" "+shortTitles[k]) || lipglossWidth(tabs) > 24 {
			t.Errorf("pane %d: tabs %q lack the active one", k, tabs)
		}
		if strings.Contains(tabs, "‹") == strings.Contains(tabs, "1 Tasks") ||
			strings.Contains(tabs, "›") == strings.Contains(tabs, "5 Alerts") {
			t.Errorf("pane %d: tabs %q do not mark what is off screen", k, tabs)
		}
	}
}

// Issue 26 item 7: ? at 40×10 scrolls with ↓/↑/pgdn/pgup and says how.
func TestHelpScrolls(t *testing.T) {
	hs := newHarness(t, 40, 10)
	hs.keys("?")
	info := strings.Split(hs.screen(), "\n")[7]
	if !strings.HasPrefix(info, "help · 1–4/") || !strings.Contains(info, "↓/↑ pgdn/pgup scroll") {
		t.Fatalf("help info line: %q", info)
	}
	if hints := strings.Split(hs.screen(), "\n")[9]; !strings.Contains(hints, "?/esc close") {
		t.Errorf("help's key hints %q: want how to close it", hints)
	}
	first := hs.screen()
	hs.keys("down")
	if hs.m.helpTop != 1 || hs.screen() == first {
		t.Fatalf("↓ did not scroll help (top %d)", hs.m.helpTop)
	}
	hs.keys("pgdown", "pgdown")
	if hs.m.helpTop != 1+2*3 {
		t.Errorf("pgdn: top %d, want 7 (a page is the body less a line of overlap)", hs.m.helpTop)
	}
	n := len(hs.m.helpLines(40))
	for range n {
		hs.keys("pgdown")
	}
	if hs.m.helpTop != n-4 {
		t.Errorf("pgdn past the end: top %d, want %d", hs.m.helpTop, n-4)
	}
	if !strings.Contains(hs.screen(), "delivered anything.") {
		t.Errorf("the end of help is not reachable:\n%s", hs.screen())
	}
	hs.keys("up")
	if hs.m.helpTop != n-5 {
		t.Errorf("↑: top %d", hs.m.helpTop)
	}
	hs.keys("esc")
	if hs.m.showHelp || hs.m.helpTop != 0 {
		t.Errorf("esc: help %v top %d", hs.m.showHelp, hs.m.helpTop)
	}
}

// Issue 26 item 8: a status message belongs to where it was said: a pane
// switch or a filter change clears it; a busy warning stays.
func TestStatusClearedOnPaneAndFilter(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.keys("5", "x")
	if hs.m.StatusText() == "" {
		t.Fatal("no status after x")
	}
	hs.keys("1")
	if s := hs.m.StatusText(); s != "" {
		t.Errorf("status after a pane switch: %q", s)
	}
	hs.keys("c") // a refusal or a dialog: make a status
	hs.keys("esc")
	if hs.m.StatusText() == "" {
		t.Fatal("no status after esc")
	}
	hs.keys("/")
	hs.typeText("ru")
	if s := hs.m.StatusText(); s != "" {
		t.Errorf("status after a filter change: %q", s)
	}
	hs.m.busy = true
	hs.m.setStatus("database busy, retrying…", lvlWarn)
	hs.keys("enter", "2")
	if s := hs.m.StatusText(); s != "database busy, retrying…" {
		t.Errorf("busy warning cleared by a pane switch: %q", s)
	}
}

// Issue 26 item 8: a read-only console's footer names a viewer, not an
// operator.
func TestReadOnlyFooter(t *testing.T) {
	for _, tc := range []struct {
		opts []hopt
		want string
	}{
		{nil, "operator op@host"},
		{[]hopt{readOnly}, "read-only · viewing as op@host"},
	} {
		hs := newHarness(t, 120, 40, tc.opts...)
		lines := strings.Split(hs.screen(), "\n")
		if got := strings.TrimSpace(lines[len(lines)-2]); got != tc.want {
			t.Errorf("footer %q, want %q", got, tc.want)
		}
	}
}

// Issue 26 item 8: DELIVERY shows only once a task has a delivery outcome.
func TestDeliveryColumnHidden(t *testing.T) {
	hs := newHarness(t, 160, 40)
	if !strings.Contains(hs.screen(), "DELIVERY") {
		t.Fatalf("fixture with delivered tasks: no DELIVERY column")
	}
	pendingOnly := func(s *fakeSource) []change {
		var ch []change
		for i := range s.tasks {
			if s.tasks[i].DeliveryStatus != core.DeliveryNotApplicable {
				s.tasks[i].DeliveryStatus = core.DeliveryPending
			}
			ch = append(ch, change{feed.KindTask, s.tasks[i].ID})
		}
		return ch
	}
	hs.src.mutate(pendingOnly)
	hs.send(RefreshMsg{})
	if scr := hs.screen(); strings.Contains(scr, "DELIVERY") {
		t.Errorf("every task pending: DELIVERY still shown:\n%s", scr)
	}
	hs.keys("?")
	if !strings.Contains(hs.screen(), "DELIVERY (140 columns and wider)") {
		t.Errorf("help does not explain DELIVERY:\n%s", hs.screen())
	}
}
