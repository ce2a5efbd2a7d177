package serve

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/tui"
)

// watcher is the one reader of the registry's data_version for every
// session: when it moved, the watcher wakes every subscribed session, which
// then loads its own delta. It reads at each change hint of the store
// (feed.HintSource: a write to the SQLite registry's files, a PostgreSQL
// NOTIFY) and every tui.HintSafetyNet besides, or every interval when the
// store gives no hints. An idle server reads nothing but the safety net's one
// query every 5 s, whatever the number of sessions.
type watcher struct {
	st      core.Store
	every   time.Duration
	hintNet time.Duration // the read between hints (safety net)
	log     *slog.Logger
	// hints (nil: none, poll every interval) and their cancel: subscribed
	// in newWatcher, so the file system watch's descriptors are open before
	// the server says it listens, as every other descriptor it keeps.
	hints       <-chan struct{}
	cancelHints func()

	version atomic.Int64
	polls   atomic.Int64 // data_version reads (tests, bench)

	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

func newWatcher(st core.Store, every time.Duration, log *slog.Logger) *watcher {
	w := &watcher{st: st, every: every, hintNet: tui.HintSafetyNet, log: log, subs: map[chan struct{}]struct{}{}, cancelHints: func() {}}
	if h, ok := st.(feed.HintSource); ok {
		if ch, cancel, ok := h.ChangeHints(); ok {
			w.hints, w.cancelHints = ch, cancel
		}
	}
	return w
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

// run reads data_version until ctx ends: at each change hint and every
// hintNet (tui.HintSafetyNet), or every interval without hints. A failed
// read is logged once per streak of failures and retried at the next
// interval (hinted or not: a lost PostgreSQL listener hints as it
// reconnects).
func (w *watcher) run(ctx context.Context) {
	defer w.cancelHints()
	every, hints := w.every, w.hints
	if hints != nil {
		every = max(every, w.hintNet)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	var woke time.Time          // the last broadcast
	var lastHint time.Time      // the last read a hint caused
	var follow <-chan time.Time // the next follow-up read (tui.HintFollowUp)
	step := -1                  // follow-ups done since the last hint; -1: none due
	for {
		select {
		case <-ctx.Done():
			return
		case <-hints: // nil without hints: never
			// A burst of writes wakes the sessions at most once per
			// interval, as the poll did, and reads at most once per
			// interval on hints: a hint whose commit was not visible yet
			// is read again by the follow-ups, not by the next hint.
			since := woke
			if lastHint.After(since) {
				since = lastHint
			}
			if d := time.Until(since.Add(w.every)); d > 0 {
				p := time.NewTimer(d)
				select {
				case <-ctx.Done():
					p.Stop()
					return
				case <-p.C:
				}
			}
			lastHint, step = time.Now(), 0
		case <-follow:
			step++
		case <-t.C:
		}
		follow = nil
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
			woke, step = time.Now(), -1
			continue
		}
		if step >= 0 {
			// Hinted, unchanged: the commit may not be visible yet.
			if d, ok := tui.HintFollowUp(step); ok {
				follow = time.After(d)
			} else {
				step = -1
			}
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
	feed.Source
	w *watcher
}

func (s sharedSource) DataVersion(context.Context) (int64, error) { return s.w.version.Load(), nil }

// ChangeNote is the store's (feed.ChangeNoter): the watcher polls the one store.
func (s sharedSource) ChangeNote() string {
	if n, ok := s.Source.(feed.ChangeNoter); ok {
		return n.ChangeNote()
	}
	return ""
}
