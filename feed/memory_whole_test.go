package feed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// wholeTables is a Source that loads whole tables (as OpenClaw's does): a
// full load sends every row; a delta the rows named in changed, the
// notifications after AfterAlertID, every undelivered id and the table
// sizes.
type wholeTables struct {
	tasks     []core.Task
	approvals []core.Approval
	alerts    []core.Notification
	changed   []string // task and approval ids the next delta sends
	afterSeen []int64  // each delta's AfterAlertID
}

func (s *wholeTables) Path() string                               { return "whole" }
func (s *wholeTables) DataVersion(context.Context) (int64, error) { return 1, nil }
func (s *wholeTables) Detail(context.Context, feed.Kind, string) (*feed.Detail, error) {
	return nil, core.ErrNotFound
}

func (s *wholeTables) Load(_ context.Context, req feed.LoadRequest, sink feed.Sink) (feed.LoadResult, error) {
	res := feed.LoadResult{Full: req.Full}
	if req.Full {
		for i := range s.tasks {
			sink.Task(&s.tasks[i])
		}
		for i := range s.approvals {
			sink.Approval(&s.approvals[i])
		}
		for i := range s.alerts {
			sink.Alert(&s.alerts[i])
		}
		return res, nil
	}
	s.afterSeen = append(s.afterSeen, req.AfterAlertID)
	for _, id := range s.changed {
		for i := range s.tasks {
			if s.tasks[i].ID == id {
				sink.Task(&s.tasks[i])
			}
		}
		for i := range s.approvals {
			if s.approvals[i].ID == id {
				sink.Approval(&s.approvals[i])
			}
		}
	}
	s.changed = nil
	res.Undelivered = []int64{}
	for i := range s.alerts {
		if n := &s.alerts[i]; n.ID > req.AfterAlertID {
			sink.Alert(n)
		}
		if s.alerts[i].DeliveredAt == 0 {
			res.Undelivered = append(res.Undelivered, s.alerts[i].ID)
		}
	}
	res.Counts = &core.TableCounts{Tasks: int64(len(s.tasks)), Approvals: int64(len(s.approvals)), Notifications: int64(len(s.alerts))}
	return res, nil
}

// every is a LoadRequest's Windowed with every kind set (the console's).
var every = [feed.NumKinds]bool{true, true, true, true, true}

func windowIDs(t *testing.T, mem *feed.MemoryWindow, k feed.Kind, sort string) ([]string, feed.WindowResult) {
	t.Helper()
	got := &ids{}
	res := must[feed.WindowResult](t)(mem.Window(context.Background(), feed.WindowRequest{Kind: k, Sort: sort, After: 100}, got))
	return got.got, res
}

// TestMemoryWindowUniquePrefixes: each row a window sends comes with the
// length of its id's shortest prefix no other row of the table shares:
// across the whole table, not the window.
func TestMemoryWindowUniquePrefixes(t *testing.T) {
	src := &wholeTables{tasks: []core.Task{{ID: "abc1", Status: core.TaskQueued}, {ID: "abd2", Status: core.TaskQueued},
		{ID: "b", Status: core.TaskQueued}, {ID: "abc", Status: core.TaskQueued}}}
	mem := feed.NewMemoryWindow(src)
	must[feed.LoadResult](t)(mem.Load(context.Background(), feed.LoadRequest{Full: true, WindowOver: -1}, newRec()))
	got := &ids{}
	res := must[feed.WindowResult](t)(mem.Window(context.Background(), feed.WindowRequest{Kind: feed.KindTask, Sort: "label", After: 2}, got))
	want := map[string]int{"abc1": 4, "abd2": 3, "b": 1, "abc": 3}
	if len(res.Unique) != len(got.got) || len(got.got) != 2 {
		t.Fatalf("%d rows, %d lengths", len(got.got), len(res.Unique))
	}
	for i, id := range got.got {
		if res.Unique[i] != want[id] {
			t.Errorf("%s: unique prefix %d, want %d", id, res.Unique[i], want[id])
		}
	}
}

