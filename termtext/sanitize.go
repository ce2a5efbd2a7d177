// Package termtext owns every rule for untrusted text shown on a terminal
// (README "The console" "untrusted text is sanitised once, where it enters the program"):
// one sanitiser with three modes (Log for a log line, Text for multi-line
// text, Line for a one-line field), the exact rendering of a field an
// operator decides on (Exact, ExactText: every control shown as a symbol,
// nothing resolved or dropped; see exact.go), the --json escaper
// (EscapeJSON), the one relative-age formatter (Age) and
// the validators for ids and labels that runtimes hand in (ValidID,
// ValidLabel). It uses nothing of clawpit's: core, tui, tailer and the CLI
// all use it.
package termtext

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// The sanitiser turns arbitrary bytes — job output, commands,
// labels, errors, rationales — into text that cannot drive the operator's
// terminal: nothing it returns can move the cursor, set the title, write the
// clipboard, open a hyperlink, or reorder the text around it.
//
// What it does, in order:
//
//  1. Escape sequences are removed whole, as a terminal would parse them
//     (github.com/charmbracelet/x/ansi DecodeSequence): CSI (colours, cursor
//     moves, erase), OSC (0/2 title, 8 hyperlink, 52 clipboard, …), DCS, SOS,
//     PM, APC, and two-byte ESC sequences. A string sequence without its
//     terminator (BEL, ST, ESC \) runs to the end of the text and is removed
//     with it.
//  2. 8-bit C1 controls. As raw bytes (0x80–0x9F outside a valid UTF-8
//     sequence, i.e. invalid UTF-8), the introducers 0x9B CSI, 0x9D OSC,
//     0x90 DCS, 0x98 SOS, 0x9E PM, 0x9F APC start a sequence that is removed
//     like its 7-bit form; every other raw C1 byte is dropped. As UTF-8 runes
//     (U+0080–U+009F), the introducers U+009B/U+0090 remove the CSI/DCS
//     parameters and final byte that follow, U+009D/U+0098/U+009E/U+009F the
//     string up to its terminator ST (U+009C or ESC \); a string without
//     ST — one ended by BEL, say, which VTE-style terminals accept — loses
//     only its introducer and its text stays, sanitised, so it never eats
//     the rest of the line; other C1 runes are dropped. (A DCS introduced by U+0090 loses only its
//     parameters: its payload stays, sanitised, as plain text.)
//  3. Other C0 controls and DEL are made visible as Unicode "control
//     pictures" (U+2400 + code: NUL → ␀, BEL → ␇, ESC never gets here,
//     LF → ␊ in Log (Text keeps line breaks, Line makes LF, CR and tab a
//     space), DEL → ␡), so a job cannot
//     ring the bell or hide bytes, and the operator still sees that they
//     were there.
//  4. Invisible reordering and hiding characters are removed: bidi
//     embeddings/overrides/isolates U+202A–U+202E and U+2066–U+2069, the marks
//     U+200E, U+200F, U+061C, the zero-width space U+200B, word joiner U+2060,
//     BOM U+FEFF, and Unicode tag characters U+E0000–U+E007F (used to smuggle
//     invisible text into AI prompts; this also drops the tags of subdivision
//     flag emoji). ZWJ/ZWNJ (U+200D/U+200C) are kept: emoji sequences and
//     several scripts need them. U+2028/U+2029 become a space.
//  5. Invalid UTF-8 becomes U+FFFD (one per run of invalid bytes).
//  6. Tabs, carriage returns and backspaces are resolved like a terminal with
//     no right margin: '\t' moves to the next multiple of 8 columns (padding
//     with spaces when it moves past the end), '\r' returns to column 0 so
//     the text after it OVERWRITES the text before it cell by cell ("10%\r20%"
//     → "20%", "downloading\rdone" → "doneloading"), '\b' moves one column
//     left. Column widths are grapheme display widths (x/ansi, as lipgloss).
//  7. The result is capped at maxLen runes (maxLen ≤ 0: no cap); a cut text
//     ends with "…" and has exactly maxLen runes.
//
// Every mode is idempotent, returns s itself (no allocation) for printable
// ASCII within the cap, and its output is valid UTF-8 without ESC, C1, BEL,
// CR, bidi controls or any other C0 byte.

