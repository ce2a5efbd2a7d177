package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
)

// TestNotifierClaimRace: two notifiers (console and daemon) on separate
// handles of one registry, delivering at the same time, run the command
// exactly once per notification.
func TestNotifierClaimRace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	clock := core.NewFakeClock(registrytest.Start)
	var regs []*core.Registry
	for i := 0; i < 2; i++ {
		db, err := store.Open(ctx, path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		regs = append(regs, core.NewRegistry(db, clock, core.DefaultThresholds()))
	}
	const count = 24
	if err := regs[0].Store().Update(ctx, func(tx core.Tx) error {
		for i := 0; i < count; i++ {
			n := core.Notification{Session: "ops", Kind: core.NotifyTaskFailed, SubjectID: fmt.Sprint("task-", i),
				Text: "failed", DedupKey: fmt.Sprint("race:", i), CreatedAt: core.TS(registrytest.Start)}
			if _, err := tx.InsertNotification(&n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "delivered")
	t.Setenv("LOG", log)
	var (
		wg    sync.WaitGroup
		stats [2]core.NotifyStats
		errs  [2]error
	)
	for i, reg := range regs {
		n, err := core.NewNotifier(reg, `echo "$CLAWPIT_NOTIFICATION_ID" >> "$LOG"; sleep 0.01`, supervisor.Shell{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stats[i], errs[i] = n.DeliverPending(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(b))
	sort.Strings(ids)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("notification %s delivered %d times", id, c)
		}
	}
	if len(seen) != count || stats[0].Delivered+stats[1].Delivered != count {
		t.Errorf("%d distinct deliveries, stats %+v %+v; want %d", len(seen), stats[0], stats[1], count)
	}
	t.Logf("stats %+v %+v", stats[0], stats[1])
}

// TestNotifierClaimLease: a claim left by a notifier that died is respected
// until its lease ends, then another notifier delivers the notification (at
// least once across crashes).
func TestNotifierClaimLease(t *testing.T) {
	f := registrytest.New(t)
	nt := swNotify(f, core.NotifyJobLost, "job-1")
	ok, err := f.Reg.ClaimNotification(f.Ctx, nt.ID, "dead-host:1:x", time.Minute)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	n, err := core.NewNotifier(f.Reg, "true", supervisor.Shell{})
	f.Must(err)
	if st, err := n.DeliverPending(f.Ctx); err != nil || st.Claimed != 1 || st.Delivered != 0 {
		t.Fatalf("within the lease: %+v %v", st, err)
	}
	f.Clock.Advance(time.Minute)
	if st, err := n.DeliverPending(f.Ctx); err != nil || st.Delivered != 1 || len(swUndelivered(f)) != 0 {
		t.Fatalf("after the lease: %+v %v", st, err)
	}
	// Delivered: nobody can claim it any more.
	if ok, err := f.Reg.ClaimNotification(f.Ctx, nt.ID, "other", time.Minute); err != nil || ok {
		t.Fatalf("claim of a delivered notification: %v %v", ok, err)
	}
	// A failed delivery releases the claim at once for another notifier.
	nt2 := swNotify(f, core.NotifyJobLost, "job-2")
	bad, err := core.NewNotifier(f.Reg, "exit 1", supervisor.Shell{})
	f.Must(err)
	if st, _ := bad.DeliverPending(f.Ctx); st.Failed != 1 {
		t.Fatalf("failing command: %+v", st)
	}
	if ok, err := f.Reg.ClaimNotification(f.Ctx, nt2.ID, "other", time.Minute); err != nil || !ok {
		t.Fatalf("claim after a failed delivery: %v %v", ok, err)
	}
}
