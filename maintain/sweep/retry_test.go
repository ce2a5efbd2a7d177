package sweep_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
)

// errRolledBack ends a discarded first attempt (retryingStore).
var errRolledBack = errors.New("attempt rolled back")

// retryingStore is a core.Store whose Update runs fn twice, as PostgreSQL's
// store does after a serialization failure: the first run's transaction is
// rolled back, the second commits (issue 30: fn may run more than once).
type retryingStore struct{ core.Store }

func (s retryingStore) Update(ctx context.Context, fn func(core.Tx) error) error {
	err := s.Store.Update(ctx, func(tx core.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errRolledBack
	})
	if !errors.Is(err, errRolledBack) {
		return err
	}
	return s.Store.Update(ctx, fn)
}

// A sweep whose write transactions run twice applies every action once, in
// the run that commits: what the rolled-back run decided is planned again,
// not reported applied with no row changed.
func TestSweepApplyRunTwice(t *testing.T) {
	f := newSwFixture(t)
	const n = 6
	var ids []string
	for range n {
		ids = append(ids, f.task(core.NewTask{OwnerSession: "gone"}, true).ID)
	}
	f.clock.Advance(2 * time.Hour) // past grace, within the lost retention
	plan, err := f.sw.Plan(f.ctx)
	f.must(err)
	sw := sweep.New(core.NewRegistry(retryingStore{f.db}, f.clock, f.th), nil)
	rep, err := sw.Apply(f.ctx, plan)
	f.must(err)
	if c := rep.Counts; c.Lost != n || c.Raced != 0 {
		t.Fatalf("counts %+v, want %d lost, none raced\n%s", c, n, rep.Text())
	}
	for _, id := range ids {
		if got := f.get(id); got.Status != core.TaskLost {
			t.Errorf("task %s is %s after a sweep that reported it lost", id, got.Status)
		}
	}
}
