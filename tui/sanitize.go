package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// maxField caps any one untrusted string kept by the console, in bytes.
const maxField = 4096

// sanitize makes untrusted text (labels, commands, errors, rationales, ids
// from other processes) safe to draw, once, where it enters the console
// (SPEC §9): escape sequences removed, control and bidi-override characters
// dropped, tabs expanded, invalid UTF-8 replaced, length capped. Newlines are
// kept (the detail view wraps them); cells flatten them with oneLine.
//
// Interim shim until tailer.Sanitize lands; then this delegates to it.
func sanitize(s string) string {
	if len(s) > maxField {
		s = s[:maxField]
	}
	if isPlain(s) {
		return s
	}
	s = ansi.Strip(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	b.Grow(len(s))
	col := 0
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteByte('\n')
			col = 0
			continue
		case r == '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			continue
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only (the common case), which
// needs no work.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// oneLine sanitises s and flattens it to one line for a table cell.
func oneLine(s string) string {
	s = sanitize(s)
	if strings.IndexByte(s, '\n') < 0 {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}
