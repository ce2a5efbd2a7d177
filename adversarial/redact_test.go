package adversarial

// No secret survives into a log (issue 24 item 7): long lines, every token
// kind, and an MCP tool input clipped for an approval. Each test drives the
// real binary: a `clawpit job run` whose command prints the lines, then the
// job's log files, `job tail` and `job follow`; or `clawpit hook` with a
// PreToolUse payload, then `approval list`.
//
// Fixtures are assembled from pieces so that this file does not trip secret
// scanners.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tailer"
)

// redactAlphabet is what planted long secrets are made of: no other byte the
// tests print, no key, no Redacted marker, no clawpit line holds one of these
// letters, so any of them in an output is a leaked secret byte.
const redactAlphabet = "QZX"

// redactBody is n bytes of redactAlphabet, varied (an LCG on seed).
func redactBody(n int, seed uint32) string {
	b := make([]byte, n)
	for i := range b {
		seed = seed*1664525 + 1013904223
		b[i] = redactAlphabet[seed>>16%uint32(len(redactAlphabet))]
	}
	return string(b)
}

// redactShape is one way a long secret sits on a line: prefix (the key, or
// the token's own prefix: it stays readable) + body + suffix.
type redactShape struct {
	name, prefix, suffix string
}

var redactLongShapes = []redactShape{
	{"env password", "password=", " tail"},
	{"json value", `{"api_key": "`, `", "user": "bob"}`},
	{"bearer header", "Authorization: Bearer ", " x"},
	{"jwt payload", "jwt ey" + "JhbGciOiJIUzI1NiJ9.", ".c2ln end"},
	{"pem one line", `"key": "-----BEGIN RSA ` + `PRIVATE KEY-----\n`, `\n-----END RSA PRIVATE KEY-----\n" ok`},
	{"url password", "postgres://app:", "@db:5432/x"},
	{"curl -u", "curl -u admin:", " https://api.example.com"},
	{"password flag", "mysqldump --password ", " --all-databases"},
}

// The old pump cut a stdout line every 64 KiB and let the redactor see 8 KiB
// past each cut: these are the places a secret must be tried around.
const (
	redactOldCut     = tailer.DefaultMaxLine
	redactOldOverlap = 8 << 10
)

// redactLongCase is one line: case marker, filler up to the secret's place,
// the secret, " after".
type redactLongCase struct {
	label string
	line  string
}

// redactLongCases places a body of n bytes in shape sh around the old cuts:
// the body starting at each cut ±3 bytes, the key cut in two by it, the key
// at the end of the old overlap ±3, and the body ending there ±3. When
// second is set, the body also starts around the second cut.
func redactLongCases(sh redactShape, n int, second bool, seed *uint32) []redactLongCase {
	var starts []int // where the body starts
	for d := -3; d <= 3; d++ {
		starts = append(starts,
			redactOldCut+d,
			redactOldCut+redactOldOverlap+d,
			redactOldCut+redactOldOverlap-len(sh.prefix)+d,
			redactOldCut+redactOldOverlap-n+d,
		)
		if second {
			starts = append(starts, 2*redactOldCut+d)
		}
	}
	starts = append(starts, redactOldCut-2+len(sh.prefix)) // "pass|word="
	var out []redactLongCase
	for _, s := range starts {
		label := fmt.Sprintf("case-%04d", len(out))
		at := s - len(sh.prefix) // where the shape starts on the line
		head := label + " "
		if at < len(head)+1 {
			continue
		}
		filler := strings.Repeat("lorem ipsum ", at/12+1)[:at-len(head)-1] + " "
		*seed++
		out = append(out, redactLongCase{
			label: fmt.Sprintf("%s: %s, %d-byte secret at byte %d", label, sh.name, n, s),
			line:  head + filler + sh.prefix + redactBody(n, *seed) + sh.suffix + " after",
		})
	}
	return out
}

