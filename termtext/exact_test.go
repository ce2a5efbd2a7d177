package termtext

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExact(t *testing.T) {
	tests := []struct {
		name, in, want string
		max            int
	}{
		{"plain", "git log --oneline -n 20", "git log --oneline -n 20", 0},
		{"utf8 kept", "Grüße 日本語 🙂", "Grüße 日本語 🙂", 0},
		{"cr spoof", "rm -rf ~ #\rgit log --oneline -n 20", "rm -rf ~ #␍git log --oneline -n 20", 0},
		{"backspace spoof", "rm -rf ~\b\b\b\b\b\b\b\bls -la  ", "rm -rf ~␈␈␈␈␈␈␈␈ls -la  ", 0},
		{"newline", "a\nCommand: b", "a␊Command: b", 0},
		{"crlf tab", "a\r\n\tb", "a␍␊␉b", 0},
		{"nul del bel", "a\x00b\x7fc\a", "a␀b␡c␇", 0},
		{"escape sequence inert", "\x1b[2Jx\x1b]0;t\x07", "␛[2Jx␛]0;t␇", 0},
		{"c1 runes", "a\u009b31m\u0085b", "a<U+009B>31m<U+0085>b", 0},
		{"raw c1 bytes", "a\x9b31m\x85b", "a<0x9B>31m<0x85>b", 0},
		{"invalid", "a\xffb\xe2\x82", "a<0xFF>b<0xE2><0x82>", 0},
		{"bidi", "a\u202eevil\u202c\u2066x\u2069\u200e\u200f\u061c", "a<U+202E>evil<U+202C><U+2066>x<U+2069><U+200E><U+200F><U+061C>", 0},
		{"zero width", "a\u200bb\u200cc\u200dd\u2060e\ufeff", "a<U+200B>b<U+200C>c<U+200D>d<U+2060>e<U+FEFF>", 0},
		{"tags", "a\U000E0041b", "a<U+E0041>b", 0},
		{"nbsp and separators", "rm\u00a0-rf\u2028x\u3000", "rm<U+00A0>-rf<U+2028>x<U+3000>", 0},
		{"soft hyphen, hangul filler, vs16", "a\u00adb\u3164c\ufe0f", "a<U+00AD>b<U+3164>c<U+FE0F>", 0},
		{"real fffd kept", "a\ufffdb", "a\ufffdb", 0},
		{"cap", "abc\rdefgh", "abc␍de…", 7},
		{"cap ascii", "abcdefgh", "abcd…", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Exact(tt.in, tt.max)
			if got != tt.want {
				t.Fatalf("Exact(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if again := Exact(got, tt.max); again != got {
				t.Fatalf("not idempotent: %q → %q", got, again)
			}
			if HasHidden(tt.in) != (Exact(tt.in, 0) != tt.in) {
				t.Fatalf("HasHidden(%q) = %v disagrees with Exact", tt.in, HasHidden(tt.in))
			}
		})
	}
}

func TestExactText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"one line", "one line"},
		{"a\nb", "a␊\nb"},
		{"a\r\nb\rc", "a␍␊\nb␍c"},
		{"end\n", "end␊\n"},
		{"x\u202e\ny", "x<U+202E>␊\ny"},
	}
	for _, tt := range tests {
		got := ExactText(tt.in, 0)
		if got != tt.want {
			t.Errorf("ExactText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := ExactText(got, 0); again != got {
			t.Errorf("ExactText not idempotent: %q → %q", got, again)
		}
	}
}

// decodeExact reverses Exact for inputs without control pictures or
// "<U+"/"<0x" text of their own (the test's witness that the rendering is
// lossless).
func decodeExact(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= 0x2400 && r <= 0x241f:
			b.WriteByte(byte(r - 0x2400))
		case r == 0x2421:
			b.WriteByte(0x7f)
		case strings.HasPrefix(s[i:], "<U+"), strings.HasPrefix(s[i:], "<0x"):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+3:i+end], 16, 32)
			if err != nil {
				return "", false
			}
			if s[i+1] == 'U' {
				b.WriteRune(rune(n))
			} else {
				b.WriteByte(byte(n))
			}
			size = end + 1
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String(), true
}

