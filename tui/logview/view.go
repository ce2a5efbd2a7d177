package logview

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// View renders exactly height rows of at most width cells: the visible log
// rows and the status bar (or the search prompt while editing). It renders
// only the lines in the window, so its cost does not grow with the buffer.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	ch := m.contentHeight()
	rows := make([]string, 0, m.height)
	top, row := m.position()
	var starts []int
	var spans [][2]int
	for i := top; i < m.end() && len(rows) < ch; i, row = i+1, 0 {
		s, isMarker := m.text(i)
		spans = spans[:0]
		if !isMarker && m.query != "" {
			spans = m.match.spans(s, spans)
		}
		st := m.styles.text
		if isMarker {
			st = m.styles.marker
		}
		curLine := m.cur >= 0 && m.cur < len(m.matches) && m.matches[m.cur] == i
		if !m.wrap {
			lo, hi := cellSpan(s, m.xOff, m.width)
			if hi < len(s) && m.width > 1 {
				// Cut on the right: the last cell says so.
				lo, hi = cellSpan(s, m.xOff, m.width-1)
				rows = append(rows, m.renderSpan(s, lo, hi, spans, st, curLine)+st.render("…"))
				continue
			}
			rows = append(rows, m.renderSpan(s, lo, hi, spans, st, curLine))
			continue
		}
		starts = wrapStarts(s, m.width, starts[:0])
		for ; row < len(starts) && len(rows) < ch; row++ {
			hi := len(s)
			if row+1 < len(starts) {
				hi = starts[row+1]
			}
			rows = append(rows, m.renderSpan(s, starts[row], hi, spans, st, curLine))
		}
	}
	for len(rows) < ch {
		rows = append(rows, "")
	}
	if m.editing {
		rows = append(rows, m.promptView())
	} else {
		rows = append(rows, m.statusView())
	}
	return strings.Join(rows, "\n")
}

// renderSpan styles s[lo:hi], highlighting the parts covered by match spans.
// On the current match's line its first match gets CurrentMatch.
func (m Model) renderSpan(s string, lo, hi int, spans [][2]int, base style, curLine bool) string {
	if len(spans) == 0 {
		if lo == hi {
			return ""
		}
		return base.render(s[lo:hi])
	}
	var b strings.Builder
	pos := lo
	for k, sp := range spans {
		a, z := max(sp[0], lo), min(sp[1], hi)
		if a >= z {
			continue
		}
		if pos < a {
			b.WriteString(base.render(s[pos:a]))
		}
		hl := m.styles.match
		if curLine && k == 0 {
			hl = m.styles.currentMatch
		}
		b.WriteString(hl.render(s[a:z]))
		pos = z
	}
	if pos < hi {
		b.WriteString(base.render(s[pos:hi]))
	}
	return b.String()
}

// promptView is the search prompt: "/" and the query typed so far, its tail
// kept visible when longer than the width.
func (m Model) promptView() string {
	q := string(m.input)
	room := m.width - 2 // "/" and the cursor cell
	if room < 0 {
		return truncate("/", m.width)
	}
	for textWidth(q) > room {
		_, size := utf8.DecodeRuneInString(q)
		q = q[size:]
	}
	return m.styles.prompt.render("/") + m.styles.text.render(q) + m.styles.cursor.render(" ")
}

// StatusText is the plain text of the status bar: the badge (FOLLOWING,
// PAUSED or PAUSED (N new lines)) and the body: title, lines kept and
// capacity, wrap, horizontal position, search state, the end of the job and
// the state of the follower, separated by " │ ".
func (m Model) StatusText() (badge, body string) {
	badge, title, rest := m.statusParts()
	if title != "" {
		rest = append([]string{title}, rest...)
	}
	return badge, strings.Join(rest, " │ ")
}

func (m Model) statusParts() (badge, title string, rest []string) {
	if m.follow {
		badge = "FOLLOWING"
	} else if m.newLines > 0 {
		badge = "PAUSED (" + strconv.Itoa(m.newLines) + " new line" + plural(m.newLines) + ")"
	} else {
		badge = "PAUSED"
	}
	rest = make([]string, 0, 7)
	// Lines kept in memory, not a position: "1200 lines kept", "10000
	// lines kept (max)" once the oldest are being dropped.
	kept := strconv.Itoa(m.buf.len()) + " line" + plural(m.buf.len()) + " kept"
	if m.buf.len() >= m.buf.capacity() {
		kept += " (max)"
	}
	rest = append(rest, kept)
	if m.wrap {
		rest = append(rest, "wrap on")
	} else {
		rest = append(rest, "wrap off")
		if m.xOff > 0 {
			rest = append(rest, "col "+strconv.Itoa(m.xOff+1))
		}
	}
	if m.query != "" {
		q := "/" + m.query
		switch {
		case len(m.matches) == 0:
			q += " no match"
		case m.cur >= 0:
			q += " match " + strconv.Itoa(m.cur+1) + "/" + strconv.Itoa(len(m.matches))
		default:
			q += " " + strconv.Itoa(len(m.matches)) + " match" + pluralEs(len(m.matches))
		}
		rest = append(rest, q)
	}
	if m.ended != nil {
		rest = append(rest, m.ended.summary())
	}
	if m.done {
		if m.doneErr != nil {
			rest = append(rest, "follow stopped: "+sanitizeLine(m.doneErr.Error(), 200))
		} else if m.ended == nil {
			rest = append(rest, "follow ended")
		}
	}
	return badge, m.title, rest
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralEs(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}

// statusView renders the status bar to exactly the width: the badge, then
// the body. When the body does not fit, the title gives way first (cut with
// "…", dropped below 8 cells), then the body is cut at the end.
func (m Model) statusView() string {
	badge, title, rest := m.statusParts()
	badge = " " + badge + " "
	bst := m.styles.following
	if !m.follow {
		bst = m.styles.paused
	}
	if m.done && m.doneErr != nil {
		bst = m.styles.problem
	}
	bw := textWidth(badge)
	if bw >= m.width {
		return bst.render(truncate(badge, m.width))
	}
	room := m.width - bw
	tail := strings.Join(rest, " │ ")
	body := " " + tail
	if title != "" {
		if titleRoom := room - textWidth(body) - textWidth(" │ "); titleRoom >= min(8, textWidth(title)) {
			body = " " + truncate(title, titleRoom) + " │ " + tail
		}
	}
	body = truncate(body, room)
	body += strings.Repeat(" ", room-textWidth(body))
	return bst.render(badge) + m.styles.statusBar.render(body)
}

// truncate cuts plain text to width cells, ending in "…" when cut.
func truncate(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	lo, hi := cellSpan(s, 0, width-1)
	return s[lo:hi] + "…"
}
