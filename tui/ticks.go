package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/termtext"
)

// The console redraws only what changed (issue: an idle console must rest).
// Two things wake it:
//
//   - the watch (Model.watch, unless Options.NoPoll): one goroutine reading
//     data_version at each change hint of the registry (HintSource: a write
//     to its files, a NOTIFY) and every 5 s besides, or every
//     Options.PollInterval without hints, that reports only a change
//     (changedMsg): a read that finds nothing new costs one query and no
//     trip through Update, and redraws nothing.
//   - the tick (tickMsg): scheduled for the earliest moment the screen's
//     text changes by itself — a visible age or countdown turning over
//     (Context.age, Context.until, Context.noteChange, noted while
//     rendering), the status line or header highlight expiring — or some
//     timed work falls due (sweep, watchdog, header recount, the busy
//     warning). An idle console whose youngest visible age reads "4m" wakes
//     when it reads "5m", not every second.

// changedMsg: the watch saw data_version change (or fail to read: the load
// it starts reports that).
type changedMsg struct {
	at time.Time // when the watch saw it (wall clock: the watch's timers)
}

// tickMsg is the clock tick due at (epoch ms, context clock); a tick
// superseded by an earlier one (Model.tickAt) is ignored when it arrives.
type tickMsg struct{ at core.Timestamp }

// noteChange records that the screen being rendered changes by itself at
// t (0 or a past t: ignored), rounded up to the next whole second: rows
// whose ages turn over at scattered milliseconds share one redraw a second
// (a table of ages in seconds would otherwise wake the console once per
// row), and an age reads at most a second late.
func (c *Context) noteChange(now, t core.Timestamp) {
	if t <= now {
		return
	}
	t = (t + 999) / 1000 * 1000
	if c.redrawAt == 0 || t < c.redrawAt {
		c.redrawAt = t
	}
}

// age is age(now, t), noting when its text next changes.
func (c *Context) age(now, t core.Timestamp) string {
	if t != 0 {
		c.noteChange(now, ageTurns(now, t))
	}
	return age(now, t)
}

// until is until(now, t), noting when its text next changes.
func (c *Context) until(now, t core.Timestamp) string {
	if t > now {
		c.noteChange(now, ageTurns(now, t))
	}
	return until(now, t)
}

// ageUnit is the unit termtext.Dur shows d in: 1 s below a minute, 1 m
// below an hour, 1 h below a day, else 1 d.
func ageUnit(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return time.Second
	case d < time.Hour:
		return time.Minute
	case d < 24*time.Hour:
		return time.Hour
	default:
		return 24 * time.Hour
	}
}

// ageTurns is the first moment after now at which termtext.Age(·, t) (and
// so age, until and Dur of the time since or to t) reads differently: the
// next whole unit of a past t's age; for a future t, the moment the time
// left drops below its shown whole units (at t itself "in 0s" turns "0s",
// or until's "past").
func ageTurns(now, t core.Timestamp) core.Timestamp {
	if t <= now {
		d := now.Sub(t)
		u := ageUnit(d)
		return t.Add((d/u + 1) * u)
	}
	left := t.Sub(now)
	u := ageUnit(left)
	if q := left / u; q > 0 {
		return t.Add(-q*u) + 1
	}
	return t
}

// sinceText is a running duration from start to now (termtext.Dur), noting
// when it next changes.
func (c *Context) sinceText(now, start core.Timestamp) string {
	c.noteChange(now, ageTurns(now, start))
	return termtext.Dur(now.Sub(start))
}

// watch reads data_version until it differs from the version of the rows
// shown (or cannot be read), then reports changedMsg: at each change hint
// and every HintSafetyNet (5 s) besides when the source gives hints
// (HintSource: an idle console then never wakes to poll), else every
// PollInterval. nil with Options.NoPoll (changes are pushed) and in
// model-level tests. Update arms it whenever no load and no watch is
// running.
func (m *Model) watch() tea.Cmd {
	if !m.ticks || m.opts.NoPoll || m.polling || m.loading {
		return nil
	}
	if !m.hintsTried {
		m.hintsTried = true
		if h, ok := m.src.(feed.HintSource); ok {
			if ch, cancel, ok := h.ChangeHints(); ok {
				m.hints = ch
				context.AfterFunc(m.bg, cancel)
			}
		}
	}
	m.polling = true
	ctx, src, every, since, hints := m.bg, m.src, m.opts.PollInterval, m.version, m.hints
	// A burst of writes reloads at most once per PollInterval, as the poll
	// did: a hint sooner than that after the last change waits it out.
	gap, last := m.opts.PollInterval, m.changedAt
	if hints != nil {
		every = max(every, HintSafetyNet)
	}
	return func() tea.Msg {
		t := time.NewTicker(every)
		defer t.Stop()
		var follow <-chan time.Time // the next follow-up read (HintFollowUp)
		var lastHint time.Time      // the last read a hint caused
		step := -1                  // follow-ups done since the last hint; -1: none due
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hints: // nil without hints: never
				// At most one read per gap on hints too: a hint whose
				// commit was not visible yet is read again by the
				// follow-ups, not by the next hint at once.
				if lastHint.After(last) {
					last = lastHint
				}
				if d := time.Until(last.Add(gap)); d > 0 {
					w := time.NewTimer(d)
					select {
					case <-ctx.Done():
						w.Stop()
						return nil
					case <-w.C:
					}
				}
				lastHint, step = time.Now(), 0
			case <-follow:
				step++
			case <-t.C:
			}
			follow = nil
			if v, err := src.DataVersion(ctx); err != nil || v != since {
				return changedMsg{at: time.Now()}
			}
			if step >= 0 {
				if d, ok := HintFollowUp(step); ok {
					follow = time.After(d)
				} else {
					step = -1
				}
			}
		}
	}
}

