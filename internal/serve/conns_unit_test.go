package serve

import (
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// fakeTimers holds the grace timers for the test to fire by hand.
type fakeTimers struct {
	mu  sync.Mutex
	all []*fakeTimer
}

type fakeTimer struct {
	f       func()
	stopped bool
}

func (ft *fakeTimers) after(_ time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{f: f}
	ft.all = append(ft.all, t)
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// fire runs the timers not stopped; with late, the stopped ones too, as a
// timer that fired while it was being stopped or re-armed would.
func (ft *fakeTimers) fire(late bool) {
	ft.mu.Lock()
	var run []func()
	for _, t := range ft.all {
		if !t.stopped || late {
			run = append(run, t.f)
			t.stopped = true
		}
	}
	ft.mu.Unlock()
	for _, f := range run {
		f()
	}
}

// connsHarness is a conns over net.Pipe connections and fake timers.
type connsHarness struct {
	t  *testing.T
	c  *conns
	ft *fakeTimers
}

func (h *connsHarness) admit() *trackedConn {
	a, b := net.Pipe()
	h.t.Cleanup(func() { a.Close(); b.Close() })
	tc := h.c.admit(a)
	if tc == nil {
		return nil
	}
	return tc
}

func (h *connsHarness) closed(tc *trackedConn) bool {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return tc.closed
}

// The connection accounting's life cycle, step by step with fake timers:
// what is closed at the grace time, what is counted where.
func TestConnsLifeCycle(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(h *connsHarness) (open []*trackedConn, gone []*trackedConn)
		want ConnStats
	}{
		{"no login: closed at the grace time", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a := h.admit()
			h.ft.fire(false)
			return nil, []*trackedConn{a}
		}, ConnStats{Accepted: 1, Dropped: 1}},
		{"logged in: the login timer firing late does not close it; no session then does", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a := h.admit()
			h.c.loggedIn(a, "alice")
			h.ft.fire(true) // the login timer, stopped as it fired, and the new one
			return nil, []*trackedConn{a}
		}, ConnStats{Accepted: 1, Dropped: 1}},
		{"logged in, stale timer only: open", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a := h.admit()
			h.ft.mu.Lock()
			login := h.ft.all[0]
			h.ft.mu.Unlock()
			h.c.loggedIn(a, "alice")
			login.f() // fires after the re-arm
			return []*trackedConn{a}, nil
		}, ConnStats{Authenticated: 1, Accepted: 1}},
		{"a session holds it open; its end gives the grace time again", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a, b := h.admit(), h.admit()
			h.c.loggedIn(a, "alice")
			h.c.loggedIn(b, "alice")
			if !h.c.sessionStart(a) || !h.c.sessionStart(b) {
				h.t.Fatal("session refused under the cap")
			}
			h.ft.fire(true)
			h.c.sessionEnd(b)
			h.ft.fire(false)
			return []*trackedConn{a}, []*trackedConn{b}
		}, ConnStats{Authenticated: 1, Accepted: 2, Dropped: 1}},
		{"beyond max sessions: no session, still counted as not logged in, closed at the grace time", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a, b, x := h.admit(), h.admit(), h.admit()
			for _, tc := range []*trackedConn{a, b, x} {
				h.c.loggedIn(tc, "alice")
			}
			if h.c.sessionStart(x) {
				h.t.Fatal("a session on a connection beyond --max-sessions")
			}
			h.c.sessionStart(a)
			h.c.sessionStart(b)
			if st := h.c.stats(); st.Unauthenticated != 1 || st.Authenticated != 2 {
				h.t.Fatalf("before the grace time: %+v", st)
			}
			h.ft.fire(false)
			return []*trackedConn{a, b}, []*trackedConn{x}
		}, ConnStats{Authenticated: 2, Accepted: 3, Dropped: 1}},
		{"the cap refuses at accept; a close frees a slot", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a, b, x := h.admit(), h.admit(), h.admit()
			if h.admit() != nil {
				h.t.Fatal("a fourth connection admitted with max startups 3")
			}
			a.Close()
			a.Close() // twice: counted once
			c := h.admit()
			if c == nil {
				h.t.Fatal("refused after a slot was freed")
			}
			return []*trackedConn{b, x, c}, []*trackedConn{a}
		}, ConnStats{Unauthenticated: 3, Accepted: 4, Refused: 1}},
		{"drain closes what holds no session, then everything", func(h *connsHarness) ([]*trackedConn, []*trackedConn) {
			a, b, c := h.admit(), h.admit(), h.admit()
			h.c.loggedIn(a, "alice")
			h.c.loggedIn(b, "alice")
			h.c.sessionStart(a)
			h.c.drain(false)
			if h.closed(a) || !h.closed(b) || !h.closed(c) {
				h.t.Fatal("drain(false) closed the session's connection or left an idle one")
			}
			if h.admit() != nil {
				h.t.Fatal("admitted while draining")
			}
			h.c.drain(true)
			return nil, []*trackedConn{a, b, c}
		}, ConnStats{Accepted: 3, Refused: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ft := &fakeTimers{}
			h := &connsHarness{t: t, ft: ft, c: newConns(Startups{Start: 3, Rate: 100, Full: 3}, time.Second, 2,
				func(int) int { return 0 }, slog.New(slog.DiscardHandler))}
			h.c.after = ft.after
			open, gone := c.run(h)
			for i, tc := range open {
				if h.closed(tc) {
					t.Errorf("connection %d of the open ones was closed", i)
				}
			}
			for i, tc := range gone {
				if !h.closed(tc) {
					t.Errorf("connection %d of the closed ones is open", i)
				}
			}
			if got := h.c.stats(); got != c.want {
				t.Errorf("stats %+v, want %+v", got, c.want)
			}
		})
	}
}
