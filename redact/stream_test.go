package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// streamFeed writes line to s in pieces of random sizes (1..maxChunk) and
// ends it; it returns the output.
func streamFeed(s *Stream, line []byte, rng *rand.Rand, maxChunk int) []byte {
	var out []byte
	for len(line) > 0 {
		k := min(len(line), 1+rng.IntN(maxChunk))
		out = s.Write(out, line[:k])
		line = line[k:]
	}
	return s.EndLine(out)
}

// secretAlphabet: the bytes of planted secret bodies; no fixture text around
// them and no Redacted marker holds any of them, so a leak is any of them in
// the output beyond the rule's own prefix.
const secretAlphabet = "QZ7"

func secretBody(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = secretAlphabet[rng.IntN(len(secretAlphabet))]
	}
	return string(b)
}

func countSecretBytes(b []byte) int {
	n := 0
	for _, c := range b {
		if strings.IndexByte(secretAlphabet, c) >= 0 {
			n++
		}
	}
	return n
}

// streamShapes are the rules whose secret has no length bound, as a line
// fragment around a body of n secret bytes. allowed is how many secret
// alphabet bytes the kept part (key, prefix) may show.
var streamShapes = []struct {
	name    string
	make    func(body string) string
	allowed int
	min     int // shortest body the rule takes for a secret
}{
	{"env", func(s string) string { return "password=" + s + " tail" }, 0, 1},
	{"yaml", func(s string) string { return "db_password:   " + s }, 0, 1},
	{"json", func(s string) string { return `{"api_key": "` + s + `", "user": "bob"}` }, 0, 1},
	{"json escaped", func(s string) string { return `msg="{\"client_secret\":\"` + s + `\"}"` }, 0, 1},
	{"header bearer", func(s string) string { return "Authorization: Bearer " + s + " x" }, 0, 1},
	{"bearer", func(s string) string { return "sent Bearer " + s + "== ok" }, 0, 16},
	{"url", func(s string) string { return "postgres://app:" + s + "@db:5432/x ok" }, 0, 1},
	{"sk", func(s string) string { return "key sk-ant-" + s + " used" }, 0, 16},
	{"ghp", func(s string) string { return "gh" + "p_" + s + " used" }, 0, 30},
	{"hf", func(s string) string { return "hf" + "_" + s + " used" }, 0, 30},
	{"glpat", func(s string) string { return "gl" + "pat-" + s + " used" }, 0, 20},
	{"jwt payload", func(s string) string { return "jwt ey" + "JhbGciOiJIUzI1NiJ9." + s + ".sig end" }, 0, 2},
	{"jwt header", func(s string) string { return "jwt ey" + "J" + s + ".eyJzdWIiOjF9.sig end" }, 0, 9},
	{"pem", func(s string) string {
		return `"k": "-----BEGIN RSA ` + `PRIVATE KEY-----\n` + s + `\n-----END RSA PRIVATE KEY-----\n" ok`
	}, 0, 1},
	{"curl -u", func(s string) string { return "curl -u admin:" + s + " https://x" }, 0, 1},
	{"flag", func(s string) string { return "tool --password '" + s + "' --verbose" }, 0, 1},
	{"key far from value", func(s string) string { return "token=" + strings.Repeat(" ", 9000) + s }, 0, 1},
	{"url long user", func(s string) string { return "postgres://" + strings.Repeat("u", 3000) + ":" + s + "@db/x" }, 0, 1},
	{"pem dashes", func(s string) string {
		return "-----BEGIN " + "PRIVATE KEY-----" + strings.Repeat("-", 5000) + s + "-----END PRIVATE KEY-----"
	}, 0, 1},
	{"bearer far from token", func(s string) string { return "Authorization: Bearer" + strings.Repeat(" ", 9000) + s }, 0, 1},
}

