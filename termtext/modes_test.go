package termtext

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestModes runs every payload class through each mode (issue 9 item 1).
func TestModes(t *testing.T) {
	tests := []struct {
		name, in        string
		log, text, line string
	}{
		{"csi", "a\x1b[31mred\x1b[0m\x1b[2J", "ared", "ared", "ared"},
		{"osc 0 title", "a\x1b]0;pwned\x07b", "ab", "ab", "ab"},
		{"osc 8 link", "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", "click", "click", "click"},
		{"osc 52 clipboard", "x\x1b]52;c;ZXZpbA==\x07title", "xtitle", "xtitle", "xtitle"},
		{"dcs", "a\x1bP1$r0m\x1b\\b", "ab", "ab", "ab"},
		{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab", "ab", "ab"},
		{"pm", "a\x1b^pm\x1b\\b", "ab", "ab", "ab"},
		{"sos", "a\x1bXsos\x1b\\b", "ab", "ab", "ab"},
		{"8-bit c1 csi", "a\x9b31mred", "ared", "ared", "ared"},
		{"8-bit c1 osc", "a\x9d0;t\x07b", "ab", "ab", "ab"},
		{"8-bit c1 other", "a\x85b", "ab", "ab", "ab"},
		{"utf8 c1 osc st", "a\u009d0;title\u009cb", "ab", "ab", "ab"},
		// A UTF-8 C1 string ended by BEL loses its introducer only; the rest
		// of the line survives (it used to be eaten).
		{"utf8 c1 osc bel", "a\u009d0;t\x07rest of line", "a0;t␇rest of line", "a0;t␇rest of line", "a0;t␇rest of line"},
		{"utf8 c1 csi", "a\u009b31mred", "ared", "ared", "ared"},
		{"bidi", "a\u202eevil\u202c \u2066x\u2069\u200f", "aevil x", "aevil x", "aevil x"},
		{"zero width", "a\u200bb\u2060c\ufeffd", "abcd", "abcd", "abcd"},
		{"cr", "10%\r20%", "20%", "20%", "10% 20%"},
		{"newline", "a\nb", "a␊b", "a\nb", "a b"},
		// Log is for one line: a CR returns to column 0 first.
		{"crlf", "a\r\nb", "␊b", "a\nb", "a  b"},
		{"tab", "a\tb", "a       b", "a       b", "a b"},
		{"bel nul del", "a\a\x00\x7f", "a␇␀␡", "a␇␀␡", "a␇␀␡"},
		{"invalid utf8", "a\xffb", "a\ufffdb", "a\ufffdb", "a\ufffdb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []struct {
				mode string
				f    func(string, int) string
				want string
			}{{"Log", Log, tc.log}, {"Text", Text, tc.text}, {"Line", Line, tc.line}} {
				got := m.f(tc.in, 0)
				if got != m.want {
					t.Errorf("%s(%q) = %q, want %q", m.mode, tc.in, got, m.want)
				}
				for _, l := range strings.Split(got, "\n") {
					checkSafe(t, l, 0)
				}
				if m.mode == "Line" && strings.Contains(got, "\n") {
					t.Errorf("Line(%q) has a newline: %q", tc.in, got)
				}
			}
		})
	}
}

