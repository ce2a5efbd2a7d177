package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/feed"
)

// Keys: which part of the console a key press goes to (a dialog, the help,
// the log view, the detail view, else the active pane) and what the
// console-wide keys do.

// onKey routes a key press: ctrl+c always quits; otherwise the first of an
// open dialog, the help, the log view, the detail view and the active pane
// takes it.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.quitCmd()
	}
	switch {
	case m.dialog != nil:
		done, cmd := m.dialog.update(m.ctx, k)
		if done {
			m.dialog = nil
		}
		return cmd
	case m.showHelp:
		m.helpKey(k)
		return nil
	case m.logv != nil:
		return m.logKey(k)
	case m.detail != nil:
		return m.detailKey(k)
	}
	return m.listKey(k)
}

// logKey is a key in the log view: help and the view's close keys, unless
// it is editing (its search), else the view's own.
func (m *Model) logKey(k tea.KeyPressMsg) tea.Cmd {
	if !m.logv.Editing() {
		switch {
		case key.Matches(k, m.ctx.Keys.Help):
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

// detailKey is a key in the detail view: the view's own (scrolling) first,
// then back or quit (close it), help, the log (a job's), an action on the
// row shown, and a pane key (close it and switch).
func (m *Model) detailKey(k tea.KeyPressMsg) tea.Cmd {
	keys := m.ctx.Keys
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

// listKey is a key on the active pane: all of it goes to the pane while
// it edits its filter; else the console's keys (quit, help, pane
// switches), the views of the selected row, its actions, and the pane's
// own keys (moving, filter, sort), in that order. A key that acts on the
// row pins the cursor to it first.
func (m *Model) listKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.panes[m.active]
	if p.Editing() {
		return m.paneUpdate(p, k)
	}
	if cmd, used := m.consoleKey(k); used {
		return cmd
	}
	t, have := p.Selected()
	if have && m.isRowKey(k) {
		p.pin()
	}
	if cmd, used := m.viewKey(k, t, have); used {
		return cmd
	}
	if cmd, used := m.actionKey(k, t, have); used {
		return cmd
	}
	return m.paneUpdate(p, k)
}

// consoleKey handles the keys that mean the same on every pane and reports
// whether k was one: quit, help, the next or previous pane, a pane's own key.
func (m *Model) consoleKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	switch {
	case key.Matches(k, keys.Quit):
		return m.quitCmd(), true
	case key.Matches(k, keys.Help):
		m.showHelp = true
	case key.Matches(k, keys.NextPane):
		m.switchPane((m.active + 1) % feed.NumKinds)
	case key.Matches(k, keys.PrevPane):
		m.switchPane((m.active + feed.NumKinds - 1) % feed.NumKinds)
	default:
		k2, ok := m.paneKey(k)
		if !ok {
			return nil, false
		}
		m.switchPane(k2)
	}
	return nil, true
}

// viewKey opens a view of the selected row t (have: a row is selected) and
// reports whether k was a view key: detail (a job's log view), info (the
// detail of any row, jobs too) or log (jobs only; elsewhere a hint).
func (m *Model) viewKey(k tea.KeyPressMsg, t Target, have bool) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	switch {
	case key.Matches(k, keys.Detail):
		switch {
		case !have:
			return nil, true
		case t.Kind == feed.KindJob:
			return m.openLog(t), true
		}
		return m.openDetail(t), true
	case key.Matches(k, keys.Info):
		if have {
			return m.openDetail(t), true
		}
		return nil, true
	case key.Matches(k, keys.Log):
		if have && t.Kind == feed.KindJob {
			return m.openLog(t), true
		}
		if have {
			m.setStatus("the log view is for jobs (switch to Jobs with "+firstKey(keys.Jobs)+")", lvlInfo)
		}
		return nil, true
	}
	return nil, false
}

// onPaste gives pasted text to whatever edits text now: a dialog, the log
// view, or the active pane's filter (not under the help or detail view).
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

// paneKey maps 1–5 (or their rebinding) to a pane.
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