// HintFollowUp is how long after the read that follows a change hint (n
// = 0) or its n-th follow-up a reader that found data_version unchanged
// reads it again, and false after the last: a hint can come from the first
// of a commit's writes, before the commit is visible (SQLite publishes it
// in the WAL index, in shared memory, which the file system does not
// report). The follow-ups (10, 30, 100, 300 ms: 440 ms in all) keep a
// hinted change on screen within half a second on a loaded machine; an
// idle registry gives no hints, so costs none.
func HintFollowUp(n int) (time.Duration, bool) {
	switch n {
	case 0:
		return 10 * time.Millisecond, true
	case 1:
		return 30 * time.Millisecond, true
	case 2:
		return 100 * time.Millisecond, true
	case 3:
		return 300 * time.Millisecond, true
	}
	return 0, false
}

// HintSafetyNet is how often a reader woken by change hints (HintSource)
// still reads data_version on its own — the console's watch, clawpit
// serve's watcher: a safety net for a hint never delivered (every writer of
// an SQLite registry in WAL mode is on this host, where the file system
// reports every write), not the normal path.
const HintSafetyNet = 5 * time.Second

// nextTick is when the console must next wake by itself at now, or 0 for
// never: the screen's next change of text (redrawAt, from the last
// render), the status line's expiry, the busy warning's moment during a
// read, and the sweep, watchdog and header recount when due.
func (m *Model) nextTick(now core.Timestamp) core.Timestamp {
	var next core.Timestamp
	at := func(t core.Timestamp) {
		if t != 0 && (next == 0 || t < next) {
			next = max(t, now)
		}
	}
	at(m.redrawAt)
	if m.status.text != "" && !m.busy {
		ttl := statusTTLInfo
		if m.status.lvl >= lvlWarn {
			ttl = statusTTLWarn
		}
		at(m.status.at.Add(ttl))
	}
	if m.loading && !m.busy {
		at(m.loadStart.Add(busyAfter))
	}
	if m.loaded {
		at(m.countedAt.Add(recountEvery))
	}
	for _, l := range []interface{ recountAt() core.Timestamp }{m.tasks, m.runs, m.approvals, m.jobs, m.alerts} {
		at(l.recountAt())
	}
	if m.opts.Maintenance != nil && !m.ctx.ReadOnly {
		if due, ok := m.sched.Wake(); ok {
			at(core.TS(due))
		}
	}
	return next
}

// schedule makes sure a tick is pending for nextTick(now): a new one when
// none is, or when the pending one comes later.
func (m *Model) schedule(now core.Timestamp) tea.Cmd {
	if !m.ticks {
		return nil
	}
	next := m.nextTick(now)
	// A pending tick long overdue is taken for lost (a stalled program):
	// a new one is scheduled, and the old one is ignored if it comes.
	if next == 0 || m.tickAt != 0 && m.tickAt <= next && now < m.tickAt.Add(tickLost) {
		return nil
	}
	m.tickAt = next
	return tea.Tick(next.Sub(now), func(time.Time) tea.Msg { return tickMsg{at: next} })
}

// tickLost is how overdue a pending tick may be before schedule replaces it.
const tickLost = 5 * time.Second

// quietState is what an Update may change on screen besides the rows:
// compared before and after a tick or poll, it says whether to redraw.
type quietState struct {
	status                              statusLine
	busy, offline, sweeping, headerKnwn bool
	counts                              headerCounts
	flashUntil                          core.Timestamp
}

func (m *Model) quietState() quietState {
	return quietState{status: m.status, busy: m.busy, offline: m.offline, sweeping: m.sched.Running(maintain.KindSweep),
		headerKnwn: m.headerKnown, counts: m.counts, flashUntil: m.flashUntil}
}

// quietMsg reports whether msg changes nothing on screen by itself (a tick,
// a change to read, a read that found nothing new); quietState and the
// clock decide.
func quietMsg(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tickMsg, changedMsg, RefreshMsg, headerMsg: // a header read shows through quietState
		return true
	case loadedMsg:
		return msg.same && msg.err == nil
	case sweepMsg:
		return msg.kind == sweepWatchdog // what it changes shows in the status line (quietState) or rows (a load)
	}
	return false
}

// recountAt is when the list's next recount falls due (0: none
// pending): countDue's moment.
func (l *list[R]) recountAt() core.Timestamp {
	if !l.win.countDirty || l.win.counting {
		return 0
	}
	return max(l.win.recountAfter, 1) // never counted: due now
}