// TestMemoryWindowNews: a delta and a full reload after the first count the
// approvals newly pending, the tasks newly failed and the budget alerts not
// held before, against the rows held (FullNews on the reload); the first
// load counts none.
func TestMemoryWindowNews(t *testing.T) {
	ctx := context.Background()
	src := &wholeTables{
		tasks:     []core.Task{{ID: "t1", Status: core.TaskRunning}, {ID: "t2", Status: core.TaskFailed}},
		approvals: []core.Approval{{ID: "a1", Status: core.ApprovalPending}, {ID: "a2", Status: core.ApprovalApproved}},
		alerts:    []core.Notification{{ID: 1, Kind: core.NotifyBudgetExceeded}},
	}
	mem := feed.NewMemoryWindow(src)
	first := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: true, WindowOver: -1}, newRec()))
	if first.FullNews || first.NewPending+first.NewFailed+first.NewBudgets != 0 {
		t.Fatalf("first load: %+v", first)
	}
	news := func(s *wholeTables) {
		s.tasks[0].Status = core.TaskLost            // newly lost
		s.tasks[1].Error = "still failed"            // failed before: not news
		s.approvals[1].Status = core.ApprovalPending // pending again
		s.approvals = append(s.approvals, core.Approval{ID: "a3", Status: core.ApprovalPending})
		s.alerts = append(s.alerts, core.Notification{ID: 2, Kind: core.NotifyBudgetExceeded}, core.Notification{ID: 3, Kind: core.NotifyTaskFailed})
		s.changed = []string{"t1", "t2", "a2", "a3"}
	}
	for _, full := range []bool{false, true} {
		src := &wholeTables{tasks: slices.Clone(src.tasks), approvals: slices.Clone(src.approvals), alerts: slices.Clone(src.alerts)}
		mem := feed.NewMemoryWindow(src)
		must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: true, WindowOver: -1}, newRec()))
		news(src)
		res := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: full, WindowOver: -1, Windowed: every}, newRec()))
		if res.NewPending != 2 || res.NewFailed != 1 || res.NewBudgets != 1 || res.FullNews != full {
			t.Errorf("full %v: %+v, want 2 pending, 1 failed, 1 budget", full, res)
		}
		again := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: full, WindowOver: -1, Windowed: every}, newRec()))
		if again.NewPending+again.NewFailed+again.NewBudgets != 0 {
			t.Errorf("full %v: the same rows again: %+v", full, again)
		}
	}
}

// TestMemoryWindowDeltaKeepsUp: a delta asks for the notifications after
// the newest held, marks read the ones no longer undelivered (a delivery
// leaves no journal), and a delta whose table sizes differ from the copy's
// (rows pruned without a journal) is followed by a full load at once.
func TestMemoryWindowDeltaKeepsUp(t *testing.T) {
	ctx := context.Background()
	src := &wholeTables{
		tasks:  []core.Task{{ID: "t1", Status: core.TaskRunning}, {ID: "t2", Status: core.TaskSucceeded}},
		alerts: []core.Notification{{ID: 1, Kind: core.NotifyTaskFailed}, {ID: 2, Kind: core.NotifyTaskFailed}},
	}
	mem := feed.NewMemoryWindow(src)
	must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: true, WindowOver: -1}, newRec()))
	src.alerts[0].DeliveredAt = 5
	d := newRec()
	res := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Windowed: every, Now: 9}, d))
	if !slices.Equal(src.afterSeen, []int64{2}) {
		t.Fatalf("deltas asked for notifications after %v, want [2]", src.afterSeen)
	}
	if !res.Touched[feed.KindAlert] || !slices.Contains(d.changed, "alert 1") {
		t.Fatalf("delivery: touched %v, changed %v", res.Touched, d.changed)
	}
	if h := must[core.HeaderCounts](t)(mem.Header(ctx, 0)); h.Unread != 1 {
		t.Fatalf("unread after the delivery: %d", h.Unread)
	}
	got, _ := windowIDs(t, mem, feed.KindAlert, "urgency") // unread first
	if !slices.Equal(got, []string{"2", "1"}) {
		t.Fatalf("alerts by urgency: %v", got)
	}

	src.tasks = src.tasks[:1] // pruned, no journal
	res = must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Windowed: every}, newRec()))
	if !res.Full {
		t.Fatalf("a delta with fewer tasks than held: %+v", res)
	}
	if got, w := windowIDs(t, mem, feed.KindTask, "recent"); !slices.Equal(got, []string{"t1"}) || len(w.Unique) != 1 {
		t.Fatalf("tasks after the reload: %v", got)
	}
}
