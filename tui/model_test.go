package tui

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/tui/logview"
	"github.com/clawpit/clawpit/view"
)

// selectedID is the id under the active pane's cursor.
func (hs *harness) selectedID() string {
	t, _ := hs.m.panes[hs.m.active].Selected()
	return t.ID
}

func (hs *harness) visibleIDs() []string {
	p := hs.m.panes[hs.m.active]
	shown, _ := p.Counts()
	var ids []string
	switch l := p.(type) {
	case *list[taskRow]:
		for _, s := range l.view[:shown] {
			ids = append(ids, l.rows[s].id)
		}
	case *list[jobRow]:
		for _, s := range l.view[:shown] {
			ids = append(ids, l.rows[s].id)
		}
	case *list[approvalRow]:
		for _, s := range l.view[:shown] {
			ids = append(ids, l.rows[s].id)
		}
	case *list[runRow]:
		for _, s := range l.view[:shown] {
			ids = append(ids, l.rows[s].id)
		}
	case *list[alertRow]:
		for _, s := range l.view[:shown] {
			ids = append(ids, l.rows[s].idStr)
		}
	}
	return ids
}

func short(ids []string) string {
	var out []string
	for _, id := range ids {
		out = append(out, shortID(id)[len(shortID(id))-1:])
	}
	return strings.Join(out, "")
}

func TestDefaultSortIsUrgencyThenRecency(t *testing.T) {
	hs := newHarness(t, 80, 24)
	// running, queued, lost, failed, timed_out, cancelled, succeeded.
	if got := short(hs.visibleIDs()); got != "1234675" {
		t.Fatalf("task order = %s, want 1234675", got)
	}
	hs.keys("3")
	if got := hs.visibleIDs(); got[0] != "ap2beef00002" || got[1] != "ap1c0ffee001" {
		t.Fatalf("approvals: pending first, newest first: %v", got)
	}
	hs.keys("4")
	if got := hs.visibleIDs(); got[0] != "a1b2c3d4e5f6" || got[1] != "d4e5f6a1b2c3" {
		t.Fatalf("jobs: running, then lost: %v", got)
	}
	hs.keys("5")
	if got := hs.visibleIDs(); strings.Join(got, ",") != "3,2,1" {
		t.Fatalf("alerts: unread first, newest first: %v", got)
	}
}

func TestSortCycles(t *testing.T) {
	hs := newHarness(t, 80, 24)
	want := []struct{ name, order string }{
		{"recent", "1273465"}, // by last activity or end
		{"created", "2173465"},
		{"label", "7523416"}, // draft, lint, nightly, refactor, run, summarise, weekly
		{"urgency", "1234675"},
	}
	for _, w := range want {
		hs.keys("s")
		if got := hs.m.tasks.SortName(); got != w.name {
			t.Fatalf("sort = %s, want %s", got, w.name)
		}
		if got := short(hs.visibleIDs()); got != w.order {
			t.Fatalf("sort %s: order %s, want %s", w.name, got, w.order)
		}
	}
}

func TestSortKeepsSelection(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("down", "down") // the lost task
	id := hs.selectedID()
	hs.keys("s", "s")
	if hs.selectedID() != id {
		t.Fatalf("selection moved from %s to %s", id, hs.selectedID())
	}
}

func TestFilter(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("/")
	if !hs.m.tasks.Editing() {
		t.Fatal("/ did not open the filter")
	}
	hs.typeText("RUN") // case-insensitive, over the row's text
	if got := short(hs.visibleIDs()); got != "134" {
		t.Fatalf("filter RUN: %s, want 134 (running, run-id in error, run the test suite)", got)
	}
	hs.typeText("n")
	if got := short(hs.visibleIDs()); got != "1" {
		t.Fatalf("filter RUNn: %s, want 1", got)
	}
	hs.keys("backspace", "backspace")
	if got := short(hs.visibleIDs()); got != "134" {
		t.Fatalf("filter RU: %s, want 134", got)
	}
	// q is typed into the filter, never quits.
	hs.keys("q")
	if hs.m.quit {
		t.Fatal("q in the filter quit the console")
	}
	if got := hs.m.tasks.input.value(); got != "RUq" {
		t.Fatalf("filter text = %q", got)
	}
	hs.keys("backspace", "enter") // keep the filter, leave the prompt
	if hs.m.tasks.Editing() || !hs.m.tasks.Filtered() {
		t.Fatal("enter should keep the filter and leave the prompt")
	}
	if !strings.Contains(hs.screen(), "filter: RU") {
		t.Fatalf("info line does not show the filter:\n%s", hs.screen())
	}
	hs.keys("esc")
	if hs.m.tasks.Filtered() {
		t.Fatal("esc did not clear the filter")
	}
	if n, _ := hs.m.tasks.Counts(); n != 7 {
		t.Fatalf("after esc %d rows, want 7", n)
	}
	// esc inside the prompt clears and closes it.
	hs.keys("/")
	hs.typeText("zzz")
	if n, _ := hs.m.tasks.Counts(); n != 0 || !strings.Contains(hs.screen(), "no tasks match the filter") {
		t.Fatalf("zzz: %d rows\n%s", n, hs.screen())
	}
	hs.keys("esc")
	if hs.m.tasks.Editing() || hs.m.tasks.Filtered() {
		t.Fatal("esc in the prompt should clear and close it")
	}
}