// TestLine is the CLI's former clean() table (internal/cli TestClean), under
// the one policy: an OSC 52 payload is removed whole (it used to lose only
// its ESC and print "]52;c;…"), and the cap counts runes, "…" included.
func TestLine(t *testing.T) {
	cases := map[string]string{
		"plain":                       "plain",
		"a\nb\tc":                     "a b c",
		"\x1b]52;c;ZXZpbA==\x07title": "title",
		"\x1b]0;evil\x07x\x1b[31m":    "x",
		"bidi\u202eevil":              "bidievil",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"c1\u009b31mx":                "c1x",
		"forged\nclawpit: report":     "forged clawpit: report",
	}
	for in, want := range cases {
		if got := Line(in, 100); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Line(strings.Repeat("x", 50), 10); got != strings.Repeat("x", 9)+"…" {
		t.Errorf("cap: %q", got)
	}
	if got := Line(strings.Repeat("\x1b[1m", 3)+strings.Repeat("é", 2000), 1024); utf8.RuneCountInString(got) != 1024 {
		t.Errorf("cap utf8: %d runes", utf8.RuneCountInString(got))
	}
}

// TestAge is the CLI's and the console's age table, with one rule: ≥ 24h →
// days (the CLI used to say 47h where the console said 1d).
func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {12 * time.Second, "12s"}, {4*time.Minute + 30*time.Second, "4m"}, {2 * time.Hour, "2h"},
		{23*time.Hour + 59*time.Minute, "23h"}, {24 * time.Hour, "1d"}, {30 * time.Hour, "1d"},
		{47 * time.Hour, "1d"}, {3 * 24 * time.Hour, "3d"}, {-4 * time.Minute, "in 4m"}, {-30 * time.Hour, "in 1d"},
	}
	for _, c := range cases {
		if got := Age(now, now.Add(-c.d)); got != c.want {
			t.Errorf("Age(%s) = %q, want %q", c.d, got, c.want)
		}
	}
	if Age(now, time.Time{}) != "-" {
		t.Error("absent age")
	}
	if Dur(-time.Second) != "0s" {
		t.Error("negative Dur")
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		in      string
		id, lab bool
	}{
		{"run-1", true, true},
		{"019a7c1e-3b4f-7c2d-9e8f-0a1b2c3d4e5f", true, true},
		{"日本語", true, true},
		{"with space", false, true},
		{"", false, true},
		{"a\x1b[31m", false, false},
		{"a\x1b]0;t\x07", false, false},
		{"a\nb", false, false},
		{"a\tb", false, false},
		{"a\u202eb", false, false},
		{"a\u200bb", false, false},
		{"a\u0085b", false, false},
		{"a\xffb", false, false},
		{"👨\u200d👩", true, true},
		{strings.Repeat("x", MaxID), true, true},
		{strings.Repeat("x", MaxID+1), false, true},
		{strings.Repeat("x", MaxLabel+1), false, false},
	} {
		errID, errLab := ValidID("run id", tc.in), ValidLabel("label", tc.in)
		if (errID == nil) != tc.id {
			t.Errorf("ValidID(%q) = %v, want ok=%v", tc.in, errID, tc.id)
		}
		if (errLab == nil) != tc.lab {
			t.Errorf("ValidLabel(%q) = %v, want ok=%v", tc.in, errLab, tc.lab)
		}
		for _, err := range []error{errID, errLab} {
			if err == nil {
				continue
			}
			if !errors.Is(err, ErrBadText) {
				t.Errorf("%v does not wrap ErrBadText", err)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07\n\u202e") || len(err.Error()) > 400 {
				t.Errorf("error is not inert or bounded: %q", err)
			}
		}
	}
}

func FuzzSanitizeModes(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b[31mx", "\x1b]52;c;AAAA\x07", "\x9b1m", "\x9d0;t\x9c", "\u009b2J",
		"\u009d0;t\x07rest", "a\rb\nc\td", "\u202eabc\u200b", "\xff\xfe", "\x1bP\x1b\\", "\x1b_G\x1b\\", "\x1b^x\x1b\\",
		"a\rb", "\t\b\r", "日本\r語", "e\u0301\rx",
	} {
		f.Add(s, 10)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, maxLen int) {
		maxLen %= 300
		if maxLen < 0 {
			maxLen = -maxLen
		}
		line := Line(s, maxLen)
		checkSafe(t, line, maxLen)
		if again := Line(line, maxLen); again != line {
			t.Fatalf("Line not idempotent:\n in    %q\n once  %q\n twice %q", s, line, again)
		}
		log := Log(s, maxLen)
		checkSafe(t, log, maxLen)
		if again := Log(log, maxLen); again != log {
			t.Fatalf("Log not idempotent:\n in    %q\n once  %q\n twice %q", s, log, again)
		}
		text := Text(s, maxLen)
		for _, l := range strings.Split(text, "\n") {
			checkSafe(t, l, maxLen)
		}
		if maxLen > 0 && utf8.RuneCountInString(text) > maxLen {
			t.Fatalf("Text over the cap: %q", text)
		}
		if again := Text(text, maxLen); again != text {
			t.Fatalf("Text not idempotent:\n in    %q\n once  %q\n twice %q", s, text, again)
		}
		if strings.Contains(line, "\n") || strings.Contains(log, "\n") {
			t.Fatalf("a newline in a one-line mode: %q %q", line, log)
		}
		if err := ValidID("id", s); err == nil && (Line(s, 0) != s || len(s) > MaxID) {
			t.Fatalf("ValidID accepts %q, which sanitises to %q", s, line)
		}
	})
}
