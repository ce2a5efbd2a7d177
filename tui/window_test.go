package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// Panes over a real registry's windows (issue 14): the screen shows 120×24
// (a page of 17 rows), so a few hundred tasks span many windows.

// seedTasks inserts n tasks with a few statuses, labels and times (many
// ties), each journaled like the registry does.
func seedTasks(t *testing.T, r *realReg, n int) {
	t.Helper()
	statuses := []core.TaskStatus{core.TaskRunning, core.TaskQueued, core.TaskLost, core.TaskFailed, core.TaskSucceeded, core.TaskCancelled}
	labels := []string{"alpha build", "beta deploy", "gamma", "alpha test"}
	check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
		for i := range n {
			st := statuses[i%len(statuses)]
			k := &core.Task{ID: fmt.Sprintf("0190aaaa-%04d-7000-8000-%012d", i*7919%10000, i), Runtime: core.RuntimeCLI,
				Status: st, DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
				Label: labels[(i/3)%len(labels)], Task: "work", CreatedAt: at(time.Duration(i%50) * time.Minute),
				LastEventAt: at(time.Duration(i%17) * time.Minute)}
			if !st.Active() {
				k.EndedAt = at(time.Duration(i%13) * time.Minute)
			}
			if err := insertJournaled(tx, k); err != nil {
				return err
			}
		}
		return nil
	}))
}

func insertJournaled(tx core.Tx, k *core.Task) error {
	if err := tx.InsertTask(k); err != nil {
		return err
	}
	return tx.AppendEvent(core.Event{At: k.CreatedAt, Entity: core.EntityTask, EntityID: k.ID, To: string(k.Status),
		Actor: core.ActorRuntime, Applied: true})
}

// windowHarness is the console over r's windows at 120×24.
func windowHarness(t *testing.T, r *realReg) *harness {
	t.Helper()
	hs := &harness{clk: r.clk}
	o := Options{Source: r.src, Actions: r.reg, Keys: testKeys(), Operator: "op@host", Clock: r.clk}
	hs.opts = o
	hs.m = New(o)
	hs.m.ticks = false
	hs.send(teaSize(120, 24))
	hs.run(hs.m.Init())
	return hs
}

// storeOrder is every task id in the store's order for a sort and filter,
// read as one window.
func storeOrder(t *testing.T, r *realReg, sort, query string) []string {
	t.Helper()
	b := newBatch()
	_, err := r.src.(feed.WindowSource).Window(context.Background(), feed.WindowRequest{Kind: feed.KindTask, Sort: sort, Query: query, After: 1 << 20}, b)
	check(t, err)
	ids := make([]string, len(b.tasks))
	for i := range b.tasks {
		ids[i] = b.tasks[i].id
	}
	return ids
}

// walk moves the cursor with key until it stops, recording each row.
func walk(hs *harness, key string, limit int) []string {
	ids := []string{hs.selectedID()}
	for range limit {
		hs.keys(key)
		id := hs.selectedID()
		if id == ids[len(ids)-1] {
			break
		}
		ids = append(ids, id)
	}
	return ids
}

