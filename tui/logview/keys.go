package logview

import "charm.land/bubbles/v2/key"

// KeyMap holds the log view's key bindings. It implements help.KeyMap so the
// console's `?` help can list them.
//
// Close is not handled by the view: the parent closes the log view when it
// sees Close (esc/q) while the view is not Editing (README "The console"). It is listed
// here so help shows it and the parent can match it.
type KeyMap struct {
	Up           key.Binding // one row up (pauses autoscroll)
	Down         key.Binding // one row down
	PageUp       key.Binding // one screen up (pauses autoscroll)
	PageDown     key.Binding // one screen down
	HalfPageUp   key.Binding // half a screen up (pauses autoscroll)
	HalfPageDown key.Binding // half a screen down
	Left         key.Binding // scroll left (wrap off)
	Right        key.Binding // scroll right (wrap off)
	Top          key.Binding // first buffered line (pauses autoscroll)
	Bottom       key.Binding // last line, resume following
	Pause        key.Binding // toggle autoscroll; reading continues while paused
	Wrap         key.Binding // toggle wrapping long lines vs truncating them
	Search       key.Binding // open the search prompt
	NextMatch    key.Binding // next search match (wraps around)
	PrevMatch    key.Binding // previous search match (wraps around)
	Close        key.Binding // handled by the parent, see above
}

// DefaultKeyMap returns the bindings of README "The console": space pause, G/g bottom/top,
// w wrap, / search, n/N next/previous match, arrows, j/k, pgup/pgdown,
// ctrl+u/ctrl+d scroll, esc/q close.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup/b", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "f"), key.WithHelp("pgdn/f", "page down")),
		HalfPageUp:   key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "½ page up")),
		HalfPageDown: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "½ page down")),
		Left:         key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "scroll left")),
		Right:        key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "scroll right")),
		Top:          key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "top")),
		Bottom:       key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "bottom/follow")),
		Pause:        key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "pause/follow")),
		Wrap:         key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "wrap")),
		Search:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search")),
		NextMatch:    key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
		PrevMatch:    key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "prev match")),
		Close:        key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "close")),
	}
}

// ShortHelp implements help.KeyMap.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Search, k.NextMatch, k.Wrap, k.Bottom, k.Close}
}

// FullHelp implements help.KeyMap.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.HalfPageUp, k.HalfPageDown},
		{k.Top, k.Bottom, k.Left, k.Right, k.Pause, k.Wrap},
		{k.Search, k.NextMatch, k.PrevMatch, k.Close},
	}
}

// isZero reports whether no binding has a key (an unset KeyMap in Options).
func (k KeyMap) isZero() bool {
	for _, b := range []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.HalfPageUp, k.HalfPageDown,
		k.Left, k.Right, k.Top, k.Bottom, k.Pause, k.Wrap, k.Search, k.NextMatch, k.PrevMatch, k.Close} {
		if len(b.Keys()) > 0 {
			return false
		}
	}
	return true
}

// ShortHelp returns the view's key map short help (help.KeyMap).
func (m Model) ShortHelp() []key.Binding { return m.keys.ShortHelp() }

// FullHelp returns the view's key map full help (help.KeyMap).
func (m Model) FullHelp() [][]key.Binding { return m.keys.FullHelp() }
