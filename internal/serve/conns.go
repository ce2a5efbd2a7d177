package serve

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// Connection accounting, in front of the SSH library: every accepted TCP
// connection is counted from accept to close. One that has not logged in
// counts toward the Startups cap (sshd's MaxStartups) and is closed at the
// login grace time (sshd's LoginGraceTime); one that has logged in counts
// toward MaxSessions and is closed when it has held no session for the
// grace time. A connection refused by the cap is closed in the accept loop
// itself: no goroutine, no SSH byte, no host-key operation.

// connState is where a connection is in its life.
type connState uint8

const (
	// connLogin: accepted, not logged in yet (key exchange, authentication).
	connLogin connState = iota
	// connOver: logged in while MaxSessions connections already were; its
	// sessions are refused and it keeps counting as not logged in, so the
	// grace time still closes it.
	connOver
	// connIn: logged in and counted toward MaxSessions.
	connIn
)

// ConnStats counts the server's connections: open ones by state, and
// totals since the server started.
type ConnStats struct {
	Unauthenticated int    // open, not logged in (or logged in beyond --max-sessions)
	Authenticated   int    // open, logged in, counted toward --max-sessions
	Sessions        int    // open consoles
	Accepted        uint64 // admitted past the --max-startups cap
	Refused         uint64 // closed at accept by the --max-startups cap
	Dropped         uint64 // closed for no login, or no session, within the grace time
}

// conns is the accounting of one server's connections. Safe for
// concurrent use.
type conns struct {
	limit Startups
	grace time.Duration
	maxIn int
	roll  func(n int) int // uniform in [0, n): the cap's random refusal
	// after runs f after d and returns what stops it (time.AfterFunc's
	// Stop); tests pass a fake.
	after func(d time.Duration, f func()) (stop func() bool)
	log   *slog.Logger

	mu       sync.Mutex
	open     map[*trackedConn]struct{}
	login    int // connLogin and connOver
	in       int // connIn
	accepted uint64
	refused  uint64
	dropped  uint64
	draining bool
	// throttled is when the cap started refusing (zero when it is not);
	// throttledN counts the refusals since.
	throttled  time.Time
	throttledN uint64
}

