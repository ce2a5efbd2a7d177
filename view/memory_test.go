package view_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/view"
)

// alerts are n notifications with few distinct kinds and delivery times,
// so sorts tie often and the id must break them.
func alerts(n int, seed uint64) []core.Notification {
	r := rand.New(rand.NewPCG(seed, 1))
	kinds := []core.NotificationKind{"task_failed", "approval_pending", "job_lost"}
	out := make([]core.Notification, n)
	for i := range out {
		out[i] = core.Notification{ID: int64(i*3 + 7), Kind: kinds[r.IntN(len(kinds))], Text: fmt.Sprintf("Text %c%d", 'A'+r.IntN(4), i),
			CreatedAt: core.Timestamp(1000 + i)}
		if r.IntN(2) == 0 {
			out[i].DeliveredAt = core.Timestamp(2000 + i)
		}
	}
	return out
}

// wantOrder is the alerts pane's order written out by hand (README "The
// console": unread first, newest first; or by kind, then oldest id first).
func wantOrder(rows []core.Notification, sort, filter string) []int64 {
	var keep []core.Notification
	f := strings.ToLower(filter)
	for _, n := range rows {
		state := "read"
		if n.DeliveredAt == 0 {
			state = "unread"
		}
		hit := false
		for _, s := range []string{strconv.FormatInt(n.ID, 10), state, string(n.Kind), n.Text, n.Session, n.SubjectID} {
			hit = hit || strings.Contains(strings.ToLower(s), f)
		}
		if hit {
			keep = append(keep, n)
		}
	}
	unread := func(n core.Notification) int { return map[bool]int{true: 1}[n.DeliveredAt == 0] }
	slices.SortFunc(keep, func(a, b core.Notification) int {
		switch sort {
		case "", "urgency":
			return cmp.Or(cmp.Compare(unread(b), unread(a)), cmp.Compare(b.ID, a.ID))
		case "recent":
			return cmp.Compare(b.ID, a.ID)
		}
		return cmp.Or(strings.Compare(string(a.Kind), string(b.Kind)), cmp.Compare(a.ID, b.ID))
	})
	ids := make([]int64, len(keep))
	for i, n := range keep {
		ids[i] = n.ID
	}
	return ids
}

func readWindow(t *testing.T, m *view.Memory[core.Notification], q core.WindowQuery) ([]int64, core.WindowPage) {
	t.Helper()
	var got []int64
	page, err := m.Window(q, func(n *core.Notification) { got = append(got, n.ID) })
	if err != nil {
		t.Fatalf("Window(%+v): %v", q, err)
	}
	if page.Rows != len(got) {
		t.Fatalf("Window(%+v): page.Rows %d, sent %d", q, page.Rows, len(got))
	}
	return got, page
}

