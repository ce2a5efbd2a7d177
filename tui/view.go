package tui

import (
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The screen: the status line, the layout of the body and the frame.

func (m *Model) statusView(w int) string {
	th := m.ctx.Theme
	s := m.status
	if s.text == "" {
		hint := m.whoHint()
		if !m.loaded {
			hint = "loading the registry…  " + hint
		}
		return clipLine(th.Muted.Render(truncRight(hint, w)), w)
	}
	st := th.StatusInfo
	switch s.lvl {
	case lvlOK:
		st = th.StatusOK
	case lvlWarn:
		st = th.StatusWarn
	case lvlErr:
		st = th.StatusErr
	}
	return st.Render(truncRight(s.text, w))
}

// truncRight cuts plain text to w cells with an ellipsis.
func truncRight(s string, w int) string {
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// ansiTruncate cuts a styled string to w cells.
func ansiTruncate(s string, w int) string { return ansi.Truncate(s, w, "") }

// firstKey is the first key of a binding, as help shows it.
func firstKey(b key.Binding) string {
	if h := b.Help().Key; h != "" {
		if i := strings.IndexByte(h, '/'); i > 0 {
			return h[:i]
		}
		return h
	}
	if ks := b.Keys(); len(ks) > 0 {
		return ks[0]
	}
	return "?"
}

func (m *Model) bodyHeight() int { return max(3, m.ctx.Height-headerRows-footerRows) }

func (m *Model) resize() {
	w, h := max(20, m.ctx.Width), m.bodyHeight()
	for _, p := range m.panes {
		p.SetSize(w, h)
	}
	if m.detail != nil {
		m.detail.SetSize(w, h)
	}
	if m.logv != nil {
		m.logv.SetSize(w, h+1) // the log view draws its own status bar over the info line
	}
	m.help.SetWidth(w)
}

// viewProbe records the last screen (tests wait on it).
type viewProbe struct {
	mu   sync.Mutex
	last string
}

func (p *viewProbe) set(s string) {
	p.mu.Lock()
	p.last = s
	p.mu.Unlock()
}

func (p *viewProbe) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// View renders the whole screen: alt screen, every line at most the
// terminal's width, always the same number of lines.
func (m *Model) View() tea.View {
	if m.dirty {
		m.renderFrame()
	}
	s := m.frame
	if m.probe != nil {
		m.probe.set(s)
	}
	v := tea.NewView(s)
	v.AltScreen = true
	return v
}

// renderFrame renders the screen into frame and notes when its text next
// changes by itself (redrawAt: a visible age or countdown turning over,
// the header highlight ending).
func (m *Model) renderFrame() {
	m.ctx.redrawAt = 0
	m.frame = m.render()
	if m.flashing() {
		m.ctx.noteChange(m.ctx.now(), m.flashUntil)
	}
	m.redrawAt, m.dirty = m.ctx.redrawAt, false
	m.frames++
}

func (m *Model) render() string {
	w := max(20, m.ctx.Width)
	var b strings.Builder
	b.Grow(w * (m.ctx.Height + 2) * 2)
	b.WriteString(m.headerView(w))
	b.WriteByte('\n')
	b.WriteString(m.tabsView(w))
	b.WriteByte('\n')
	p := m.panes[m.active]
	bodyH := m.bodyHeight()
	var info, hints string
	switch {
	case m.showHelp:
		b.WriteString(m.fullHelpView(w, bodyH))
		info = m.helpInfo(w)
		hints = m.helpHints(w)
	case m.logv != nil:
		b.WriteString(m.logv.View())
		hints = m.hintsView(m.logv.ShortHelp(), w)
	case m.detail != nil:
		b.WriteString(m.detail.View())
		info = m.detail.infoLine(w)
		hints = m.hintsView(m.detail.shortHelp(m), w)
	default:
		b.WriteString(p.View())
		info = p.InfoLine(w)
		hints = m.hintsView(p.ShortHelp(), w)
	}
	if m.logv == nil || m.showHelp {
		b.WriteByte('\n')
		b.WriteString(clipLine(info, w))
	}
	b.WriteByte('\n')
	b.WriteString(m.statusView(w))
	b.WriteByte('\n')
	b.WriteString(clipLine(hints, w))
	screen := b.String()
	if m.dialog != nil {
		screen = overlay(screen, m.dialog.view(m.ctx, w), w, m.ctx.Height)
	}
	return screen
}

// hintsView renders the short key hints in width w. The help and quit keys
// are pinned at the right end so a narrow terminal drops other hints (with
// bubbles/help's "…") rather than the way to find them.
func (m *Model) hintsView(bindings []key.Binding, w int) string {
	pinned := func(b key.Binding) bool {
		return sameKeys(b, m.ctx.Keys.Help) || sameKeys(b, m.ctx.Keys.Quit)
	}
	var rest, tail []key.Binding
	for _, b := range bindings {
		if pinned(b) {
			tail = append(tail, b)
		} else {
			rest = append(rest, b)
		}
	}
	h := m.help
	tailView := h.ShortHelpView(tail)
	if len(rest) == 0 || tailView == "" {
		h.SetWidth(w)
		return h.ShortHelpView(bindings)
	}
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	h.SetWidth(max(0, w-lipgloss.Width(tailView)-lipgloss.Width(sep)))
	return h.ShortHelpView(rest) + sep + tailView
}

// sameKeys reports whether two bindings have the same keys.
func sameKeys(a, b key.Binding) bool {
	ak, bk := a.Keys(), b.Keys()
	if len(ak) != len(bk) || len(ak) == 0 {
		return false
	}
	for i := range ak {
		if ak[i] != bk[i] {
			return false
		}
	}
	return true
}

// overlay draws box centred over screen.
func overlay(screen, box string, w, h int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max(0, (w-bw)/2), max(0, (h-bh)/2)
	c := lipgloss.NewCanvas(w, max(h, lipgloss.Height(screen)))
	c.Compose(lipgloss.NewCompositor(lipgloss.NewLayer(screen), lipgloss.NewLayer(box).X(x).Y(y).Z(1)))
	return c.Render()
}

// errText is an error as the status line shows it.
func errText(err error) string { return oneLine(err.Error()) }
