package e2e

// Issue 26 items 6 and 7 in the real binary under tmux: alerts marked read
// from the console at 120×40, and a 40×10 terminal where every tab, the
// header and the help stay usable.

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// failTasks makes n failed tasks, each raising one task_failed alert.
func failTasks(t *testing.T, c *cli, n int) {
	t.Helper()
	for i := range n {
		id := c.ok("task", "create", "--runtime", "cli", "--label", "job "+strconv.Itoa(i), "--session", "S1")
		c.ok("task", "start", id)
		c.ok("task", "finish", id, "--subtype", "error_max_turns", "--is-error")
	}
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != n {
		t.Fatalf("%d unread notifications after %d failed tasks, want %d", len(ns), n, n)
	}
}

// alertEvents is the journal of every notification (entity notification).
func alertEvents(t *testing.T, c *cli, ids []int64) []core.Event {
	t.Helper()
	db, err := store.Open(context.Background(), c.db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []core.Event
	err = db.View(context.Background(), func(tx core.Tx) error {
		for _, id := range ids {
			evs, err := tx.Events(core.EntityNotification, strconv.FormatInt(id, 10))
			if err != nil {
				return err
			}
			out = append(out, evs...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConsoleAlertKeys(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	c.ok("session", "open", "S1")
	failTasks(t, c, 3)
	var all []core.Notification
	c.json(&all, "notifications")
	tm := startConsole(t, c, consoleRun{w: 120, h: 40})
	scr := tm.waitText("alerts 3 unread")
	if !screenHas(scr, "5 Alerts 3/3") {
		t.Errorf("the Alerts tab does not say unread/total:\n%s", strings.Join(scr, "\n"))
	}
	tm.switchPane("5")
	scr = tm.waitText("3 unread of 3")
	if !screenHas(scr, "x mark read") || !screenHas(scr, "X mark all read") {
		t.Errorf("the hints lack the alert keys:\n%s", strings.Join(scr, "\n"))
	}
	tm.keys("x")
	tm.waitStatus("marked read")
	tm.waitText("2 unread of 3")
	tm.keys("X")
	tm.waitText("Mark all 2 unread alerts read?")
	tm.keys("y")
	tm.waitStatus("marked 2 alerts read")
	scr = tm.waitText("0 unread of 3")
	read := 0
	for _, l := range scr {
		if strings.Contains(l, " read ") && strings.Contains(l, "task_failed") {
			read++
		}
	}
	if read != 3 || !screenHas(scr, "alerts 0 unread") {
		t.Errorf("want 3 read alerts still listed and the header at 0:\n%s", strings.Join(scr, "\n"))
	}
	var un []core.Notification
	c.json(&un, "notifications")
	if len(un) != 0 {
		t.Errorf("still unread after X: %+v", un)
	}
	var ids []int64
	for _, n := range all {
		ids = append(ids, n.ID)
	}
	evs := alertEvents(t, c, ids)
	if len(evs) != 3 {
		t.Fatalf("journal: %+v, want one read per alert", evs)
	}
	for _, e := range evs {
		if !strings.HasPrefix(string(e.Actor), "tester@") || e.From != "unread" || e.To != "read" {
			t.Errorf("journal row %+v: want unread → read by the console's operator", e)
		}
	}
}

func TestConsoleSmallTerminal(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	c.ok("session", "open", "S1")
	failTasks(t, c, 2)
	for range 4 {
		c.ok("approval", "request", "--session", "S1", "--tool", "Bash", "--command", "make deploy")
	}
	for range 3 {
		c.ok("task", "start", c.ok("task", "create", "--runtime", "cli", "--label", "busy"))
	}
	tm := startConsole(t, c, consoleRun{w: 40, h: 10})
	tm.waitText("4 approvals")
	for _, k := range []string{"1", "2", "3", "4", "5", "Tab", "BTab"} {
		tm.keys(k)
		scr := tm.capture()
		if bad := checkLayout(scr, 40, 10); len(bad) > 0 {
			t.Errorf("after %s: %s\n%s", k, strings.Join(bad, "; "), strings.Join(scr, "\n"))
		}
		for _, tab := range []string{"1 Tasks", "2 Runs", "3 Appr", "4 Jobs", "5 Alerts"} {
			if !strings.Contains(scr[2], tab) {
				t.Errorf("after %s: tab %q is off screen: %q", k, tab, scr[2])
			}
		}
		for _, soup := range []string{"appr ", " run ", "18t", "t 0r"} {
			if strings.Contains(scr[0], soup) {
				t.Errorf("header soup %q: %q", soup, scr[0])
			}
		}
		if !strings.Contains(scr[0], "4 approvals") || !strings.Contains(scr[0], "24h 2 failed 0 lost") {
			t.Errorf("header %q: want the pending approvals and the day's failures in words", scr[0])
		}
	}

	tm.keys("?")
	scr := tm.waitText("pgdn/pgup scroll")
	info := scr[len(scr)-3]
	if !strings.HasPrefix(info, "help · 1–4/") {
		t.Fatalf("help info line %q: want the lines shown", info)
	}
	tm.keys("Down")
	tm.waitFor("help scrolled a line", func(s []string) bool { return strings.HasPrefix(s[len(s)-3], "help · 2–5/") })
	tm.keys("PageDown")
	tm.waitFor("help scrolled a page", func(s []string) bool { return strings.HasPrefix(s[len(s)-3], "help · 5–8/") })
	tm.keys("PageUp", "Up")
	tm.waitFor("help back at the top", func(s []string) bool { return strings.HasPrefix(s[len(s)-3], "help · 1–4/") })
	tm.keys("End")
	tm.waitText("retention prunes them.") // the Alerts pane's help (BTab came back to it)
	tm.keys("Escape")
	tm.waitFor("help closed", func(s []string) bool { return !screenHas(s, "scroll") && screenHas(s, "/ filter") })
}
