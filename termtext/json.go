package termtext

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// EscapeJSON rewrites JSON text (as encoding/json writes it) so that no
// character that can hide or reorder text on a terminal stays raw: DEL,
// the C1 controls U+0080–U+009F and every other rune Exact shows as
// "<U+XXXX>" (bidi controls and marks U+202A–U+202E, U+2066–U+2069,
// U+200E/F, U+061C; zero-width U+200B–U+200D, U+2060, U+FEFF; …) become
// "\uXXXX" escapes (a surrogate pair above U+FFFF). encoding/json already
// escapes C0 controls and U+2028/U+2029 but passes these through, so `jq`
// or a terminal showing --json output would let them act.
//
// Such characters can only occur inside JSON strings, where "\uXXXX" means
// the same character, so the decoded value is unchanged. b must hold whole
// UTF-8 sequences (one encoded value, as Encoder.Encode writes it);
// invalid bytes are left as they are. b itself is returned when nothing
// needs escaping.
func EscapeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x7f {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= 0x80 {
			r, size = utf8.DecodeRune(b[i:])
		}
		if c == 0x7f || (size > 1 && IsHiddenExact(r)) {
			if out == nil {
				out = make([]byte, 0, len(b)+32)
			}
			out = append(out, b[last:i]...)
			out = appendJSONEscape(out, r)
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func appendJSONEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		r -= 0x10000
		return fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
	}
	return fmt.Appendf(out, `\u%04x`, r)
}

// JSONWriter returns a writer that applies EscapeJSON to each Write before
// passing it to w. Each Write must hold whole UTF-8 sequences: it suits
// json.Encoder (one Write per value) and slog's JSON handler (one Write per
// record), not a writer that splits text at arbitrary bytes.
func JSONWriter(w io.Writer) io.Writer { return jsonWriter{w} }

type jsonWriter struct{ w io.Writer }

func (j jsonWriter) Write(b []byte) (int, error) {
	if _, err := j.w.Write(EscapeJSON(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