func TestFilterIsSanitised(t *testing.T) {
	hs := newHarness(t, 80, 24)
	// The fixture's label carries an OSC title and colours: neither reaches
	// the terminal as a sequence; they show inert, their ESC and BEL as
	// symbols (termtext.Exact), and the text is searchable.
	scr := hs.screen()
	if strings.Contains(hs.m.render(), "\x1b]0;") || strings.Contains(hs.m.render(), "\a") {
		t.Fatal("escape sequence from a label reached the screen")
	}
	if !strings.Contains(scr, "␛]0;pwned␇") {
		t.Fatalf("the label's OSC title is not shown as inert text:\n%s", scr)
	}
	hs.keys("/")
	hs.typeText("weekly report ␛]0;pwned")
	if got := short(hs.visibleIDs()); got != "6" {
		t.Fatalf("filter on sanitised text: %s", got)
	}
}

func TestPaneSwitching(t *testing.T) {
	hs := newHarness(t, 80, 24)
	order := []feed.Kind{feed.KindRun, feed.KindApproval, feed.KindJob, feed.KindAlert, feed.KindTask}
	for _, want := range order {
		hs.keys("tab")
		if hs.m.active != want {
			t.Fatalf("tab: pane %v, want %v", hs.m.active, want)
		}
	}
	hs.keys("shift+tab")
	if hs.m.active != feed.KindAlert {
		t.Fatalf("shift+tab: %v", hs.m.active)
	}
	for i, k := range []string{"1", "2", "3", "4", "5"} {
		hs.keys(k)
		if hs.m.active != feed.Kind(i) {
			t.Fatalf("%s: pane %v", k, hs.m.active)
		}
	}
	// Each pane keeps its own cursor and filter.
	hs.keys("1", "down", "down", "2", "down", "1")
	if got := short([]string{hs.selectedID()}); got != "3" {
		t.Fatalf("tasks cursor lost when switching: %s", hs.selectedID())
	}
}

func TestNavigation(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("G")
	if got := short([]string{hs.selectedID()}); got != "5" {
		t.Fatalf("G: %s", hs.selectedID())
	}
	hs.keys("g")
	if got := short([]string{hs.selectedID()}); got != "1" {
		t.Fatalf("g: %s", hs.selectedID())
	}
	hs.keys("up") // stays at the top
	hs.keys("pgdown")
	if got := short([]string{hs.selectedID()}); got != "5" {
		t.Fatalf("pgdown: %s", hs.selectedID())
	}
}

func TestDetailView(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("enter")
	scr := hs.screen()
	for _, want := range []string{"Task 0193a0b1-0001-7000-8000-000000000001", "run_id", "run-7f3a", "lines 1–17 of 31"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("detail lacks %q:\n%s", want, scr)
		}
	}
	hs.keys("G")
	scr = hs.screen()
	for _, want := range []string{"(12s ago)", "Journal (3 events)", "queued → running", "[ignored]", "only maintenance may mark a task lost"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("journal lacks %q:\n%s", want, scr)
		}
	}
	hs.keys("esc")
	if hs.m.detail != nil {
		t.Fatal("esc did not close the detail view")
	}
	// i opens a job's detail (enter opens its log).
	hs.keys("4", "i")
	if hs.m.detail == nil || !strings.Contains(hs.screen(), "log_path") {
		t.Fatalf("i on a job:\n%s", hs.screen())
	}
	hs.keys("q")
	if hs.m.detail != nil || hs.m.quit {
		t.Fatal("q in the detail view should close it, not quit")
	}
}

func TestDetailOfMissingRow(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.src.mutate(func(s *fakeSource) []change { s.tasks = s.tasks[1:]; return nil })
	hs.keys("enter")
	if !strings.Contains(hs.screen(), "cannot show task 0193a0b1-0001") {
		t.Fatalf("detail of a pruned row:\n%s", hs.screen())
	}
}

