package termtext

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Bounds on text that runtimes hand in (issue 9 item 7, README "The console").
const (
	// MaxID is the longest id accepted (session, run, task, source), in bytes.
	MaxID = 128
	// MaxLabel is the longest label accepted, in bytes.
	MaxLabel = 1024
)

// ErrBadText is matched (errors.Is) by every validation error here; callers
// map it to their own invalid-input error (core.ErrInvalid, exit 2).
var ErrBadText = errors.New("invalid text")

// badText is a validation error: its message names the value and does not
// repeat "invalid text".
type badText struct{ msg string }

func (e badText) Error() string        { return e.msg }
func (e badText) Is(target error) bool { return target == ErrBadText }

func badf(format string, args ...any) error { return badText{fmt.Sprintf(format, args...)} }

// ValidID checks an id given by a runtime or an operator (a session, run,
// task or source id) where it enters: non-empty, valid UTF-8, at most MaxID
// bytes, printable (no control, bidi, zero-width or other format character,
// no space). The error names the value, sanitised and capped, and wraps
// ErrBadText.
func ValidID(kind, s string) error {
	switch {
	case s == "":
		return badf("%s is empty", kind)
	case len(s) > MaxID:
		return badf("%s %q is %d bytes, longer than %d", kind, Line(s, 40), len(s), MaxID)
	}
	if r, ok := badRune(s, false); !ok {
		return badf("%s %q holds %s", kind, Line(s, 80), describe(r))
	}
	return nil
}

// ValidLabel checks a label: valid UTF-8, printable (spaces allowed; no
// control, bidi, zero-width or other format character but ZWJ/ZWNJ), at most
// MaxLabel bytes. The error names the value, sanitised and capped, and wraps
// ErrBadText.
func ValidLabel(kind, s string) error {
	if len(s) > MaxLabel {
		return badf("%s %q is %d bytes, longer than %d", kind, Line(s, 40), len(s), MaxLabel)
	}
	if r, ok := badRune(s, true); !ok {
		return badf("%s %q holds %s", kind, Line(s, 80), describe(r))
	}
	return nil
}

// badRune returns the first rune of s an id (or, with spaces, a label) may
// not hold, and false; or 0, true.
func badRune(s string, spaces bool) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return -1, false
			}
		}
		switch {
		case r == ' ' && spaces:
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return r, false
		case isHiddenRune(r), r == 0x2028, r == 0x2029:
			return r, false
		case r == 0x200c || r == 0x200d:
			// ZWNJ/ZWJ: emoji sequences and several scripts need them.
		case unicode.Is(unicode.Cf, r):
			return r, false
		case !spaces && unicode.IsSpace(r):
			return r, false
		case !unicode.IsPrint(r) && !(spaces && unicode.IsSpace(r)):
			return r, false
		}
	}
	return 0, true
}

func describe(r rune) string {
	if r < 0 {
		return "invalid UTF-8"
	}
	if r == ' ' || unicode.IsSpace(r) {
		return fmt.Sprintf("a space character (%U)", r)
	}
	return fmt.Sprintf("a control or invisible character (%U)", r)
}
