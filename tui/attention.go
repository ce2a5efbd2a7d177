package tui

import (
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
)

// Attention says what rings the terminal bell and highlights the header
// once (`clawpit serve` and the local console): a new pending approval, and
// a task that newly failed, timed out or was lost. The zero value is silent.
type Attention struct {
	Approvals bool // a new pending approval
	Failures  bool // a task newly failed, timed_out or lost
	Budgets   bool // a budget newly crossed (a budget_exceeded alert)
}

// On reports whether anything rings.
func (a Attention) On() bool { return a.Approvals || a.Failures || a.Budgets }

// RefreshMsg asks the console to poll the registry now instead of at the
// next tick: a shared watcher (clawpit serve) sends it to every session's
// program when the registry changed, so each session reloads its delta at
// once.
type RefreshMsg struct{}

// flashFor is how long the header stays highlighted after a bell.
const flashFor = 3 * time.Second

// bell is the terminal bell (BEL), written as is to the terminal.
const bell = "\a"

// noticeNew looks at a delta's rows (or a reload's whole tables) before
// they are applied and, when they bring something Options.Attention asks
// for, starts the header highlight and returns the bell. The first (full)
// load never rings: only what arrives while the console is open is new.
// pending and failed are the news of windowed panes, counted from the
// journal (LoadResult.NewPending, NewFailed): their rows are not read.
func (m *Model) noticeNew(approvalRows []approvalRow, taskRows []taskRow, pending, failed int) tea.Cmd {
	a := m.opts.Attention
	if !a.On() || !m.loaded {
		return nil
	}
	approvals, failures := 0, 0
	if a.Approvals {
		approvals = pending
		for i := range approvalRows {
			r := &approvalRows[i]
			if r.status != core.ApprovalPending {
				continue
			}
			if s, ok := m.approvals.ids[r.id]; ok && !m.approvals.gone[s] && m.approvals.rows[s].status == core.ApprovalPending {
				continue
			}
			approvals++
		}
	}
	if a.Failures {
		failures = failed
		for i := range taskRows {
			r := &taskRows[i]
			if !r.status.FailedOrLost() {
				continue
			}
			if s, ok := m.tasks.ids[r.id]; ok && !m.tasks.gone[s] && m.tasks.rows[s].status.FailedOrLost() {
				continue
			}
			failures++
		}
	}
	if approvals == 0 && failures == 0 {
		return nil
	}
	m.flashUntil = m.ctx.now().Add(flashFor)
	m.flashText = attentionText(approvals, failures)
	return tea.Raw(bell)
}

// headerNews is what a reload of whole tables left for the next header
// read to judge: the counts before it (base), when it came (at), and which
// kinds' panes were windowed (their rows give no news).
type headerNews struct {
	base                headerCounts
	at                  core.Timestamp
	approvals, failures bool
}

// headerNewsRing rings, after a reload of whole tables with windowed panes,
// for what the header read at `at` (not one started before the reload)
// gained over the counts before it: pending approvals, and failed plus lost
// in the last 24 h (tasks and jobs, as the header counts them). A count can
// also fall in the meantime (a decision, a failure aging out of the 24 h),
// so this is a lower bound: a reload is rare (a burst of thousands of
// changes), and a delta counts exactly.
func (m *Model) headerNewsRing(at core.Timestamp) tea.Cmd {
	n := m.news
	if n == nil || at < n.at {
		return nil
	}
	m.news = nil
	pending, failed := 0, 0
	if n.approvals {
		pending = max(0, m.counts.approvals-n.base.approvals)
	}
	if n.failures {
		failed = max(0, m.counts.failed+m.counts.lost-n.base.failed-n.base.lost)
	}
	return m.noticeNew(nil, nil, pending, failed)
}

func attentionText(approvals, failures int) string {
	s := ""
	if approvals > 0 {
		s = strconv.Itoa(approvals) + " new pending approval" + pluralS(approvals)
	}
	if failures > 0 {
		if s != "" {
			s += ", "
		}
		s += strconv.Itoa(failures) + " task" + pluralS(failures) + " failed or lost"
	}
	return s
}

// flashing reports whether the header is highlighted now.
func (m *Model) flashing() bool { return m.flashUntil != 0 && m.ctx.now() < m.flashUntil }

// flashHeader renders the first header line highlighted (reverse video, so
// every theme, mono included, shows it), keeping its start and ending with
// what arrived (flashText; "" when the second line shows it).
func (m *Model) flashHeader(line1, flashText string, w int) string {
	text := ansi.Strip(line1)
	// The note wins over the end of the counts for the few seconds it shows.
	if note := "  ◀ " + flashText; flashText != "" && w-width(note) >= 20 {
		text = truncRight(text, w-width(note)) + note
	}
	text = truncRight(text, w)
	return lipgloss.NewStyle().Reverse(true).Bold(true).Render(text + spaces(max(0, w-width(text))))
}

// Attention reports whether the header is highlighted now (tests and the
// e2e harness).
func (m *Model) Attention() bool { return m.flashing() }

// noticeBudgets adds to a delta's bell (ring, nil when none) the budgets it
// newly reports crossed: budget_exceeded alerts not loaded before, when
// Options.Attention asks for them. A windowed Alerts pane reads no rows
// of a delta: there a crossing shows in Alerts and reaches --notify-cmd, but
// does not ring.
func (m *Model) noticeBudgets(rows []alertRow, ring tea.Cmd) tea.Cmd {
	if !m.opts.Attention.Budgets || !m.loaded {
		return ring
	}
	n := 0
	for i := range rows {
		if rows[i].kind != string(core.NotifyBudgetExceeded) {
			continue
		}
		if _, ok := m.alerts.ids[rows[i].idStr]; ok {
			continue
		}
		n++
	}
	if n == 0 {
		return ring
	}
	text := strconv.Itoa(n) + " budget" + pluralS(n) + " crossed"
	if ring != nil {
		m.flashText += ", " + text
		return ring
	}
	m.flashUntil = m.ctx.now().Add(flashFor)
	m.flashText = text
	return tea.Raw(bell)
}
