package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/feed"
)

// Keys: which part of the console a key press goes to (a dialog, the help,
// the log view, the detail view, else the active pane) and what the
// console-wide keys do.

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	keys := m.ctx.Keys
	if k.String() == "ctrl+c" {
		return m.quitCmd()
	}
	if m.dialog != nil {
		done, cmd := m.dialog.update(m.ctx, k)
		if done {
			m.dialog = nil
		}
		return cmd
	}
	if m.showHelp {
		m.helpKey(k)
		return nil
	}
	if m.logv != nil {
		if !m.logv.Editing() {
			switch {
			case key.Matches(k, keys.Help):
				m.showHelp = true
				return nil
			case m.logCloses(k):
				m.closeLog()
				return nil
			}
		}
		var cmd tea.Cmd
		m.logv, cmd = m.logv.Update(k)
		return cmd
	}
	if m.detail != nil {
		if used := m.detail.update(k); used {
			return nil
		}
		switch {
		case key.Matches(k, keys.Back, keys.Quit):
			m.detail = nil
			return nil
		case key.Matches(k, keys.Help):
			m.showHelp = true
			return nil
		case key.Matches(k, keys.Log):
			return m.openLog(m.detail.target)
		}
		if cmd, used := m.actionKey(k, m.detail.target, true); used {
			return cmd
		}
		if k2, ok := m.paneKey(k); ok {
			m.detail = nil
			m.switchPane(k2)
		}
		return nil
	}
	p := m.panes[m.active]
	if p.Editing() {
		return m.paneUpdate(p, k)
	}
	switch {
	case key.Matches(k, keys.Quit):
		return m.quitCmd()
	case key.Matches(k, keys.Help):
		m.showHelp = true
		return nil
	case key.Matches(k, keys.NextPane):
		m.switchPane((m.active + 1) % feed.NumKinds)
		return nil
	case key.Matches(k, keys.PrevPane):
		m.switchPane((m.active + feed.NumKinds - 1) % feed.NumKinds)
		return nil
	}
	if k2, ok := m.paneKey(k); ok {
		m.switchPane(k2)
		return nil
	}
	t, have := p.Selected()
	if have && m.isRowKey(k) {
		p.pin()
	}
	switch {
	case key.Matches(k, keys.Detail):
		if !have {
			return nil
		}
		if t.Kind == feed.KindJob {
			return m.openLog(t)
		}
		return m.openDetail(t)
	case key.Matches(k, keys.Info):
		if have {
			return m.openDetail(t)
		}
		return nil
	case key.Matches(k, keys.Log):
		if have && t.Kind == feed.KindJob {
			return m.openLog(t)
		}
		if have {
			m.setStatus("the log view is for jobs (switch to Jobs with "+firstKey(keys.Jobs)+")", lvlInfo)
		}
		return nil
	}
	if cmd, used := m.actionKey(k, t, have); used {
		return cmd
	}
	return m.paneUpdate(p, k)
}

func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.dialog != nil:
		_, cmd := m.dialog.update(m.ctx, msg)
		return cmd
	case m.logv != nil:
		var cmd tea.Cmd
		m.logv, cmd = m.logv.Update(msg)
		return cmd
	case m.detail == nil && !m.showHelp && m.panes[m.active].Editing():
		return m.paneUpdate(m.panes[m.active], msg)
	}
	return nil
}

// paneKey maps 1–5 (or their rebinding) to a pane.
// isRowKey reports whether k acts on the selected row (detail, log, an
// action other than maintenance): such a key pins the cursor to the row.
func (m *Model) isRowKey(k tea.KeyPressMsg) bool {
	keys := m.ctx.Keys
	if key.Matches(k, keys.Detail, keys.Info, keys.Log) {
		return true
	}
	for _, a := range actionBindings {
		if a.kinds != nil && key.Matches(k, a.binding(keys)) {
			return true
		}
	}
	return false
}

func (m *Model) paneKey(k tea.KeyPressMsg) (feed.Kind, bool) {
	for kind := feed.Kind(0); kind < feed.NumKinds; kind++ {
		if key.Matches(k, m.paneBinding(kind)) {
			return kind, true
		}
	}
	return 0, false
}

func (m *Model) paneBinding(k feed.Kind) key.Binding {
	keys := m.ctx.Keys
	return [...]key.Binding{keys.Tasks, keys.Runs, keys.Approvals, keys.Jobs, keys.Alerts}[k]
}

func (m *Model) switchPane(k feed.Kind) {
	m.active = k
	m.showHelp, m.helpTop = false, 0
	m.clearStatus()
}

func (m *Model) quitCmd() tea.Cmd {
	m.quit = true
	m.closeLog()
	m.stop()
	return tea.Quit
}