func TestLogView(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("l")
	if !strings.Contains(hs.m.StatusText(), "the log view is for jobs") {
		t.Fatalf("l on a task: %q", hs.m.StatusText())
	}
	hs.keys("4", "enter")
	fl, ok := hs.m.logv.(*fakeLog)
	if !ok || fl.t.ID != "a1b2c3d4e5f6" {
		t.Fatalf("enter on a job did not open its log: %#v", hs.m.logv)
	}
	if fl.ended {
		t.Fatal("a running job's log was marked ended")
	}
	// The job finishes in another process: the log view marks the end.
	hs.src.mutate(func(s *fakeSource) []change {
		s.jobs[0].Status, s.jobs[0].ExitCode, s.jobs[0].CompletedAt = core.JobCompleted, ptr(0), at(0)
		return []change{{feed.KindJob, "a1b2c3d4e5f6"}}
	})
	hs.send(tickMsg{})
	if !fl.ended {
		t.Fatal("log view not told that the job ended")
	}
	hs.keys("esc")
	if hs.m.logv != nil || !fl.closed {
		t.Fatal("esc did not close the log view")
	}
	// A finished job's log is marked at once.
	hs.keys("down", "down", "l")
	if fl2 := hs.m.logv.(*fakeLog); !fl2.ended {
		t.Fatal("finished job's log not marked ended")
	}
}

func TestJobEndedMsg(t *testing.T) {
	r := jobRowOf(&core.Job{ID: "x", Status: core.JobFailed, ExitCode: ptr(3), CompletedAt: at(0), CaptureError: "disk full"})
	msg, ok := jobEndedMsg(&r).(logview.JobEndedMsg)
	if !ok || msg.Status != core.JobFailed || *msg.ExitCode != 3 || msg.CaptureError != "disk full" || !msg.At.Equal(t0) {
		t.Fatalf("jobEndedMsg = %#v", msg)
	}
}

// ---- actions ----------------------------------------------------------

func TestApproveWithScope(t *testing.T) {
	for _, c := range []struct {
		keys  []string
		scope string
	}{{nil, "once"}, {[]string{"right"}, "session"}, {[]string{"right", "right"}, "always"}, {[]string{"left"}, "always"}} {
		hs := newHarness(t, 80, 24)
		hs.keys("3", "a")
		if _, ok := hs.m.dialog.(*scopeDialog); !ok {
			t.Fatal("a did not open the scope picker")
		}
		hs.keys(c.keys...)
		if len(hs.act.calls) != 0 {
			t.Fatal("approved before enter")
		}
		hs.keys("enter")
		got := hs.act.last()
		if got.op != "approve" || got.id != "ap2beef00002" || got.arg != c.scope || got.actor != "op@host" {
			t.Fatalf("call = %+v, want approve ap2beef00002 %s by op@host", got, c.scope)
		}
		want := "approved ap2beef00002 (" + c.scope + ")"
		if c.scope != "once" {
			want += `, grant g0000000abcd Bash "rm"`
		}
		if hs.m.StatusText() != want || hs.m.dialog != nil {
			t.Fatalf("status %q, want %q", hs.m.StatusText(), want)
		}
	}
}

func TestApproveRefusedShowsTheReason(t *testing.T) {
	hs := newHarness(t, 80, 24)
	// The row still shows pending; the registry (decided elsewhere meanwhile)
	// refuses.
	hs.act.res = core.Result{Applied: false, Reason: "already approved"}
	hs.keys("3", "a", "enter")
	if got := hs.m.StatusText(); got != "approve ap2beef00002 refused: already approved" {
		t.Fatalf("status %q", got)
	}
	if !strings.Contains(hs.screen(), "refused: already approved") {
		t.Fatalf("status line not on screen:\n%s", hs.screen())
	}
}

func TestActionErrorShown(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.act.err, hs.act.res = errBusy, core.Result{}
	hs.keys("c", "y")
	if got := hs.m.StatusText(); !strings.HasPrefix(got, "cancel task 0193a0b1-0001 failed: database is locked") {
		t.Fatalf("status %q", got)
	}
}

func TestDenyWithReason(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("3", "d")
	d, ok := hs.m.dialog.(*reasonDialog)
	if !ok {
		t.Fatal("d did not open the reason dialog")
	}
	hs.typeText("not on prod, quit") // q is typed, not quit
	if hs.m.quit || d.in.value() != "not on prod, quit" {
		t.Fatalf("reason = %q quit=%v", d.in.value(), hs.m.quit)
	}
	hs.send(tea.PasteMsg{Content: " \x1b[31m!"})
	hs.keys("enter")
	got := hs.act.last()
	if got.op != "deny" || got.id != "ap2beef00002" || got.arg != "not on prod, quit !" {
		t.Fatalf("call = %+v", got)
	}
	if hs.m.StatusText() != "denied ap2beef00002: not on prod, quit !" {
		t.Fatalf("status %q", hs.m.StatusText())
	}
}

func TestDenyEscKeepsPending(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("3", "d", "esc")
	if len(hs.act.calls) != 0 || hs.m.dialog != nil {
		t.Fatal("esc in the deny dialog must not deny")
	}
	if !strings.Contains(hs.m.StatusText(), "not confirmed") {
		t.Fatalf("status %q", hs.m.StatusText())
	}
}

