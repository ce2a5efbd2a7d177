package claude

import (
	"context"
	"errors"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// failingReads is a store whose reads fail once broken is set: a disk
// error that comes while a hook waits for an approval.
type failingReads struct {
	core.Store
	broken atomic.Bool
}

var errDisk = errors.New("disk I/O error")

func (f *failingReads) View(ctx context.Context, fn func(core.Tx) error) error {
	if f.broken.Load() {
		return errDisk
	}
	return f.Store.View(ctx, fn)
}

func (f *failingReads) DataVersion(ctx context.Context) (int64, error) {
	if f.broken.Load() {
		return 0, errDisk
	}
	return f.Store.DataVersion(ctx)
}

// TestHeldOverBudgetFailsClosed: a tool outside the gate, held because
// its session is over a budget with the action gate, is denied (not
// passed) when the registry fails after its approval was requested. A
// failure before the budget could be read still passes it.
func TestHeldOverBudgetFailsClosed(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Location(t, "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fs := &failingReads{Store: db}
	reg := core.NewRegistry(fs, core.SystemClock{}, core.DefaultThresholds())
	h := &Handler{Reg: reg, Cfg: Config{ApprovalTimeout: time.Minute, Gate: regexp.MustCompile("^Bash$")}}
	if _, err := h.Handle(ctx, &Payload{HookEventName: EventSessionStart, SessionID: "s", Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.SetBudget(ctx, core.BudgetSpec{Session: core.Limit{Tokens: 10}, Action: core.BudgetGate}, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := reg.AddUsage(ctx, []core.UsageRow{{Scope: core.UsageSession, ID: "s", Model: "m", Tokens: core.Tokens{Input: 100}, CountedAt: core.TS(time.Now())}}); err != nil {
		t.Fatal(err)
	}
	read := &Payload{HookEventName: EventPreToolUse, SessionID: "s", ToolName: "Read", ToolUseID: "toolu_1",
		ToolInput: []byte(`{"file_path":"/w/README.md"}`)}
	type result struct {
		d   *Decision
		err error
	}
	ch := make(chan result, 1)
	go func() {
		d, err := h.Handle(ctx, read)
		ch <- result{d, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
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
		time.Sleep(10 * time.Millisecond)
	}
	fs.broken.Store(true)
	var r result
	select {
	case r = <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the held call was not answered after the registry failed")
	}
	if r.err == nil || r.d == nil || r.d.Permission != Deny {
		t.Fatalf("held over-budget Read after a failure: %+v, %v; want a deny", r.d, r.err)
	}

	// A failure before the budgets are read lets a tool outside the gate
	// pass: no answer, the agent's own rules decide.
	read.ToolUseID = "toolu_2"
	if d, err := h.Handle(ctx, read); err == nil || d == nil || !d.Pass() || !IsBudgetUnread(err) {
		t.Fatalf("Read with unreadable budgets: %+v, %v; want a pass", d, err)
	}
}