// Ellipsis marks truncated text.
const Ellipsis = "…"

// Log returns a log line made safe for display (see above): tabs expanded,
// '\r' and '\b' resolved, a '\n' shown as ␊, at most maxLen runes (≤ 0: no
// cap). The hot path of job tails and the console's log view: printable ASCII
// within the cap returns s without allocating.
func Log(s string, maxLen int) string {
	if isPlainASCII(s) {
		if maxLen <= 0 || len(s) <= maxLen {
			return s
		}
		return s[:maxLen-1] + Ellipsis
	}
	return capRunes(sanitizeLine(s, false), maxLen)
}

// Line returns s made safe as a one-line field (an id, a label, an error, a
// stream field printed by the CLI): like Log, except that '\n', '\r' and
// '\t' each become one space (so a newline cannot forge another output line
// and "\r" cannot overwrite what came before), capped at maxLen runes (≤ 0:
// no cap) with the last being "…".
func Line(s string, maxLen int) string {
	if isPlainASCII(s) {
		if maxLen <= 0 || len(s) <= maxLen {
			return s
		}
		return s[:maxLen-1] + Ellipsis
	}
	return capRunes(sanitizeLine(s, true), maxLen)
}

// Text is Log for multi-line text (errors, rationales, a tail):
// each line is sanitised on its own, "\r\n" and "\n" become "\n", and the
// whole is capped at maxLen runes (line breaks count as one).
func Text(s string, maxLen int) string {
	if isPlainASCIIText(s) && !strings.Contains(s, "\r") {
		if maxLen <= 0 || len(s) <= maxLen {
			return s
		}
		return s[:maxLen-1] + Ellipsis
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; ; i++ {
		line, rest, more := strings.Cut(s, "\n")
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(sanitizeLine(line, false))
		if !more {
			break
		}
		s = rest
		if maxLen > 0 && sb.Len() > 4*maxLen {
			break // enough to fill the cap; the rest would be cut anyway
		}
	}
	return capRunes(sb.String(), maxLen)
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func isPlainASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c >= 0x7f {
			return false
		}
	}
	return true
}

// capRunes cuts s to maxLen runes, the last being "…".
func capRunes(s string, maxLen int) string {
	if maxLen <= 0 || len(s) <= maxLen {
		return s
	}
	n := 0
	for i := range s {
		if n == maxLen-1 {
			if utf8.RuneCountInString(s[i:]) <= 1 {
				return s
			}
			return s[:i] + Ellipsis
		}
		n++
	}
	return s
}

// sanitizeLine does steps 1–6. (A trailing '\r', as left by "\r\n", is
// resolved like any '\r': it returns to column 0 and writes nothing.) With
// field, '\n', '\r' and '\t' become a space instead (Line).
func sanitizeLine(s string, field bool) string {
	ls := lineSanitizer{s: s}
	cells := false // a '\t', '\r' or '\b' needs the cell model
	for i := 0; i < len(s); {
		// The common bytes stay inline (printable ASCII, the cell
		// controls, ESC, a plain non-ASCII rune): a call per byte or
		// rune cost 4–6 % on coloured and non-ASCII lines.
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			ls.prevInvalid = false
			i++
			continue
		}
		switch {
		case field && (c == '\t' || c == '\r' || c == '\n'):
			ls.flush(i)
			ls.sb.WriteByte(' ')
			i++
			ls.last = i
			ls.prevInvalid = false
		case c == '\t' || c == '\r' || c == '\b':
			cells = true
			ls.prevInvalid = false
			i++
		case c == ansi.ESC:
			ls.flush(i)
			i += skipSequence(s[i:], ansi.NormalState)
			ls.last = i
		case c < 0x20 || c == 0x7f:
			i = ls.controlPicture(i)
		default:
			if r, size := utf8.DecodeRuneInString(s[i:]); size > 1 && r > 0x9f && !isHiddenRune(r) && r != 0x2028 && r != 0x2029 {
				ls.prevInvalid = false
				i += size
				continue
			}
			i = ls.nonASCII(i)
		}
	}
	out := s
	if ls.changed {
		ls.sb.WriteString(s[ls.last:])
		out = ls.sb.String()
	}
	if cells {
		out = resolveCells(out)
	}
	return out
}