func TestWindowPagingEverySort(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	if n := len(hs.m.tasks.rows); n >= 400 || n == 0 {
		t.Fatalf("the pane holds %d of 400 rows, want a window", n)
	}
	for i, sort := range []string{"urgency", "recent", "created", "label"} {
		if i > 0 {
			hs.keys("g", "s")
		}
		if got := hs.m.tasks.SortName(); got != sort {
			t.Fatalf("sort %q, want %q", got, sort)
		}
		want := storeOrder(t, r, sort, "")
		hs.keys("g")
		if got := walk(hs, "down", 1000); !slices.Equal(got, want) {
			t.Fatalf("%s: down visits %d rows, want %d in the store's order\ngot  %v\nwant %v", sort, len(got), len(want), got, want)
		}
		if got := walk(hs, "up", 1000); !slices.Equal(got, reversed(want)) {
			t.Fatalf("%s: up from the bottom visits %d rows, want %d", sort, len(got), len(want))
		}
		// Page down to the end, G and g across windows.
		hs.keys("g")
		pages := walk(hs, "pgdown", 100)
		if pages[len(pages)-1] != want[len(want)-1] || len(pages) < 400/hs.m.tasks.pageRows() {
			t.Fatalf("%s: pgdown stopped on %s after %d pages", sort, pages[len(pages)-1], len(pages))
		}
		hs.keys("g")
		hs.keys("G")
		if got := hs.selectedID(); got != want[len(want)-1] {
			t.Fatalf("%s: G on %s, want the last row %s", sort, got, want[len(want)-1])
		}
		hs.keys("g")
		if got := hs.selectedID(); got != want[0] {
			t.Fatalf("%s: g on %s, want the first row", sort, got)
		}
	}
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, "400 rows") {
		t.Fatalf("info line %q", got)
	}
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestWindowFilterAcrossWindows(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	hs.keys("/")
	hs.typeText("ALPHA")
	hs.keys("enter")
	want := storeOrder(t, r, "urgency", "alpha")
	if len(want) < 150 || len(want) > 250 {
		t.Fatalf("fixture: %d alpha tasks", len(want))
	}
	if got := walk(hs, "down", 1000); !slices.Equal(got, want) {
		t.Fatalf("filtered walk: %d rows, want %d", len(got), len(want))
	}
	for _, s := range hs.m.tasks.rows {
		if !strings.Contains(s.name, "alpha") {
			t.Fatalf("row %s (%s) does not match the filter", s.id, s.name)
		}
	}
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, fmt.Sprintf("%d of 400", len(want))) {
		t.Fatalf("info line %q", got)
	}
	// A narrower filter, then esc: every row again, counts too.
	hs.keys("/")
	hs.typeText(" t")
	hs.keys("enter", "g")
	if got, want := walk(hs, "down", 1000), storeOrder(t, r, "urgency", "alpha t"); !slices.Equal(got, want) || len(want) < 50 {
		t.Fatalf("alpha t: %d rows, want %d", len(got), len(want))
	}
	// Once every match is in the window, a longer query narrows it
	// without reading the store, to the same rows the store would give.
	hs.keys("esc", "/")
	hs.typeText("8000-00000000001")
	if l := hs.m.tasks; l.win.moreAfter || l.win.moreBefore || len(l.view) != 10 {
		t.Fatalf("8000-00000000001: %d rows, more %v/%v", len(l.view), l.win.moreBefore, l.win.moreAfter)
	}
	seq := hs.m.tasks.win.seq
	hs.typeText("2")
	hs.keys("enter", "g")
	if got, want := walk(hs, "down", 100), storeOrder(t, r, "urgency", "8000-000000000012"); !slices.Equal(got, want) || len(want) != 1 {
		t.Fatalf("narrowed: %v, want %v", got, want)
	}
	if hs.m.tasks.win.seq != seq {
		t.Fatal("a narrowing keystroke read the store")
	}
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, "1 of 400") {
		t.Fatalf("info line after narrowing %q", got)
	}
	hs.keys("esc")
	hs.keys("g")
	if got := walk(hs, "down", 1000); len(got) != 400 {
		t.Fatalf("after esc: %d rows", len(got))
	}
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, "400 rows") {
		t.Fatalf("info line after esc %q", got)
	}
}

