// Package themes holds the console's lipgloss themes (README "The console"): dark (the
// default), light, high-contrast and mono. A theme is only styles: it knows
// nothing about the registry beyond the names of statuses it colours.
package themes

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Default is the theme used when none is configured.
const Default = "dark"

// Mono is the theme NO_COLOR selects.
const Mono = "mono"

// Theme is a named set of lipgloss styles for every part of the console.
type Theme struct {
	Name string
	Dark bool // designed for a dark terminal background

	// Chrome.
	Title      lipgloss.Style // the "clawpit" title in the header
	Header     lipgloss.Style // header text
	Count      lipgloss.Style // a number in the header
	Hot        lipgloss.Style // a count that needs attention (pending approvals > 0)
	Muted      lipgloss.Style // secondary text (paths, separators, hints)
	Badge      lipgloss.Style // the READ-ONLY badge
	Tab        lipgloss.Style // an inactive pane tab
	TabActive  lipgloss.Style // the active pane tab
	TableHead  lipgloss.Style // table column titles
	Selected   lipgloss.Style // the cursor row (applied to the whole line)
	Filter     lipgloss.Style // the filter prompt and query
	StatusInfo lipgloss.Style // status line: information
	StatusOK   lipgloss.Style // status line: an action applied
	StatusWarn lipgloss.Style // status line: refused or busy
	StatusErr  lipgloss.Style // status line: an error

	// Dialogs and detail.
	Dialog       lipgloss.Style // the dialog box (border and padding)
	DialogTitle  lipgloss.Style
	Choice       lipgloss.Style // an unselected option
	ChoiceActive lipgloss.Style // the selected option
	Input        lipgloss.Style // text being typed
	Field        lipgloss.Style // a field name in the detail view
	Section      lipgloss.Style // a section heading in the detail view

	// Log view (tui/logview).
	Match        lipgloss.Style // a search match
	CurrentMatch lipgloss.Style // the match n/N landed on
	Marker       lipgloss.Style // where the job ended
	Bar          lipgloss.Style // the log view's status bar
	Following    lipgloss.Style // FOLLOWING badge
	Paused       lipgloss.Style // PAUSED badge

	// Help is handed to bubbles/help.
	Help help.Styles

	status map[string]lipgloss.Style
	plain  lipgloss.Style
}

// Status returns the style of a status word (running, queued, pending,
// succeeded, failed, lost, timed_out, cancelled, ...). Unknown words are plain.
func (t *Theme) Status(s string) lipgloss.Style {
	if st, ok := t.status[s]; ok {
		return st
	}
	return t.plain
}

// Names lists the available themes, sorted.
func Names() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Get returns the named theme. An unknown name is an error naming the
// allowed ones.
func Get(name string) (*Theme, error) {
	b, ok := builders[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return nil, fmt.Errorf("unknown theme %q (want one of: %s)", name, strings.Join(Names(), ", "))
	}
	return b(), nil
}

// Resolve picks the theme for the console: NO_COLOR (any non-empty value,
// https://no-color.org) selects mono whatever was asked; otherwise name, or
// Default when name is empty. getenv is os.Getenv outside tests.
func Resolve(name string, getenv func(string) string) (*Theme, error) {
	if getenv != nil && getenv("NO_COLOR") != "" {
		if name != "" {
			if _, err := Get(name); err != nil {
				return nil, err
			}
		}
		return Get(Mono)
	}
	if name == "" {
		name = Default
	}
	return Get(name)
}

var builders = map[string]func() *Theme{
	"dark":          dark,
	"light":         light,
	"high-contrast": highContrast,
	Mono:            mono,
}

// palette is the handful of colours a coloured theme is built from.
type palette struct {
	fg, muted, accent, hot, selBg, selFg, border   color.Color
	run, queue, pend, ok, fail, lost, tout, cancel color.Color
}

