package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// Actions on a row that has already ended are refused with a status line
// naming its status, before any dialog opens (and nothing is called).
func TestActionsOnEndedRowsRefusedUpFront(t *testing.T) {
	for _, c := range []struct {
		name string
		keys []string
		want string
	}{
		{"approve approved", []string{"3", "down", "down", "a"}, "approval ap3dead00003 is already approved: nothing to decide"},
		{"deny approved", []string{"3", "down", "down", "d"}, "approval ap3dead00003 is already approved: nothing to decide"},
		{"approve denied", []string{"3", "G", "a"}, "approval ap4f00d00004 is already denied: nothing to decide"},
		{"cancel lost task", []string{"down", "down", "c"}, "task 0193a0b1-0003 is already lost: nothing to cancel"},
		{"cancel succeeded task", []string{"G", "c"}, "task 0193a0b1-0005 is already succeeded: nothing to cancel"},
		{"cancel lost job", []string{"4", "down", "c"}, "job d4e5f6a1b2c3 is already lost: nothing to cancel"},
		{"kill ended run", []string{"2", "G", "k"}, "run run-00aa has already ended (ok): nothing to kill"},
		{"kill a task's ended run", []string{"down", "down", "k"}, "run run-51c0 has already ended (killed): nothing to kill"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := newHarness(t, 80, 24)
			hs.keys(c.keys...)
			if got := hs.m.StatusText(); got != c.want {
				t.Errorf("status %q, want %q", got, c.want)
			}
			if hs.m.dialog != nil || len(hs.act.calls) != 0 {
				t.Errorf("dialog open %v, calls %v: want neither", hs.m.dialog != nil, hs.act.calls)
			}
		})
	}
}

// The detail view's target is a copy taken when it opened; a decision made
// elsewhere since then is what the refusal names.
func TestDetailActionUsesCurrentStatus(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.keys("3", "enter")
	if hs.m.detail == nil {
		t.Fatal("enter did not open the detail view")
	}
	hs.src.mutate(func(s *fakeSource) []change {
		s.approvals[1].Status = core.ApprovalExpired
		return []change{{feed.KindApproval, s.approvals[1].ID}}
	})
	hs.send(tickMsg{})
	hs.keys("a")
	if got := hs.m.StatusText(); got != "approval ap2beef00002 is already expired: nothing to decide" || hs.m.dialog != nil {
		t.Fatalf("status %q, dialog %v", got, hs.m.dialog != nil)
	}
}

// taskAt is a UUIDv7-shaped task id: ms timestamp, then rand_a and rand_b.
func taskAt(ms int64, randA, randB string) core.Task {
	h := []byte("000000000000")
	for i, v := 11, ms; i >= 0; i, v = i-1, v>>4 {
		h[i] = "0123456789abcdef"[v&15]
	}
	return core.Task{ID: string(h[:8]) + "-" + string(h[8:]) + "-7" + randA + "-8" + randB, Runtime: core.RuntimeCLI,
		Status: core.TaskRunning, DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifySilent,
		CreatedAt: at(time.Minute)}
}

// shownIDs maps each task's full id to the id the Tasks pane shows.
func shownIDs(l *list[taskRow]) map[string]string {
	out := map[string]string{}
	for _, s := range l.view {
		out[l.rows[s].id] = l.prefixOf(l.rows[s].id)
	}
	return out
}

// checkUnique asserts every shown id is a prefix of its own id and of no
// other loaded id, and at least 13 characters (or the whole id).
func checkUnique(t *testing.T, shown map[string]string) {
	t.Helper()
	for id, p := range shown {
		if !strings.HasPrefix(id, p) || (len(p) < 13 && p != id) {
			t.Errorf("%s shown as %q", id, p)
		}
		for other := range shown {
			if other != id && strings.HasPrefix(other, p) {
				t.Errorf("%s shown as %q, which is also a prefix of %s", id, p, other)
			}
		}
	}
}

