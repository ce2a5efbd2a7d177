package tui

import "github.com/clawpit/clawpit/termtext"

// maxField caps any one untrusted string the console keeps, in runes.
const maxField = 4096

// sanitize makes untrusted multi-line text (errors, rationales, commands,
// task text, journal reasons) safe to draw, once, where it enters the
// console (README "The console"), with termtext.ExactText: every control character is
// shown as a symbol (a CR as ␍, a backspace as ␈, a bidi override as
// <U+202E>), never resolved, so nothing in a value can hide or overwrite
// the rest of it; a line break shows as ␊ and then breaks (the detail view
// wraps the lines inside the value's field).
func sanitize(s string) string { return termtext.ExactText(s, maxField) }

// oneLine sanitises s for a table cell, a dialog or a title: one line,
// every control visible (termtext.Exact; a '\n' is ␊).
func oneLine(s string) string { return termtext.Exact(s, maxField) }

// typed cleans what the operator types or pastes into a text field: a
// terminal's rendering (termtext.Log), since it is the operator's own text.
func typed(s string) string { return termtext.Log(s, maxField) }

// isPlain reports whether s is printable ASCII only (the common case).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
