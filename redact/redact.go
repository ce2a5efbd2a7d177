// Package redact removes secrets from text before it is stored or shown
// (docs/contract.md "Background jobs: Live, redacted log"). It uses nothing else of clawpit's: core, tailer, the console and
// the CLI all share its one immutable Default redactor.
package redact

import "strings"

// Secret redaction (docs/contract.md "Background jobs: Live, redacted log"). No regular expressions — one hand-written left-to-right
// scan both finds the candidates (the cheap literal prefilter of bench/README.md P3) and
// matches them, so a line without a trigger costs one table lookup per byte and
// is returned as-is with zero allocation.
//
// What is redacted (the value only; keys, schemes, prefixes of URLs are kept):
//
//   - key/value secrets: an identifier whose normalised form (lower case,
//     '_' '-' '.' removed) ENDS with one of redactKeywords (…token, …secret,
//     …password, passwd, passphrase, …apikey, …accesskey, …secretkey,
//     …privatekey, …signingkey, …encryptionkey, …masterkey, …accountkey,
//     authorization, auth, credential(s), creds, connectionstring), followed by
//     optional quote, optional blanks, ':' / '=' / '=>' and a value:
//     JSON `"api_key": "v"`, escaped JSON `\"token\": \"v\"`, env
//     `export X_TOKEN=v`, YAML `password: v`, TOML `secret = "v"`, form
//     `a=1&password=v`, headers `X-Api-Key: v`. A quoted value is redacted up
//     to its closing quote (or the end of the line); an unquoted one up to
//     blank, '&', a quote or a backtick. Values starting with '{' or '[',
//     and null/true/false, are left alone. An auth scheme word (Bearer,
//     Basic, Token, Digest, Bot, ApiKey, Negotiate) before the value is kept.
//     Because the keyword must END the identifier, "tokenizer=", "max_tokens=",
//     "passwordless=", "token_count:" are not secrets.
//   - URL userinfo passwords: scheme://user:PASS@host (any scheme). The user
//     name is scanned like any other text, so a token written as the user
//     (https://<token>@host, as git remote set-url prints it) is caught by
//     its prefix.
//   - "Bearer <token>" anywhere, token ≥ 16 chars (shorter words such as
//     "Bearer token required" are prose).
//   - Slack webhooks: hooks.slack.com/{services,workflows,triggers}/<REDACTED>.
//   - Well-known token prefixes, the whole token replaced, only at a word
//     start (previous byte not a letter/digit, so "task-…" is no "sk-…"):
//     xox[abeoprs]-… (≥10), gh[pousr]_… (≥30), AKIA/ASIA/ABIA/ACCA/A3T… +
//     16 [A-Z0-9], JWTs eyJ….….… (header ≥ 10 chars), and the prefixes of
//     tokRules (OpenAI/Anthropic sk-, Stripe, GitHub fine-grained, Google
//     AIza and ya29., npm, PyPI, Hugging Face hf_, GitLab glpat- and its
//     kin, SendGrid SG., Twilio SK…, DigitalOcean, Shopify, Grafana,
//     Linear, Pulumi, Vault, Doppler, Postman, RubyGems, PlanetScale, age,
//     Square, and others from gitleaks' default rule set).
//   - Twilio: the auth token after an account SID ("AC<32 hex>:TOKEN").
//   - Command-line flags: curl's -u/--user user:PASS (the password; uid:gid
//     such as "-u 1000:1000" is left alone), and a flag named like a secret
//     key followed by its value as the next word ("--password PASS",
//     "--api-key PASS", "-token PASS"); "-pPASS" after mysql or mariadb and
//     "-p PASS" after sshpass. Elsewhere "-p" is not read as a password: it
//     is a port (docker, ssh) or a parents flag (mkdir) far more often.
//   - PEM private keys: in a single line, everything between
//     "-----BEGIN … PRIVATE KEY-----" and "-----END" (or the end of the line);
//     across lines, LineRedactor/Block replace every body line.
//
// Not redacted (by design, docs/contract.md "Background jobs: Live, redacted log" "no entropy rules"): commit SHAs, UUIDs,
// ordinary hex/base64, secrets in prose without a key/value separator
// ("the password is hunter2"), cookies, a key named "key" alone (cache_key,
// primary_key), a secret split across lines (but PEM bodies), a secret
// encoded (base64 of "password=x").
//
// A line of any length is covered: Stream redacts a line that arrives in
// pieces, holding a secret's state across them. A prose "token: expired" loses its
// next word (over-redaction is the safe side).
//
// Idempotent: redacting an output again returns it unchanged.

