package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// TestExpiryWithoutSweeper: with no sweeper anywhere, an approval past its
// expiry is expired. `approval wait` ends at the expiry with exit 11 (the
// waiter records it); `approval list` and `show` show an overdue one
// expired; a read-only console (no embedded sweeper) shows it expired.
func TestExpiryWithoutSweeper(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "s")
	req := func(cmd, expires string) string {
		return c.ok("approval", "request", "--session", "s", "--tool", "Bash", "--command", cmd, "--expires-in", expires)
	}

	waited := req("make deploy", "2s")
	start := time.Now()
	o := c.run("approval", "wait", waited, "--timeout", "20s")
	took := time.Since(start)
	if o.code != 11 || !strings.Contains(o.stdout, "approval "+waited+" expired") {
		t.Fatalf("approval wait past the expiry: %s", o)
	}
	if took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("approval wait ended after %s, want about 2 s (the expiry)", took)
	}
	if a := c.approval(waited); a.Status != core.ApprovalExpired {
		t.Errorf("after the wait: %s", a.Status)
	}

	read := req("make lint", "1s")
	time.Sleep(1500 * time.Millisecond)
	if a := c.approval(read); a.Status != core.ApprovalExpired || a.DecidedAt != a.ExpiresAt {
		t.Errorf("approval show past the expiry: status %s decided_at %d expires_at %d", a.Status, a.DecidedAt, a.ExpiresAt)
	}
	row := ""
	for _, l := range strings.Split(c.ok("approval", "list"), "\n") {
		if strings.HasPrefix(l, read) {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 2 || f[1] != "expired" {
		t.Errorf("approval list row %q, want expired", row)
	}
	if s := c.ok("approval", "list", "--status", "pending"); strings.Contains(s, read) {
		t.Errorf("approval list --status pending lists the overdue approval:\n%s", s)
	}
	if s := c.ok("approval", "list", "--status", "expired"); !strings.Contains(s, read) {
		t.Errorf("approval list --status expired misses the overdue approval:\n%s", s)
	}

	requireTmux(t)
	tm := startConsole(t, c, consoleRun{args: []string{"--readonly"}})
	tm.keys("3")
	tm.waitFor("the overdue approval shown expired", func(s []string) bool {
		for _, l := range s {
			if strings.Contains(l, read) {
				return strings.Contains(l, " expired ")
			}
		}
		return false
	})
}

// TestConsoleSweepsAtStart: the console's embedded sweeper sweeps as it
// opens (the header no longer says "no sweep yet" a moment later); a
// read-only console does not sweep.
func TestConsoleSweepsAtStart(t *testing.T) {
	requireTmux(t)
	c := newCLI(t)
	c.ok("session", "open", "s")
	tm := startConsole(t, c, consoleRun{})
	tm.waitFor(`the header saying "swept just now"`, func(s []string) bool {
		return len(s) > 1 && strings.Contains(s[1], "swept just now") && !strings.Contains(s[1], "no sweep yet")
	})
	ro := startConsole(t, c, consoleRun{args: []string{"--readonly"}})
	ro.waitText("sweeper off (read-only)")
}