// lineSanitizer is sanitizeLine's state over s: the output is built in sb
// only once something changes (changed), so a clean line costs no
// allocation; s[last:i] is text read but not yet copied; prevInvalid says the
// previous byte was invalid UTF-8 already shown as one U+FFFD.
type lineSanitizer struct {
	s           string
	sb          strings.Builder
	changed     bool
	last        int
	prevInvalid bool
}

// flush copies the pending text s[last:i] to the output, starting the output
// (sized for s plus a few replacement runes) on the first change.
func (ls *lineSanitizer) flush(i int) {
	if !ls.changed {
		ls.changed = true
		ls.sb.Grow(len(ls.s) + 16)
	}
	ls.sb.WriteString(ls.s[ls.last:i])
}

// controlPicture shows the C0 control or DEL at s[i] (not one sanitizeLine
// handles itself: ESC, the cell controls '\t' '\r' '\b', a field's '\n') as
// its Control Pictures symbol (U+2400 + c, DEL U+2421) and returns the
// index after it.
func (ls *lineSanitizer) controlPicture(i int) int {
	c := ls.s[i]
	ls.flush(i)
	if c == 0x7f {
		ls.sb.WriteRune(0x2421)
	} else {
		ls.sb.WriteRune(0x2400 + rune(c))
	}
	ls.last = i + 1
	ls.prevInvalid = false
	return i + 1
}

// nonASCII handles the byte at s[i], 0x80 or above, and returns the index
// after what it consumed. A raw 8-bit C1 control drops with the sequence or
// string it introduces; other invalid UTF-8 shows as one U+FFFD per run. Of
// valid runes, a C1 control drops with its sequence or string, a hidden rune
// (isHiddenRune) drops, a line or paragraph separator becomes a space, and
// anything else is kept (sanitizeLine keeps those itself, without a call).
func (ls *lineSanitizer) nonASCII(i int) int {
	s := ls.s
	c := s[i]
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		ls.flush(i)
		if c <= 0x9f {
			// A raw 8-bit C1 control (invalid UTF-8 on its own).
			if isC1Introducer(c) {
				i += skipSequence(s[i:], ansi.NormalState)
			} else {
				i++
			}
		} else {
			if !ls.prevInvalid {
				ls.sb.WriteRune(utf8.RuneError)
			}
			ls.prevInvalid = true
			i++
		}
		ls.last = i
		return i
	}
	ls.prevInvalid = false
	switch {
	case r <= 0x9f: // C1 as a UTF-8 rune
		ls.flush(i)
		i += size
		switch r {
		case 0x9b, 0x90: // CSI, DCS: parameters, intermediates, final
			i += skipSequence(s[i:], ansi.PrefixState)
		case 0x9d, 0x98, 0x9e, 0x9f: // OSC, SOS, PM, APC: a string
			i += skipC1String(s[i:])
		}
		ls.last = i
	case isHiddenRune(r):
		ls.flush(i)
		i += size
		ls.last = i
	case r == 0x2028 || r == 0x2029:
		ls.flush(i)
		ls.sb.WriteByte(' ')
		i += size
		ls.last = i
	default:
		i += size
	}
	return i
}

// skipC1String returns the length of the string payload of a UTF-8-encoded
// C1 string introducer (U+009D OSC, …) at the start of s, up to and with its
// ST (U+009C or ESC \); 0 when no ST ends it on this line (the payload is
// then kept as text: it is inert once its introducer is gone).
func skipC1String(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ansi.ESC:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		case 0xc2:
			if i+1 < len(s) && s[i+1] == 0x9c {
				return i + 2
			}
		}
	}
	return 0
}

func isC1Introducer(c byte) bool {
	switch c {
	case ansi.CSI, ansi.OSC, ansi.DCS, ansi.SOS, ansi.PM, ansi.APC:
		return true
	}
	return false
}

