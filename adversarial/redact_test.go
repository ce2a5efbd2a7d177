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
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/supervisor"
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
	{"url long user", "postgres://" + strings.Repeat("u", 3000) + ":", "@db:5432/x"},
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
// second is set, the body also starts around the second cut; otherwise
// around the points where the streaming redactor decides its first piece.
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
		} else {
			// Where today's streaming redactor decides a first piece.
			starts = append(starts, redact.StreamWindow-4<<10+d, redact.StreamWindow+d)
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
			c.Env = append(c.Env, supervisor.EnvJobRotateBytes+"=1073741824")
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

// redactTok builds a token: prefix (split by the caller, see above) + n
// bytes of alphabet, varied by prefix and n (an LCG), so no two fixtures
// share a run of bytes.
func redactTok(prefix, alphabet string, n int) string {
	seed := uint32(n)
	for _, c := range []byte(prefix + alphabet) {
		seed = seed*31 + uint32(c)
	}
	b := make([]byte, n)
	for i := range b {
		seed = seed*1664525 + 1013904223
		b[i] = alphabet[seed>>16%uint32(len(alphabet))]
	}
	return prefix + string(b)
}

const (
	redactAlnum = "aB3dE5fG7hJ9kLmNpQrStUvWxYz0"
	redactHex   = "0123456789abcdef"
	redactUpDig = "ABCDEFGHJKLMNPQRSTUVWXYZ2345"
	redactLower = "abcdefghijklmnopqrstuvwxyz"
)

// redactKinds are the token kinds of issue 24 and the gitleaks rules added
// with them: line is printed by the job, secret must not show in any part
// of 8 bytes or more.
var redactKinds = []struct{ name, line, secret string }{}

func init() {
	add := func(name, before, secret, after string) {
		redactKinds = append(redactKinds, struct{ name, line, secret string }{name, before + secret + after, secret})
	}
	for _, k := range []struct{ name, token string }{
		{"hugging face", redactTok("hf"+"_", redactLower, 34)},
		{"gitlab pat", redactTok("gl"+"pat-", redactAlnum+"_-", 20)},
		{"gitlab runner", redactTok("gl"+"rt-", redactAlnum, 20)},
		{"gitlab deploy", redactTok("gl"+"dt-", redactAlnum, 20)},
		{"sendgrid", redactTok("S"+"G.", redactAlnum, 22) + "." + redactTok("", redactAlnum+"-_", 43)},
		{"google oauth", redactTok("ya"+"29.", redactAlnum+"-_", 120)},
		{"twilio api key", redactTok("S"+"K", redactHex, 32)},
		{"digitalocean", redactTok("do"+"p_v1_", redactHex, 64)},
		{"shopify", redactTok("sh"+"pat_", redactHex, 32)},
		{"linear", redactTok("lin"+"_api_", redactAlnum, 40)},
		{"pulumi", redactTok("pu"+"l-", redactHex, 40)},
		{"vault", redactTok("hv"+"s.", redactAlnum+"_-", 95)},
		{"doppler", redactTok("dp"+".pt.", redactAlnum, 43)},
		{"postman", redactTok("PM"+"AK-", redactHex, 24) + "-" + redactTok("", redactHex, 34)},
		{"rubygems", redactTok("ruby"+"gems_", redactHex, 48)},
		{"planetscale", redactTok("pscale"+"_tkn_", redactAlnum, 43)},
		{"age", redactTok("AGE-SECRET"+"-KEY-1", redactUpDig, 58)},
		{"square", redactTok("sq"+"0atp-", redactAlnum+"_-", 22)},
		{"databricks", redactTok("da"+"pi", redactHex, 32)},
		{"grafana cloud", redactTok("gl"+"c_", redactAlnum, 40)},
		{"perplexity", redactTok("pp"+"lx-", redactAlnum, 48)},
		{"openshift", redactTok("sha"+"256~", redactAlnum+"_-", 43)},
		{"aws abia", redactTok("AB"+"IA", redactUpDig, 16)},
	} {
		add(k.name, "using ", k.token, " ok")
	}
	sid := redactTok("A"+"C", redactHex, 32)
	add("twilio sid:token", "curl https://api.twilio.com -u "+sid+":", redactTok("tw", redactHex, 32)[2:], " -d x")
	add("curl -u", "curl -u admin:", "s3cr3t-Pa55w0rd-xyz", " https://api.example.com")
	add("curl --user quoted", "curl --user 'deploy:", "h0pk1ns~21s-long", "' https://x")
	add("--password flag", "mysqldump --password ", "hunter2hunter2", " --all-databases")
	add("--api-key flag", "tool --api-key ", "k3y-v4lu3-0123456", " --verbose")
	add("-token flag", "app -token ", "t0k3n-v4lu3-0123", " run")
	add("mysql -p", "mysql -uroot -p", "S3cr3t-mysql-pw!", " shop")
	add("sshpass -p", "sshpass -p ", "ssh-pa55-w0rd-x", " ssh deploy@host")
}

// redactKeep are lines no rule may touch (decided: "-p" is a port or mkdir's
// parents flag, a password only after mysql, mariadb or sshpass; uid:gid is
// no user:password).
var redactKeep = []string{
	"docker run -p 8080:80 -u 1000:1000 img && ssh -p 22 host && mkdir -p /tmp/a/b",
	"commit 3f786850e387550fdab836ed7e6dc881de23001b merged",
	"task 0190c2a4-7b7e-7c3a-9d2e-1f2a3b4c5d6e started; git push -u origin main",
	"the tokenizer uses hf_hub_download; docker login --password-stdin",
}

// redactLeak returns the first part of secret (8 bytes or more) found in
// out, or "".
func redactLeak(out, secret string) string {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+8]) {
			return secret[i : i+8]
		}
	}
	return ""
}

