package e2e

// Two notifiers on one registry — the daemon and a console, or two daemons —
// must not run --notify-cmd twice for one notification.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTwoDaemonsDeliverOnce: two `clawpit daemon --notify-cmd` processes
// started together on 12 undelivered notifications run the command exactly
// once per notification, and all of them end delivered.
func TestTwoDaemonsDeliverOnce(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "ops")
	const count = 12
	for i := 0; i < count; i++ {
		id := c.ok("task", "create", "--runtime", "cli", "--session", "ops", "--label", "t")
		c.ok("task", "start", id)
		c.ok("task", "finish", id, "--status", "failed", "--error", "boom")
	}
	log := filepath.Join(t.TempDir(), "delivered")
	var daemons []*strings.Builder
	for i := 0; i < 2; i++ {
		cmd := c.command(nil, "daemon", "--sweep-interval", "0", "--watchdog-interval", "0",
			"--notify-cmd", `echo "$CLAWPIT_NOTIFICATION_ID" >> '`+log+`'; sleep 0.05`)
		var se strings.Builder
		cmd.Stderr = &se
		daemons = append(daemons, &se)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ns []struct{ ID int64 }
		c.json(&ns, "notifications")
		if len(ns) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications still undelivered; logs:\n%s\n%s", len(ns), daemons[0], daemons[1])
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a duplicate would be running by now
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, id := range strings.Fields(string(b)) {
		seen[id]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("notification %s delivered %d times", id, n)
		}
	}
	if len(seen) != count {
		t.Errorf("%d notifications delivered, want %d", len(seen), count)
	}
}