func newConns(limit Startups, grace time.Duration, maxIn int, roll func(int) int, log *slog.Logger) *conns {
	return &conns{limit: limit, grace: grace, maxIn: maxIn, roll: roll, log: log, open: map[*trackedConn]struct{}{},
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// trackedConn is one accepted connection. Its fields after c are guarded
// by c.mu.
type trackedConn struct {
	net.Conn
	c     *conns
	addr  string
	since time.Time

	state    connState
	sessions int
	stop     func() bool // the grace timer's; nil before the first arming
	// armed numbers the timer's arming: a timer that fired while being
	// re-armed or stopped finds another number and does nothing.
	armed  uint64
	closed bool
}

// armLocked (re)starts tc's grace timer; called with c.mu held.
func (c *conns) armLocked(tc *trackedConn) {
	c.disarmLocked(tc)
	n := tc.armed
	tc.stop = c.after(c.grace, func() { c.expire(tc, n) })
}

// disarmLocked stops tc's grace timer; called with c.mu held.
func (c *conns) disarmLocked(tc *trackedConn) {
	tc.armed++
	if tc.stop != nil {
		tc.stop()
	}
}

// listener admits connections through the cap; the SSH server accepts
// from it.
type listener struct {
	net.Listener
	c *conns
}

// Accept returns the next admitted connection; refused ones are closed
// here and never reach the SSH server.
func (l listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc := l.c.admit(nc); tc != nil {
			return tc, nil
		}
	}
}

// admit counts nc and starts its login grace timer, or closes it when the
// cap refuses it (or the server is draining) and returns nil.
func (c *conns) admit(nc net.Conn) *trackedConn {
	c.mu.Lock()
	if c.draining || c.limit.Refuse(c.login, c.roll) {
		c.refused++
		c.throttledN++
		first := c.throttled.IsZero() && !c.draining
		if first {
			c.throttled = time.Now()
		}
		open := c.login
		c.mu.Unlock()
		nc.Close()
		if first {
			c.log.Warn("refusing new connections: too many not logged in", "unauthenticated", open, "max_startups", c.limit.String())
		}
		return nil
	}
	tc := &trackedConn{Conn: nc, c: c, addr: nc.RemoteAddr().String(), since: time.Now()}
	c.open[tc] = struct{}{}
	c.login++
	c.accepted++
	c.armLocked(tc)
	c.mu.Unlock()
	return tc
}

// loggedIn moves tc from the login count to the logged-in count, or marks
// it over the cap when MaxSessions connections are logged in already. It
// is called once authentication has succeeded (the signature verified),
// not when a public key is merely acceptable: knowing an operator's public
// key does not stop the grace timer.
func (c *conns) loggedIn(tc *trackedConn, operator string) {
	if tc == nil {
		return
	}
	c.mu.Lock()
	if tc.closed || tc.state != connLogin {
		c.mu.Unlock()
		return
	}
	over := c.in >= c.maxIn
	if over {
		tc.state = connOver
	} else {
		tc.state = connIn
		c.login--
		c.in++
		c.armLocked(tc) // now: until its first session
	}
	login, in := c.login, c.in
	ended := c.endThrottleLocked()
	c.mu.Unlock()
	ended()
	if over {
		c.log.Warn("logged in beyond --max-sessions: its sessions are refused", "addr", tc.addr, "operator", operator, "unauthenticated", login, "authenticated", in, "max", c.maxIn)
		return
	}
	c.log.Info("logged in", "addr", tc.addr, "operator", operator, "unauthenticated", login, "authenticated", in)
}

// sessionStart counts a session on tc and reports whether it may run: a
// connection over the cap, or one not known (which cannot happen), gets
// none.
func (c *conns) sessionStart(tc *trackedConn) bool {
	if tc == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if tc.closed || tc.state != connIn {
		return false
	}
	tc.sessions++
	c.disarmLocked(tc)
	return true
}

// sessionEnd uncounts a session started by sessionStart; a connection left
// without a session gets the grace time to open another.
func (c *conns) sessionEnd(tc *trackedConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tc.sessions--
	if tc.sessions == 0 && !tc.closed {
		c.armLocked(tc)
	}
}

// expire closes tc at its grace time unless it holds a session or the
// timer was re-armed or stopped since (armed is no longer n).
func (c *conns) expire(tc *trackedConn, n uint64) {
	c.mu.Lock()
	if tc.closed || tc.armed != n || (tc.state == connIn && tc.sessions > 0) {
		c.mu.Unlock()
		return
	}
	c.dropped++
	why := "no login within the grace time"
	switch tc.state {
	case connIn:
		why = "no session within the grace time"
	case connOver:
		why = "logged in beyond --max-sessions, still open at the grace time"
	}
	login, in := c.login, c.in
	c.mu.Unlock()
	c.log.Info("connection closed: "+why, "addr", tc.addr, "grace", c.grace.String(),
		"open_for", time.Since(tc.since).Round(time.Millisecond).String(), "unauthenticated", login, "authenticated", in)
	tc.Close()
}

// Close closes the connection and uncounts it (once).
func (tc *trackedConn) Close() error {
	c := tc.c
	ended := func() {}
	c.mu.Lock()
	if !tc.closed {
		tc.closed = true
		c.disarmLocked(tc)
		delete(c.open, tc)
		if tc.state == connIn {
			c.in--
		} else {
			c.login--
		}
		ended = c.endThrottleLocked()
	}
	c.mu.Unlock()
	ended()
	return tc.Conn.Close()
}

// endThrottleLocked ends a spell of refusals once fewer than Start
// connections are not logged in. Called with c.mu held, it returns what
// logs the end, to be called after the unlock (no I/O under the lock).
func (c *conns) endThrottleLocked() func() {
	if c.throttled.IsZero() || c.login >= c.limit.Start || c.draining {
		return func() {}
	}
	took, n := time.Since(c.throttled).Round(time.Millisecond), c.throttledN
	c.throttled, c.throttledN = time.Time{}, 0
	return func() { c.log.Info("accepting new connections again", "refused", n, "for", took.String()) }
}

// drain refuses every new connection and closes those without a session;
// with all, it closes every connection left.
func (c *conns) drain(all bool) {
	c.mu.Lock()
	c.draining = true
	var idle []*trackedConn
	for tc := range c.open {
		if all || tc.state != connIn || tc.sessions == 0 {
			idle = append(idle, tc)
		}
	}
	c.mu.Unlock()
	for _, tc := range idle {
		tc.Close()
	}
}

// stats is a snapshot of the counts (Sessions is left to the server).
func (c *conns) stats() ConnStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnStats{Unauthenticated: c.login, Authenticated: c.in, Accepted: c.accepted, Refused: c.refused, Dropped: c.dropped}
}