func TestWindowLiveInsertAboveInsideBelow(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	hs.keys("s", "s") // created: newest first
	order := storeOrder(t, r, "created", "")
	for range 200 {
		hs.keys("down")
	}
	sel := hs.selectedID()
	if sel != order[200] {
		t.Fatalf("cursor on %s, want row 200 %s", sel, order[200])
	}
	line := hs.m.tasks.cursor - hs.m.tasks.offset
	cur := hs.m.tasks.rows[hs.m.tasks.ids[sel]]
	mk := func(id string, created core.Timestamp) *core.Task {
		return &core.Task{ID: id, Runtime: core.RuntimeCLI, Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending,
			NotifyPolicy: core.NotifyDoneOnly, Label: "new", CreatedAt: created}
	}
	above := mk("0190ffff-0000-7000-8000-000000000001", at(-time.Hour))     // newest: sorts first
	inside := mk("0190ffff-0000-7000-8000-000000000002", cur.created)       // next to the cursor's row
	below := mk("0190ffff-0000-7000-8000-000000000003", at(1000*time.Hour)) // oldest: sorts last
	running := hs.m.counts.tasks
	check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
		for _, k := range []*core.Task{above, inside, below} {
			if err := insertJournaled(tx, k); err != nil {
				return err
			}
		}
		return nil
	}))
	tickAfterWrite(t, hs, r.src)
	l := hs.m.tasks
	if got := hs.selectedID(); got != sel {
		t.Fatalf("after the inserts the cursor is on %s, want %s", got, sel)
	}
	if got := l.cursor - l.offset; got != line {
		t.Fatalf("the cursor's row moved from screen line %d to %d", line, got)
	}
	if _, ok := l.ids[inside.ID]; !ok {
		t.Fatal("the row inserted inside the window is not shown")
	}
	for _, k := range []*core.Task{above, below} {
		if _, ok := l.ids[k.ID]; ok {
			t.Fatalf("row %s outside the window was loaded", k.ID)
		}
	}
	if got := l.InfoLine(120); !strings.Contains(got, "403 rows") {
		t.Fatalf("counts after the inserts: %q", got)
	}
	if hs.m.counts.tasks != running+3 {
		t.Fatalf("header running tasks %d, want %d", hs.m.counts.tasks, running+3)
	}
	// The rows outside the window are there when the cursor goes to them.
	hs.keys("g")
	if got := hs.selectedID(); got != above.ID {
		t.Fatalf("top row %s, want the insert above %s", got, above.ID)
	}
	hs.keys("G")
	if got := hs.selectedID(); got != below.ID {
		t.Fatalf("bottom row %s, want the insert below %s", got, below.ID)
	}
}

// The detail view and an action on a windowed pane's row.
func TestWindowDetailAndAction(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 300)
	hs := windowHarness(t, r)
	for range 120 {
		hs.keys("down")
	}
	id := hs.selectedID()
	row := hs.m.tasks.rows[hs.m.tasks.ids[id]]
	if !row.status.Active() {
		for hs.m.tasks.rows[hs.m.tasks.ids[hs.selectedID()]].status.Active() == false {
			hs.keys("up")
		}
		id = hs.selectedID()
	}
	hs.keys("enter")
	if scr := hs.screen(); !strings.Contains(scr, id) {
		t.Fatalf("detail of %s:\n%s", id, scr)
	}
	hs.keys("esc", "c", "y")
	if got := hs.m.StatusText(); !strings.HasPrefix(got, "cancelled task ") {
		t.Fatalf("cancel: %q", got)
	}
	hs.send(tickMsg{})
	if got := hs.selectedID(); got != id {
		t.Fatalf("after the cancel the cursor is on %s, want %s", got, id)
	}
	if s := hs.m.tasks.rows[hs.m.tasks.ids[id]].status; s != core.TaskCancelled {
		t.Fatalf("status after cancel: %s", s)
	}
}

// TestWindowLiveInsertAtTopStaysInView: an operator who moved the cursor and
// came back to the top of a windowed pane sees rows that arrive above it (as
// in a pane loaded whole), and the cursor keeps its row. (It used to keep
// its screen line instead, which scrolled the new rows out of view; seen in
// bench/p9 as a write that never reached the screen.)
func TestWindowLiveInsertAtTopStaysInView(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	hs.keys("s", "s") // created: newest first
	hs.keys("down", "down", "g")
	sel := hs.selectedID()
	if hs.m.tasks.cursor != 0 || hs.m.tasks.offset != 0 {
		t.Fatalf("cursor %d offset %d after g, want 0 0", hs.m.tasks.cursor, hs.m.tasks.offset)
	}
	k := &core.Task{ID: "0190ffff-0000-7000-8000-0000000000aa", Runtime: core.RuntimeCLI, Status: core.TaskRunning,
		DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, Label: "new", CreatedAt: at(-time.Hour)}
	check(t, r.db.Update(context.Background(), func(tx core.Tx) error { return insertJournaled(tx, k) }))
	tickAfterWrite(t, hs, r.src)
	l := hs.m.tasks
	if got := hs.selectedID(); got != sel {
		t.Fatalf("after the insert the cursor is on %s, want %s", got, sel)
	}
	if l.offset != 0 {
		t.Fatalf("offset %d: the new top row is scrolled out of view", l.offset)
	}
	if s, ok := l.ids[k.ID]; !ok || l.view[0] != s {
		t.Fatal("the row inserted at the top is not the first row shown")
	}
}