// TestMemoryWindowMatchesFullOrder checks every window (each sort, filter,
// anchor, side and edge) against the pane's whole order computed by hand.
func TestMemoryWindowMatchesFullOrder(t *testing.T) {
	rows := alerts(40, 3)
	m, err := view.NewMemory(core.EntityNotification, view.AlertValues())
	if err != nil {
		t.Fatal(err)
	}
	m.Set(rows)
	for _, sort := range []string{"", "urgency", "recent", "kind"} {
		for _, filter := range []string{"", "text b", "UNREAD", "job", "nothing"} {
			all := wantOrder(rows, sort, filter)
			for _, n := range []int{0, 1, 5, 100} {
				q := core.WindowQuery{Entity: core.EntityNotification, Sort: sort, Filter: filter, After: n}
				got, page := readWindow(t, m, q)
				if want := all[:min(n, len(all))]; !slices.Equal(got, want) || page.MoreAfter != (n < len(all)) || page.MoreBefore {
					t.Fatalf("%+v: got %v %+v, want %v", q, got, page, want)
				}
				q.End = true
				got, page = readWindow(t, m, q)
				if want := all[max(0, len(all)-n):]; !slices.Equal(got, want) || page.MoreBefore != (n < len(all)) || page.MoreAfter {
					t.Fatalf("%+v: got %v %+v, want %v", q, got, page, want)
				}
			}
			// Anchored at every row, passing the filter or not: the window
			// starts where the anchor is (or would be) in the order.
			full := wantOrder(rows, sort, "")
			for _, a := range full {
				at := 0
				for at < len(all) && slices.Index(full, all[at]) < slices.Index(full, a) {
					at++
				}
				for _, side := range [][2]int{{0, 3}, {2, 2}, {5, 0}, {100, 100}} {
					q := core.WindowQuery{Entity: core.EntityNotification, Sort: sort, Filter: filter,
						Anchor: strconv.FormatInt(a, 10), Before: side[0], After: side[1]}
					got, page := readWindow(t, m, q)
					lo, hi := max(0, at-side[0]), min(len(all), at+side[1])
					if want := all[lo:hi]; !slices.Equal(got, want) || page.Before != at-lo ||
						page.MoreBefore != (lo > 0) || page.MoreAfter != (hi < len(all)) {
						t.Fatalf("%+v: got %v %+v, want %v (before %d)", q, got, page, want, at-lo)
					}
					if len(got) == 0 {
						if page.FirstKey != "" {
							t.Fatalf("%+v: FirstKey %q of an empty window", q, page.FirstKey)
						}
						continue
					}
					// The page's FirstKey places the same window again.
					k := core.WindowQuery{Entity: q.Entity, Sort: sort, Filter: filter, AnchorKey: page.FirstKey, After: len(got)}
					again, _ := readWindow(t, m, k)
					if !slices.Equal(again, got) {
						t.Fatalf("%+v: got %v, want %v", k, again, got)
					}
				}
			}
		}
	}
}

// TestMemoryWindowAnchorKeyStays checks that a window placed by AnchorKey
// stays where it was when its first row moves (a notification delivered).
func TestMemoryWindowAnchorKeyStays(t *testing.T) {
	rows := []core.Notification{{ID: 1, Kind: "a"}, {ID: 2, Kind: "a"}, {ID: 3, Kind: "a"}, {ID: 4, Kind: "a"}}
	m, err := view.NewMemory(core.EntityNotification, view.AlertValues())
	if err != nil {
		t.Fatal(err)
	}
	m.Set(rows)
	got, page := readWindow(t, m, core.WindowQuery{Entity: core.EntityNotification, Anchor: "3", After: 2})
	if !slices.Equal(got, []int64{3, 2}) {
		t.Fatalf("window at 3: %v", got)
	}
	moved := slices.Clone(rows)
	moved[2].DeliveredAt = 99 // 3 drops below every unread row
	m.Set(moved)
	if got, _ = readWindow(t, m, core.WindowQuery{Entity: core.EntityNotification, AnchorKey: page.FirstKey, After: 2}); !slices.Equal(got, []int64{2, 1}) {
		t.Fatalf("window at the old position: %v, want [2 1]", got)
	}
	if got, _ = readWindow(t, m, core.WindowQuery{Entity: core.EntityNotification, Anchor: "3", After: 2}); !slices.Equal(got, []int64{3}) {
		t.Fatalf("window at 3 after it moved: %v, want [3]", got)
	}
}

func TestMemoryWindowMissingAnchorAndCount(t *testing.T) {
	m, err := view.NewMemory(core.EntityTask, view.TaskValues())
	if err != nil {
		t.Fatal(err)
	}
	m.Set([]core.Task{
		{ID: "t1", Status: core.TaskRunning, Label: "Deploy web", CreatedAt: 10},
		{ID: "t2", Status: core.TaskFailed, Kind: "build", Error: "exit 1", CreatedAt: 20},
		{ID: "t3", Status: core.TaskSucceeded, Task: "deploy docs", CreatedAt: 30},
	})
	var sent int
	page, err := m.Window(core.WindowQuery{Entity: core.EntityTask, Anchor: "gone", Before: 5, After: 5}, func(*core.Task) { sent++ })
	if err != nil || sent != 0 || page != (core.WindowPage{}) {
		t.Fatalf("missing anchor: %d rows, %+v, %v", sent, page, err)
	}
	var names []string
	if _, err := m.Window(core.WindowQuery{Entity: core.EntityTask, Sort: "label", After: 10}, func(t *core.Task) {
		names = append(names, view.TaskName(t))
	}); err != nil || !slices.Equal(names, []string{"Deploy web", "build", "deploy docs"}) {
		t.Fatalf("label order (bytewise, as the store's): %v, %v", names, err)
	}
	for _, c := range []struct {
		filter string
		limit  int64
		n      int64
		capped bool
	}{{"", 0, 3, false}, {"DEPLOY", 0, 2, false}, {"deploy", 1, 1, true}, {"exit", 0, 1, false}, {"web\nfailed", 0, 0, false}} {
		if n, capped := m.Count(c.filter, c.limit); n != c.n || capped != c.capped {
			t.Errorf("Count(%q, %d) = %d, %v; want %d, %v", c.filter, c.limit, n, capped, c.n, c.capped)
		}
	}
}