// TestStreamLongSecrets: a secret of any length at any offset of a line,
// fed in pieces of any size, never survives (issue 24 item 7).
func TestStreamLongSecrets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{1, 2, 15, 40, 1000, 4095, 4096, 4097, 20_000, 70_000, 100_000, 200_000}
	for _, sh := range streamShapes {
		for _, n := range lengths {
			if n < sh.min {
				continue
			}
			for trial := 0; trial < 3; trial++ {
				pad := rng.IntN(3 * StreamWindow)
				switch trial {
				case 0: // the shape starts at the end of the first piece
					pad = StreamWindow - streamAhead - 3 + rng.IntN(6)
				case 1: // the shape starts before the piece's end, its secret after it
					pad = StreamWindow - streamAhead - len(sh.make("")) + 1 + rng.IntN(6)
				}
				line := []byte(strings.Repeat("lorem ipsum ", pad/12+1)[:pad] + " " + sh.make(secretBody(rng, n)) + " after")
				for _, chunk := range []int{1 << 20, 1 + rng.IntN(9000), 7} {
					if chunk == 7 && len(line) > 150_000 {
						continue
					}
					out := streamFeed(Default().NewStream(), line, rng, chunk)
					if got := countSecretBytes(out); got > sh.allowed {
						i := bytes.IndexAny(out, secretAlphabet)
						t.Fatalf("%s: body %d at %d, chunks ≤%d: %d secret bytes kept, first at %d: …%q…",
							sh.name, n, pad, chunk, got, i, out[max(0, i-40):min(len(out), i+40)])
					}
					if !bytes.HasSuffix(out, []byte(" after")) {
						t.Fatalf("%s: body %d at %d: text after the secret lost: …%q", sh.name, n, pad, out[max(0, len(out)-60):])
					}
				}
			}
		}
	}
}

// A line that fits in StreamWindow comes out exactly as LineRedactor.Line
// makes it, PEM state included, however it is cut; a longer one comes out the
// same whatever the pieces.
func TestStreamSameAsLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lines := []string{"start", fxPEM, "after password=x", "token=" + fxSkAnt, "plain text", ""}
	for trial := 0; trial < 20; trial++ {
		lr := Default().NewLineRedactor()
		st := Default().NewStream()
		for _, l := range strings.Split(strings.Join(lines, "\n"), "\n") {
			want := string(lr.Line([]byte(l)))
			if got := string(streamFeed(st, []byte(l), rng, 1+rng.IntN(10))); got != want {
				t.Fatalf("Stream %q = %q, LineRedactor %q", l, got, want)
			}
		}
	}
	long := []byte(strings.Repeat("x password=abc "+fxJWT+" Bearer "+strings.Repeat("Q", 3000)+" ", 200))
	want := streamFeed(Default().NewStream(), long, rng, len(long))
	for _, chunk := range []int{1, 3, 1000, 65536} {
		if got := streamFeed(Default().NewStream(), long, rng, chunk); !bytes.Equal(got, want) {
			t.Fatalf("chunks ≤%d: output differs", chunk)
		}
	}
	if countSecretBytes(want) != 0 || bytes.Contains(want, []byte("abc ")) {
		t.Fatalf("long line leaked")
	}
}

// An endless line streams in bounded memory: the buffer never grows past
// StreamWindow, and output is written as the line arrives.
func TestStreamBoundedMemory(t *testing.T) {
	for _, head := range []string{"", "password=", "-----BEGIN PRIVATE " + "KEY-----", "Bearer "} {
		st := Default().NewStream()
		chunk := []byte(strings.Repeat("QZ7", 21000)) // one secret, ~12 MB in all
		if head == "" {
			chunk = []byte(strings.Repeat("lorem ipsum ", 5000))
		}
		var out []byte
		out = st.Write(out, []byte(head))
		written := 0
		for i := 0; i < 200; i++ { // ~12 MB
			out = st.Write(out[:0], chunk)
			written += len(out)
			if cap(st.buf) > StreamWindow {
				t.Fatalf("%q: buffer grew to %d", head, cap(st.buf))
			}
		}
		if head == "" && written < 190*len(chunk) {
			t.Fatalf("clean line: only %d bytes written so far", written)
		}
		if allocs := testing.AllocsPerRun(20, func() { out = st.Write(out[:0], chunk) }); allocs > 0 {
			t.Fatalf("%q: %v allocations per piece", head, allocs)
		}
		if head != "" && countSecretBytes(st.EndLine(out[:0])) > 0 {
			t.Fatalf("%q: secret kept", head)
		}
	}
}

