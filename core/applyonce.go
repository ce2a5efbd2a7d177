package core

import (
	"context"
	"errors"
	"fmt"
)

// EntitySpool is the journal entity of the rows ApplyOnce writes: one per
// spooled hook event folded in, its entity_id the spool entry's key.
const EntitySpool = "spool"

// ApplyOnce runs fn exactly once for key, in one write transaction together
// with a journal row (entity EntitySpool, id key, reason what) that records
// it: when that row exists already, fn is not run and ApplyOnce returns
// false. A crash after the commit and before the caller forgets key (a
// spool entry deleted after its fold) therefore never applies it twice.
//
// fn receives a Registry whose every Update and View joins this transaction:
// the use cases it calls commit or roll back together, and an error from fn
// rolls everything back (the key stays unapplied). Only use cases whose
// errors fn returns, or that fail before writing, belong in fn: a swallowed
// error would keep that step's partial writes. The jobs such use cases reap
// (closing a session, docs/contract.md "Background jobs: Reaped") are reaped after the commit, through r's job
// controller, since a reap waits on processes and writes on its own.
// Errors: ErrInvalid for an empty key; the store's (ErrBusy, ErrUnavailable)
// and fn's.
func (r *Registry) ApplyOnce(ctx context.Context, key, what string, fn func(ctx context.Context, in *Registry) error) (bool, error) {
	if key == "" {
		return false, Invalidf("apply once: empty key")
	}
	return r.inOneTx(ctx, key, what, fn)
}

// InOneTx runs fn with a Registry whose every Update and View joins one
// write transaction, as ApplyOnce does, without its journal row: the use
// cases fn calls take effect together or not at all.
func (r *Registry) InOneTx(ctx context.Context, fn func(ctx context.Context, in *Registry) error) error {
	_, err := r.inOneTx(ctx, "", "", fn)
	return err
}

// inOneTx is ApplyOnce, and InOneTx for an empty key.
func (r *Registry) inOneTx(ctx context.Context, key, what string, fn func(ctx context.Context, in *Registry) error) (bool, error) {
	deferred := &deferredJobs{}
	applied := false
	err := r.store.Update(ctx, func(tx Tx) error {
		applied = false
		deferred.reset()
		if key != "" {
			evs, err := tx.Events(EntitySpool, key)
			if err != nil {
				return fmt.Errorf("spool entry %s: %w", key, err)
			}
			if len(evs) > 0 {
				return nil // folded before: its journal row committed with it
			}
		}
		in := &Registry{store: txStore{tx: tx, path: r.store.Path()}, clock: r.clock, th: r.th, jobs: deferred}
		if err := fn(ctx, in); err != nil {
			return err
		}
		applied = true
		if key == "" {
			return nil
		}
		return journal(tx, r.now(), EntitySpool, key, "", "folded", ActorRuntime, what, true)
	})
	if err != nil || !applied {
		return false, err
	}
	var errs []error
	for _, s := range deferred.reaps {
		if _, err := r.reap(ctx, s.id, s.actor); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range deferred.cancels {
		if r.jobs != nil {
			if _, _, err := r.jobs.CancelJob(ctx, c.id, c.actor); err != nil {
				errs = append(errs, fmt.Errorf("cancel job %s: %w", c.id, err))
			}
		}
	}
	return true, errors.Join(errs...)
}

// txStore is a Store whose Update and View run in one transaction already
// open (ApplyOnce's).
type txStore struct {
	tx   Tx
	path string
}

func (s txStore) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(s.tx)
}

func (s txStore) View(ctx context.Context, fn func(Tx) error) error { return s.Update(ctx, fn) }

func (s txStore) DataVersion(context.Context) (int64, error) {
	return 0, errors.New("no change detection inside one transaction")
}

func (s txStore) Path() string { return s.path }
func (s txStore) Close() error { return nil }

// deferredJobs is the JobController of ApplyOnce's inner Registry: it notes
// what to reap or cancel, done after the commit.
type deferredJobs struct {
	reaps, cancels []deferredJob
}

type deferredJob struct {
	id    string // the session to reap, or the job to cancel
	actor Actor
}

func (d *deferredJobs) reset() { d.reaps, d.cancels = nil, nil }

func (d *deferredJobs) CancelJob(_ context.Context, id string, actor Actor) (*Job, Result, error) {
	d.cancels = append(d.cancels, deferredJob{id, actor})
	return nil, Result{}, nil
}

func (d *deferredJobs) ReapSession(_ context.Context, session string, actor Actor) (ReapReport, error) {
	d.reaps = append(d.reaps, deferredJob{session, actor})
	return ReapReport{}, nil
}