// statusGroups maps each status word to the palette slot that colours it.
// Task, run, approval, job and notification words share the same meaning:
// active, waiting, good, bad, inferred-lost, timed out, stopped.
var statusGroups = map[string]string{
	"running": "run", "waiting": "pend", "queued": "queue", "pending": "pend", "new": "pend",
	"succeeded": "ok", "completed": "ok", "approved": "ok", "ok": "ok", "delivered": "ok", "active": "ok",
	"failed": "fail", "error": "fail", "denied": "fail", "delivery_failed": "fail",
	"lost": "lost", "parent_missing": "lost",
	"timed_out": "tout", "timeout": "tout", "expired": "tout",
	"cancelled": "cancel", "reaped": "cancel", "killed": "cancel", "reset": "cancel", "deleted": "cancel",
	"read": "cancel", "closed": "cancel", "passivated": "cancel",
}

func (p palette) slot(name string) color.Color {
	switch name {
	case "run":
		return p.run
	case "queue":
		return p.queue
	case "pend":
		return p.pend
	case "ok":
		return p.ok
	case "fail":
		return p.fail
	case "lost":
		return p.lost
	case "tout":
		return p.tout
	default:
		return p.cancel
	}
}

// coloured builds a theme from a palette; bold makes every emphasis bold
// (high-contrast).
func coloured(name string, isDark, bold bool, p palette) *Theme {
	s := lipgloss.NewStyle
	t := &Theme{
		Name:         name,
		Dark:         isDark,
		Title:        s().Foreground(p.accent).Bold(true),
		Header:       s().Foreground(p.fg),
		Count:        s().Foreground(p.fg).Bold(true),
		Hot:          s().Foreground(p.selFg).Background(p.hot).Bold(true),
		Muted:        s().Foreground(p.muted),
		Badge:        s().Foreground(p.selFg).Background(p.fail).Bold(true),
		Tab:          s().Foreground(p.muted),
		TabActive:    s().Foreground(p.accent).Bold(true).Underline(true),
		TableHead:    s().Foreground(p.accent).Bold(true),
		Selected:     s().Foreground(p.selFg).Background(p.selBg).Bold(bold),
		Filter:       s().Foreground(p.accent),
		StatusInfo:   s().Foreground(p.fg),
		StatusOK:     s().Foreground(p.ok).Bold(bold),
		StatusWarn:   s().Foreground(p.tout).Bold(bold),
		StatusErr:    s().Foreground(p.fail).Bold(true),
		Dialog:       s().Border(lipgloss.RoundedBorder()).BorderForeground(p.border).Padding(0, 1),
		DialogTitle:  s().Foreground(p.accent).Bold(true),
		Choice:       s().Foreground(p.fg).Padding(0, 1),
		ChoiceActive: s().Foreground(p.selFg).Background(p.selBg).Bold(true).Padding(0, 1),
		Input:        s().Foreground(p.fg).Underline(true),
		Field:        s().Foreground(p.accent),
		Section:      s().Foreground(p.accent).Bold(true).Underline(true),
		Match:        s().Foreground(p.selFg).Background(p.pend),
		CurrentMatch: s().Foreground(p.selFg).Background(p.hot).Bold(true),
		Marker:       s().Foreground(p.accent).Bold(true),
		Bar:          s().Foreground(p.fg).Background(p.selBg),
		Following:    s().Foreground(p.selFg).Background(p.ok).Bold(true),
		Paused:       s().Foreground(p.selFg).Background(p.pend).Bold(true),
		status:       map[string]lipgloss.Style{},
		plain:        s().Foreground(p.fg),
	}
	for word, slot := range statusGroups {
		t.status[word] = s().Foreground(p.slot(slot)).Bold(bold || slot == "fail" || slot == "lost")
	}
	key := s().Foreground(p.accent).Bold(bold)
	desc := s().Foreground(p.muted)
	sep := s().Foreground(p.border)
	t.Help = help.Styles{Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep}
	return t
}

