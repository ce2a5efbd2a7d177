package tui

import (
	"path/filepath"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/tui/logview"
)

// logPane adapts tui/logview to the root model: the live, redacted,
// rotation-following view of one job's log (README "The console").
type logPane struct {
	m logview.Model
}

func newLogPane(ctx *Context, t Target) LogComponent {
	th := ctx.Theme
	return &logPane{m: logview.New(logview.Options{
		Title: "job " + t.Short + "  " + t.Name,
		Dir:   filepath.Dir(t.LogPath),
		Styles: logview.Styles{
			Match: th.Match, CurrentMatch: th.CurrentMatch, Marker: th.Marker, StatusBar: th.Bar,
			Following: th.Following, Paused: th.Paused, Problem: th.Badge, Prompt: th.Filter, Cursor: cursorStyle,
		},
	})}
}

func (p *logPane) Init() tea.Cmd { return p.m.Init() }

func (p *logPane) Update(msg tea.Msg) (LogComponent, tea.Cmd) {
	var cmd tea.Cmd
	p.m, cmd = p.m.Update(msg)
	return p, cmd
}

func (p *logPane) View() string              { return p.m.View() }
func (p *logPane) SetSize(w, h int)          { p.m.SetSize(w, h) }
func (p *logPane) Close()                    { p.m.Close() }
func (p *logPane) Editing() bool             { return p.m.Editing() }
func (p *logPane) ShortHelp() []key.Binding  { return p.m.Keys().ShortHelp() }
func (p *logPane) FullHelp() [][]key.Binding { return p.m.Keys().FullHelp() }

// Closes reports whether k is the log view's close key.
func (p *logPane) Closes(k tea.KeyPressMsg) bool { return key.Matches(k, p.m.Keys().Close) }

// jobEndedMsg tells the log view where the job ended.
func jobEndedMsg(r *jobRow) tea.Msg {
	return logview.JobEndedMsg{Status: r.status, ExitCode: r.exitCode, At: r.completed.Time(), CaptureError: r.captureErr}
}

// jobEnded tells an open log view that its job reached a terminal status,
// so it marks where the job ended.
func (m *Model) jobEnded() tea.Cmd {
	if m.logv == nil || m.logEnded {
		return nil
	}
	s, ok := m.jobs.ids[m.logJob]
	if !ok {
		return nil
	}
	r := m.jobs.rows[s]
	if r.status.Active() {
		return nil
	}
	m.logEnded = true
	var cmd tea.Cmd
	m.logv, cmd = m.logv.Update(jobEndedMsg(&r))
	return cmd
}

func (m *Model) openLog(t Target) tea.Cmd {
	if t.Kind != feed.KindJob {
		return nil
	}
	if t.LogPath == "" {
		m.setStatus("job "+t.Short+" has no log file", lvlWarn)
		return nil
	}
	m.closeLog()
	m.logv = m.newLog(t)
	m.logJob = t.ID
	m.logEnded = false
	m.detail = nil
	m.resize()
	return tea.Batch(m.logv.Init(), m.jobEnded())
}

func (m *Model) closeLog() {
	if m.logv != nil {
		m.logv.Close()
		m.logv = nil
		m.logJob = ""
	}
}

func (m *Model) newLog(t Target) LogComponent {
	if m.opts.LogView != nil {
		return m.opts.LogView(m.ctx, t)
	}
	return newLogPane(m.ctx, t)
}

// logCloses reports whether k closes the log view (its own close keys).
func (m *Model) logCloses(k tea.KeyPressMsg) bool {
	type closer interface{ Closes(tea.KeyPressMsg) bool }
	if c, ok := m.logv.(closer); ok {
		return c.Closes(k)
	}
	return key.Matches(k, m.ctx.Keys.Back, m.ctx.Keys.Quit)
}