// FuzzRedactStream: a secret planted at any offset of a line of any length,
// fed in pieces of any sizes, never survives.
func FuzzRedactStream(f *testing.F) {
	f.Add(uint16(0), uint32(0), uint32(0), uint64(1), "")
	f.Add(uint16(3), uint32(StreamWindow-streamAhead-2), uint32(20_000), uint64(7), "x=1 ")
	f.Add(uint16(13), uint32(65536-8192), uint32(100_000), uint64(9), `{"a": "b"} `)
	f.Add(uint16(5), uint32(70_000), uint32(12_000), uint64(11), "token ")
	f.Fuzz(func(t *testing.T, shape uint16, off, n uint32, seed uint64, filler string) {
		sh := streamShapes[int(shape)%len(streamShapes)]
		n = max(n%200_001, uint32(sh.min))
		off %= 3 * StreamWindow
		if filler == "" || strings.ContainsAny(filler, secretAlphabet+"\n") {
			filler = "lorem ipsum "
		}
		rng := rand.New(rand.NewPCG(seed, uint64(off)))
		pad := strings.Repeat(filler, int(off)/len(filler)+1)[:off]
		line := []byte(pad + " " + sh.make(secretBody(rng, int(n))) + " after")
		out := streamFeed(Default().NewStream(), line, rng, 1+int(seed%70_000))
		if whole := streamFeed(Default().NewStream(), line, rng, len(line)+1); !bytes.Equal(out, whole) {
			t.Fatalf("%s: the output depends on the pieces", sh.name)
		}
		if got := countSecretBytes(out); got > sh.allowed {
			i := bytes.IndexAny(out, secretAlphabet)
			t.Fatalf("%s: %d secret bytes kept: …%q…", sh.name, got, out[max(0, i-60):min(len(out), i+20)])
		}
	})
}

// A PEM block across lines whose body lines are too long to hold whole: each
// body line is masked, the END line ends the block, and a line of another
// shape ends it too.
func TestStreamPEMLongBodyLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	body := strings.Repeat("QZ7QZ7+/", 40_000) // 320 KB of base64
	st := Default().NewStream()
	lines := []string{"-----BEGIN RSA " + "PRIVATE KEY-----", body, body[:1000], body, "-----END RSA PRIVATE KEY-----", "after " + body[:30]}
	var got []string
	for _, l := range lines {
		got = append(got, string(streamFeed(st, []byte(l), rng, 1+rng.IntN(100_000))))
	}
	want := []string{lines[0], R, R, R, lines[4], "after " + body[:30]}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %.60q…, want %.60q", i, got[i], want[i])
		}
	}
	if st.InPEM() {
		t.Error("still in PEM after END")
	}
	// An unterminated block ends at the first line of another shape (as with
	// LineRedactor, that line is scanned by the rules, not swallowed).
	st = Default().NewStream()
	streamFeed(st, []byte(lines[0]), rng, 10)
	out := string(streamFeed(st, []byte(body+" done, then words "+strings.Repeat("x", 200_000)), rng, 50_000))
	if !strings.HasPrefix(out, R) || !strings.HasSuffix(out, ", then words "+strings.Repeat("x", 200_000)) || st.InPEM() {
		t.Errorf("a long line of another shape: %.40q…, in PEM %v", out, st.InPEM())
	}
	if out := string(streamFeed(st, []byte("normal line"), rng, 3)); out != "normal line" {
		t.Errorf("after the block: %q", out)
	}
}

// A key far before its value (a long URL user name, a rule of dashes after
// BEGIN, thousands of blanks), with the value starting right around the end
// of the first piece a long line is cut into: the value is still masked.
func TestStreamKeyFarBeforeValue(t *testing.T) {
	for _, sh := range []struct{ pre, post string }{
		{"postgres://" + strings.Repeat("u", 3000) + ":", "@db/x"},
		{"-----BEGIN " + "PRIVATE KEY-----" + strings.Repeat("-", 5000), "-----END PRIVATE KEY-----"},
		{"token=" + strings.Repeat(" ", 5000), ""},
		{`"secret":` + strings.Repeat("\t", 5000) + `"`, `"`},
		{"Authorization: Bearer" + strings.Repeat(" ", 5000), ""},
		{"mysqldump --password" + strings.Repeat(" ", 5000), ""},
	} {
		pre := sh.pre
		for _, n := range []int{9, 5000, 200_000} {
			for d := -8; d <= 8; d++ {
				start := StreamWindow - streamAhead + d // where the value starts
				pad := strings.Repeat("x ", start)[:start-len(pre)]
				line := pad + pre + strings.Repeat("QZ7", n/3) + sh.post + " after" + strings.Repeat(" y", 5000)
				st := Default().NewStream()
				if out := st.EndLine(st.Write(nil, []byte(line))); countSecretBytes(out) > 0 {
					i := bytes.IndexAny(out, secretAlphabet)
					t.Errorf("%.20q…, %d-byte value at %+d: kept: …%q", pre, n, d, out[max(0, i-30):i+10])
				}
			}
		}
	}
}