func TestMemoryWindowErrors(t *testing.T) {
	if _, err := view.NewMemory("session", view.TaskValues()); !errors.Is(err, core.ErrInvalid) {
		t.Errorf("an entity without a view: %v", err)
	}
	v := view.TaskValues()
	delete(v.Keys, view.KeyName)
	if _, err := view.NewMemory(core.EntityTask, v); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `"name"`) {
		t.Errorf("a missing key: %v", err)
	}
	v = view.TaskValues()
	delete(v.Fields, "error")
	if _, err := view.NewMemory(core.EntityTask, v); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `"error"`) {
		t.Errorf("a missing field: %v", err)
	}
	m, err := view.NewMemory(core.EntityTask, view.TaskValues())
	if err != nil {
		t.Fatal(err)
	}
	m.Set([]core.Task{{ID: "t1"}})
	for _, q := range []core.WindowQuery{
		{Entity: core.EntityRun, After: 1},
		{Entity: core.EntityTask, Sort: "size", After: 1},
		{Entity: core.EntityTask, AnchorKey: "[1]", After: 1},
		{Entity: core.EntityTask, AnchorKey: "not json", After: 1},
	} {
		if _, err := m.Window(q, func(*core.Task) {}); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("Window(%+v): %v, want ErrInvalid", q, err)
		}
	}
}

// BenchmarkMemoryWindow: one screen's window at the middle of 10,000
// notifications (an OpenClaw console past its window threshold).
func BenchmarkMemoryWindow(b *testing.B) {
	m, err := view.NewMemory(core.EntityNotification, view.AlertValues())
	if err != nil {
		b.Fatal(err)
	}
	m.Set(alerts(10_000, 1))
	q := core.WindowQuery{Entity: core.EntityNotification, Anchor: "15007", Before: 40, After: 40}
	for b.Loop() {
		if _, err := m.Window(q, func(*core.Notification) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryFilterTyped types filters a key at a time, as an operator does,
// over enough rows that each keystroke takes one of the two paths (one pass
// over every row's text, or a test of each row the last filter kept), and
// checks every result against the order computed by hand.
func TestMemoryFilterTyped(t *testing.T) {
	rows := alerts(600, 9)
	m, err := view.NewMemory(core.EntityNotification, view.AlertValues())
	if err != nil {
		t.Fatal(err)
	}
	m.Set(rows)
	r := rand.New(rand.NewPCG(9, 2))
	words := []string{"text b1", "unread", "task_failed", "read", "7", "text a59", "approval_pending", "xyz", "job_lost"}
	for range 40 {
		w := words[r.IntN(len(words))]
		if r.IntN(3) == 0 { // a piece of one row's text, cut anywhere
			s := rows[r.IntN(len(rows))].Text
			a := r.IntN(len(s))
			w = s[a : a+1+r.IntN(len(s)-a)]
		}
		sort := []string{"urgency", "recent", "kind"}[r.IntN(3)]
		for k := 1; k <= len(w); k++ {
			f := w[:k]
			want := wantOrder(rows, sort, f)
			got, _ := readWindow(t, m, core.WindowQuery{Entity: core.EntityNotification, Sort: sort, Filter: f, After: len(rows) + 1})
			if !slices.Equal(got, want) {
				t.Fatalf("filter %q in %s order: %d rows %v, want %d %v", f, sort, len(got), got, len(want), want)
			}
		}
	}
}