// skipSequence returns the length of the escape sequence at the start of s
// (at least 1 when s starts with ESC or a C1 byte).
func skipSequence(s string, state byte) int {
	if s == "" {
		return 0
	}
	_, _, n, _ := ansi.DecodeSequence(s, state, nil)
	if n <= 0 && state == ansi.NormalState {
		n = 1
	}
	return n
}

// isHiddenRune: bidi controls, invisible marks and tag characters (step 4).
func isHiddenRune(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200b, r == 0x200e, r == 0x200f, r == 0x2060, r == 0xfeff:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	case 0xe0000 <= r && r <= 0xe007f:
		return true
	}
	return false
}

// cell is one terminal column: the grapheme that starts there (cont marks
// the second column of a wide grapheme).
type cell struct {
	g    string
	cont bool
}

// resolveCells applies '\t', '\r' and '\b' like a terminal without a right
// margin. s has no other controls.
func resolveCells(s string) string {
	// Fast path: only tabs, all ASCII → plain expansion.
	if !strings.ContainsAny(s, "\r\b") {
		return expandTabs(s)
	}
	if IsASCII(s) {
		return resolveASCII(s)
	}
	row := make([]cell, 0, len(s))
	col := 0
	put := func(g string, w int) {
		if w == 0 {
			// A zero-width cluster (a lone combining mark) joins the cell before.
			if col > 0 && col <= len(row) {
				k := col - 1
				for k > 0 && row[k].cont {
					k--
				}
				row[k].g += g
			}
			return
		}
		for len(row) < col+w {
			row = append(row, cell{g: " "})
		}
		// Overwriting half of a wide grapheme blanks its other half.
		if row[col].cont && col > 0 {
			row[col-1] = cell{g: " "}
		}
		if end := col + w; end < len(row) && row[end].cont {
			row[end] = cell{g: " "}
		}
		row[col] = cell{g: g}
		for k := 1; k < w; k++ {
			row[col+k] = cell{cont: true}
		}
		col += w
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\t':
			col = (col/8 + 1) * 8
			i++
			continue
		case '\r':
			col = 0
			i++
			continue
		case '\b':
			if col > 0 {
				col--
			}
			i++
			continue
		}
		if c < 0x80 && (i+1 == len(s) || s[i+1] < 0x80) {
			put(s[i:i+1], 1)
			i++
			continue
		}
		g, w := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
		if len(g) == 0 {
			g, w = s[i:i+1], 1
		}
		// A cluster never spans our controls (they are grapheme breaks), but
		// be safe: stop it at the first one.
		if k := strings.IndexAny(g, "\t\r\b"); k > 0 {
			g = g[:k]
			w = ansi.StringWidth(g)
		}
		put(g, w)
		i += len(g)
	}
	for len(row) < col {
		row = append(row, cell{g: " "}) // a trailing tab pads, like expand(1)
	}
	var sb strings.Builder
	sb.Grow(len(s))
	for _, c := range row {
		if !c.cont {
			sb.WriteString(c.g)
		}
	}
	return sb.String()
}

// IsASCII reports whether s is plain 7-bit text, where byte offsets and cell
// columns coincide.
func IsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// resolveASCII is resolveCells for ASCII text: one byte per column.
func resolveASCII(s string) string {
	row := make([]byte, 0, len(s))
	col := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t':
			col = (col/8 + 1) * 8
		case '\r':
			col = 0
		case '\b':
			if col > 0 {
				col--
			}
		default:
			for len(row) < col {
				row = append(row, ' ')
			}
			if col < len(row) {
				row[col] = c
			} else {
				row = append(row, c)
			}
			col++
		}
	}
	for len(row) < col {
		row = append(row, ' ')
	}
	return string(row)
}

// expandTabs replaces each '\t' with spaces up to the next multiple of 8
// columns, measuring graphemes by display width.
func expandTabs(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 32)
	col := 0
	for {
		k := strings.IndexByte(s, '\t')
		if k < 0 {
			sb.WriteString(s)
			return sb.String()
		}
		run := s[:k]
		sb.WriteString(run)
		if IsASCII(run) {
			col += len(run)
		} else {
			col += ansi.StringWidth(run)
		}
		n := 8 - col%8
		sb.WriteString("        "[:n])
		col += n
		s = s[k+1:]
	}
}