// FuzzExact: whatever the input, no C0, C1, DEL, bidi, zero-width or other
// hidden character survives Exact or ExactText, the output is valid UTF-8,
// the renderings are idempotent, and — for inputs without control pictures
// or "<U+"/"<0x" of their own — Exact is lossless (decodeExact gives the
// input back), so two different inputs never render the same.
func FuzzExact(f *testing.F) {
	for _, s := range []string{"", "git log", "rm -rf ~ #\rgit log --oneline -n 20", "a\b\bb", "x\u202ey\u2066",
		"\u200b\u200c\u200d\u2060\ufeff", "\x9b31m\u009b", "\x1b]52;c;eA==\x07", "a\nCommand: b\r\n", "\xff\xfe",
		"\U000E0041\u00a0\u3164", "日本\t語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Exact(s, 0), ExactText(s, 0)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
			}
			for _, r := range out {
				if r == '\n' && out != Exact(s, 0) {
					continue // ExactText's own line breaks, each after a ␊
				}
				if r < 0x20 || r == 0x7f || IsHiddenExact(r) {
					t.Fatalf("%U survived in %q (from %q)", r, out, s)
				}
			}
		}
		if got := Exact(Exact(s, 0), 0); got != Exact(s, 0) {
			t.Fatalf("Exact not idempotent on %q", s)
		}
		if got := ExactText(ExactText(s, 0), 0); got != ExactText(s, 0) {
			t.Fatalf("ExactText not idempotent on %q", s)
		}
		if strings.Contains(s, "<U+") || strings.Contains(s, "<0x") || strings.ContainsFunc(s, func(r rune) bool {
			return (r >= 0x2400 && r <= 0x241f) || r == 0x2421
		}) {
			return
		}
		back, ok := decodeExact(Exact(s, 0))
		if !ok || back != s {
			t.Fatalf("Exact(%q) = %q decodes to %q (ok %v)", s, Exact(s, 0), back, ok)
		}
		if c := Exact(s, 10); utf8.RuneCountInString(c) > 10 {
			t.Fatalf("Exact(%q, 10) = %q: over the cap", s, c)
		}
	})
}

// FuzzEscapeJSON: whatever string is encoded, EscapeJSON leaves valid JSON
// that decodes to the same string, with no DEL, C1, bidi or zero-width
// character raw.
func FuzzEscapeJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "\u009b31m\u007f", "a\u202eb\u2066c\u200b\ufeff", "\U000E0041x", "\xff\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		e := EscapeJSON(b)
		var back string
		if err := json.Unmarshal(e, &back); err != nil {
			t.Fatalf("EscapeJSON(%s) = %s: %v", b, e, err)
		}
		var want string
		_ = json.Unmarshal(b, &want)
		if back != want {
			t.Fatalf("EscapeJSON changed the value: %q → %q", want, back)
		}
		for _, r := range string(e) {
			if r == 0x7f || IsHiddenExact(r) {
				t.Fatalf("%U raw in %s", r, e)
			}
		}
	})
}

func TestEscapeJSON(t *testing.T) {
	in := []byte("{\"a\":\"x\u009by\u202ez\u007f\U000E0041\",\"b\":\"日本\"}")
	want := `{"a":"x\u009by\u202ez\u007f\udb40\udc41","b":"日本"}`
	if got := string(EscapeJSON(in)); got != want {
		t.Fatalf("EscapeJSON = %s, want %s", got, want)
	}
	plain := []byte(`{"a":"b"}`)
	if got := EscapeJSON(plain); &got[0] != &plain[0] {
		t.Fatal("EscapeJSON copied plain JSON")
	}
}