// A capped filter count reads as a lower bound in the tab too, as on the
// info line ("10,000+ of 1,010,000").
func TestWindowCappedCountInTab(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 40)
	hs := windowHarness(t, r)
	hs.keys("/")
	hs.typeText("alpha")
	hs.keys("enter")
	w := &hs.m.tasks.win
	if !w.counted || w.capped {
		t.Fatalf("fixture: counted %v capped %v", w.counted, w.capped)
	}
	if tabs := ansi.Strip(hs.m.tabsView(120)); !strings.Contains(tabs, fmt.Sprintf("Tasks %d/40", w.matched)) {
		t.Fatalf("exact count: tabs %q", tabs)
	}
	w.matched, w.capped = 10, true // as a count stopped at a limit of 10 reports
	if tabs := ansi.Strip(hs.m.tabsView(120)); !strings.Contains(tabs, "Tasks 10+/40") {
		t.Fatalf("capped count: tabs %q", tabs)
	}
	if info := hs.m.tasks.InfoLine(120); !strings.Contains(info, "10+ of 40") {
		t.Fatalf("capped count: info line %q", info)
	}
}

// reqLog records the requests the console makes to its window source:
// the counts (counts true) or the window reads.
type reqLog struct {
	feed.WindowSource
	counts bool
	mu     sync.Mutex
	reqs   []feed.WindowRequest
}

func (s *reqLog) Window(ctx context.Context, req feed.WindowRequest, sink feed.Sink) (feed.WindowResult, error) {
	if req.Count == s.counts {
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
	}
	return s.WindowSource.Window(ctx, req, sink)
}

func (s *reqLog) take() []feed.WindowRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.reqs
	s.reqs = nil
	return out
}

// TestWindowFilterCountsOnlyMatches: a new filter counts the rows passing
// it, not the table again (its count stands, and on a large table it would
// compete with the keystroke's reads); after a write the table is counted
// again with the next filter.
func TestWindowFilterCountsOnlyMatches(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	cs := &reqLog{WindowSource: r.src.(feed.WindowSource), counts: true}
	r.src = cs
	hs := windowHarness(t, r)
	if reqs := cs.take(); len(reqs) == 0 || reqs[0].MatchedOnly {
		t.Fatalf("the first count: %+v, want the table's", reqs)
	}
	hs.keys("/")
	hs.typeText("alpha")
	hs.keys("enter")
	reqs := cs.take()
	if len(reqs) == 0 {
		t.Fatal("no count after a new filter")
	}
	for _, q := range reqs {
		if !q.MatchedOnly || q.Query == "" {
			t.Errorf("count after a new filter: %+v, want the matches only", q)
		}
	}
	want := len(storeOrder(t, r, "urgency", "alpha"))
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, fmt.Sprintf("%d of 400", want)) {
		t.Fatalf("info line %q, want %d of 400", got, want)
	}
	check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
		return insertJournaled(tx, &core.Task{ID: "0190ffff-0000-7000-8000-000000000009", Runtime: core.RuntimeCLI,
			Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
			Label: "alpha new", CreatedAt: at(0)})
	}))
	tickAfterWrite(t, hs, r.src)
	cs.take()
	hs.keys("/")
	hs.typeText(" n")
	hs.keys("enter")
	if got := hs.m.tasks.InfoLine(120); !strings.Contains(got, "1 of 401") {
		t.Fatalf("after a write and a new filter: info line %q, want 1 of 401", got)
	}
}