// TestRedactTokenKinds: every token kind of issue 24 (Hugging Face, GitLab,
// SendGrid, Google OAuth, Twilio, curl -u, --password-style flags) and the
// gitleaks prefixes added with them, printed by a job, never reach its log,
// `job tail` or `job follow`; ordinary lines (ports, uid:gid, hashes, UUIDs)
// come out unchanged.
func TestRedactTokenKinds(t *testing.T) {
	t.Parallel()
	var sb strings.Builder
	for _, k := range redactKinds {
		sb.WriteString(k.line + "\n")
	}
	for _, l := range redactKeep {
		sb.WriteString(l + "\n")
	}
	c := newCLI(t)
	c.Env = append(c.Env, supervisor.EnvJobRotateBytes+"=1073741824")
	j := redactJobOn(t, c, sb.String())
	for where, out := range redactOutputs(t, c, j) {
		for _, k := range redactKinds {
			if piece := redactLeak(out, k.secret); piece != "" {
				t.Errorf("%s: %s: %q survives", where, k.name, piece)
			}
		}
		for _, l := range redactKeep {
			if !strings.Contains(out, l+"\n") && !strings.HasSuffix(out, l) {
				t.Errorf("%s: an ordinary line was changed; want %q", where, l)
			}
		}
	}
}

// TestRedactMCPInputClip: an MCP tool's input is shown in an approval as its
// compact JSON clipped to 2,000 bytes. A token that the clip cuts must be
// redacted whole before the clip: no part of it may reach the approval.
func TestRedactMCPInputClip(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.OK("session", "open", "mcp")
	const clipAt, head = 2000, `{"body":"`
	tokens := []string{
		redactTok("gh"+"p_", redactAlnum, 36),
		redactTok("sk-"+"ant-api03-", redactAlnum+"_-", 95),
		redactTok("hf"+"_", redactLower, 34),
		redactTok("AK"+"IA", redactUpDig, 16),
		"ey" + "JhbGciOiJIUzI1NiJ9." + redactTok("eyJ", redactAlnum, 40) + "." + redactTok("", redactAlnum, 43),
	}
	n := 0
	for _, tok := range tokens {
		for _, k := range []int{1, 2, 4, 5, 8, 12, 19, len(tok) / 2, len(tok) - 2, len(tok) - 1} {
			// The token starts k bytes before the clip.
			pad := strings.Repeat("w ", clipAt)[:clipAt-k-len(head)-1] + " "
			n++
			payload, err := json.Marshal(map[string]any{
				"session_id": "mcp", "hook_event_name": "PreToolUse", "tool_name": "mcp__tracker__create_issue",
				"cwd": "/tmp", "tool_use_id": fmt.Sprintf("toolu_%03d", n),
				"tool_input": map[string]string{"body": pad + tok + " and more text after the token"},
			})
			if err != nil {
				t.Fatal(err)
			}
			o := c.RunIn(strings.NewReader(string(payload)), "hook", "--gated", "--approval-timeout", "100ms")
			if !strings.Contains(o.Stdout, `"deny"`) {
				t.Fatalf("hook: %s", o)
			}
		}
	}
	var aps []core.Approval
	if err := json.Unmarshal([]byte(c.OK("--json", "approval", "list", "--limit", "0")), &aps); err != nil {
		t.Fatal(err)
	}
	if len(aps) != n {
		t.Fatalf("%d approvals, want %d", len(aps), n)
	}
	for _, a := range aps {
		for _, tok := range tokens {
			// Any 5 bytes of the token after its first 3: a cut token shows
			// its prefix and a few more bytes.
			for i := 3; i+5 <= len(tok); i++ {
				if strings.Contains(a.Command, tok[i:i+5]) {
					t.Errorf("approval %s keeps %q of a token cut by the clip: …%q", a.ID, tok[i:i+5], a.Command[max(0, len(a.Command)-60):])
					break
				}
			}
		}
	}
}
