package logview

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Styles styles the log view. The zero value renders plain text with no
// escape sequences at all (what a `mono`/NO_COLOR theme or a test wants);
// DefaultStyles gives the dark-theme look. The console passes its theme's
// styles in Options.Styles.
type Styles struct {
	Text         lipgloss.Style // ordinary log text
	Match        lipgloss.Style // search matches
	CurrentMatch lipgloss.Style // the match n/N last landed on
	Marker       lipgloss.Style // the "── job completed (exit 0) at … ──" line
	StatusBar    lipgloss.Style // status bar body
	Following    lipgloss.Style // FOLLOWING badge
	Paused       lipgloss.Style // PAUSED badge
	Problem      lipgloss.Style // status-bar notice when following stopped with an error
	Prompt       lipgloss.Style // the "/" of the search prompt
	Cursor       lipgloss.Style // the search prompt's cursor cell
}

// DefaultStyles returns styles for a dark terminal.
func DefaultStyles() Styles {
	return Styles{
		Match:        lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11")),
		CurrentMatch: lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("208")).Bold(true),
		Marker:       lipgloss.NewStyle().Foreground(lipgloss.Color("14")).Bold(true),
		StatusBar:    lipgloss.NewStyle().Foreground(lipgloss.Color("252")).Background(lipgloss.Color("236")),
		Following:    lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("10")).Bold(true),
		Paused:       lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11")).Bold(true),
		Problem:      lipgloss.NewStyle().Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")).Bold(true),
		Prompt:       lipgloss.NewStyle().Foreground(lipgloss.Color("12")).Bold(true),
		Cursor:       lipgloss.NewStyle().Reverse(true),
	}
}

// style is a lipgloss style compiled for the hot path: lipgloss's Render
// costs microseconds even for an empty style, and the view renders at least
// one span per visible row. When the style provably just wraps single-line
// text in a fixed prefix and suffix (colours and attributes; no width,
// padding, border, transform or per-space styling), render concatenates
// them; otherwise it calls Render.
type style struct {
	st       lipgloss.Style
	noop     bool
	wrapped  bool
	pre, suf string
}

// styleProbe is plain single-line text like a log span (lines reaching the
// view are sanitised: no tabs, no controls).
const styleProbe = "ab 12 Qz.-"

func compileStyle(st lipgloss.Style) style {
	c := style{st: st}
	if st.Render(styleProbe) == styleProbe {
		c.noop = true
		return c
	}
	r := st.Render("X")
	if i := strings.Index(r, "X"); i >= 0 {
		pre, suf := r[:i], r[i+1:]
		if st.Render(styleProbe) == pre+styleProbe+suf {
			c.wrapped, c.pre, c.suf = true, pre, suf
		}
	}
	return c
}

func (s style) render(t string) string {
	switch {
	case s.noop || t == "":
		return t
	case s.wrapped:
		return s.pre + t + s.suf
	}
	return s.st.Render(t)
}

// styles is Styles compiled for rendering.
type styles struct {
	text, match, currentMatch, marker, statusBar, following, paused, problem, prompt, cursor style
}

func (s Styles) compile() styles {
	return styles{
		text:         compileStyle(s.Text),
		match:        compileStyle(s.Match),
		currentMatch: compileStyle(s.CurrentMatch),
		marker:       compileStyle(s.Marker),
		statusBar:    compileStyle(s.StatusBar),
		following:    compileStyle(s.Following),
		paused:       compileStyle(s.Paused),
		problem:      compileStyle(s.Problem),
		prompt:       compileStyle(s.Prompt),
		cursor:       compileStyle(s.Cursor),
	}
}
