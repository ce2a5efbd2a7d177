package tui

import tea "charm.land/bubbletea/v2"

// A status line answers what the operator just did where it was done: it
// is cleared when the pane or its filter changes, so "alert 4 marked read"
// never reads as news about the Tasks pane. A busy-database warning stays:
// it is about the registry, not the pane.
func (m *Model) clearStatus() {
	if !m.busy && m.status.text != "" {
		m.setStatus("", lvlInfo)
	}
}

// paneUpdate passes msg to the active pane and clears the status line when
// the pane's filter changed.
func (m *Model) paneUpdate(p pane, msg tea.Msg) tea.Cmd {
	before := paneQuery(p)
	_, cmd := p.Update(msg)
	if paneQuery(p) != before {
		m.clearStatus()
	}
	return cmd
}

// paneQuery is the pane's filter text ("" for a pane without one).
func paneQuery(p pane) string {
	if q, ok := p.(interface{ queryText() string }); ok {
		return q.queryText()
	}
	return ""
}

// queryText is the list's filter as typed so far.
func (l *list[R]) queryText() string { return l.input.value() }

// whoHint is the status line when there is no status: who is at the
// console. A read-only console is a viewer's, not an operator's: nothing
// it does is journaled under the name.
func (m *Model) whoHint() string {
	hint := "operator " + string(m.ctx.Operator)
	if m.ctx.ReadOnly {
		hint = "read-only · viewing as " + string(m.ctx.Operator)
	}
	return hint
}

func (m *Model) setStatus(text string, lvl level) {
	m.status = statusLine{text: text, lvl: lvl, at: m.ctx.now()}
}

// StatusText is the status line's text (tests and the e2e harness).
func (m *Model) StatusText() string { return m.status.text }