// Redacted replaces every secret value.
const Redacted = "***REDACTED***"

// StderrPrefix marks the job log lines that came from the command's stderr
// (docs/contract.md "Background jobs: Live, redacted log"). The job log writer puts it there; LineRedactor looks through it
// when it tells a PEM body line by its shape.
const StderrPrefix = "[stderr] "

// Redactor applies the J4 rules. Use Default; it is immutable and safe for
// concurrent use.
type Redactor struct {
	keywords []string // normalised (lower, no separators), see keyMatch
	// last2[c] has bit d-'a' set when some keyword ends in the letters d, c:
	// a two-byte prefilter before the identifier is normalised.
	last2 [256]uint32
}

// redactKeywords are the normalised identifier suffixes of key/value secrets.
var redactKeywords = []string{
	"token", "secret", "password", "passwd", "passphrase",
	"apikey", "accesskey", "secretkey", "privatekey", "signingkey",
	"encryptionkey", "masterkey", "accountkey",
	"authorization", "auth", "credential", "credentials", "creds", "connectionstring",
}

// defaultRedactor is built once at package init and never changed.
var defaultRedactor = newRedactor()

// Default returns the shared redactor with the docs/contract.md "Background jobs: Live, redacted log" rules. Every caller
// gets the same immutable value.
func Default() *Redactor { return defaultRedactor }

// newRedactor builds the redactor with the docs/contract.md "Background jobs: Live, redacted log" rules.
func newRedactor() *Redactor {
	r := &Redactor{keywords: redactKeywords}
	for _, k := range r.keywords {
		r.last2[k[len(k)-1]] |= 1 << (k[len(k)-2] - 'a')
	}
	return r
}

// Line redacts one line (no '\n' inside expected; it is treated as a blank).
// It returns b itself, without allocating, when nothing matches; otherwise a
// new slice. Stateless: PEM bodies spanning lines need LineRedactor or Block.
func (r *Redactor) Line(b []byte) []byte {
	var buf [8]rspan
	spans, _ := redactScan(r, b, buf[:0], false)
	if len(spans) == 0 {
		return b
	}
	return redactApply(make([]byte, 0, len(b)+len(spans)*len(Redacted)), b, spans)
}

// AppendLine appends the redaction of b to dst (no allocation when dst has
// room) and returns it — for a pump that reuses one buffer.
func (r *Redactor) AppendLine(dst, b []byte) []byte {
	var buf [8]rspan
	spans, _ := redactScan(r, b, buf[:0], false)
	return redactApply(dst, b, spans)
}

// String is Line for strings: it returns s itself when nothing matches.
func (r *Redactor) String(s string) string {
	var buf [8]rspan
	spans, _ := redactScan(r, s, buf[:0], false)
	if len(spans) == 0 {
		return s
	}
	return string(redactApply(make([]byte, 0, len(s)+len(spans)*len(Redacted)), s, spans))
}

// Block redacts multi-line text as a whole: each line as by Line, plus every
// body line of a PEM private-key block (between a BEGIN … PRIVATE KEY line and
// its END line) replaced by Redacted. Line structure (count, "\n", "\r\n")
// is kept. It returns s itself when nothing matches. Every tail shown anywhere
// goes through Block again (docs/contract.md "Background jobs: Live, redacted log").
func (r *Redactor) Block(s string) string {
	lr := LineRedactor{r: r}
	var sb strings.Builder
	changed := false
	start := 0
	for start <= len(s) {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line := s[start:end]
		var buf [8]rspan
		spans := lineRedactorStep(&lr, line, buf[:0])
		if len(spans) > 0 && !changed {
			changed = true
			sb.Grow(len(s) + 64)
			sb.WriteString(s[:start])
		}
		if changed {
			var tmp [256]byte
			sb.Write(redactApply(tmp[:0], line, spans))
			if end < len(s) {
				sb.WriteByte('\n')
			}
		}
		start = end + 1
	}
	if !changed {
		return s
	}
	return sb.String()
}

// LineRedactor is the stateful per-line redactor of the job output pump: like
// Redactor.Line, and in addition, after a line that opens a PEM private-key
// block (BEGIN … PRIVATE KEY without END on the same line), every following
// body line is replaced by Redacted until the END line. A body line is a
// base64 line, a PEM header ("Proc-Type: …"), or an already redacted line;
// the state also ends (and the line is redacted normally) at the first line
// of another shape, so an unterminated BEGIN does not swallow the rest of the
// output. A leading "[stderr] " is kept and ignored for the shape test.
// Use one per stream; not safe for concurrent use.
type LineRedactor struct {
	r     *Redactor
	inPEM bool
}

