package core_test

import (
	"slices"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// TestExpiryWithoutSweeper: with no sweeper running, an approval past its
// expires_at (fake clock) is expired: its waiter ends at the expiry with
// the expiry recorded (released wait, journal, notification), and the
// reads show an overdue one expired before anything records it.
func TestExpiryWithoutSweeper(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s")
	req := func(cmd string) *core.Approval {
		a, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s", Tool: "Bash", Command: cmd, ExpiresIn: time.Minute}, core.ActorRuntime)
		f.Must(err)
		return a
	}
	// A millisecond apart, so that newest first is kept, read, waited.
	waited := req("deploy")
	f.Clock.Advance(time.Millisecond)
	read := req("ls")
	f.Clock.Advance(time.Millisecond)
	kept := req("make")

	// The waiter: still waiting before the expiry, expired at it.
	done := make(chan *core.Approval, 1)
	go func() {
		got, err := f.Reg.WaitApproval(f.Ctx, waited.ID, time.Millisecond)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	f.Clock.Advance(59*time.Second - 2*time.Millisecond)
	select {
	case got := <-done:
		t.Fatalf("the waiter returned before the expiry: %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
	f.Clock.Advance(time.Second)
	select {
	case got := <-done:
		if got == nil || got.Status != core.ApprovalExpired || got.DecidedBy != string(core.ActorSweeper) {
			t.Fatalf("the waiter returned %+v, want expired", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not end at the expiry")
	}
	if ev := f.LastEvent(core.EntityApproval, waited.ID); ev.To != string(core.ApprovalExpired) || !ev.Applied {
		t.Fatalf("the waiter's expiry is not journalled: %+v", ev)
	}

	// The reads: overdue reads expired, without a write.
	f.Clock.Advance(2 * time.Millisecond)
	got, _, err := f.Reg.GetApproval(f.Ctx, read.ID)
	f.Must(err)
	if got.Status != core.ApprovalExpired || got.DecidedAt != got.ExpiresAt || got.Reason == "" {
		t.Fatalf("show: %+v, want expired at its expires_at", got)
	}
	if ev := f.LastEvent(core.EntityApproval, read.ID); ev.To == string(core.ApprovalExpired) {
		t.Fatalf("a read wrote the expiry: %+v", ev)
	}
	f.Must(f.DB.View(f.Ctx, func(tx core.Tx) error {
		a, err := tx.GetApproval(read.ID)
		if err == nil && a.Status != core.ApprovalPending {
			t.Errorf("stored status %s after a read, want pending", a.Status)
		}
		return err
	}))
	for _, tc := range []struct {
		name string
		f    core.ApprovalFilter
		want []string // ids, newest first
	}{
		{"all", core.ApprovalFilter{}, []string{kept.ID, read.ID, waited.ID}},
		{"pending", core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalPending}}, nil},
		{"expired", core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalExpired}}, []string{kept.ID, read.ID, waited.ID}},
		{"expired, limit 2", core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalExpired}, Limit: 2}, []string{kept.ID, read.ID}},
		{"denied", core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalDenied}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aps, err := f.Reg.ListApprovals(f.Ctx, tc.f)
			f.Must(err)
			var ids []string
			for _, a := range aps {
				if a.Status != core.ApprovalExpired {
					t.Errorf("%s reads %s, want expired", a.ID, a.Status)
				}
				ids = append(ids, a.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("ids %v, want %v", ids, tc.want)
			}
		})
	}
}

// TestApprovalAsOf: only a pending approval at or past its expires_at
// reads expired.
func TestApprovalAsOf(t *testing.T) {
	const exp core.Timestamp = 1_000_000
	for _, tc := range []struct {
		name string
		a    core.Approval
		now  core.Timestamp
		want core.ApprovalStatus
	}{
		{"pending before expiry", core.Approval{Status: core.ApprovalPending, ExpiresAt: exp}, exp - 1, core.ApprovalPending},
		{"pending at expiry", core.Approval{Status: core.ApprovalPending, ExpiresAt: exp}, exp, core.ApprovalExpired},
		{"pending past expiry", core.Approval{Status: core.ApprovalPending, ExpiresAt: exp}, exp + 1, core.ApprovalExpired},
		{"pending, no expiry", core.Approval{Status: core.ApprovalPending}, exp, core.ApprovalPending},
		{"approved past expiry", core.Approval{Status: core.ApprovalApproved, ExpiresAt: exp}, exp + 1, core.ApprovalApproved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.AsOf(tc.now); got.Status != tc.want {
				t.Fatalf("status %s, want %s", got.Status, tc.want)
			}
		})
	}
}