func TestConfirmDialogs(t *testing.T) {
	cases := []struct {
		name   string
		keys   []string
		title  string
		op, id string
		status string
	}{
		{"cancel task", []string{"c"}, "Cancel task 0193a0b1-0001?", "cancel_task", "0193a0b1-0001-7000-8000-000000000001", "cancelled task 0193a0b1-0001"},
		{"cancel job", []string{"4", "c"}, "Cancel job a1b2c3d4e5f6?", "cancel_job", "a1b2c3d4e5f6", "cancelled job a1b2c3d4e5f6"},
		{"kill run", []string{"2", "g", "down", "k"}, "Kill run run-7f3a?", "kill", "run-7f3a", "killed run run-7f3a"},
		{"kill a task's run", []string{"k"}, "Kill run run-7f3a?", "kill", "run-7f3a", "killed run run-7f3a"},
		{"reap from a job", []string{"4", "r"}, "Reap the jobs of session sess-main?", "reap", "sess-main", "reaped 2 jobs of session sess-main"},
		{"reap from a task", []string{"r"}, "Reap the jobs of session sess-sub-1?", "reap", "sess-sub-1", "reaped 2 jobs of session sess-sub-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, confirm := range []string{"enter", "y"} {
				hs := newHarness(t, 80, 24)
				hs.keys(c.keys...)
				if !strings.Contains(hs.screen(), c.title) {
					t.Fatalf("dialog %q not shown:\n%s", c.title, hs.screen())
				}
				// q and n close without acting.
				hs.keys("q")
				if hs.m.dialog != nil || hs.m.quit || len(hs.act.calls) != 0 {
					t.Fatal("q should close the dialog without acting or quitting")
				}
				hs.keys(c.keys...)
				hs.keys("n")
				if hs.m.dialog != nil || len(hs.act.calls) != 0 {
					t.Fatal("n should close the dialog without acting")
				}
				hs.keys(c.keys...)
				hs.keys(confirm)
				got := hs.act.last()
				if got.op != c.op || got.id != c.id || got.actor != "op@host" {
					t.Fatalf("call = %+v, want %s %s by op@host", got, c.op, c.id)
				}
				if hs.m.StatusText() != c.status {
					t.Fatalf("status %q, want %q", hs.m.StatusText(), c.status)
				}
			}
		})
	}
}

func TestActionsOnTheWrongRow(t *testing.T) {
	hs := newHarness(t, 80, 24)
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"a"}, "approve applies to approvals"},
		{[]string{"d"}, "deny applies to approvals"},
		{[]string{"3", "c"}, "cancel applies to tasks and jobs"},
		{[]string{"down", "k"}, "kill applies to runs"}, // still on approvals: k
		{[]string{"5", "r"}, "reap applies to a job or task row"},
		{[]string{"1", "down", "r"}, "task 0193a0b1-0002 has no session to reap"},
	} {
		hs.keys(c.keys...)
		if !strings.Contains(hs.m.StatusText(), c.want) || hs.m.dialog != nil {
			t.Fatalf("%v: status %q, want %q", c.keys, hs.m.StatusText(), c.want)
		}
	}
	if len(hs.act.calls) != 0 {
		t.Fatalf("calls made: %+v", hs.act.calls)
	}
}

func TestActionsFromTheDetailView(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("3", "enter", "a", "enter")
	if got := hs.act.last(); got.op != "approve" || got.id != "ap2beef00002" {
		t.Fatalf("call = %+v", got)
	}
}

// TestMaintenanceApplyRecountsHeader: after an applied plan the header's
// counts agree with what the sweep did, prunes included (a prune leaves no
// journal for a delta load to find).
func TestMaintenanceApplyRecountsHeader(t *testing.T) {
	hs := newHarness(t, 120, 30)
	before := hs.m.counts.tasks
	if before == 0 {
		t.Fatal("the fixture has no running task")
	}
	hs.mt.onApply = func() {
		hs.src.mu.Lock()
		defer hs.src.mu.Unlock()
		i := slices.IndexFunc(hs.src.tasks, func(k core.Task) bool { return k.Status == core.TaskRunning })
		hs.src.tasks = slices.Delete(hs.src.tasks, i, i+1)
		hs.src.version++
	}
	hs.keys("m", "enter")
	if hs.mt.applied != 1 {
		t.Fatalf("applied %d times", hs.mt.applied)
	}
	if hs.m.counts.tasks != before-1 {
		t.Fatalf("header counts %d running tasks after the sweep pruned one of %d", hs.m.counts.tasks, before)
	}
}