// TestWindowShowsUniqueIDs: a pane over the store's windows shows each
// task id by its shortest prefix no other task of the table shares (not
// only of the window), at least 13 characters, and what the ID column shows
// resolves to the row's id, as an operator copying it into a command
// expects.
func TestWindowShowsUniqueIDs(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	var all []string
	check(t, r.db.View(context.Background(), func(tx core.Tx) error {
		return tx.EachTask(func(k *core.Task) error { all = append(all, k.ID); return nil })
	}))
	hs := windowHarness(t, r)
	l := hs.m.tasks
	if len(l.rows) == 0 {
		t.Fatal("no rows in the window")
	}
	for i := range l.rows {
		id, shown := l.rows[i].id, l.rows[i].shortID()
		if !strings.HasPrefix(id, shown) || len(shown) < minPrefix || len(shown) == len(id) {
			t.Fatalf("row %s shows id %q", id, shown)
		}
		for _, other := range all {
			if other != id && strings.HasPrefix(other, shown) {
				t.Fatalf("row %s shows %q, also a prefix of %s", id, shown, other)
			}
		}
		var got string
		check(t, r.db.View(context.Background(), func(tx core.Tx) error {
			var err error
			got, err = tx.ResolveID(core.EntityTask, shown)
			return err
		}))
		if got != id {
			t.Fatalf("%q resolves to %s, shown for %s", shown, got, id)
		}
	}
	screen := ansi.Strip(hs.m.View().Content)
	if tg, _ := l.Selected(); !strings.Contains(screen, tg.Short+" ") {
		t.Fatalf("the selected row's id %s is not on screen:\n%s", tg.Short, screen)
	}
}

// runDropping runs cmd as run does, but drops the messages drop selects
// (as if they had not arrived yet); it returns how many it dropped.
func (hs *harness) runDropping(cmd tea.Cmd, drop func(tea.Msg) bool) int {
	if cmd == nil {
		return 0
	}
	n := 0
	switch msg := cmd().(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			n += hs.runDropping(c, drop)
		}
	default:
		if drop(msg) {
			return 1
		}
		_, next := hs.m.Update(msg)
		n += hs.runDropping(next, drop)
	}
	return n
}

// TestWindowCancelledCountIsRedone: a filter keystroke that cancels
// the count a write started leaves that write still to be counted: the
// table's total is read again, never left at its old value with nothing
// scheduled.
func TestWindowCancelledCountIsRedone(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys func(hs *harness)
		// at once: the total is counted again with the keystroke's window,
		// not only at the next tick.
		atOnce bool
	}{
		// A longer query narrows the window in memory, reading nothing.
		{"narrowed", func(hs *harness) { hs.typeText("a") }, false},
		// A shorter one reads a window that holds every match.
		{"read again", func(hs *harness) { hs.keys("backspace") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openReal(t)
			seedTasks(t, r, 400)
			check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
				for i := range 3 {
					if err := insertJournaled(tx, &core.Task{ID: fmt.Sprintf("0190eeee-0000-7000-8000-%012d", i), Runtime: core.RuntimeCLI,
						Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
						Label: "zeta run", CreatedAt: at(0)}); err != nil {
						return err
					}
				}
				return nil
			}))
			hs := windowHarness(t, r)
			hs.keys("/")
			hs.typeText("zet")
			l := hs.m.tasks
			if got := l.InfoLine(120); !strings.Contains(got, "3 of 403") {
				t.Fatalf("info line %q, want 3 of 403", got)
			}
			check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
				return insertJournaled(tx, &core.Task{ID: "0190ffff-0000-7000-8000-000000000009", Runtime: core.RuntimeCLI,
					Status: core.TaskRunning, DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
					Label: "other", CreatedAt: at(0)})
			}))
			// The write is seen (the window is read again) and its count
			// starts, but the keystroke comes before the count answers.
			awaitWrite(t, hs, r.src)
			_, cmd := hs.m.Update(tickMsg{})
			if dropped := hs.runDropping(cmd, func(m tea.Msg) bool { _, ok := m.(countMsg); return ok }); dropped == 0 {
				t.Fatal("the write started no count")
			}
			tc.keys(hs)
			if tc.atOnce {
				if got := l.InfoLine(120); !strings.Contains(got, "of 404") {
					t.Fatalf("info line %q right after the keystroke, want the total 404", got)
				}
			}
			r.clk.Advance(time.Minute)
			hs.send(tickMsg{})
			if got := l.InfoLine(120); !strings.Contains(got, "of 404") {
				t.Fatalf("info line %q after the write, want the total 404", got)
			}
		})
	}
}

// callLog records the reads a model starts.
type callLog struct {
	feed.WindowSource
	mu    sync.Mutex
	calls []string
}

func (s *callLog) log(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *callLog) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

