package tui

import (
	"strconv"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain"
)

// headerCounts are the header's numbers (README "The console").
type headerCounts struct {
	approvals    int // pending
	tasks        int // running
	runs         int // running (incl. waiting on approvals)
	jobs         int // running or pending
	failed, lost int // in the last 24 h: tasks and jobs that failed / timed out, and lost ones
	unread       int // undelivered notifications
}

const day = core.Timestamp(24 * 60 * 60 * 1000)

// headerView renders the two header lines.
func (m *Model) headerView(w int) string {
	th := m.ctx.Theme
	num := func(n int) string { return th.Count.Render(strconv.Itoa(n)) }
	stat := func(status string, n int) string { return statusNum(th, status, n) }
	if !m.headerKnown {
		// Not read yet (a large registry's counts come after its rows):
		// no number rather than a wrong zero.
		num = func(int) string { return th.Muted.Render("…") }
		stat = func(_ string, n int) string { return num(n) }
	}

	line1 := m.countsLine(w, num, stat)

	// Line 2: title, sweeper, registry path, READ-ONLY badge.
	left := th.Title.Render("clawpit") + "  " + m.sweepText()
	badge := ""
	if m.ctx.ReadOnly {
		badge = th.Badge.Render(" READ-ONLY ")
	}
	if m.offline {
		// A PostgreSQL registry out of reach: the poll keeps retrying.
		badge = th.Badge.Render(" DISCONNECTED · reconnecting ") + badge
	} else if m.changes != "" {
		// PostgreSQL: "live" (LISTEN) or "polling 1s" (a pooler without
		// --listen-db), so an operator knows how fresh the screen is.
		if badge != "" {
			badge = " " + badge
		}
		badge = th.Muted.Render(m.changes) + badge
	}
	if o := m.opts.Owner; o != nil && o.Name != "" {
		badge = th.Badge.Render(" "+o.Name+" ") + " " + badge
	}
	room := w - lipgloss.Width(left) - lipgloss.Width(badge) - 4
	// While the attention note shows: after the counts when they leave it
	// room, else on this line in the registry path's place when it fits
	// there whole (at 80 columns the counts fill the first line, and the
	// note would cover lost and alerts); else over the counts' end, as it
	// says what arrived.
	flash, noteHere := m.flashing(), false
	note := "◀ " + m.flashText
	if flash && lipgloss.Width(line1)+2+width(note) > w {
		noteRoom := w - lipgloss.Width(left) - 2
		if badge != "" {
			noteRoom -= lipgloss.Width(badge) + 1
		}
		noteHere = width(note) <= noteRoom
	}
	line2 := left
	if o := m.opts.Owner; o != nil && o.Note != "" && room >= lipgloss.Width(o.Note)+14 && !noteHere {
		line2 += "  " + th.Muted.Render(o.Note)
		room -= lipgloss.Width(o.Note) + 2
	}
	switch {
	case noteHere:
		line2 += "  " + lipgloss.NewStyle().Reverse(true).Bold(true).Render(note)
	case room >= 12:
		line2 += "  " + th.Muted.Render(truncLeft(m.ctx.DBPath, room))
	}
	if badge != "" {
		line2 += spaces(max(1, w-lipgloss.Width(line2)-lipgloss.Width(badge))) + badge
	}
	switch {
	case noteHere:
		return m.flashHeader(line1, "", w) + "\n" + clipLine(line2, w)
	case flash:
		return m.flashHeader(line1, m.flashText, w) + "\n" + clipLine(line2, w)
	}
	return clipLine(th.Header.Render(line1), w) + "\n" + clipLine(line2, w)
}

// statusNum renders a non-zero count in the theme's colour for status, so
// the header's "lost" count matches the lost rows.
func statusNum(th interface {
	Status(string) lipgloss.Style
}, status string, n int) string {
	if n == 0 {
		return strconv.Itoa(n)
	}
	return th.Status(status).Render(strconv.Itoa(n))
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// sweepText is the sweeper's part of the header: last sweep time and result,
// next sweep countdown.
func (m *Model) sweepText() string {
	th := m.ctx.Theme
	if m.opts.SweepNote != "" {
		return th.Muted.Render(m.opts.SweepNote)
	}
	switch {
	case m.opts.Maintenance == nil || m.opts.SweepInterval <= 0:
		if m.ctx.ReadOnly {
			return th.Muted.Render("sweeper off (read-only)")
		}
		return th.Muted.Render("sweeper off")
	case m.ctx.ReadOnly:
		return th.Muted.Render("sweeper off (read-only)")
	}
	now := m.ctx.now()
	var s string
	switch {
	case m.sched.Running(maintain.KindSweep):
		s = "sweeping…"
	case m.lastSweepAt == 0:
		s = "no sweep yet"
	case m.lastSweepErr != nil:
		s = th.StatusErr.Render("sweep failed "+m.sweptAgo(now)) + th.Muted.Render(": "+oneLine(m.lastSweepErr.Error()))
	default:
		s = "swept " + m.sweptAgo(now) + ": " + m.lastSweep.Short
	}
	if !m.sched.Running(maintain.KindSweep) {
		s += th.Muted.Render(" · next " + m.sweepCountdown(now))
	}
	return s
}

// sweepStep is the header's resolution of the sweep's times: the time
// since the last sweep below a minute and the time to the next below two
// minutes read in steps of it, so an idle header changes a few times a
// minute, not every second.
const sweepStep = 10 * time.Second

// sweptAgo is the time since the last sweep: "just now" below sweepStep,
// then whole steps ("20s ago") below a minute, then its age ("4m ago");
// it notes when that text next changes.
func (m *Model) sweptAgo(now core.Timestamp) string {
	d := now.Sub(m.lastSweepAt)
	if d >= time.Minute {
		return m.ctx.age(now, m.lastSweepAt) + " ago"
	}
	q := max(0, d/sweepStep)
	m.ctx.noteChange(now, m.lastSweepAt.Add((q+1)*sweepStep))
	if q == 0 {
		return "just now"
	}
	return countdown(q*sweepStep) + " ago"
}

// sweepCountdown is the time to the next sweep rounded up to its step —
// sweepStep up to two minutes, a minute up to an hour, an hour beyond —
// so "next 1m" reads until 50 s are left, then "50s" … "10s"; it notes when
// that text next changes.
func (m *Model) sweepCountdown(now core.Timestamp) string {
	next := core.TS(m.sched.Next(maintain.KindSweep))
	left := next.Sub(now)
	if left <= 0 {
		return countdown(0)
	}
	step := sweepStep
	switch {
	case left > time.Hour:
		step = time.Hour
	case left > 2*time.Minute:
		step = time.Minute
	}
	q := (left + step - 1) / step
	m.ctx.noteChange(now, next.Add(-(q-1)*step))
	return countdown(q * step)
}

// countdown formats the time to the next sweep: 48s, 1m30s.
func countdown(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
	if s == 0 {
		return strconv.Itoa(m) + "m"
	}
	return strconv.Itoa(m) + "m" + strconv.Itoa(s) + "s"
}

// clipLine truncates a styled line to w cells.
func clipLine(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	return ansiTruncate(s, w)
}
