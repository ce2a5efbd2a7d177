package tui

import (
	"slices"
	"testing"

	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/view"
)

// TestMemoryWindowPanesMatchWholePanes: over feed.MemoryWindow with every
// pane reading windows (OpenClaw's console past its window threshold), each
// pane shows the rows the pane holding its whole table shows, in the same
// order, in every sort and with a filter.
func TestMemoryWindowPanesMatchWholePanes(t *testing.T) {
	whole := newHarness(t, 160, 40)
	win := newHarness(t, 160, 40, func(o *Options) { o.Source = feed.NewMemoryWindow(fixture()); o.WindowOver = -1 })
	for k := range feed.NumKinds {
		if !win.m.panes[k].(interface{ windowed() bool }).windowed() {
			t.Fatalf("%v pane: not windowed with WindowOver -1", k)
		}
		if whole.m.panes[k].(interface{ windowed() bool }).windowed() {
			t.Fatalf("%v pane: windowed over a plain Source", k)
		}
	}
	for k := range feed.NumKinds {
		for _, s := range view.Sorts(k.Entity()) {
			want, got := whole.visibleIDs(), win.visibleIDs()
			if !s.Desc {
				// An ascending sort's ties: the whole pane puts the newest id
				// first, windows (the store's too) the oldest. Same rows.
				slices.Sort(want)
				slices.Sort(got)
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%v pane, sort %s: windows show %v, the whole pane %v", k, s.Name, got, want)
			}
			whole.keys("s")
			win.keys("s")
		}
		for _, q := range []string{"fail", "sess-sub", "CLAUDE"} {
			for _, h := range []*harness{whole, win} {
				h.keys("/")
				h.typeText(q)
				h.keys("enter")
			}
			want, got := whole.visibleIDs(), win.visibleIDs()
			if !slices.Equal(got, want) {
				t.Errorf("%v pane, filter %q: windows show %v, the whole pane %v", k, q, got, want)
			}
			for _, h := range []*harness{whole, win} {
				h.keys("/", "esc")
			}
		}
		for _, h := range []*harness{whole, win} {
			h.keys("tab")
		}
	}
}