func (s *callLog) Window(ctx context.Context, req feed.WindowRequest, sink feed.Sink) (feed.WindowResult, error) {
	c := "window " + req.Kind.Entity()
	if req.Count {
		c = "count " + req.Kind.Entity()
	}
	s.log(c)
	return s.WindowSource.Window(ctx, req, sink)
}

func (s *callLog) Header(ctx context.Context, since core.Timestamp) (core.HeaderCounts, error) {
	s.log("header")
	return s.WindowSource.Header(ctx, since)
}

// TestWindowFirstScreenReadsAlone: after the first load the active pane's
// window is read alone; the other panes' windows, the counts and the header
// start once it has arrived (on a cold registry they would compete with it
// for the disk), and the header shows no number until it is read.
func TestWindowFirstScreenReadsAlone(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	log := &callLog{WindowSource: r.src.(feed.WindowSource)}
	hs := &harness{clk: r.clk}
	hs.opts = Options{Source: log, Actions: r.reg, Keys: testKeys(), Operator: "op@host", Clock: r.clk}
	hs.m = New(hs.opts)
	hs.m.ticks = false
	hs.send(teaSize(120, 24))
	// The load: run it, keep its message.
	var loaded tea.Msg
	hs.runDropping(hs.m.Init(), func(m tea.Msg) bool {
		if _, ok := m.(loadedMsg); ok {
			loaded = m
			return true
		}
		return false
	})
	if loaded == nil {
		t.Fatal("Init loaded nothing")
	}
	log.take()
	_, cmd := hs.m.Update(loaded)
	if h := hs.m.headerView(120); !strings.Contains(ansi.Strip(h), "approvals …") || strings.Contains(ansi.Strip(h), " 0 ") {
		t.Fatalf("header before its counts are read:\n%s", ansi.Strip(h))
	}
	if tabs := ansi.Strip(hs.m.tabsView(120)); !strings.Contains(tabs, "Tasks …") || strings.Contains(tabs, "Tasks 0") {
		t.Fatalf("tabs before the counts are read: %q", tabs)
	}
	var first tea.Msg
	hs.runDropping(cmd, func(m tea.Msg) bool {
		if _, ok := m.(windowMsg); ok && first == nil {
			first = m
			return true
		}
		return false
	})
	if calls := log.take(); !slices.Equal(calls, []string{"window task"}) {
		t.Fatalf("reads started by the first load: %q, want the Tasks window alone", calls)
	}
	// A poll while the window is still on its way starts no other read.
	r.clk.Advance(time.Minute)
	hs.send(tickMsg{})
	if calls := log.take(); len(calls) != 0 {
		t.Fatalf("reads started by a tick before the first window: %q", calls)
	}
	hs.send(first)
	calls := log.take()
	for _, want := range []string{"header", "count task", "window run", "count run", "window approval", "window job", "window notification"} {
		if !slices.Contains(calls, want) {
			t.Errorf("after the first window: %q, want %q among them", calls, want)
		}
	}
	if !strings.Contains(hs.screen(), "approvals 0") || !strings.Contains(hs.screen(), "Tasks 400") {
		t.Fatalf("header and tabs after their counts:\n%s", hs.screen())
	}
}