func TestMaintenance(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("m")
	d, ok := hs.m.dialog.(*planDialog)
	if !ok || d.plan == nil {
		t.Fatal("m did not show the plan")
	}
	if !strings.Contains(hs.screen(), "early_lost task 0193a0b1-0002: queued → lost") || hs.mt.applied != 0 {
		t.Fatalf("plan not shown, or applied early:\n%s", hs.screen())
	}
	// On a 120-column terminal the dialog widens so the reason shows.
	hs.send(tea.WindowSizeMsg{Width: 120, Height: 30})
	if !strings.Contains(hs.screen(), "queued → lost — backing session missing for 2m (grace 60s)") {
		t.Fatalf("reason cut at 120 columns:\n%s", hs.screen())
	}
	hs.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	hs.keys("esc")
	if hs.mt.applied != 0 || hs.m.dialog != nil || hs.m.StatusText() != "maintenance: not applied" {
		t.Fatalf("esc: applied=%d status %q", hs.mt.applied, hs.m.StatusText())
	}
	hs.keys("m", "enter")
	if hs.mt.applied != 1 || hs.m.dialog != nil {
		t.Fatalf("enter: applied=%d", hs.mt.applied)
	}
	if hs.m.StatusText() != "maintenance applied: 1 lost · 2 stamped" {
		t.Fatalf("status %q", hs.m.StatusText())
	}
	if !strings.Contains(hs.screen(), "swept just now: 1 lost · 2 stamped") {
		t.Fatalf("header does not show the sweep:\n%s", hs.screen())
	}
	// An empty plan: enter just closes.
	hs.mt.plan = &Plan{Summary: "Nothing to apply", Empty: true}
	hs.keys("m", "enter")
	if hs.mt.applied != 1 || hs.m.dialog != nil {
		t.Fatal("an empty plan must not be applied")
	}
}

func TestReadOnlyRefusesEveryAction(t *testing.T) {
	hs := newHarness(t, 80, 24, readOnly)
	for _, c := range []struct{ keys, action string }{
		{"a", "approve"}, {"d", "deny"}, {"c", "cancel"}, {"k", "kill"}, {"r", "reap"}, {"m", "maintenance"},
	} {
		for _, pane := range []string{"1", "2", "3", "4", "5"} {
			hs.keys(pane, c.keys)
			if want := "read-only console: " + c.action + " is disabled"; hs.m.StatusText() != want {
				t.Fatalf("pane %s key %s: status %q, want %q", pane, c.keys, hs.m.StatusText(), want)
			}
			if hs.m.dialog != nil {
				t.Fatal("a dialog opened in a read-only console")
			}
		}
	}
	scr := hs.screen()
	if !strings.Contains(scr, "READ-ONLY") || !strings.Contains(scr, "sweeper off (read-only)") {
		t.Fatalf("read-only header:\n%s", scr)
	}
	hs.keys("?")
	lines := strings.Split(hs.screen(), "\n")
	scr = strings.Join(lines[:len(lines)-3], "\n")
	for _, gone := range []string{"approve", "cancel", "kill run", "maintenance"} {
		if strings.Contains(scr, gone) {
			t.Fatalf("read-only help lists %q:\n%s", gone, scr)
		}
	}
}

func TestHelpIsGeneratedFromTheKeyMap(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.m.ctx.Keys.Quit.SetKeys("x")
	hs.m.ctx.Keys.Quit.SetHelp("x", "leave")
	hs.keys("?")
	scr := hs.screen()
	for _, want := range []string{"Keys — Tasks pane", "x     leave", "c cancel", "enter detail", "tab       next pane"} {
		if !strings.Contains(strings.Join(strings.Fields(scr), " "), strings.Join(strings.Fields(want), " ")) {
			t.Fatalf("help lacks %q:\n%s", want, scr)
		}
	}
	hs.keys("q") // q is no longer quit: closes help? no: only help/back/quit keys do
	if !hs.m.showHelp {
		t.Fatal("a key that is not help/back/quit closed the help")
	}
	hs.keys("esc")
	if hs.m.showHelp {
		t.Fatal("esc did not close help")
	}
	hs.keys("x")
	if !hs.m.quit {
		t.Fatal("the rebound quit key did not quit")
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		hs := newHarness(t, 80, 24)
		_, cmd := hs.m.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s: no quit cmd", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok || !hs.m.quit {
			t.Fatalf("%s did not quit", k)
		}
	}
	// ctrl+c quits from inside a dialog and the filter too.
	hs := newHarness(t, 80, 24)
	hs.keys("3", "d")
	if _, cmd := hs.m.Update(keyMsg("ctrl+c")); cmd == nil || !hs.m.quit {
		t.Fatal("ctrl+c inside a dialog did not quit")
	}
}

// ---- resize, live data, busy database ----------------------------------

func TestResizeAnyTime(t *testing.T) {
	hs := newHarness(t, 80, 24)
	sizes := [][2]int{{80, 24}, {200, 60}, {100, 30}, {20, 5}, {1, 1}, {160, 48}, {52, 20}, {40, 16}, {28, 12}, {80, 24}}
	states := [][]string{nil, {"enter"}, {"?"}, {"3", "a"}, {"m"}, {"/"}, {"4", "enter"}, {"2"}, {"3"}, {"4"}, {"5"}}
	for _, st := range states {
		hs.keys("esc", "esc", "esc", "1")
		hs.keys(st...)
		for _, sz := range sizes {
			hs.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			scr := hs.m.render()
			lines := strings.Split(scr, "\n")
			if sz[0] >= 80 && sz[1] >= 24 && len(lines) != sz[1] {
				t.Fatalf("state %v at %dx%d: %d lines", st, sz[0], sz[1], len(lines))
			}
			// No line wider than the terminal (it would wrap and push
			// the screen up), down to the 20 columns the console draws.
			if sz[0] < 20 {
				continue
			}
			for i, l := range lines {
				if w := lipglossWidth(l); w > sz[0] {
					t.Fatalf("state %v at %dx%d: line %d is %d wide: %q", st, sz[0], sz[1], i, w, stripANSI(l))
				}
			}
		}
	}
}

