package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// fullHelpView is `?`: every key of what is on screen, generated from the
// key map (bubbles/help), its columns packed into rows that fit the width.
func (m *Model) fullHelpView(w, h int) string {
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
	lines := strings.Split(body, "\n")
	for i := range lines {
		lines[i] = clipLine(lines[i], w)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines[:h], "\n")
}