// TestWindowAttention: with windowed panes (whose changed rows are not read,
// only their ids) a new pending approval and a newly failed or lost task
// still ring the bell and highlight the header; a change to an approval
// already pending, or to a task already failed, does not.
func TestWindowAttention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, r *realReg)
		ring  bool
		text  string
	}{
		{"new pending approval", func(t *testing.T, r *realReg) {
			if _, err := r.reg.RequestApproval(context.Background(), core.NewApproval{Session: "s", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
		}, true, "1 new pending approval"},
		{"task fails", func(t *testing.T, r *realReg) {
			k, err := r.reg.CreateTask(context.Background(), core.NewTask{Runtime: core.RuntimeCLI, Label: "x"}, core.ActorRuntime)
			check(t, err)
			_, _, err = r.reg.FinishTask(context.Background(), k.ID, core.Finish{Status: core.TaskFailed, Error: "boom"}, core.ActorRuntime)
			check(t, err)
		}, true, "1 task failed or lost"},
		{"budget crossed", func(t *testing.T, r *realReg) {
			check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
				_, err := tx.InsertNotification(&core.Notification{Kind: core.NotifyBudgetExceeded, Session: "s", SubjectID: "s",
					Text: "session over its budget", CreatedAt: at(0), DedupKey: "budget:s"})
				return err
			}))
		}, true, "1 budget crossed"},
		{"new running task", func(t *testing.T, r *realReg) {
			_, err := r.reg.CreateTask(context.Background(), core.NewTask{Runtime: core.RuntimeCLI, Label: "y"}, core.ActorRuntime)
			check(t, err)
		}, false, ""},
	} {
		for _, full := range []bool{false, true} {
			name := tc.name
			if full {
				// A reload of whole tables skips the journal: the header's
				// counts, read after it, say what came.
				name += "/full reload"
			}
			t.Run(name, func(t *testing.T) {
				r := openReal(t)
				seedTasks(t, r, 400)
				hs := &harness{clk: r.clk}
				hs.opts = Options{Source: r.src, Actions: r.reg, Keys: testKeys(), Operator: "op@host", Clock: r.clk,
					Attention: Attention{Approvals: true, Failures: true, Budgets: true}}
				hs.m = New(hs.opts)
				hs.m.ticks = false
				hs.send(teaSize(120, 24))
				hs.run(hs.m.Init())
				tc.write(t, r)
				awaitWrite(t, hs, r.src)
				hs.m.forceFull = full
				raws := hs.sendCollect(tickMsg{})
				if got := strings.Join(raws, ""); (got == bell) != tc.ring {
					t.Fatalf("raw output %q, want the bell %v", got, tc.ring)
				}
				if hs.m.Attention() != tc.ring || (tc.ring && hs.m.flashText != tc.text) {
					t.Fatalf("attention %v %q, want %v %q", hs.m.Attention(), hs.m.flashText, tc.ring, tc.text)
				}
				if hs.m.news != nil {
					t.Fatal("the reload's news still wait for a header read")
				}
				// Once: the next poll is quiet.
				hs.clk.Advance(flashFor + time.Second)
				if raws := hs.sendCollect(tickMsg{}); len(raws) != 0 {
					t.Fatalf("rang again: %q", raws)
				}
			})
		}
	}
}

// TestWindowNarrowingReadsFromFirstRow: a keystroke that lengthens a query
// whose window begins at the top of its matches (and holds not all of them)
// reads from that first row's position (no match of either query lies
// before it), not around the cursor: the rows are the store's top matches
// in every sort, also when that first row does not match the longer query;
// the cursor stays on its row or goes to the first later match; a query
// nothing matches ends empty after one read.
func TestWindowNarrowingReadsFromFirstRow(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	log := &reqLog{WindowSource: r.src.(feed.WindowSource)}
	r.src = log
	for i, sort := range []string{"urgency", "recent", "created", "label"} {
		t.Run(sort, func(t *testing.T) {
			hs := windowHarness(t, r)
			for range i {
				hs.keys("s")
			}
			if got := hs.m.tasks.spec.sorts[hs.m.tasks.sort]; got != sort {
				t.Fatalf("sort %s, want %s", got, sort)
			}
			alpha, alphaT := storeOrder(t, r, sort, "alpha"), storeOrder(t, r, sort, "alpha t")
			hs.keys("/")
			hs.typeText("alpha")
			hs.keys("enter")
			l := hs.m.tasks
			if !l.win.moreAfter || l.win.moreBefore || len(l.view) == 0 || l.spec.id(&l.rows[l.view[0]]) != alpha[0] {
				t.Fatalf("alpha: %d rows, more %v/%v: want a window at the top with more after", len(l.view), l.win.moreBefore, l.win.moreAfter)
			}
			// The cursor two rows past the first "alpha t" match, or (when
			// that lies deep, past where moving keeps the window at the
			// top) on row 5, before it.
			at := min(slices.Index(alpha, alphaT[0])+2, 5)
			for range at {
				hs.keys("down")
			}
			if hs.selectedID() != alpha[at] {
				t.Fatalf("cursor on %s, want %s", hs.selectedID(), alpha[at])
			}
			key, cursor := l.win.firstKey, l.cursor
			_, span := l.winSpan()
			log.take()
			hs.keys("/")
			hs.typeText(" t")
			reqs := log.take()
			if len(reqs) != 2 || reqs[0].AnchorKey != key || reqs[0].Anchor != "" || reqs[0].Before != 0 || reqs[0].After != span+cursor ||
				reqs[1].AnchorKey == "" || reqs[1].Before != 0 {
				t.Fatalf("reads for alpha t: %+v, want each from the previous window's first row (%s), %d rows", reqs, key, span+cursor)
			}
			var got []string
			for _, s := range hs.m.tasks.view {
				got = append(got, hs.m.tasks.spec.id(&hs.m.tasks.rows[s]))
			}
			if len(got) == 0 || !slices.Equal(got, alphaT[:len(got)]) {
				t.Fatalf("alpha t: %d rows; want the store's first %d", len(got), len(got))
			}
			want := ""
			for _, id := range alphaT {
				if slices.Index(alpha, id) >= at {
					want = id
					break
				}
			}
			if hs.selectedID() != want {
				t.Fatalf("alpha t: cursor on %s, want %s (the first match at or after %s)", hs.selectedID(), want, alpha[at])
			}
			log.take()
			hs.typeText("zzz")
			if l := hs.m.tasks; len(l.view) != 0 || l.win.moreAfter || l.win.moreBefore {
				t.Fatalf("alpha tzzz: %d rows, more %v/%v", len(l.view), l.win.moreBefore, l.win.moreAfter)
			}
			if reqs := log.take(); len(reqs) != 1 {
				t.Fatalf("alpha tzzz: %d reads, want 1 (z, then nothing left to narrow): %+v", len(reqs), reqs)
			}
		})
	}
}

