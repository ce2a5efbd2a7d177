package logview

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Hostile job output must be inert on screen: with the zero (plain) Styles
// any ESC, C1, BEL or bidi override in View's output came from the input.
func TestEscapesInInputAreInertInView(t *testing.T) {
	hostile := []string{
		"csi \x1b[2J\x1b[H\x1b[31mred\x1b[0m clear",
		"osc52 \x1b]52;c;cm0gLXJmIH4=\x07 clipboard",
		"title \x1b]0;pwned\x1b\\ st",
		"link \x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
		"dcs \x1bP+q544e\x1b\\ apc \x1b_Gf=100;AAAA\x1b\\ pm \x1b^x\x1b\\",
		"c1 \u009b31m eight-bit csi \u009d0;t\u009c",
		"raw bytes \x9b31m \x9d0;x\x07",
		"bell\x07 backspace\x08 del\x7f nul\x00 vt\x0b ff\x0c",
		"bidi \u202eevil\u202c \u2066iso\u2069 \u200f",
		"progress 10%\rprogress 100%",
		"invalid \xff\xfe utf8",
		"\ttab\tstops",
	}
	h := newHarness(t, 80, 20, Options{})
	h.feed(hostile)
	for _, wrap := range []bool{false, true} {
		for _, view := range []string{h.m.View(), strings.Join(h.m.Lines(), "\n")} {
			for _, bad := range []string{"\x1b", "\u009b", "\u009d", "\u009c", "\x9b", "\x07", "\x08", "\x7f", "\x00", "\x0b", "\x0c", "\r", "\t", "\u202e", "\u2066"} {
				if strings.Contains(view, bad) {
					t.Errorf("wrap=%v: %q survived into the view:\n%q", wrap, bad, view)
				}
			}
		}
		if !utf8.ValidString(h.m.View()) {
			t.Errorf("wrap=%v: invalid UTF-8 in the view", wrap)
		}
		h.keys("w")
	}
	lines := h.m.Lines()
	if len(lines) != len(hostile) {
		t.Fatalf("%d lines in, %d lines buffered: %q", len(hostile), len(lines), lines)
	}
	if !strings.Contains(lines[9], "progress 100%") || strings.Contains(lines[9], "progress 10%p") {
		t.Errorf("\\r not resolved: %q", lines[9])
	}
}