// NewLineRedactor returns a LineRedactor in its initial (outside PEM) state.
func (r *Redactor) NewLineRedactor() *LineRedactor { return &LineRedactor{r: r} }

// InPEM reports whether the redactor is inside a PEM private-key block.
func (l *LineRedactor) InPEM() bool { return l.inPEM }

// Line redacts one line; it returns b itself, without allocating, when
// nothing matches.
func (l *LineRedactor) Line(b []byte) []byte {
	var buf [8]rspan
	spans := lineRedactorStep(l, b, buf[:0])
	if len(spans) == 0 {
		return b
	}
	return redactApply(make([]byte, 0, len(b)+len(spans)*len(Redacted)), b, spans)
}

// AppendLine appends the redaction of b to dst and returns it.
func (l *LineRedactor) AppendLine(dst, b []byte) []byte {
	var buf [8]rspan
	spans := lineRedactorStep(l, b, buf[:0])
	return redactApply(dst, b, spans)
}

// rtext is what the scanner reads: both instantiations index bytes directly.
type rtext interface{ ~string | ~[]byte }

// rspan is a half-open byte range [s, e) to replace with Redacted, and how
// it goes on when it reaches the end of a partial text (a piece of a longer
// line, see Stream).
type rspan struct {
	s, e int
	t    rterm
}

// rterm says which bytes after the end of a partial text still belong to a
// span that reaches that end: it is what lets Stream mask a secret of any
// length, however a long line is cut.
type rterm struct {
	kind uint8  // termNone, termIn, …
	q    byte   // termQuote, termEscQuote: the closing quote
	cls  uint16 // termIn: bytes of one of these classes go on; termOut: bytes of none of them
	ctx  string // termCtx: text that, put before the next non-blank byte, lets the scan find the value
}

// Span continuations (rterm.kind).
const (
	termNone     = iota
	termIn       // while the byte is in cls (a token's alphabet)
	termOut      // until a byte in cls (an unquoted value: until a blank)
	termQuote    // until q not preceded by a backslash
	termEscQuote // until a backslash and q (an escaped JSON string)
	termPEM      // until "-----END"
	termCtx      // blanks pass; the value starts at the next non-blank byte
)

func inRun(cls uint16) rterm  { return rterm{kind: termIn, cls: cls} }
func outRun(cls uint16) rterm { return rterm{kind: termOut, cls: cls} }

func lineRedactorStep[T rtext](l *LineRedactor, b T, spans []rspan) []rspan {
	if l.inPEM {
		body := 0
		if hasPrefixT(b, StderrPrefix) {
			body = len(StderrPrefix)
		}
		end := len(b)
		for end > body && isBlankByte(b[end-1]) {
			end--
		}
		switch {
		case indexT(b[body:end], "-----END ") >= 0:
			l.inPEM = false
			// The END line itself is scanned normally below.
		case isPEMBodyLine(b[body:end]):
			if end > body && !equalT(b[body:end], Redacted) {
				spans = append(spans, rspan{s: body, e: end})
			}
			return spans
		default:
			l.inPEM = false
		}
	}
	spans, open := redactScan(l.r, b, spans, false)
	if open {
		l.inPEM = true
	}
	return spans
}

// isPEMBodyLine: empty, base64 (with blanks), a "Header-Name: value" line,
// or the redaction marker.
func isPEMBodyLine[T rtext](b T) bool {
	if equalT(b, Redacted) {
		return true
	}
	b64 := true
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(rIsAlnum(c) || c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t') {
			b64 = false
			break
		}
	}
	if b64 {
		return true
	}
	// PEM / PGP armor headers: Proc-Type, DEK-Info, Version, Comment, Hash.
	i := 0
	for i < len(b) && (rIsAlnum(b[i]) || b[i] == '-') {
		i++
	}
	return i > 0 && i+1 < len(b) && b[i] == ':' && b[i+1] == ' '
}

// redactApply appends b with spans (sorted, disjoint) replaced.
func redactApply[T rtext](dst []byte, b T, spans []rspan) []byte {
	last := 0
	for _, sp := range spans {
		dst = append(dst, b[last:sp.s]...)
		dst = append(dst, Redacted...)
		last = sp.e
	}
	return append(dst, b[last:]...)
}