// redactOutputs are the places a job's output can be read: the log file as
// written, `job tail` and `job follow`.
func redactOutputs(t *testing.T, c interface{ OK(...string) string }, j core.Job) map[string]string {
	t.Helper()
	log, err := os.ReadFile(j.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(j.LogPath), tailer.RotatedLog)); err == nil {
		t.Fatal("the log rotated: the test reads one file")
	}
	return map[string]string{
		"log file":   string(log),
		"job tail":   c.OK("job", "tail", j.ID, "--lines", "1000000"),
		"job follow": c.OK("job", "follow", j.ID, "--from-start"),
	}
}

// redactByCase splits an output into the text of each "case-NNNN" line: a
// long line is written as several log lines, all until the next case.
func redactByCase(out string) map[string]string {
	m := map[string]string{}
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "case-") && len(l) >= 9 {
			cur = l[:9]
		}
		m[cur] += l
	}
	return m
}

// TestRedactLongLineSecrets: a secret of 10–100 KB on one line, at every
// offset around the old 64 KiB cut and its 8 KiB overlap, never reaches the
// log, `job tail` or `job follow` — not one byte of it beyond the key or
// prefix that names it — and the text after it is kept.
func TestRedactLongLineSecrets(t *testing.T) {
	t.Parallel()
	type group struct {
		shapes []redactShape
		n      int
		second bool
	}
	groups := []group{
		{redactLongShapes, 20_000, false},
		{[]redactShape{redactLongShapes[0], redactLongShapes[4]}, 100_000, true}, // 100 KB password, one-line PEM
		{[]redactShape{redactLongShapes[2]}, 10_000, false},                      // 10 KB bearer token
		{[]redactShape{redactLongShapes[3]}, 12_000, false},                      // 12 KB JWT
	}
	for gi, g := range groups {
		t.Run(fmt.Sprintf("%d bytes", g.n), func(t *testing.T) {
			var sb strings.Builder
			labels := map[string]string{}
			seed := uint32(gi)
			n := 0
			for _, sh := range g.shapes {
				for _, cs := range redactLongCases(sh, g.n, g.second, &seed) {
					// Renumber across shapes so markers stay unique.
					key := fmt.Sprintf("case-%04d", n)
					n++
					line := key + cs.line[9:]
					labels[key] = key + cs.label[9:]
					sb.WriteString(line + "\n")
				}
			}
			c := newCLI(t)
			c.Env = append(c.Env, core.EnvJobRotateBytes+"=1073741824")
			j := redactJobOn(t, c, sb.String())
			for where, out := range redactOutputs(t, c, j) {
				cases := redactByCase(out)
				failed := 0
				for key, label := range labels {
					text, ok := cases[key]
					switch {
					case !ok:
						t.Errorf("%s: %s: line missing", where, label)
					case strings.ContainsAny(text, redactAlphabet):
						i := strings.IndexAny(text, redactAlphabet)
						t.Errorf("%s: %s: %d secret bytes survive, first at %d: …%q…", where, label,
							strings.Count(text, "Q")+strings.Count(text, "Z")+strings.Count(text, "X"), i, text[max(0, i-50):min(len(text), i+20)])
					case !strings.HasSuffix(text, " after"):
						t.Errorf("%s: %s: the text after the secret is lost: …%q", where, label, text[max(0, len(text)-60):])
					default:
						continue
					}
					if failed++; failed >= 5 {
						t.Fatalf("%s: more failures not shown", where)
					}
				}
			}
		})
	}
}

// redactJobOn runs, with c, a job whose command prints text (from a file,
// with cat) and returns the job once it has ended.
func redactJobOn(t *testing.T, c interface{ OK(...string) string }, text string) core.Job {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var run struct {
		Job *core.Job `json:"job"`
	}
	if err := json.Unmarshal([]byte(c.OK("--json", "job", "run", "--session", "redact", "--", "cat", file)), &run); err != nil || run.Job == nil {
		t.Fatalf("job run: %v", err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var j core.Job
		if err := json.Unmarshal([]byte(c.OK("--json", "job", "status", run.Job.ID)), &j); err != nil {
			t.Fatal(err)
		}
		switch j.Status {
		case core.JobCompleted:
			return j
		case core.JobPending, core.JobRunning:
		default:
			t.Fatalf("job %s: %s", j.ID, j.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after 2 minutes", j.ID, j.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
