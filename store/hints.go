package store

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// ChangeHints subscribes to hints that another connection may have
// committed: the returned channel (capacity 1, so hints coalesce while the
// subscriber is busy) receives a value after a write to the SQLite
// registry's file, its WAL or its rollback journal by any process (inotify
// on the registry's directory, through fsnotify), or after a PostgreSQL
// NOTIFY from a writer or a change of the listener's connection. A hint is
// not a change: read DataVersion to know. cancel ends the subscription
// (idempotent). ok is false when no hints can be given (the file system
// watch could not start, e.g. inotify's watch limit reached; a PostgreSQL
// registry without a working LISTEN, ChangePolling): poll DataVersion
// instead.
//
// Readers that otherwise poll DataVersion (the console, clawpit serve's
// watcher) wait for a hint instead, and read it every few seconds besides
// (tui.HintSafetyNet) in case a hint never came: on a local file system,
// where every writer of an SQLite registry in WAL mode must be (WAL needs
// shared memory), inotify reports every write. An idle registry wakes
// nobody.
func (db *DB) ChangeHints() (hints <-chan struct{}, cancel func(), ok bool) {
	if db.lite == nil {
		// PostgreSQL: the listener bumps the version and hints; start it.
		if _, err := db.eng.DataVersion(context.Background()); err != nil {
			return nil, nil, false
		}
		if db.eng.ChangeMode() == ChangePolling {
			// Nothing is heard: the caller polls the version, which moves
			// every PollInterval.
			return nil, nil, false
		}
	} else if err := db.hints.watchFile(db.path); err != nil {
		return nil, nil, false
	}
	ch, cancel := db.hints.subscribe()
	return ch, cancel, true
}

// hintHub fans hints out to subscribers; for SQLite it owns the fsnotify
// watch of the registry's directory, started by the first subscriber and
// closed with the DB. The zero value is ready.
type hintHub struct {
	mu     sync.Mutex
	subs   map[chan struct{}]struct{}
	fw     *fsnotify.Watcher
	err    error // the watch failed to start (not retried)
	closed bool
}

// watchFile starts (once) watching the directory of path for writes to
// path, path-wal and path-journal. Errors: the watch could not start.
func (h *hintHub) watchFile(path string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fw != nil || h.err != nil {
		return h.err
	}
	if h.closed {
		h.err = errClosedHints
		return h.err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		h.err = err
		return err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		h.err = err
		return err
	}
	if err := fw.Add(filepath.Dir(abs)); err != nil {
		fw.Close()
		h.err = err
		return err
	}
	h.fw = fw
	names := map[string]bool{abs: true, abs + "-wal": true, abs + "-journal": true}
	go func() {
		for {
			select {
			case ev, open := <-fw.Events:
				if !open {
					return
				}
				// Every commit writes the WAL (or the file and its
				// journal); creating the WAL anew is a write to come.
				if names[filepath.Clean(ev.Name)] && ev.Op&(fsnotify.Write|fsnotify.Create) != 0 {
					h.broadcast()
				}
			case _, open := <-fw.Errors:
				if !open {
					return
				}
				// An overflowed queue may have dropped a write: look.
				h.broadcast()
			}
		}
	}()
	return nil
}

type hintsError string

func (e hintsError) Error() string { return string(e) }

const errClosedHints = hintsError("store: change hints of a closed registry")

func (h *hintHub) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan struct{}]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, ch)
			h.mu.Unlock()
		})
	}
}

// broadcast gives every subscriber a hint, never blocking: a subscriber
// with one pending already has what it needs.
func (h *hintHub) broadcast() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// close stops the file system watch; subscribers get no more hints.
func (h *hintHub) close() {
	h.mu.Lock()
	fw := h.fw
	h.fw, h.closed = nil, true
	h.mu.Unlock()
	if fw != nil {
		fw.Close()
	}
}