// Two tasks created in the same millisecond share their first 13
// characters: the Tasks pane shows each by its shortest unique prefix, the
// ID column widens so neither is cut, and a new colliding task arriving in
// a delta widens its neighbours too.
func TestTaskIDsShownAsUniquePrefixes(t *testing.T) {
	hs := newHarness(t, 80, 24)
	ms := int64(0x01a20126007b)
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks = append(s.tasks, taskAt(ms, "abc", "123-000000000001"), taskAt(ms, "abd", "123-000000000002"),
			taskAt(ms+1, "abc", "123-000000000003"))
		return nil
	})
	hs.send(loadedMsgFull(hs))
	shown := shownIDs(hs.m.tasks)
	checkUnique(t, shown)
	for id, want := range map[string]string{
		"01a20126-007b-7abc-8123-000000000001": "01a20126-007b-7abc",
		"01a20126-007b-7abd-8123-000000000002": "01a20126-007b-7abd",
		"01a20126-007c-7abc-8123-000000000003": "01a20126-007c",
		"0193a0b1-0001-7000-8000-000000000001": "0193a0b1-0001",
	} {
		if shown[id] != want {
			t.Errorf("%s shown as %q, want %q", id, shown[id], want)
		}
	}
	if w := hs.m.tasks.widths[0]; w != 18 {
		t.Errorf("ID column %d cells wide, want 18", w)
	}
	hs.keys("/")
	hs.typeText("7abd")
	hs.keys("enter")
	if !strings.Contains(hs.screen(), "01a20126-007b-7abd ") {
		t.Errorf("the colliding id is not shown whole at 80 columns:\n%s", hs.screen())
	}
	if tg, _ := hs.m.tasks.Selected(); tg.Short != "01a20126-007b-7abd" {
		t.Errorf("target short id %q", tg.Short)
	}

	hs.keys("esc") // every task in the window again
	// A delta: a third task in millisecond ms+1 sharing rand_a's first two
	// digits with task 3.
	hs.src.mutate(func(s *fakeSource) []change {
		n := taskAt(ms+1, "abf", "123-000000000004")
		s.tasks = append(s.tasks, n)
		return []change{{feed.KindTask, n.ID}}
	})
	hs.send(tickMsg{})
	shown = shownIDs(hs.m.tasks)
	checkUnique(t, shown)
	if got := shown["01a20126-007c-7abc-8123-000000000003"]; got != "01a20126-007c-7abc" {
		t.Errorf("neighbour of the new task shown as %q", got)
	}
	if got := shown["01a20126-007c-7abf-8123-000000000004"]; got != "01a20126-007c-7abf" {
		t.Errorf("new task shown as %q", got)
	}
}

// loadedMsgFull runs a full load of the harness's source (through the
// console's memory window).
func loadedMsgFull(hs *harness) loadedMsg {
	return loadCmd(hs.m.bg, hs.m.src, feed.LoadRequest{Full: true, WindowOver: -1}, 0, false)().(loadedMsg)
}

// Many random ids: every shown prefix is unique among all the tasks (not
// only the window's), after a full load and after deltas that add and
// remove rows.
func TestUniquePrefixesRandom(t *testing.T) {
	var tasks []core.Task
	for i := range 2000 {
		tasks = append(tasks, taskAt(int64(0x01a20126007b+i/50), fmt.Sprintf("%x%x%x", i%16, (i/16)%3, (i/48)%16), fmt.Sprintf("123-%012d", i)))
	}
	hs := newHarness(t, 120, 24, func(o *Options) { o.Source.(*fakeSource).tasks = slices.Clone(tasks[:1500]) })
	// check pages through the whole pane, collecting every shown id.
	check := func(want int) {
		t.Helper()
		hs.keys("g")
		shown := map[string]string{}
		for range want {
			maps.Copy(shown, shownIDs(hs.m.tasks))
			if len(shown) >= want {
				break
			}
			hs.keys("pgdown")
		}
		if len(shown) != want {
			t.Fatalf("paged through %d tasks, want %d", len(shown), want)
		}
		checkUnique(t, shown)
	}
	check(1500)
	hs.src.mutate(func(s *fakeSource) []change {
		var ch []change
		for _, tk := range s.tasks[:300] {
			ch = append(ch, change{feed.KindTask, tk.ID})
		}
		s.tasks = append(slices.Clone(s.tasks[300:]), tasks[1500:]...)
		for _, tk := range tasks[1500:] {
			ch = append(ch, change{feed.KindTask, tk.ID})
		}
		return ch
	})
	hs.send(tickMsg{})
	check(1700)
}