func dark() *Theme {
	c := lipgloss.Color
	return coloured("dark", true, false, palette{
		fg: c("#d0d0d0"), muted: c("#808080"), accent: c("#87afff"), hot: c("#d78700"),
		selBg: c("#3a3a5a"), selFg: c("#ffffff"), border: c("#5f5f87"),
		run: c("#5fafff"), queue: c("#a8a8a8"), pend: c("#ffd75f"), ok: c("#5fd75f"),
		fail: c("#ff5f5f"), lost: c("#d787ff"), tout: c("#ffaf5f"), cancel: c("#8a8a8a"),
	})
}

func light() *Theme {
	c := lipgloss.Color
	return coloured("light", false, false, palette{
		fg: c("#262626"), muted: c("#6c6c6c"), accent: c("#005fd7"), hot: c("#d75f00"),
		selBg: c("#d7d7ff"), selFg: c("#000000"), border: c("#8787af"),
		run: c("#005fd7"), queue: c("#585858"), pend: c("#af5f00"), ok: c("#008700"),
		fail: c("#d70000"), lost: c("#af00af"), tout: c("#d75f00"), cancel: c("#767676"),
	})
}

// highContrast uses the 16 basic ANSI colours (the terminal's own, usually
// the most legible) and bold everywhere that matters.
func highContrast() *Theme {
	c := lipgloss.Color
	return coloured("high-contrast", true, true, palette{
		fg: c("15"), muted: c("7"), accent: c("14"), hot: c("11"),
		selBg: c("15"), selFg: c("0"), border: c("15"),
		run: c("12"), queue: c("15"), pend: c("11"), ok: c("10"),
		fail: c("9"), lost: c("13"), tout: c("11"), cancel: c("7"),
	})
}

// mono uses no colour at all: attributes (bold, underline, reverse) carry
// the meaning, so it stays readable with NO_COLOR and on any terminal.
func mono() *Theme {
	s := lipgloss.NewStyle
	t := &Theme{
		Name:         Mono,
		Dark:         true,
		Title:        s().Bold(true),
		Header:       s(),
		Count:        s().Bold(true),
		Hot:          s().Reverse(true).Bold(true),
		Muted:        s(),
		Badge:        s().Reverse(true).Bold(true),
		Tab:          s(),
		TabActive:    s().Bold(true).Underline(true),
		TableHead:    s().Bold(true),
		Selected:     s().Reverse(true),
		Filter:       s().Bold(true),
		StatusInfo:   s(),
		StatusOK:     s().Bold(true),
		StatusWarn:   s().Bold(true),
		StatusErr:    s().Bold(true).Underline(true),
		Dialog:       s().Border(lipgloss.NormalBorder()).Padding(0, 1),
		DialogTitle:  s().Bold(true),
		Choice:       s().Padding(0, 1),
		ChoiceActive: s().Reverse(true).Bold(true).Padding(0, 1),
		Input:        s().Underline(true),
		Field:        s().Bold(true),
		Section:      s().Bold(true).Underline(true),
		Match:        s().Underline(true),
		CurrentMatch: s().Reverse(true),
		Marker:       s().Bold(true),
		Bar:          s().Reverse(true),
		Following:    s().Bold(true),
		Paused:       s().Bold(true).Underline(true),
		status:       map[string]lipgloss.Style{},
		plain:        s(),
	}
	for word, slot := range statusGroups {
		switch slot {
		case "run", "pend":
			t.status[word] = s().Bold(true)
		case "fail", "lost":
			t.status[word] = s().Bold(true).Underline(true)
		case "tout":
			t.status[word] = s().Underline(true)
		default:
			t.status[word] = s()
		}
	}
	b := s().Bold(true)
	t.Help = help.Styles{Ellipsis: s(), ShortKey: b, ShortDesc: s(), ShortSeparator: s(),
		FullKey: b, FullDesc: s(), FullSeparator: s()}
	return t
}
