package cli

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
)

// TestHookHeldOverBudgetDeniesWhenBusy: a Read (outside --gate Bash) held
// over a gating budget, whose registry is write-locked by another process
// from just after its approval was asked until the hook answers (so its
// expiry cannot be written), is denied: a held call is retried while the
// registry is busy and then denied, as a gated call is, never let through
// because something failed while it waited.
func TestHookHeldOverBudgetDeniesWhenBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out SQLite's busy timeout")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "r.db")
	run := func(in string, args ...string) (int, string, string) {
		var o, e bytes.Buffer
		code := Run(ctx, append([]string{"--db", db}, args...), strings.NewReader(in), &o, &e)
		return code, o.String(), e.String()
	}
	if code, _, e := run("", "budget", "set", "--session-tokens", "1000", "--action", "gate"); code != 0 {
		t.Fatalf("budget set: exit %d, %s", code, e)
	}
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := core.NewRegistry(st, core.SystemClock{}, core.DefaultThresholds())
	defer st.Close()
	if err := reg.AddUsage(ctx, []core.UsageRow{{Scope: core.UsageSession, ID: "s", Model: "m", Tokens: core.Tokens{Input: 5000}, CountedAt: core.TS(time.Now())}}); err != nil {
		t.Fatal(err)
	}
	payload := `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Read","tool_input":{"file_path":"/w/README.md"},"tool_use_id":"toolu_1"}`
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		code, o, e := run(payload, "hook", "--gated", "--gate", "Bash", "--approval-timeout", "1s")
		done <- result{code, o, e}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		aps, err := reg.ListApprovals(ctx, core.ApprovalFilter{Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if len(aps) == 1 && aps[0].Status == core.ApprovalPending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending approval for the over-budget Read: %+v", aps)
		}
	}
	lock, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	conn, err := lock.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	// Held past the expiry (1 s) and SQLite's busy timeout (5 s): the
	// expiry write fails, the hook's context ends (1 s + 5 s), and the
	// approval's withdrawal waits for the lock. Released then, well before
	// the hook's last-resort deny (1 s + 10 s), so that the answer is the
	// decision the hook reached, not that timer's.
	select {
	case r := <-done:
		t.Fatalf("the hook answered while the registry was locked: %+v", r)
	case <-time.After(time.Until(start.Add(7500 * time.Millisecond))):
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not answer")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("answered after %s: the last-resort timer, not the decision (machine too loaded?): %+v", time.Since(start), r)
	}
	if r.code != 0 || !strings.Contains(r.stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("held Read with the registry locked: exit %d, stdout %q, stderr %q; want a deny", r.code, r.stdout, r.stderr)
	}
}
