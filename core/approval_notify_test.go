package core_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// On PostgreSQL with a working LISTEN, a waiting hook wakes on the NOTIFY of
// the decision, made through another handle (another host's console): with
// a 30 s poll, returning within seconds proves the notification woke it.
// Through a pooler (CLAWPIT_TEST_PGBOUNCER) the waiter writes and reads
// through it and listens on the direct URL, as --listen-db.
func TestWaitApprovalWakesOnNotification(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set (.ci/pg start): the PostgreSQL LISTEN path is not exercised")
	}
	loc, direct := storetest.Schema(t, base), ""
	if p := os.Getenv(storetest.PoolerEnv); p != "" {
		loc, direct = storetest.Pooled(t, base, p)
	}
	ctx := context.Background()
	open := func(listen string) *core.Registry {
		t.Helper()
		db, err := store.Open(ctx, loc, store.Options{ListenURL: listen})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	}
	hook, operator := open(direct), open("")
	if _, _, err := hook.OpenSession(ctx, "s", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	a, err := hook.RequestApproval(ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	const poll = 30 * time.Second
	type result struct {
		a   *core.Approval
		err error
		at  time.Time
	}
	got := make(chan result, 1)
	go func() {
		w, err := hook.WaitApproval(ctx, a.ID, poll)
		got <- result{w, err, time.Now()}
	}()
	// Let the waiter read the pending approval and arm its wait.
	time.Sleep(500 * time.Millisecond)
	if m := hook.Store().(*store.DB).ChangeMode(); m != store.ChangeLive {
		t.Fatalf("the waiter's handle is %q, want %q (LISTEN did not work)", m, store.ChangeLive)
	}
	decided := time.Now()
	if _, _, _, err := operator.ApproveApproval(ctx, a.ID, core.ScopeOnce, "op@host-b"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.a.Status != core.ApprovalApproved {
			t.Fatalf("waiter returned %s, want approved", r.a.Status)
		}
		t.Logf("decision → waiter returned in %s (poll %s)", r.at.Sub(decided), poll)
		if lag := r.at.Sub(decided); lag > time.Second {
			t.Errorf("waiter returned %s after the decision, want < 1 s", lag)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("waiter still waiting 10 s after the decision: it did not wake on the notification (poll %s)", poll)
	}
}

// Without a working LISTEN (here --listen-db names no server; in a fleet, a
// pooler without --listen-db) the waiter's handle polls: its data version
// moves every second, so with the default poll the waiter still reads the
// decision within about a second.
func TestWaitApprovalPollingSeesDecision(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set (.ci/pg start): the PostgreSQL polling path is not exercised")
	}
	loc := storetest.Schema(t, base)
	ctx := context.Background()
	open := func(listen string) *core.Registry {
		t.Helper()
		db, err := store.Open(ctx, loc, store.Options{ListenURL: listen})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	}
	hook := open("postgres://nobody@/nodb?host=" + t.TempDir() + "&connect_timeout=2")
	operator := open("")
	if _, _, err := hook.OpenSession(ctx, "s", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	a, err := hook.RequestApproval(ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if w, err := hook.WaitApproval(ctx, a.ID, 0); err == nil && w.Status == core.ApprovalApproved {
			got <- time.Now()
		}
		close(got)
	}()
	time.Sleep(500 * time.Millisecond)
	if m := hook.Store().(*store.DB).ChangeMode(); m != store.ChangePolling {
		t.Fatalf("the waiter's handle is %q, want %q", m, store.ChangePolling)
	}
	decided := time.Now()
	if _, _, _, err := operator.ApproveApproval(ctx, a.ID, core.ScopeOnce, "op@host-b"); err != nil {
		t.Fatal(err)
	}
	select {
	case at, ok := <-got:
		if !ok {
			t.Fatal("the wait failed or did not return approved")
		}
		lag := at.Sub(decided)
		t.Logf("decision → polling waiter returned in %s", lag)
		if lag > store.PollInterval+500*time.Millisecond {
			t.Errorf("polling waiter returned %s after the decision, want within about %s", lag, store.PollInterval)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("polling waiter still waiting 10 s after the decision")
	}
}

// countingStore counts View transactions (the waiter's reads of its
// approval); embedding keeps store.DB's ChangedAfter.
type countingStore struct {
	*store.DB
	views atomic.Int64
}

func (s *countingStore) View(ctx context.Context, fn func(core.Tx) error) error {
	s.views.Add(1)
	return s.DB.View(ctx, fn)
}

// A waiter woken by every write of a busy registry reads its approval at
// most every 100 ms, not once per notification.
func TestWaitApprovalBusyRegistryReadsBounded(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set (.ci/pg start): the PostgreSQL LISTEN path is not exercised")
	}
	loc := storetest.Schema(t, base)
	ctx := context.Background()
	db, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cs := &countingStore{DB: db}
	hook := core.NewRegistry(cs, core.SystemClock{}, core.DefaultThresholds())
	busy := core.NewRegistry(other, core.SystemClock{}, core.DefaultThresholds())
	if _, _, err := hook.OpenSession(ctx, "s", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	a, err := hook.RequestApproval(ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		hook.WaitApproval(wctx, a.ID, 30*time.Second)
	}()
	time.Sleep(500 * time.Millisecond)
	if m := db.ChangeMode(); m != store.ChangeLive {
		t.Fatalf("the waiter's handle is %q, want %q", m, store.ChangeLive)
	}
	before, start := cs.views.Load(), time.Now()
	writes := 0
	for time.Since(start) < time.Second {
		if _, _, err := busy.OpenSession(ctx, fmt.Sprintf("busy-%d", writes), "", core.ActorRuntime); err != nil {
			t.Fatal(err)
		}
		writes++
	}
	reads := cs.views.Load() - before
	elapsed := time.Since(start)
	cancel()
	<-done
	t.Logf("%d writes in %s woke %d reads", writes, elapsed.Round(time.Millisecond), reads)
	if writes < 30 {
		t.Skipf("only %d writes in a second: too few to tell", writes)
	}
	if limit := int64(elapsed/(100*time.Millisecond)) + 3; reads > limit {
		t.Errorf("%d reads of the approval during %d writes in %s, want at most %d (one per 100 ms)", reads, writes, elapsed, limit)
	}
}