func TestLiveDelta(t *testing.T) {
	hs := newHarness(t, 80, 24)
	loads := hs.src.loads
	hs.send(tickMsg{})
	if hs.src.loads != loads {
		t.Fatal("a tick with no change loaded rows")
	}
	hs.keys("down") // cursor on the queued task
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks[1].Status, s.tasks[1].StartedAt = core.TaskRunning, at(time.Second)
		s.tasks = append(s.tasks, core.Task{ID: "0193a0b1-0008-7000-8000-000000000008", Runtime: core.RuntimeCLI,
			Status: core.TaskQueued, DeliveryStatus: core.DeliveryNotApplicable, Label: "new work", CreatedAt: at(0)})
		s.tasks = append(s.tasks[:2], s.tasks[3:]...) // the lost task is pruned
		s.alerts = append(s.alerts, core.Notification{ID: 4, Kind: core.NotifyTaskSilent, Text: "silent", CreatedAt: at(0)})
		s.alerts[1].DeliveredAt = at(0)
		return []change{{feed.KindTask, "0193a0b1-0002-7000-8000-000000000002"}, {feed.KindTask, "0193a0b1-0008-7000-8000-000000000008"},
			{feed.KindTask, "0193a0b1-0003-7000-8000-000000000003"}}
	})
	hs.send(tickMsg{})
	if got := short(hs.visibleIDs()); got != "2184675" {
		t.Fatalf("after delta: %s, want 2184675", got)
	}
	if got := short([]string{hs.selectedID()}); got != "2" {
		t.Fatalf("cursor did not follow its row: %s", hs.selectedID())
	}
	c := hs.m.counts
	if c.tasks != 2 || c.lost != 1 || c.unread != 2 {
		t.Fatalf("header counts %+v", c)
	}
	hs.keys("5")
	if got := strings.Join(hs.visibleIDs(), ","); got != "4,3,2,1" {
		t.Fatalf("alerts after delta: %s", got)
	}
	if hs.m.alerts.rows[hs.m.alerts.ids["2"]].delivered == 0 {
		t.Fatal("alert 2 delivered elsewhere still unread")
	}
}

// TestCountMismatchForcesFullReload: a source that loads whole tables and
// lost rows without a journal (LoadResult.Counts differ from the rows the
// memory window holds) is loaded whole again at once.
func TestCountMismatchForcesFullReload(t *testing.T) {
	counts := core.TableCounts{Tasks: 6, Runs: 4, Approvals: 4, Jobs: 4, Notifications: 3}
	hs := newHarness(t, 80, 24, func(o *Options) { o.Source = countingSource{o.Source.(*fakeSource), counts} })
	full := hs.src.loads
	hs.src.mutate(func(s *fakeSource) []change { s.tasks = s.tasks[:6]; return nil }) // pruned, no journal
	hs.send(tickMsg{})
	if hs.src.loads != full+2 {
		t.Fatalf("loads %d, want a delta then a full reload", hs.src.loads-full)
	}
	if _, total := hs.m.tasks.Counts(); total != 6 {
		t.Fatalf("tasks after reload: %d", total)
	}
}

type countingSource struct {
	*fakeSource
	c core.TableCounts
}

func (c countingSource) Load(ctx context.Context, req feed.LoadRequest, sink feed.Sink) (feed.LoadResult, error) {
	res, err := c.fakeSource.Load(ctx, req, sink)
	if !res.Full {
		res.Counts = &c.c
	}
	return res, err
}

func TestBusyDatabase(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.src.mutate(func(s *fakeSource) []change { s.err = errBusy; return nil })
	hs.send(tickMsg{})
	if hs.m.StatusText() != "database busy, retrying…" {
		t.Fatalf("status %q", hs.m.StatusText())
	}
	if !strings.Contains(hs.screen(), "database busy, retrying…") || !strings.Contains(hs.screen(), "summarise") {
		t.Fatalf("busy screen must keep the rows and say so:\n%s", hs.screen())
	}
	hs.keys("down") // input still works
	hs.src.mutate(func(s *fakeSource) []change { s.err = nil; return nil })
	hs.send(tickMsg{})
	if hs.m.StatusText() != "" {
		t.Fatalf("busy status not cleared: %q", hs.m.StatusText())
	}
	// A read that hangs: after a second the status line says so.
	hs.m.loading, hs.m.loadStart = true, hs.m.ctx.now()
	hs.clk.Advance(1500 * time.Millisecond)
	hs.send(tickMsg{})
	if hs.m.StatusText() != "database busy, retrying…" {
		t.Fatalf("slow read: status %q", hs.m.StatusText())
	}
}

