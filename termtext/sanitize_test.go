package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeTable(t *testing.T) {
	tests := []struct {
		name, in, want string
		max            int
	}{
		{"plain", "hello world", "hello world", 0},
		{"utf8 kept", "Grüße 日本語 🙂 ě ś", "Grüße 日本語 🙂 ě ś", 0},
		{"sgr", "\x1b[31mred\x1b[0m ok", "red ok", 0},
		{"cursor", "a\x1b[2J\x1b[H\x1b[10;20Hb\x1b[?25l", "ab", 0},
		{"osc title bel", "x\x1b]0;pwned\x07y", "xy", 0},
		{"osc title st", "x\x1b]2;pwned\x1b\\y", "xy", 0},
		{"osc 52 clipboard", "a\x1b]52;c;cm0gLXJmIH4=\x07b", "ab", 0},
		{"osc 8 hyperlink", "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", "click", 0},
		{"osc unterminated", "ok\x1b]0;title to the end", "ok", 0},
		{"dcs", "a\x1bP1$r0m\x1b\\b", "ab", 0},
		{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab", 0},
		{"pm sos", "a\x1b^pm\x1b\\b\x1bXsos\x1b\\c", "abc", 0},
		{"esc two byte", "a\x1b7b\x1b8c\x1bcd", "abcd", 0},
		{"lone esc", "a\x1b", "a", 0},
		{"8-bit csi", "a\x9b31mred\x9b0m", "ared", 0},
		{"8-bit osc", "a\x9d0;title\x07b", "ab", 0},
		{"8-bit osc st", "a\x9d52;c;eA==\x9cb", "ab", 0},
		{"8-bit dcs", "a\x90qpayload\x9cb", "ab", 0},
		{"8-bit other", "a\x85b\x8dc", "abc", 0},
		{"c1 rune csi", "a\u009b31mred", "ared", 0},
		{"c1 rune osc", "a\u009d0;title\u009cb", "ab", 0},
		{"c1 rune other", "a\u0085b", "ab", 0},
		{"bel", "ding\a", "ding␇", 0},
		{"nul del", "a\x00b\x7fc", "a␀b␡c", 0},
		{"newline", "a\nb", "a␊b", 0},
		{"vt ff", "a\vb\fc", "a␋b␌c", 0},
		{"bidi", "a\u202eevil\u202c \u2066x\u2069 \u200fy\u200e", "aevil x y", 0},
		{"zero width", "a\u200bb\u2060c\ufeffd", "abcd", 0},
		{"zwj kept", "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧", 0},
		{"tags", "a\U000E0041\U000E0042b", "ab", 0},
		{"line sep", "a\u2028b", "a b", 0},
		{"invalid", "a\xffb\xfe\xfdc", "a\ufffdb\ufffdc", 0},
		{"truncated rune", "a\xe2\x82", "a\ufffd", 0},
		{"tab", "a\tb", "a       b", 0},
		{"tabs", "\tx\tyz\t", "        x       yz      ", 0},
		{"tab wide", "日本\tx", "日本    x", 0},
		{"cr overwrite", "10%\r20%", "20%", 0},
		{"cr partial", "downloading\rdone", "doneloading", 0},
		{"cr many", "a\rbb\rccc\rd", "dcc", 0},
		{"crlf", "line\r", "line", 0},
		{"cr tab moves", "abcdefghij\r\tX", "abcdefghXj", 0},
		{"backspace", "ab\bc", "ac", 0},
		{"spinner", "|\b/\b-\b\\", "\\", 0},
		{"cr wide", "日本語\rx", "x 本語", 0},
		{"cr tab past end", "ab日\r\tz", "ab日    z", 0},
		{"cr over wide lead", "ab日c\rxyz", "xyz c", 0},
		{"bs onto wide tail", "日\bx", " x", 0},
		{"cap ascii", "abcdefghij", "abcd…", 5},
		{"cap exact", "abcde", "abcde", 5},
		{"cap utf8", "äöüßéèêë", "äöü…", 4},
		{"cap after strip", "\x1b[31m" + "abc" + "\x1b[0m", "abc", 3},
		{"cap 1", "abc", "…", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Log(tc.in, tc.max)
			if got != tc.want {
				t.Fatalf("Log(%q, %d)\n got %q\nwant %q", tc.in, tc.max, got, tc.want)
			}
			if again := Log(got, tc.max); again != got {
				t.Fatalf("not idempotent: %q → %q", got, again)
			}
			checkSafe(t, got, tc.max)
		})
	}
}

func TestSanitizeText(t *testing.T) {
	in := "line 1\r\n\x1b[1mline 2\x1b[0m\n\tx\n\n50%\r100%"
	want := "line 1\nline 2\n        x\n\n100%"
	if got := Text(in, 0); got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if got := Text("ab\ncd", 4); got != "ab\n…" {
		t.Fatalf("cap: %q", got)
	}
	if got := Text("plain\ntext", 0); got != "plain\ntext" {
		t.Fatalf("plain: %q", got)
	}
}

func TestSanitizeNoAlloc(t *testing.T) {
	ascii := "2026-11-22T10:04:05.123Z INFO GET /api/v1/items 200 12ms"
	utf := "Grüße, 日本語 — ok"
	for _, s := range []string{ascii, utf} {
		if n := testing.AllocsPerRun(100, func() { Log(s, 1000) }); n != 0 {
			t.Errorf("Log(%q) allocates %v times", s, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Text(ascii+"\n"+ascii, 1000) }); n > 1 {
		t.Errorf("SanitizeText allocates %v times", n)
	}
}

// checkSafe asserts the output contract of Sanitize.
func checkSafe(t *testing.T, out string, maxLen int) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8: %q", out)
	}
	if maxLen > 0 && utf8.RuneCountInString(out) > maxLen {
		t.Fatalf("%d runes > %d: %q", utf8.RuneCountInString(out), maxLen, out)
	}
	for _, r := range out {
		switch {
		case r < 0x20 || r == 0x7f:
			t.Fatalf("control %U in %q", r, out)
		case 0x80 <= r && r <= 0x9f:
			t.Fatalf("C1 %U in %q", r, out)
		case isHiddenRune(r):
			t.Fatalf("hidden %U in %q", r, out)
		}
	}
}

func BenchmarkSanitizeASCII(b *testing.B) {
	s := strings.Repeat("2026-11-22 INFO GET /api 200 ", 3)[:80]
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Log(s, 500)
	}
}

func BenchmarkSanitizeANSI(b *testing.B) {
	s := "\x1b[32m✓\x1b[0m test passed \x1b[2m(12ms)\x1b[0m\tdone\r\x1b]0;title\x07 ok 日本語"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Log(s, 500)
	}
}

// BenchmarkSanitizeUTF8: a line of mostly non-ASCII text (CJK, accents,
// symbols), every rune through the non-ASCII path.
func BenchmarkSanitizeUTF8(b *testing.B) {
	s := "テストは成功しました ✓ résumé naïve — 日本語のログ行 (12ms) données reçues ✗ 失败"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Log(s, 500)
	}
}
