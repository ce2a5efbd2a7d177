package core_test

import (
	"context"
	"errors"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestApplyOnce(t *testing.T) {
	f := registrytest.New(t)
	calls := 0
	activity := func(ctx context.Context, in *core.Registry) error {
		calls++
		_, err := in.RecordActivity(ctx, core.Activity{Session: "sess-1", Why: "PostToolUse Bash"}, core.ActorRuntime)
		return err
	}
	for i, want := range []bool{true, false, false} {
		applied, err := f.Reg.ApplyOnce(f.Ctx, "k1", "hook PostToolUse", activity)
		if err != nil || applied != want {
			t.Fatalf("call %d: applied %v, %v; want %v", i, applied, err, want)
		}
	}
	if calls != 1 {
		t.Fatalf("fn ran %d times, want 1", calls)
	}
	_, evs, err := f.Reg.GetSession(f.Ctx, "sess-1")
	f.Must(err)
	if len(evs) != 1 {
		t.Fatalf("session journal %+v, want the one activity", evs)
	}
	if _, err := f.Reg.ApplyOnce(f.Ctx, "", "x", activity); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("empty key: %v", err)
	}
}

// TestApplyOnceRollsBack: an error from fn undoes every use case it called
// and leaves the key unapplied; the jobs of a session closed inside are
// reaped only after a commit.
func TestApplyOnceRollsBack(t *testing.T) {
	f := registrytest.New(t)
	f.Session("sess-2")
	boom := errors.New("boom")
	applied, err := f.Reg.ApplyOnce(f.Ctx, "k2", "x", func(ctx context.Context, in *core.Registry) error {
		if _, _, _, err := in.CloseSession(ctx, "sess-2", core.ActorRuntime); err != nil {
			return err
		}
		if _, _, err := in.OpenSession(ctx, "sess-3", "", core.ActorRuntime); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || applied {
		t.Fatalf("applied %v, %v; want the error", applied, err)
	}
	s, _, err := f.Reg.GetSession(f.Ctx, "sess-2")
	f.Must(err)
	if s.State != core.SessionActive {
		t.Fatalf("session s2 %s after a rolled back close", s.State)
	}
	if _, _, err := f.Reg.GetSession(f.Ctx, "sess-3"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("session sess-3 after a rollback: %v", err)
	}
	if len(f.Jobs.Reaped()) != 0 {
		t.Fatalf("reaped %v after a rollback", f.Jobs.Reaped())
	}
	applied, err = f.Reg.ApplyOnce(f.Ctx, "k2", "x", func(ctx context.Context, in *core.Registry) error {
		_, _, _, err := in.CloseSession(ctx, "sess-2", core.ActorRuntime)
		return err
	})
	if err != nil || !applied {
		t.Fatalf("second try: %v %v", applied, err)
	}
	if len(f.Jobs.Reaped()) != 1 || f.Jobs.Reaped()[0] != "sess-2" {
		t.Fatalf("reaped %v, want s2 once after the commit", f.Jobs.Reaped())
	}
}

func TestInOneTx(t *testing.T) {
	f := registrytest.New(t)
	err := f.Reg.InOneTx(f.Ctx, func(ctx context.Context, in *core.Registry) error {
		if _, _, err := in.OpenSession(ctx, "sess-4", "", core.ActorRuntime); err != nil {
			return err
		}
		return core.Invalidf("refused")
	})
	if !errors.Is(err, core.ErrInvalid) {
		t.Fatal(err)
	}
	if _, _, err := f.Reg.GetSession(f.Ctx, "sess-4"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("s4 after a rollback: %v", err)
	}
	f.Must(f.Reg.InOneTx(f.Ctx, func(ctx context.Context, in *core.Registry) error {
		_, _, err := in.OpenSession(ctx, "sess-4", "", core.ActorRuntime)
		return err
	}))
	if _, _, err := f.Reg.GetSession(f.Ctx, "sess-4"); err != nil {
		t.Fatal(err)
	}
}