func TestOtherReadErrorsAreShown(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.src.mutate(func(s *fakeSource) []change { s.err = errors.New("disk I/O error"); return nil })
	hs.send(tickMsg{})
	if got := hs.m.StatusText(); got != "reading the registry failed (retrying): disk I/O error" {
		t.Fatalf("status %q", got)
	}
}

// TestEmbeddedSweeperSchedule: the embedded sweeper sweeps as the console
// opens, then every interval; the header says so in steps of 10 s.
func TestEmbeddedSweeperSchedule(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.send(tickMsg{})
	if hs.mt.sweeps != 1 {
		t.Fatalf("sweeps = %d as the console opens, want 1", hs.mt.sweeps)
	}
	if !strings.Contains(hs.screen(), "swept just now: nothing to do · next 1m") {
		t.Fatalf("header:\n%s", hs.screen())
	}
	hs.clk.Advance(30 * time.Second)
	hs.send(tickMsg{})
	if hs.mt.sweeps != 1 {
		t.Fatalf("sweeps = %d before the interval", hs.mt.sweeps)
	}
	if !strings.Contains(hs.screen(), "swept 30s ago: nothing to do · next 30s") {
		t.Fatalf("header countdown:\n%s", hs.screen())
	}
	hs.clk.Advance(25 * time.Second)
	if !strings.Contains(hs.screen(), "swept 50s ago: nothing to do · next 10s") {
		t.Fatalf("header countdown:\n%s", hs.screen())
	}
	hs.clk.Advance(5 * time.Second)
	hs.send(tickMsg{})
	if hs.mt.sweeps != 2 {
		t.Fatalf("sweeps = %d after the interval", hs.mt.sweeps)
	}
}

// TestReadOnlyConsoleDoesNotSweepAtStart: a read-only console never runs
// the embedded sweeper, not even as it opens.
func TestReadOnlyConsoleDoesNotSweepAtStart(t *testing.T) {
	hs := newHarness(t, 80, 24, func(o *Options) { o.ReadOnly = true })
	hs.send(tickMsg{})
	if hs.mt.sweeps != 0 || !strings.Contains(hs.screen(), "sweeper off (read-only)") {
		t.Fatalf("sweeps %d\n%s", hs.mt.sweeps, hs.screen())
	}
}

func TestSweeperOffWhenDisabled(t *testing.T) {
	hs := newHarness(t, 80, 24, func(o *Options) { o.SweepInterval = 0 })
	hs.clk.Advance(time.Hour)
	hs.send(tickMsg{})
	if hs.mt.sweeps != 0 || !strings.Contains(hs.screen(), "sweeper off") {
		t.Fatalf("sweeps %d\n%s", hs.mt.sweeps, hs.screen())
	}
}

func TestDetailFollowsLiveChanges(t *testing.T) {
	hs := newHarness(t, 160, 48)
	hs.keys("enter")
	if !strings.Contains(hs.screen(), "status            running") {
		t.Fatalf("detail:\n%s", hs.screen())
	}
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks[0].Status, s.tasks[0].EndedAt = core.TaskSucceeded, at(0)
		return []change{{feed.KindTask, s.tasks[0].ID}}
	})
	hs.send(tickMsg{})
	if !strings.Contains(hs.screen(), "status            succeeded") {
		t.Fatalf("detail not reloaded after its row changed:\n%s", hs.screen())
	}
}

// TestFilterMatchesNaive checks the filter (the source's, or the window
// narrowed in place when every match is in it) against a plain substring
// search of every task's searchable fields, keystroke by keystroke,
// backspaces included: the count, capped as the source caps it, and every
// row shown matching.
func TestFilterMatchesNaive(t *testing.T) {
	hs := bigHarness(t, 40_000)
	l := hs.m.tasks
	fields := view.TaskValues().Fields
	naive := func(q string) int {
		low := []byte(q)
		lowerASCII(low)
		n := 0
		for i := range hs.src.tasks {
			for _, f := range fields {
				h := []byte(f(&hs.src.tasks[i]))
				lowerASCII(h)
				if bytes.Contains(h, low) {
					n++
					break
				}
			}
		}
		return n
	}
	hs.keys("/")
	for _, step := range []string{"r", "e", "f", "A", "backspace", "backspace", "v", "i", "e", "w", " ", "#", "1", "2",
		"backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace",
		"s", "e", "s", "s", "-", "0", "0", "4", "2", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace",
		"backspace", "backspace", "é", "backspace", "backspace"} {
		hs.keys(step)
		q := l.input.value()
		got, _ := l.Counts()
		if want := naive(q); got != min(want, 10_000) || l.CountCapped() != (want > 10_000) {
			t.Fatalf("query %q: %d rows (capped %v), want %d", q, got, l.CountCapped(), want)
		}
		for _, s := range l.view {
			if !l.contains(s, l.query) {
				t.Fatalf("query %q: row %s shown", q, l.rows[s].id)
			}
		}
	}
}

