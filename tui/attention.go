package tui

import (
	"strconv"
	"strings"
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

// noticeNew starts the header highlight and returns the bell when a load
// brings news Options.Attention asks for, as the source counted them
// (feed.LoadResult.NewPending, NewFailed, NewBudgets): approvals newly
// pending, tasks newly failed, timed out or lost, budgets newly crossed.
// The first (full) load never rings: only what arrives while the console
// is open is new.
func (m *Model) noticeNew(pending, failed, budgets int) tea.Cmd {
	a := m.opts.Attention
	if !a.On() || !m.loaded {
		return nil
	}
	if !a.Approvals {
		pending = 0
	}
	if !a.Failures {
		failed = 0
	}
	if !a.Budgets {
		budgets = 0
	}
	if pending == 0 && failed == 0 && budgets == 0 {
		return nil
	}
	m.flashUntil = m.ctx.now().Add(flashFor)
	m.flashText = attentionText(pending, failed, budgets)
	return tea.Raw(bell)
}

// headerNews is what a reload the source counted no news for left for the
// next header read to judge: the counts before it (base) and when it came
// (at).
type headerNews struct {
	base headerCounts
	at   core.Timestamp
}

// headerNewsRing rings, after a reload the source counted no news for
// (feed.LoadResult.FullNews), for what the header read at `at` (not one
// started before the reload) gained over the counts before it: pending
// approvals, and failed plus lost in the last 24 h (tasks and jobs, as the
// header counts them). A count can also fall in the meantime (a decision,
// a failure aging out of the 24 h), so this is a lower bound: a reload is
// rare (a burst of thousands of changes), and a delta counts exactly.
func (m *Model) headerNewsRing(at core.Timestamp) tea.Cmd {
	n := m.news
	if n == nil || at < n.at {
		return nil
	}
	m.news = nil
	pending := max(0, m.counts.approvals-n.base.approvals)
	failed := max(0, m.counts.failed+m.counts.lost-n.base.failed-n.base.lost)
	return m.noticeNew(pending, failed, 0)
}

func attentionText(approvals, failures, budgets int) string {
	var parts []string
	if approvals > 0 {
		parts = append(parts, strconv.Itoa(approvals)+" new pending approval"+pluralS(approvals))
	}
	if failures > 0 {
		parts = append(parts, strconv.Itoa(failures)+" task"+pluralS(failures)+" failed or lost")
	}
	if budgets > 0 {
		parts = append(parts, strconv.Itoa(budgets)+" budget"+pluralS(budgets)+" crossed")
	}
	return strings.Join(parts, ", ")
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
