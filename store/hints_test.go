package store

import (
	"context"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// TestChangeHints: a subscriber is hinted when another connection (here a
// second handle on the registry, as another process) commits — through the
// file system on SQLite, NOTIFY on PostgreSQL — and then reads a new
// DataVersion; an idle registry gives no hints, and a cancelled
// subscription none either.
func TestChangeHints(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		ctx := context.Background()
		loc := freshLocation(t)
		a, err := Open(ctx, loc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := Open(ctx, loc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		hints, cancel, ok := a.ChangeHints()
		if !ok && a.ChangeMode() == ChangePolling {
			// Through a pooler in transaction mode LISTEN hears nothing:
			// no hints, and the version moves every PollInterval instead.
			v0, err := a.DataVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(PollInterval + 100*time.Millisecond)
			if v, err := a.DataVersion(ctx); err != nil || v == v0 {
				t.Fatalf("polling: data_version %d after %s (was %d), %v", v, PollInterval, v0, err)
			}
			return
		}
		if !ok {
			t.Fatalf("no change hints (change mode %q)", a.ChangeMode())
		}
		v0, err := a.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		drain(hints)
		select {
		case <-hints:
			t.Fatal("a hint from an idle registry")
		case <-time.After(300 * time.Millisecond):
		}

		reg := core.NewRegistry(b, core.SystemClock{}, core.DefaultThresholds())
		if _, _, err := reg.OpenSession(ctx, "S1", "", "test"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-hints:
		case <-time.After(5 * time.Second):
			t.Fatal("no hint within 5 s of another connection's commit")
		}
		// On PostgreSQL the version moves as the listener takes the
		// NOTIFY, just before the hint; wait for it briefly either way.
		deadline := time.Now().Add(2 * time.Second)
		for {
			v, err := a.DataVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if v != v0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("hinted, but data_version still %d", v)
			}
			time.Sleep(10 * time.Millisecond)
		}

		cancel()
		cancel() // idempotent
		drain(hints)
		if _, _, err := reg.OpenSession(ctx, "S2", "", "test"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-hints:
			t.Fatal("a hint after cancel")
		case <-time.After(300 * time.Millisecond):
		}
	})
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
