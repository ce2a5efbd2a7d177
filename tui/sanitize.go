package tui

import "github.com/clawpit/clawpit/termtext"

// maxField caps any one untrusted string the console keeps, in runes.
const maxField = 4096

// sanitize makes untrusted multi-line text (errors, rationales, task text,
// journal reasons) safe to draw, once, where it enters the console (SPEC
// §9), with termtext.Text. Line breaks are kept (the detail view wraps them).
func sanitize(s string) string { return termtext.Text(s, maxField) }

// oneLine sanitises s for a table cell: one line, a '\n' shown as ␊
// (termtext.Log).
func oneLine(s string) string { return termtext.Log(s, maxField) }

// isPlain reports whether s is printable ASCII only (the common case).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