// TestWindowNarrowingAfterFirstRowMoved: the window's first row changes in
// the store (a running task fails, and sorts lower) before the console has
// seen it; a lengthening keystroke still reads from where the window began,
// so no match above the moved row's new place is lost.
func TestWindowNarrowingAfterFirstRowMoved(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	hs.keys("/")
	hs.typeText("alpha")
	l := hs.m.tasks
	first := l.spec.id(&l.rows[l.view[0]])
	if !l.win.moreAfter || l.win.moreBefore || l.rows[l.view[0]].status != core.TaskRunning {
		t.Fatalf("alpha: more %v/%v, first row %s", l.win.moreBefore, l.win.moreAfter, l.rows[l.view[0]].status)
	}
	_, _, err := r.reg.FinishTask(context.Background(), first, core.Finish{Status: core.TaskFailed, Error: "boom"}, core.ActorRuntime)
	check(t, err)
	hs.typeText(" ")
	want := storeOrder(t, r, "urgency", "alpha ")
	if want[0] == first {
		t.Fatal("the first row did not move")
	}
	var got []string
	for _, s := range hs.m.tasks.view {
		got = append(got, hs.m.tasks.spec.id(&hs.m.tasks.rows[s]))
	}
	if len(got) < 10 || !slices.Equal(got, want[:len(got)]) || hs.m.tasks.win.moreBefore {
		t.Fatalf("alpha after the first row moved: %d rows %v..., want the store's first (%v...)", len(got), got[:min(3, len(got))], want[:3])
	}
}

// TestWindowNarrowingAfterInsertAtTop: a row arrives above the window's
// first row and the console shows it (a window at the top keeps arriving
// rows in view); the next lengthening keystroke must not start below it.
func TestWindowNarrowingAfterInsertAtTop(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 400)
	hs := windowHarness(t, r)
	hs.keys("/")
	hs.typeText("alpha")
	k, err := r.reg.CreateTask(context.Background(), core.NewTask{Runtime: core.RuntimeCLI, Label: "alpha top"}, core.ActorRuntime)
	check(t, err)
	tickAfterWrite(t, hs, r.src)
	want := storeOrder(t, r, "urgency", "alpha t")
	if want[0] != k.ID {
		t.Fatalf("fixture: the new task is not the first match (%s)", want[0])
	}
	hs.typeText(" t")
	l := hs.m.tasks
	if len(l.view) == 0 || l.spec.id(&l.rows[l.view[0]]) != k.ID {
		t.Fatalf("alpha t after an insert at the top: first row %v, want the new task %s", l.view, k.ID)
	}
}
