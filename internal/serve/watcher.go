package serve

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// watcher is the one poller of the registry for every session (SPEC §13):
// it reads PRAGMA data_version every interval and, when it moved, wakes
// every subscribed session, which then loads its own delta. An idle server
// costs one cheap query per interval, whatever the number of sessions.
type watcher struct {
	st    core.Store
	every time.Duration
	log   *slog.Logger

	version atomic.Int64
	polls   atomic.Int64 // data_version reads (tests, bench)

	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func newWatcher(st core.Store, every time.Duration, log *slog.Logger) *watcher {
	return &watcher{st: st, every: every, log: log, subs: map[chan struct{}]struct{}{}}
}

// prime reads the version once before sessions start.
func (w *watcher) prime(ctx context.Context) error {
	v, err := w.st.DataVersion(ctx)
	if err != nil {
		return err
	}
	w.version.Store(v)
	return nil
}

// run polls until ctx ends. A failed read is logged once per streak of
// failures and retried at the next interval.
func (w *watcher) run(ctx context.Context) {
	t := time.NewTicker(w.every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.polls.Add(1)
		v, err := w.st.DataVersion(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				w.log.Warn("registry poll failed (retrying)", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		if v != w.version.Swap(v) {
			w.broadcast()
		}
	}
}

// subscribe returns a channel that receives (coalesced) wake-ups, and its
// cancel.
func (w *watcher) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subs, ch)
		w.mu.Unlock()
	}
}

// broadcast wakes every subscriber without blocking: a session that has
// not taken the last wake-up yet will load everything since anyway.
func (w *watcher) broadcast() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// sharedSource is a session's Source: loads and details go to the store
// (cheap deltas per session), data_version comes from the watcher's cache.
type sharedSource struct {
	tui.Source
	w *watcher
}

func (s sharedSource) DataVersion(context.Context) (int64, error) { return s.w.version.Load(), nil }

// ChangeNote is the store's (tui.ChangeNoter): the watcher polls the one store.
func (s sharedSource) ChangeNote() string {
	if n, ok := s.Source.(tui.ChangeNoter); ok {
		return n.ChangeNote()
	}
	return ""
}
