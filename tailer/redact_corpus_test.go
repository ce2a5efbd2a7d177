package tailer_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
)

// The redaction corpus (docs/contract.md "Background jobs: Live, redacted log", bench/README.md Secrets): one secret of each kind in
// each position a real log puts it, written by the real pump through the
// rotating writer, then read back from disk and through every reader (Tail,
// Follow, TailChars). No secret may survive anywhere; commit SHAs and UUIDs
// must. Fixtures are assembled from pieces so that this file does not trip
// secret scanners.

// corpusKind is one J4 secret kind. prefixed kinds are recognised by their
// shape alone, anywhere at a word start; the others only where a key, an
// auth scheme or a URL's userinfo says they are secrets.
type corpusKind struct {
	name     string
	secret   string
	prefixed bool
	// text is what the log prints when it is more than the secret (a
	// webhook URL whose secret is its path); "" means secret.
	text string
}

var corpusKinds = []corpusKind{
	{"anthropic", "sk-" + "ant-api03-" + strings.Repeat("Ab3x", 10), true, ""},
	{"openai project", "sk-" + "proj-" + strings.Repeat("Zq9_", 6), true, ""},
	{"github classic", "gh" + "p_" + strings.Repeat("aB3d", 9), true, ""},
	{"github server", "gh" + "s_" + strings.Repeat("Qw7e", 9), true, ""},
	{"github fine-grained", "github" + "_pat_" + "11ABCDEFG0" + strings.Repeat("x_Y1", 8), true, ""},
	{"slack bot", "xo" + "xb-" + "123456789012-1234567890123-abcdefABCDEF", true, ""},
	{"aws access key", "AK" + "IA" + "IOSFODNN7EXAMPLE", true, ""},
	{"aws session key", "AS" + "IA" + "Q3EGQEXAMPLE1234", true, ""},
	{"stripe live", "sk" + "_live_" + "51HxYzAbCdEfGhIjK", true, ""},
	{"stripe restricted", "rk" + "_test_" + "51HxYzAbCdEfGhIjK", true, ""},
	{"webhook secret", "wh" + "sec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true, ""},
	{"google api key", "AI" + "za" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", true, ""},
	{"npm", "np" + "m_" + strings.Repeat("a1B2c3", 6), true, ""},
	{"pypi", "py" + "pi-" + "AgEIcHlwaS5vcmcCJDU3NmM4Y2Y0LWE1", true, ""},
	{"jwt", "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." +
		"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", true, ""},
	{"opaque value", "hunter2-Opaque-9f8e7d6c5b4aZ", false, ""},
	{"slack webhook", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", true,
		"https://hooks." + "slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
}

// corpusPEM is a private key as a program prints it, on its own lines and
// as one JSON-escaped line; corpusPEMBody are the parts that must vanish.
var (
	corpusPEMBody = []string{
		"MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MaQ7bEGn",
		"kZ3VS5JJcds3xfn+ygWyF8PbnGy0AHB7MaQ7bEGnXtZk0Q==",
	}
	corpusPEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + corpusPEMBody[0] + "\n" +
		"Proc-Type: 4,ENCRYPTED\n" + corpusPEMBody[1] + "\n-----END RSA " + "PRIVATE KEY-----\n" +
		`{"private_key": "-----BEGIN ` + `PRIVATE KEY-----\\n` + corpusPEMBody[0] + `\\n-----END PRIVATE KEY-----\\n"}` + "\n"
)

// corpusPosition is where a log line puts a secret: the line with %s for it.
// keyed positions redact any value (key/value, Bearer, URL password); the
// others only prefixed kinds.
type corpusPosition struct {
	name   string
	format string
	keyed  bool
}

var corpusPositions = []corpusPosition{
	{"alone", "%s", false},
	{"line start", "%s is the value", false},
	{"line end", "using the value %s", false},
	{"CRLF line end", "using %s\r", false},
	{"in parentheses", "(%s)", false},
	{"url user (git remote set-url)", "git remote set-url origin https://%s@github.com/o/r.git", false},
	{"url user with password", "https://%s:x-oauth-basic@github.com/o/r.git", false},
	{"url password", "Cloning into 'r'... https://x-access-token:%s@github.com/o/r.git", true},
	{"url password of a database", "DATABASE_URL=postgres://app:%s@db.internal:5432/app", true},
	{"query string, secret key", "GET https://api.example.com/v1/items?access_token=%s&page=2", true},
	{"query string, plain key", "GET https://maps.example.com/v1?q=1&key=%s", false},
	{"query string, last", "POST /hook?token=%s", true},
	{"after = unquoted", "export GITHUB_TOKEN=%s", true},
	{"after = double quoted", `API_KEY="%s"`, true},
	{"after = single quoted", `client_secret='%s'`, true},
	{"after :", "password: %s", true},
	{"after : quoted", `refresh_token: "%s"`, true},
	{"after :=", "token := %s", true},
	{"after := quoted", `secret := "%s"`, true},
	{"after Bearer", "sent Bearer %s to the api", true},
	{"Authorization header", "Authorization: Bearer %s", true},
	{"curl header", `curl -H "Authorization: Bearer %s" https://api.example.com`, true},
	{"JSON string, secret key", `{"api_key":"%s","n":1}`, true},
	{"JSON string, plain key", `{"data": "%s", "ok": true}`, false},
	{"escaped JSON", `msg="{\"access_token\":\"%s\"}"`, true},
	{"after : without blank", "password:%s", true},
	{"command-line flag", "run --api-token=%s --verbose", true},
	{"flag with a blank", "gh auth login --with-token %s", false},
	{"header", "X-Api-Key: %s", true},
	{"token auth scheme", "Authorization: token %s", true},
	{"YAML quoted", `  api_key: "%s"`, true},
	{"env with semicolon", "TOKEN=%s; export TOKEN", true},
	{"url user after =", "remote=https://%s@github.com/o/r.git", false},
	{"url user in quotes", `url = "https://%s@github.com/o/r.git"`, false},
	{"tab separated", "token	%s", false},
	{"ANSI colour around", "\x1b[31m%s\x1b[0m", false},
	{"ANSI colour before key", "\x1b[1;33mWARN\x1b[0m token=\x1b[32m%s\x1b[0m", true},
	{"ANSI colour inside", "\x1b[2mkey \x1b[0m%s\x1b[0m end", false},
}

// corpusKeep must stay as they are: commit SHAs and UUIDs are not secrets.
var corpusKeep = []string{
	"3f786850e387550fdab836ed7e6dc881de23001b",
	"0190c2a4-7b7e-7c3a-9d2e-1f2a3b4c5d6e",
	"9c1185a5c5e9fc54612808977ee8f548b2258d31",
}

// corpusInput is the corpus: one line per (kind, position) where J4 applies,
// and lines holding the values to keep.
func corpusInput() (in string, secrets []string, lines int) {
	var b strings.Builder
	for _, k := range corpusKinds {
		text := k.text
		if text == "" {
			text = k.secret
		}
		for _, p := range corpusPositions {
			if !k.prefixed && !p.keyed || k.text != "" && strings.HasPrefix(p.name, "url user") {
				continue
			}
			fmt.Fprintf(&b, p.format+"\n", text)
			lines++
		}
		secrets = append(secrets, k.secret)
	}
	b.WriteString(corpusPEM)
	lines += strings.Count(corpusPEM, "\n")
	secrets = append(secrets, corpusPEMBody...)
	for _, s := range []string{
		"commit %s merged into main",
		"HEAD is now at %s",
		"task %s started",
		`{"id":"%s","sha":"deadbeef"}`,
		"https://github.com/o/r/commit/%s?token_count=5",
	} {
		for _, k := range corpusKeep {
			fmt.Fprintf(&b, s+"\n", k)
			lines++
		}
	}
	return b.String(), secrets, lines
}

// leaked returns a 10-byte piece of a secret found in text, or "".
func leaked(text string, secrets []string) string {
	for _, s := range secrets {
		for k := 0; k+10 <= len(s); k++ {
			if strings.Contains(text, s[k:k+10]) {
				return s[k : k+10]
			}
		}
	}
	return ""
}

func TestRedactionCorpus(t *testing.T) {
	in, secrets, nlines := corpusInput()
	dir := t.TempDir()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Both streams: stdout as it is, stderr with its prefix.
	for _, prefix := range []string{"", redact.StderrPrefix} {
		if _, err := tailer.Pump(strings.NewReader(in), w, prefix); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(filepath.Join(dir, tailer.CurrentLog))
	if err != nil {
		t.Fatal(err)
	}

	tail, err := tailer.Tail(dir, tailer.TailOptions{Lines: 4 * nlines})
	if err != nil {
		t.Fatal(err)
	}
	chars, err := tailer.TailChars(dir, len(disk))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fl, err := tailer.Follow(ctx, dir, tailer.FollowOptions{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	fl.StopAtEOF()
	var followed strings.Builder
	for batch := range fl.C() {
		for _, l := range batch {
			followed.WriteString(l.Text + "\n")
		}
	}
	if err := fl.Err(); err != nil {
		t.Fatal(err)
	}

	for _, out := range []struct{ name, text string }{
		{"disk", string(disk)},
		{"Tail", tail.Text()},
		{"TailChars", chars},
		{"Follow", followed.String()},
	} {
		if got := strings.Count(out.text, "\n"); got < 2*nlines-1 {
			t.Errorf("%s: %d lines, want %d", out.name, got, 2*nlines)
		}
		for _, line := range strings.Split(out.text, "\n") {
			if piece := leaked(line, secrets); piece != "" {
				t.Errorf("%s: secret %q survives in %q", out.name, piece, line)
			}
		}
		for _, k := range corpusKeep {
			if n := strings.Count(out.text, k); n != 2*5 {
				t.Errorf("%s: %s appears %d times, want 10", out.name, k, n)
			}
		}
	}
}

// A secret near the 64 KiB line split is redacted on both sides of the cut
// (docs/contract.md "Background jobs: Live, redacted log", docs/contract.md "Background jobs: Live, redacted log"), wherever the cut falls in it, on both streams and whether
// the line arrives at once or in small reads. The split is made in the
// redacted output, so a line that redaction shortens may fit in one.
func TestPumpRedactsSecretCutBySplit(t *testing.T) {
	for _, k := range corpusKinds {
		texts := []string{"token=" + k.secret, "Authorization: Bearer " + k.secret, "https://u:" + k.secret + "@h/"}
		if k.text != "" { // a webhook URL: its path is the secret
			texts = []string{k.text, "url=" + k.text}
		}
		for _, text := range texts {
			for _, prefix := range []string{"", redact.StderrPrefix} {
				maxContent := tailer.DefaultMaxLine - len(prefix)
				for _, back := range []int{1, 3, 7, len(text) / 2, len(text) - 1} {
					line := strings.Repeat("a", maxContent-back-1) + " " + text + " tail\n"
					for _, chunk := range []int{0, 4096} {
						m := &memSink{}
						var r = strings.NewReader(line)
						var err error
						if chunk > 0 {
							_, err = tailer.Pump(&chunkReader{s: line, n: chunk}, m, prefix)
						} else {
							_, err = tailer.Pump(r, m, prefix)
						}
						if err != nil {
							t.Fatal(err)
						}
						if len(m.lines) < 1 || len(m.lines) > 2 {
							t.Fatalf("%s cut %d back: %d lines, want 1 or 2", text, back, len(m.lines))
						}
						for _, l := range m.lines {
							if len(l) > tailer.DefaultMaxLine {
								t.Errorf("%s cut %d back: a line of %d bytes", text, back, len(l))
							}
							if piece := leaked(l, []string{k.secret}); piece != "" {
								t.Errorf("%s (prefix %q) cut %d bytes in, reads of %d: %q survives in …%q",
									k.name, prefix, back, chunk, piece, l[max(0, len(l)-80):])
							}
						}
						var joined strings.Builder
						for _, l := range m.lines {
							joined.WriteString(strings.TrimPrefix(l, prefix))
						}
						if j := joined.String(); !strings.HasSuffix(j, " tail") || !strings.HasPrefix(j, "aaaa") {
							t.Errorf("%s cut %d back: text around the secret lost: …%q", text, back, j[max(0, len(j)-60):])
						}
					}
				}
			}
		}
	}
}

// chunkReader returns s in reads of at most n bytes.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