func TestFilterSeesLiveChanges(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("/")
	hs.typeText("work")
	hs.keys("enter")
	if n, _ := hs.m.tasks.Counts(); n != 0 {
		t.Fatalf("%d rows match before the change", n)
	}
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks = append(s.tasks, core.Task{ID: "0193a0b1-0009-7000-8000-000000000009", Runtime: core.RuntimeCLI,
			Status: core.TaskQueued, DeliveryStatus: core.DeliveryNotApplicable, Label: "new work", CreatedAt: at(0)})
		s.tasks[0].Label = "network work"
		return []change{{feed.KindTask, "0193a0b1-0009-7000-8000-000000000009"}, {feed.KindTask, s.tasks[0].ID}}
	})
	hs.send(tickMsg{})
	if got := short(hs.visibleIDs()); got != "19" {
		t.Fatalf("filtered rows after the change: %s, want 19", got)
	}
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks[0].Label = "summarise"
		return []change{{feed.KindTask, s.tasks[0].ID}}
	})
	hs.send(tickMsg{})
	if got := short(hs.visibleIDs()); got != "9" {
		t.Fatalf("a row that stopped matching stays: %s", got)
	}
}

// TestStatusExpires: status messages fall back to the idle line after a
// TTL on the context clock (info 8 s, warnings and errors 20 s); a newer
// message replaces an older one and starts its own TTL.
func TestStatusExpires(t *testing.T) {
	hs := newHarness(t, 120, 30, func(o *Options) { o.SweepInterval, o.WatchdogInterval = 0, 0 })
	hs.send(tickMsg{})
	cases := []struct {
		lvl         level
		stay, clear time.Duration
	}{
		{lvlInfo, 7 * time.Second, 8 * time.Second},
		{lvlOK, 7 * time.Second, 8 * time.Second},
		{lvlWarn, 19 * time.Second, 20 * time.Second},
		{lvlErr, 19 * time.Second, 20 * time.Second},
	}
	for _, c := range cases {
		hs.m.setStatus("watchdog: 1 timed out", c.lvl)
		hs.clk.Advance(c.stay)
		hs.send(tickMsg{})
		if hs.m.StatusText() != "watchdog: 1 timed out" {
			t.Fatalf("level %d: expired after %s", c.lvl, c.stay)
		}
		hs.clk.Advance(c.clear - c.stay)
		hs.send(tickMsg{})
		if hs.m.StatusText() != "" || strings.Contains(hs.screen(), "timed out") || !strings.Contains(hs.screen(), "operator op@host") {
			t.Fatalf("level %d: not expired after %s: %q\n%s", c.lvl, c.clear, hs.m.StatusText(), hs.screen())
		}
	}
	// A newer message replaces the old one and gets its own TTL.
	hs.m.setStatus("first", lvlErr)
	hs.clk.Advance(15 * time.Second)
	hs.m.setStatus("second", lvlInfo)
	hs.clk.Advance(6 * time.Second)
	hs.send(tickMsg{})
	if hs.m.StatusText() != "second" {
		t.Fatalf("status %q, want second", hs.m.StatusText())
	}
	hs.clk.Advance(2 * time.Second)
	hs.send(tickMsg{})
	if hs.m.StatusText() != "" {
		t.Fatalf("status %q, want expired", hs.m.StatusText())
	}
}

// TestMaintenanceLinesTellRowsApart: three tasks created in the same
// millisecond share their first 13 characters; the dialog's lines still
// name three different ids, each a prefix the CLI resolves.
func TestMaintenanceLinesTellRowsApart(t *testing.T) {
	var acts []sweep.Action
	for _, id := range []string{"01a209ad-9e23-7000-8000-0000000000a1", "01a209ad-9e23-7000-8000-0000000000b2", "01a209ad-9e23-7fff-8000-0000000000c3"} {
		acts = append(acts, sweep.Action{Rule: sweep.RuleEarlyLost, Entity: core.EntityTask, ID: id, From: "running", To: "lost",
			Reason: "subagent run ended (killed)", Result: sweep.ActionPlanned})
	}
	lines := reportLines(&sweep.Report{Mode: sweep.ModeDryRun, Actions: acts})
	seen := map[string]bool{}
	for i, l := range lines {
		id := strings.Fields(l)[2]
		id = strings.TrimSuffix(id, ":")
		if seen[id] || !strings.HasPrefix(acts[i].ID, id) || len(id) < minPrefix {
			t.Fatalf("line %d names %q (ids shown so far %v):\n%s", i, id, seen, strings.Join(lines, "\n"))
		}
		seen[id] = true
	}
}
