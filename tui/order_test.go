package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/view"
)

// allTasks pages through the Tasks pane from its top and returns every row
// in the order shown (the windows overlap; each row is kept once, where it
// first appears).
func allTasks(t *testing.T, hs *harness) []taskRow {
	t.Helper()
	l := hs.m.tasks
	hs.keys("g")
	_, total := l.Counts()
	if l.Filtered() {
		total, _ = l.Counts()
	}
	var out []taskRow
	seen := map[string]bool{}
	for range total + 1 {
		for _, s := range l.view {
			if r := l.rows[s]; !seen[r.id] {
				seen[r.id] = true
				out = append(out, r)
			}
		}
		if len(out) >= total {
			return out
		}
		hs.keys("pgdown")
	}
	t.Fatalf("paged through %d rows of %d", len(out), total)
	return nil
}

func idsOfRows(rows []taskRow) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = rows[i].id
	}
	return out
}

// TestPaneOrderSameOverEverySource: the console shows the same order
// whatever its source: the store's windows (SQL) or the whole tables of a
// source without windows, read through feed.MemoryWindow (OpenClaw's,
// tests'). The order is the store's, as view declares it: ties are broken
// by id in the sort's direction, so an ascending sort puts the oldest id
// first (the console's own sort used to put the newest first).
func TestPaneOrderSameOverEverySource(t *testing.T) {
	r := openReal(t)
	seedTasks(t, r, 120) // four labels, times repeating: many ties
	sql := realHarnessOn(t, r, true, r.src)
	mem := realHarnessOn(t, r, true, wholeOnly{r.src})
	if _, ok := mem.m.src.(*feed.MemoryWindow); !ok {
		t.Fatalf("a source without windows is read through %T", mem.m.src)
	}
	for _, s := range view.Sorts(feed.KindTask.Entity()) {
		if sql.m.tasks.SortName() != s.Name || mem.m.tasks.SortName() != s.Name {
			t.Fatalf("sort %s: the panes sort by %s and %s", s.Name, sql.m.tasks.SortName(), mem.m.tasks.SortName())
		}
		rows := allTasks(t, mem)
		want, got := idsOfRows(allTasks(t, sql)), idsOfRows(rows)
		if len(want) != 120 || !slices.Equal(got, want) {
			t.Errorf("sort %s: the memory window shows\n%v\nthe store\n%v", s.Name, got, want)
		}
		if s.Name == "label" {
			// Tied labels: ids ascending, as the sort.
			for i := 1; i < len(rows); i++ {
				if a, b := rows[i-1], rows[i]; a.name == b.name && strings.Compare(a.id, b.id) > 0 {
					t.Errorf("label %q: %s before %s", a.name, a.id, b.id)
				}
			}
		}
		for _, h := range []*harness{sql, mem} {
			h.keys("/")
			h.typeText("ALPHA")
			h.keys("enter")
		}
		if want, got := idsOfRows(allTasks(t, sql)), idsOfRows(allTasks(t, mem)); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("sort %s, filter alpha: the memory window shows %v, the store %v", s.Name, got, want)
		}
		for _, h := range []*harness{sql, mem} {
			h.keys("esc", "s")
		}
	}
}
