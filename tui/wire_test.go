package tui

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// markedRows are the screen's rows that carry the cursor mark.
func markedRows(screen string) []string {
	var out []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, cursorMark) {
			out = append(out, l)
		}
	}
	return out
}

// firstRowID is the id of the active pane's first row.
func (hs *harness) firstRowID() string {
	ids := hs.visibleIDs()
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// addApproval adds a pending approval requested ago before t0.
func (hs *harness) addApproval(id string, ago time.Duration) {
	hs.src.mutate(func(s *fakeSource) []change {
		s.approvals = append(s.approvals, core.Approval{ID: id, Session: "sess-main", Tool: "Bash", Command: "echo " + id,
			Pattern: "echo", Status: core.ApprovalPending, RequestedAt: at(ago)})
		return []change{{feed.KindApproval, id}}
	})
	hs.send(tickMsg{})
}

// Issue 11 item 3: until the operator moves the cursor it sits on the first
// row, also as rows sort in above it and across pane switches; once moved,
// it keeps its row.
func TestCursorFirstRowUntilMoved(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.keys("3")
	if got, want := hs.selectedID(), "ap2beef00002"; got != want {
		t.Fatalf("first visit: cursor on %s, want the first row %s", got, want)
	}
	for i, id := range []string{"apnew0000001", "apnew0000002", "apnew0000003"} {
		hs.addApproval(id, time.Duration(3-i)*time.Second) // each newer than the last: sorts in on top
		if hs.firstRowID() != id {
			t.Fatalf("the new approval %s did not sort first: %v", id, hs.visibleIDs())
		}
		if got := hs.selectedID(); got != id {
			t.Fatalf("after %s arrived the cursor is on %s, want the first row", id, got)
		}
		hs.keys("1", "3")
		if got := hs.selectedID(); got != id {
			t.Fatalf("after a pane switch the cursor is on %s, want the first row %s", got, id)
		}
	}
	// a opens the dialog for the row the operator sees first.
	hs.keys("a")
	if d, ok := hs.m.dialog.(*scopeDialog); !ok || d.t.ID != "apnew0000003" {
		t.Fatalf("a opened %#v, want the approval of the first row", hs.m.dialog)
	}
	hs.keys("esc")

	// Moved: the cursor keeps its row as rows arrive and across switches.
	hs.keys("down")
	kept := hs.selectedID()
	if kept != "apnew0000002" {
		t.Fatalf("down: cursor on %s", kept)
	}
	hs.addApproval("apnew0000004", 0)
	hs.keys("2", "3")
	if got := hs.selectedID(); got != kept {
		t.Fatalf("a moved cursor left its row: on %s, want %s", got, kept)
	}
	// The other panes were not moved: still on their first rows.
	for _, k := range []string{"1", "2", "4", "5"} {
		hs.keys(k)
		if got := hs.selectedID(); got != hs.firstRowID() {
			t.Errorf("pane %s: cursor on %s, want its first row %s", k, got, hs.firstRowID())
		}
	}
}

// The selected row carries the cursor mark in every theme (mono has no
// colours to tell it by), exactly one row, the selected one.
func TestSelectedRowMarked(t *testing.T) {
	for _, theme := range []string{"dark", "light", "high-contrast", "mono"} {
		hs := newHarness(t, 80, 24, withTheme(theme))
		for _, k := range []string{"1", "2", "3", "4", "5"} {
			hs.keys(k)
			rows := markedRows(hs.screen())
			tg, _ := hs.m.panes[hs.m.active].Selected()
			if len(rows) != 1 || !strings.Contains(rows[0], tg.Short) {
				t.Errorf("%s pane %s: marked rows %q, want one, of %s", theme, k, rows, tg.Short)
			}
		}
	}
}

// Issue 11 item 8: a command cut to its column keeps its verb chain and
// its target. Issue 26 item 7: a flag keeps its value or both go (which
// word is a flag's value cannot be told, so the word after a flag counts as
// one).
func TestFitCommand(t *testing.T) {
	for _, c := range []struct {
		in, want string
		w        int
	}{
		{"npm run dev", "npm run dev", 20},
		{"git push --force origin main", "git push … main", 22},
		{"git push --force=true origin main", "git push … origin main", 22},
		{"git push --force --no-verify origin main", "git push --force … main", 24},
		{"docker compose -f a.yml -p proj up --build web", "docker … --build web", 20},
		{"go test ./core -run TestSweeperAppliesEverything -count 1", "go … -count 1", 13},
		{"python worker.py", "python worker.py", 16},
		{"kubectl apply -f deploy/prod.yaml", "kubectl apply -f deploy/prod.yaml", 33},
		{"kubectl apply -f deploy/prod.yaml", "kubectl apply …", 26},
		{"a b", "a b", 3},
		{"kubectl --context prod -n pay rollout restart deploy/api", "kubectl … rollout restart deploy/api", 40},
		{"kubectl --context prod -n pay rollout restart deploy/api", "kubectl … rollout … deploy/api", 30},
		{"averyveryverylongprogram x", "averyveryver…", 13},
		// The line at 80 columns: never "… 101 … 12s".
		{"clawpit __demo-build --test --seed 101 --duration 12s", "clawpit __demo-build --test --seed 101 …", 40},
		{"clawpit __demo-build --test --seed 101 --duration 12s", "clawpit __demo-build --test …", 30},
		{"clawpit __demo-build --test --seed 101 --duration 12s", "clawpit __demo-build …", 24},
		{"clawpit __demo-build --test --seed 101 --duration 12s", "clawpit …", 21},
	} {
		got := strings.TrimRight(fitCommand(c.in, c.w), " ")
		if got != c.want {
			t.Errorf("fitCommand(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if n := width(fitCommand(c.in, c.w)); n != c.w {
			t.Errorf("fitCommand(%q, %d) is %d cells", c.in, c.w, n)
		}
		// A shown value has its flag before it.
		in := strings.Fields(c.in)
		values := map[string]bool{}
		for i := 1; i+1 < len(in); i++ {
			if strings.HasPrefix(in[i], "-") && !strings.Contains(in[i], "=") && !strings.HasPrefix(in[i+1], "-") {
				values[in[i+1]] = true
			}
		}
		gw := strings.Fields(got)
		for i := 1; i < len(gw); i++ {
			if values[gw[i]] && !strings.HasPrefix(gw[i-1], "-") {
				t.Errorf("fitCommand(%q, %d) = %q: %q shows without its flag", c.in, c.w, got, gw[i])
			}
		}
	}
}

// Issue 11 item 8: a blank column gives its room to a column that would be
// cut; with room enough nothing is cut and the rest pads the flexible
// columns.
func TestFrameWidths(t *testing.T) {
	cols := []column{
		{Title: "ID", Width: 4},
		{Title: "STATUS", Width: 7},
		{Title: "LABEL", Width: 6, Flex: 2},
		{Title: "DELIVERY", Width: 10},
		{Title: "ERROR", Width: 6, Flex: 1},
	}
	base := layoutColumns(cols, 50)
	cells := [][]string{
		{"id1", "failed", "a label", "", "a long error that needs room"},
		{"id2", "ok", "b", "", ""},
	}
	got := frameWidths(cols, base, cells, [2]int{0, 1}, 50, nil)
	if got[3] != 0 {
		t.Errorf("blank DELIVERY kept %d cells while ERROR is cut: %v", got[3], got)
	}
	if got[0] != 4 || got[1] != 7 {
		t.Errorf("the core columns changed width: %v", got)
	}
	if got[2] != width("a label") {
		t.Errorf("LABEL took %d cells while ERROR is cut: %v", got[2], got)
	}
	sum := 0
	for _, w := range got {
		if w > 0 {
			sum += w + 1
		}
	}
	if sum-1 != 50 {
		t.Errorf("widths %v fill %d cells, want 50", got, sum-1)
	}
	// Wide: everything fits, the blank column stays (with its title).
	got = frameWidths(cols, layoutColumns(cols, 120), cells, [2]int{0, 1}, 120, nil)
	if got[4] < width(cells[0][4]) || got[3] < width("DELIVERY") {
		t.Errorf("at 120 cells: %v", got)
	}
	// Hidden columns (0 in base) stay hidden.
	base = layoutColumns(cols, 50)
	base[2] = 0
	if got := frameWidths(cols, base, cells, [2]int{0, 1}, 50, nil); got[2] != 0 {
		t.Errorf("a hidden column came back: %v", got)
	}
}

// Item 6: the action table lists, for each pane, the keys its help shows,
// and every row of it is complete.
func TestActionTable(t *testing.T) {
	k := testKeys()
	want := map[feed.Kind][]key.Binding{
		feed.KindTask:     {k.Cancel, k.Kill, k.Reap},
		feed.KindRun:      {k.Kill},
		feed.KindApproval: {k.Approve, k.Deny},
		feed.KindJob:      {k.Cancel, k.Reap},
		feed.KindAlert:    {k.Ack},
	}
	for kind, bs := range want {
		got := actionKeysFor(&k, kind)
		if len(got) != len(bs) {
			t.Errorf("%s: %d action keys, want %d", kind, len(got), len(bs))
			continue
		}
		for i := range bs {
			if !sameKeys(got[i], bs[i]) {
				t.Errorf("%s: key %d is %v, want %v", kind, i, got[i].Keys(), bs[i].Keys())
			}
		}
	}
	for _, a := range actionBindings {
		if a.name == "" || a.binding == nil || a.disabled == nil || a.open == nil || (a.kinds != nil && a.wrongKind == nil) {
			t.Errorf("action %q is incomplete", a.name)
		}
	}
}

// Dialogs answer with Cmds: the status line is set by a statusMsg that
// then runs the action, so the action's outcome always comes after it.
func TestDialogAnswersWithCmds(t *testing.T) {
	k := testKeys()
	ctx := &Context{Keys: &k}
	ran := false
	d := newScopeDialog(Target{ID: "ap1", Short: "ap1"}, func(s core.Scope, _ int) tea.Cmd {
		return func() tea.Msg { ran = true; return actionMsg{text: "approved " + string(s)} }
	})
	done, cmd := d.update(ctx, keyMsg("enter"))
	if !done || cmd == nil {
		t.Fatalf("enter: done %v cmd %v", done, cmd != nil)
	}
	msg, ok := cmd().(statusMsg)
	if !ok || msg.text != "approving ap1…" || ran {
		t.Fatalf("first message %#v (action ran: %v), want the status", msg, ran)
	}
	if out, ok := msg.next().(actionMsg); !ok || out.text != "approved once" || !ran {
		t.Fatalf("then %#v", out)
	}
	done, cmd = newScopeDialog(Target{Short: "ap1"}, nil).update(ctx, keyMsg("esc"))
	if msg, ok := cmd().(statusMsg); !done || !ok || msg.next != nil || !strings.Contains(msg.text, "not confirmed") {
		t.Fatalf("esc: %#v", msg)
	}
}

// The reap dialog says how many jobs it will kill (counted in the
// registry once it opens).
func TestReapDialogCountsJobs(t *testing.T) {
	hs := newHarness(t, 100, 30)
	hs.keys("4", "r")
	if s := hs.screen(); !strings.Contains(s, "Kills the 1 pending or running job of the session and marks it reaped.") {
		t.Fatalf("reap dialog:\n%s", s)
	}
	hs.keys("esc")
	hs.src.mutate(func(s *fakeSource) []change {
		s.jobs = append(s.jobs, core.Job{ID: "e5f6a1b2c3d4", Session: "sess-main", Command: []string{"sleep", "9"},
			Status: core.JobPending, CreatedAt: at(time.Second)})
		return []change{{feed.KindJob, "e5f6a1b2c3d4"}}
	})
	hs.send(tickMsg{})
	hs.keys("r")
	if s := hs.screen(); !strings.Contains(s, "Kills the 2 pending or running jobs of the session") {
		t.Fatalf("reap dialog with 2 jobs:\n%s", s)
	}
	hs.keys("enter")
	if c := hs.act.last(); c.op != "reap" || c.id != "sess-main" {
		t.Fatalf("reap called %#v", c)
	}
	// The count reads the registry, not the Jobs window: filtered to
	// nothing, the pane holds none of the session's jobs.
	hs.keys("/")
	hs.typeText("zzz")
	hs.keys("enter")
	if len(hs.m.jobs.rows) != 0 {
		t.Fatalf("the filtered Jobs window holds %d rows", len(hs.m.jobs.rows))
	}
	d, cmd := hs.m.reapDialog(Target{Kind: feed.KindTask, Session: "sess-main"})
	hs.m.dialog = d
	if got := d.(*confirmDialog).lines[0]; !strings.HasPrefix(got, "Counting") {
		t.Fatalf("before the count: %q", got)
	}
	hs.run(cmd)
	if got := d.(*confirmDialog).lines[0]; !strings.Contains(got, "Kills the 2 pending or running jobs of the session") {
		t.Fatalf("reap dialog over a filtered Jobs pane: %q", got)
	}
}

// FuzzFitCommand: whatever the command line, the cell is exactly w cells.
func FuzzFitCommand(f *testing.F) {
	for _, s := range []string{"git push --force origin main", "a -b c -d e", "漢字 -x 漢字漢字 target", "- - -", ""} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, w int) {
		w = 1 + (w%80+80)%80
		s = oneLine(s)
		if got := fitCommand(s, w); width(got) != w {
			t.Fatalf("fitCommand(%q, %d) = %q, %d cells", s, w, got, width(got))
		}
	})
}
