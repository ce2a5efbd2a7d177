package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Exact and ExactText render a field an operator decides on — a command,
// tool, cwd, rationale, file path, URL, a task's error — so that every
// character of it is on the screen. Log, Text and Line resolve '\r' and
// '\b' like a terminal, which is right for a progress bar but lets
// "rm -rf ~ #\rgit log" look like "git log"; in a decision field nothing
// may overwrite, reorder or hide anything, so nothing is resolved or
// dropped. Every character that a terminal would not draw as itself is
// replaced by a visible symbol instead:
//
//   - C0 controls (U+0000–U+001F, tab, CR, LF and ESC included) and DEL
//     become their Unicode control pictures: NUL → ␀, BS → ␈, TAB → ␉,
//     LF → ␊, CR → ␍, ESC → ␛, DEL → ␡. An escape sequence thus shows as
//     "␛[31m": inert, and visibly there.
//   - C1 controls (U+0080–U+009F), format characters (Unicode category Cf:
//     bidi embeddings, overrides, isolates and marks U+202A–U+202E,
//     U+2066–U+2069, U+200E/F, U+061C; zero-width U+200B–U+200D, U+2060,
//     U+FEFF; soft hyphen; tag characters), line and paragraph separators
//     (U+2028/9), every space but U+0020 (no-break and other Unicode
//     spaces, which a shell does not split on), variation selectors,
//     other default-ignorable code points (U+115F, U+3164, …) and
//     non-characters become "<U+XXXX>" (4 to 6 upper-case hex digits).
//   - A byte that is not valid UTF-8 (a raw 8-bit C1 control included)
//     becomes "<0xNN>".
//
// Everything else, printable ASCII and visible Unicode, is kept as is. So
// distinct control characters always render distinctly, and two inputs
// without control pictures or "<U+"/"<0x" text of their own never render
// the same. Both functions are idempotent (a rendering is its own
// rendering): a value escaped where it was stored (a notification's text)
// is not escaped again where it is shown.
//
// The result is valid UTF-8 without any C0, C1, DEL, bidi or zero-width
// character, capped at maxLen runes (≤ 0: no cap) with the last being "…".

// Exact renders s as one line with every control made visible (see above):
// a '\n' is ␊, so a value can never start a line of its own.
func Exact(s string, maxLen int) string {
	if isPlainASCII(s) {
		if maxLen <= 0 || len(s) <= maxLen {
			return s
		}
		return s[:maxLen-1] + Ellipsis
	}
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	writeExact(&sb, s, maxLen)
	return capRunes(sb.String(), maxLen)
}

// ExactText is Exact for multi-line values (a rationale, an error shown in
// a detail view): each '\n' is shown as ␊ and then breaks the line, so the
// break is visible as the value's own and the text wraps. "\r\n" is ␍␊
// followed by a break.
func ExactText(s string, maxLen int) string {
	if isPlainASCII(s) {
		return Exact(s, maxLen)
	}
	var sb strings.Builder
	sb.Grow(len(s) + 16)
	for i := 0; ; i++ {
		line, rest, more := strings.Cut(s, "\n")
		writeExact(&sb, line, maxLen)
		if !more {
			break
		}
		// Already ␊ (a value rendered before): only the break, so that
		// ExactText stays idempotent.
		if !strings.HasSuffix(line, "␊") {
			sb.WriteString("␊")
		}
		sb.WriteByte('\n')
		s = rest
		if maxLen > 0 && sb.Len() > 8*maxLen {
			break // enough to fill the cap
		}
	}
	return capRunes(sb.String(), maxLen)
}

// HasHidden reports whether Exact would change s (before any cap): s holds
// a control, format, invisible or non-space blank character, or invalid
// UTF-8. A command with such a character never matches a grant.
func HasHidden(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return true
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || IsHiddenExact(r) {
			return true
		}
		i += size
	}
	return false
}

// writeExact appends the Exact rendering of s to sb, stopping once it has
// more than enough for a cap of maxLen runes.
func writeExact(sb *strings.Builder, s string, maxLen int) {
	start := sb.Len()
	last := 0 // s[last:i] is pending, unchanged text
	for i := 0; i < len(s); {
		if maxLen > 0 && sb.Len()-start > 8*maxLen {
			return
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		sb.WriteString(s[last:i])
		if c < 0x80 {
			if c == 0x7f {
				sb.WriteRune(0x2421)
			} else {
				sb.WriteRune(0x2400 + rune(c))
			}
			i++
			last = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			sb.WriteString("<0x")
			sb.WriteString(strings.ToUpper(hex2(c)))
			sb.WriteByte('>')
		case IsHiddenExact(r):
			sb.WriteString(codePoint(r))
		default:
			sb.WriteString(s[i : i+size])
		}
		i += size
		last = i
	}
	sb.WriteString(s[last:])
}

// IsHiddenExact reports whether r is a non-ASCII rune that Exact shows as
// "<U+XXXX>": C1 controls, format characters (Cf: bidi, zero-width, soft
// hyphen, tags), line/paragraph separators, spaces other than U+0020,
// variation selectors, other default-ignorable code points and
// non-characters. (ASCII controls and DEL become control pictures.)
func IsHiddenExact(r rune) bool {
	switch {
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true
	case r == utf8.RuneError:
		return false // a real U+FFFD is visible as itself
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Zs,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point,
		unicode.Noncharacter_Code_Point)
}

// codePoint is "<U+XXXX>" for r (at least 4 hex digits, upper case).
func codePoint(r rune) string {
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for len(h) < 4 {
		h = "0" + h
	}
	return "<U+" + h + ">"
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}
