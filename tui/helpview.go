package tui

import (
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/feed"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// helpLines is `?`: every key of what is on screen, generated from the
// key map (bubbles/help), its columns packed into rows that fit the width,
// then what the pane's numbers mean. Every line is at most w cells.
func (m *Model) helpLines(w int) []string {
	th := m.ctx.Theme
	var groups [][]key.Binding
	where := m.panes[m.active].Title() + " pane"
	switch {
	case m.logv != nil:
		groups = append(m.logv.FullHelp(), []key.Binding{m.ctx.Keys.Help, m.ctx.Keys.Quit})
		where = "log view"
	case m.detail != nil:
		groups = m.detail.fullHelp(m)
		where = "detail view"
	default:
		groups = m.panes[m.active].FullHelp()
	}
	var rows []string
	var row []string
	used := 0
	for _, g := range groups {
		col := m.help.FullHelpView([][]key.Binding{g})
		if col == "" {
			continue
		}
		cw := lipgloss.Width(col) + 4
		if used > 0 && used+cw > w {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, used = nil, 0
		}
		row = append(row, lipgloss.NewStyle().PaddingRight(4).Render(col))
		used += cw
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	title := th.Section.Render("Keys — " + where)
	if m.ctx.ReadOnly {
		title += "  " + th.Badge.Render(" READ-ONLY ") + th.Muted.Render(" actions are disabled")
	}
	body := title + "\n\n" + strings.Join(rows, "\n\n")
	if notes := m.helpNotes(); len(notes) > 0 {
		body += "\n\n" + th.Muted.Render(ansi.Wordwrap(strings.Join(notes, "\n"), w, ""))
	}
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = clipLine(lines[i], w)
	}
	return lines
}

// helpNotes say what the numbers on screen mean: the header's counts, and
// the columns and counts of the pane shown.
func (m *Model) helpNotes() []string {
	if m.logv != nil || m.detail != nil && m.detail.target.Kind != feed.KindAlert && m.detail.target.Kind != feed.KindTask {
		return nil
	}
	k := m.ctx.Keys
	kind := m.active
	if m.detail != nil {
		kind = m.detail.target.Kind
	}
	notes := []string{"Header: pending approvals; running tasks, runs and jobs; tasks and jobs failed or lost in " +
		"the last 24 h; unread alerts. A narrow terminal drops the running counts first, then alerts, then failures."}
	switch kind {
	case feed.KindAlert:
		notes = append(notes, "Alerts tab \"5/10\": 5 unread of 10 alerts (the header's \"alerts 5 unread\"). "+
			firstKey(k.Ack)+" marks the selected alert read, "+firstKey(k.AckAll)+" every unread one (after a "+
			"confirmation); read alerts stay listed, dimmed, until retention prunes them.")
	case feed.KindTask:
		notes = append(notes, "DELIVERY (140 columns and wider): whether a task's result reached the session that "+
			"asked for it, as the runtime reports it (task deliver). Hidden while every task is pending or "+
			"not_applicable: then nothing has delivered anything.")
	}
	return notes
}

// fullHelpView is the help body: h lines of helpLines from the scroll
// position (clamped here, so a resize never leaves it past the end).
func (m *Model) fullHelpView(w, h int) string {
	lines := m.helpLines(w)
	m.helpTop = clampTop(m.helpTop, len(lines), h)
	lines = lines[m.helpTop:min(len(lines), m.helpTop+h)]
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

func clampTop(top, n, h int) int { return max(0, min(top, n-h)) }

// helpKey handles a key while help is open: the movement keys scroll it,
// help, back and quit close it.
func (m *Model) helpKey(k tea.KeyPressMsg) {
	keys := m.ctx.Keys
	page := max(1, m.bodyHeight()-1)
	switch {
	case key.Matches(k, keys.Help, keys.Back, keys.Quit):
		m.showHelp, m.helpTop = false, 0
	case key.Matches(k, keys.Down):
		m.helpTop++
	case key.Matches(k, keys.Up):
		m.helpTop--
	case key.Matches(k, keys.PageDown):
		m.helpTop += page
	case key.Matches(k, keys.PageUp):
		m.helpTop -= page
	case key.Matches(k, keys.Top):
		m.helpTop = 0
	case key.Matches(k, keys.Bottom):
		m.helpTop = 1 << 30
	}
	m.helpTop = clampTop(m.helpTop, len(m.helpLines(max(20, m.ctx.Width))), m.bodyHeight())
}

// helpInfo is the info line under help: how to scroll (when there is more
// than a screen) and close it.
func (m *Model) helpInfo(w int) string {
	keys := m.ctx.Keys
	closes := firstKey(keys.Help) + "/" + firstKey(keys.Back) + " closes"
	n, h := len(m.helpLines(w)), m.bodyHeight()
	s := "help · " + closes
	if n > h {
		from, end := strconv.Itoa(m.helpTop+1), strconv.Itoa(min(n, m.helpTop+h))
		scroll := firstKey(keys.Down) + "/" + firstKey(keys.Up) + " " + firstKey(keys.PageDown) + "/" +
			firstKey(keys.PageUp) + " scroll · "
		// The widest that fits: a narrow terminal keeps how to scroll
		// and its position over the words around them (the key hints
		// below say how to close it too).
		for _, f := range []string{
			"help · lines " + from + "–" + end + " of " + strconv.Itoa(n) + " · " + scroll + closes,
			"help · " + from + "–" + end + "/" + strconv.Itoa(n) + " · " + scroll + firstKey(keys.Help) + " closes",
			"help · " + from + "–" + end + "/" + strconv.Itoa(n) + " · " + strings.TrimSuffix(scroll, " · "),
		} {
			if s = f; width(f) <= w {
				break
			}
		}
	}
	return m.ctx.Theme.Muted.Render(truncRight(s, w))
}

// helpHints are the key hints under help: scroll, page, close.
func (m *Model) helpHints(w int) string {
	keys := m.ctx.Keys
	b := func(k1, k2 key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(k1.Keys()...), key.WithHelp(firstKey(k1)+"/"+firstKey(k2), desc))
	}
	return m.hintsView([]key.Binding{b(keys.Down, keys.Up, "scroll"), b(keys.PageDown, keys.PageUp, "page"),
		b(keys.Help, keys.Back, "close")}, w)
}
