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

// Character classes.
const (
	clsAlnum     = 1 << iota // [A-Za-z0-9]
	clsIdent                 // [A-Za-z0-9_.-] identifier of a key
	clsTokDash               // [A-Za-z0-9_-] base64url
	clsBearer                // [A-Za-z0-9._~+/-]
	clsB64                   // [A-Za-z0-9+/=]
	clsUpDig                 // [A-Z0-9]
	clsValEnd                // ends an unquoted value: blanks & " ' `
	clsAuthEnd               // ends a URL authority: / ? # blanks quotes < >
	clsSlack                 // [A-Za-z0-9_/-]
	clsAlnumDash             // [A-Za-z0-9-]
	clsHex                   // [0-9A-Fa-f]
	clsBlank                 // ' ' '\t'
)

var rcls = func() (t [256]uint16) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if alnum {
			t[c] |= clsAlnum | clsIdent | clsTokDash | clsBearer | clsB64 | clsSlack | clsAlnumDash
		}
		if 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' {
			t[c] |= clsUpDig
		}
		if 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' || '0' <= b && b <= '9' {
			t[c] |= clsHex
		}
		switch b {
		case '_':
			t[c] |= clsIdent | clsTokDash | clsSlack
		case '-':
			t[c] |= clsIdent | clsTokDash | clsBearer | clsSlack | clsAlnumDash
		case '.':
			t[c] |= clsIdent | clsBearer
		case '~':
			t[c] |= clsBearer
		case '+':
			t[c] |= clsBearer | clsB64
		case '/':
			t[c] |= clsBearer | clsB64 | clsAuthEnd | clsSlack
		case '=':
			t[c] |= clsB64
		case ' ', '\t', '\r', '\n', '\v', '\f':
			t[c] |= clsValEnd | clsAuthEnd
			if b == ' ' || b == '\t' {
				t[c] |= clsBlank
			}
		case '&', '`':
			t[c] |= clsValEnd
			if b == '`' {
				t[c] |= clsAuthEnd
			}
		case '"', '\'':
			t[c] |= clsValEnd | clsAuthEnd
		case '?', '#', '<', '>':
			t[c] |= clsAuthEnd
		}
	}
	return
}()

// tokRule is a well-known token shape: a literal prefix, then at least min
// bytes of class cls (exact: exactly min, then no letter or digit).
type tokRule struct {
	prefix string
	cls    uint16
	min    int
	exact  bool
}

// tokRules are the token prefixes that are a secret by themselves (the whole
// token is replaced). The sources are the vendors' documented formats, as
// collected by gitleaks' default rule set (see README, Security model).
var tokRules = []tokRule{
	{"sk-", clsTokDash, 20, false},                    // OpenAI, Anthropic (sk-ant-…), DeepSeek…
	{"sk_live_", clsAlnum, 10, false},                 // Stripe
	{"sk_test_", clsAlnum, 10, false},                 // Stripe
	{"rk_live_", clsAlnum, 10, false},                 // Stripe restricted
	{"rk_test_", clsAlnum, 10, false},                 // Stripe restricted
	{"github_pat_", clsTokDash, 20, false},            // GitHub fine-grained
	{"AIza", clsTokDash, 35, false},                   // Google API key
	{"whsec_", clsB64, 10, false},                     // Stripe/Svix webhook secret
	{"npm_", clsAlnum, 36, false},                     // npm
	{"pypi-", clsTokDash, 16, false},                  // PyPI
	{"hf_", clsAlnum, 30, false},                      // Hugging Face
	{"api_org_", clsAlnum, 30, false},                 // Hugging Face organisation
	{"glpat-", clsTokDash | clsIdent, 20, false},      // GitLab personal access token
	{"gldt-", clsTokDash, 20, false},                  // GitLab deploy token
	{"glptt-", clsTokDash, 20, false},                 // GitLab pipeline trigger
	{"glrt-", clsTokDash | clsIdent, 20, false},       // GitLab runner
	{"glcbt-", clsTokDash, 20, false},                 // GitLab CI/CD job
	{"glimt-", clsTokDash, 20, false},                 // GitLab incoming mail
	{"glagent-", clsTokDash, 20, false},               // GitLab agent
	{"gloas-", clsTokDash, 20, false},                 // GitLab OAuth app secret
	{"glsoat-", clsTokDash, 20, false},                // GitLab SCIM
	{"glffct-", clsTokDash, 20, false},                // GitLab feature flags client
	{"GR1348941", clsTokDash, 20, false},              // GitLab runner registration
	{"SG.", clsTokDash | clsIdent, 40, false},         // SendGrid (SG.<22>.<43>)
	{"ya29.", clsTokDash, 20, false},                  // Google OAuth access token
	{"SK", clsHex, 32, true},                          // Twilio API key
	{"dop_v1_", clsHex, 64, true},                     // DigitalOcean
	{"doo_v1_", clsHex, 64, true},                     // DigitalOcean OAuth
	{"dor_v1_", clsHex, 64, true},                     // DigitalOcean refresh
	{"shpat_", clsHex, 32, true},                      // Shopify
	{"shpca_", clsHex, 32, true},                      // Shopify
	{"shppa_", clsHex, 32, true},                      // Shopify
	{"shpss_", clsHex, 32, true},                      // Shopify shared secret
	{"glc_", clsB64, 32, false},                       // Grafana Cloud
	{"glsa_", clsTokDash, 32, false},                  // Grafana service account
	{"lin_api_", clsAlnum, 40, false},                 // Linear
	{"pul-", clsHex, 40, true},                        // Pulumi
	{"xapp-", clsAlnumDash, 20, false},                // Slack app-level
	{"sntrys_", clsB64 | clsTokDash, 40, false},       // Sentry org
	{"sntryu_", clsHex, 64, true},                     // Sentry user
	{"hvs.", clsTokDash, 24, false},                   // HashiCorp Vault service
	{"hvb.", clsTokDash, 24, false},                   // HashiCorp Vault batch
	{"dp.pt.", clsAlnum, 40, false},                   // Doppler
	{"PMAK-", clsHex | clsAlnumDash, 40, false},       // Postman
	{"rubygems_", clsHex, 48, true},                   // RubyGems
	{"pscale_tkn_", clsTokDash | clsIdent, 32, false}, // PlanetScale
	{"pscale_pw_", clsTokDash | clsIdent, 32, false},  // PlanetScale
	{"AGE-SECRET-KEY-1", clsUpDig, 50, false},         // age
	{"sq0atp-", clsTokDash, 22, false},                // Square
	{"sq0csp-", clsTokDash, 40, false},                // Square
	{"ATATT3", clsTokDash | clsB64, 100, false},       // Atlassian
	{"gsk_", clsAlnum, 40, false},                     // Groq
	{"xai-", clsAlnum, 60, false},                     // xAI
	{"dapi", clsHex, 32, true},                        // Databricks
	{"ntn_", clsAlnum, 40, false},                     // Notion
	{"sk_prod_", clsAlnum, 10, false},                 // Stripe
	{"rk_prod_", clsAlnum, 10, false},                 // Stripe
	{"glft-", clsTokDash, 20, false},                  // GitLab feed token
	{"ops_eyJ", clsB64, 100, false},                   // 1Password service account
	{"p8e-", clsAlnum, 32, true},                      // Adobe client secret
	{"LTAI", clsAlnum, 20, true},                      // Alibaba access key
	{"AKCp", clsAlnum, 69, true},                      // JFrog Artifactory
	{"ABSK", clsB64, 109, false},
	{"bedrock-api-key-", clsB64, 20, false},             // Amazon Bedrock
	{"4b1d", clsAlnum, 38, true},                        // ClickHouse Cloud
	{"v1.0-", clsHex | clsAlnumDash, 170, false},        // Cloudflare origin CA
	{"duffel_test_", clsTokDash | clsB64, 43, false},    // Duffel
	{"duffel_live_", clsTokDash | clsB64, 43, false},    // Duffel
	{"dt0c01.", clsAlnum | clsIdent, 89, false},         // Dynatrace
	{"EZAK", clsAlnum, 54, true},                        // EasyPost
	{"EZTK", clsAlnum, 54, true},                        // EasyPost test
	{"EAAC", clsAlnum, 100, false},                      // Facebook
	{"EAAM", clsAlnum, 100, false},                      // Facebook
	{"EAAA", clsTokDash, 22, false},                     // Square
	{"FLWSECK_TEST-", clsAlnumDash, 12, false},          // Flutterwave
	{"FLWSECK-", clsAlnumDash, 32, false},               // Flutterwave
	{"fo1_", clsTokDash, 43, false},                     // Fly.io
	{"fm1a_", clsB64, 100, false},                       // Fly.io
	{"fm1r_", clsB64, 100, false},                       // Fly.io
	{"fm2_", clsB64, 100, false},                        // Fly.io
	{"fio-u-", clsTokDash | clsB64, 64, false},          // Frame.io
	{"HRKU-AA", clsTokDash, 58, false},                  // Heroku
	{"ico-", clsAlnum, 32, true},                        // Infracost
	{"s-s4t2ud-", clsHex, 64, true},                     // 42 intra
	{"s-s4t2af-", clsHex, 64, true},                     // 42 intra
	{"API-", clsUpDig, 26, true},                        // Octopus Deploy
	{"sha256~", clsTokDash, 43, false},                  // OpenShift
	{"pplx-", clsAlnum, 48, false},                      // Perplexity
	{"pnu_", clsAlnum, 36, false},                       // Prefect
	{"rdme_", clsAlnum, 70, false},                      // ReadMe
	{"tk-us-", clsTokDash, 48, false},                   // Scalingo
	{"xkeysib-", clsAlnumDash, 64, false},               // Brevo (Sendinblue)
	{"sm_aat_", clsAlnum, 16, true},                     // SettleMint
	{"sm_pat_", clsAlnum, 16, true},                     // SettleMint
	{"sm_sat_", clsAlnum, 16, true},                     // SettleMint
	{"shippo_live_", clsHex, 40, true},                  // Shippo
	{"shippo_test_", clsHex, 40, true},                  // Shippo
	{"CLOJARS_", clsAlnum, 60, false},                   // Clojars
	{"xoxe.xoxb-", clsAlnumDash, 100, false},            // Slack configuration
	{"xoxe.xoxp-", clsAlnumDash, 100, false},            // Slack configuration
	{"pscale_oauth_", clsTokDash | clsIdent, 32, false}, // PlanetScale
}

// tokByFirst indexes tokRules by their first byte (built once, never changed).
var tokByFirst = func() (t [256][]tokRule) {
	for _, r := range tokRules {
		t[r.prefix[0]] = append(t[r.prefix[0]], r)
	}
	return
}()

// rkind classifies bytes for the scan (the prefilter): kindPlain bytes are
// skipped at once, words (letters and digits) are skipped after a look at
// their first two bytes, and only ':', '=', '-' call a matcher. rnext holds,
// for each letter or digit that can start a token, the bytes that can follow
// it (bit d of the 256).
const (
	kindPlain  = iota // not a letter or digit, starts nothing
	kindColon         // ':' key/value, "://"
	kindEq            // '=' key/value
	kindDash          // '-' "-----BEGIN", command-line flags
	kindWord          // letter or digit that starts no token
	kindLetter        // letter that can start a token
)

var rkind, rnext = func() (t [256]uint8, nx [256][4]uint64) {
	for c := 0; c < 256; c++ {
		if rcls[c]&clsAlnum != 0 {
			t[c] = kindWord
		}
	}
	t[':'], t['='], t['-'] = kindColon, kindEq, kindDash
	starts := []string{"xo", "gh", "AK", "AS", "AB", "AC", "A3", "ey", "Be", "ho"}
	for _, r := range tokRules {
		starts = append(starts, r.prefix[:2])
	}
	for _, p := range starts {
		t[p[0]] = kindLetter
		nx[p[0]][p[1]/64] |= 1 << (p[1] % 64)
	}
	return
}()

func rIsAlnum(c byte) bool    { return rcls[c]&clsAlnum != 0 }
func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// schemeSlashes reports whether the ':' at i starts "://" (a URL).
func schemeSlashes[T rtext](b T, i int) bool {
	return i+2 < len(b) && b[i+1] == '/' && b[i+2] == '/'
}

// pemStart reports whether the '-' at i starts "-----BEGIN " and at least
// 10 bytes follow it: a PEM block's first line.
func pemStart[T rtext](b T, i int) bool {
	return i+10 < len(b) && b[i+1] == '-' && b[i+5] == 'B' && hasPrefixAt(b, i, "-----BEGIN ")
}

// flagStart reports whether the '-' at i can start a command-line flag: at
// the start of b or after a byte that ends a value (a blank, a quote, ...)
// other than '&'.
func flagStart[T rtext](b T, i int) bool {
	return i == 0 || rcls[b[i-1]]&(clsValEnd|clsAuthEnd) != 0 && b[i-1] != '&'
}

// mayStartToken: the prefilter on a word's first two bytes.
func mayStartToken(c, d byte) bool { return rnext[c][d/64]>>(d%64)&1 != 0 }

// redactScan appends the spans to redact in b and reports whether b opens a
// PEM private-key block that it does not close. partial says that b is a
// piece of a longer line that goes on after it (Stream): a match that reaches
// the end of b then ends there, with its rterm saying how it goes on, and
// nothing that could still grow is trimmed.
func redactScan[T rtext](r *Redactor, b T, spans []rspan, partial bool) ([]rspan, bool) {
	openPEM := false
	jwtDead := 0
	n := len(b)
	// Invariant: when the loop reaches a letter or digit at i, i is a word
	// start (b[i-1] is not one), and every span ends before a byte that is
	// not a letter or digit.
	for i := 0; i < n; {
		c := b[i]
		k := rkind[c]
		if k == kindPlain {
			for i++; i < n && rkind[b[i]] == kindPlain; i++ {
			}
			continue
		}
		if k >= kindWord {
			// A word: only its start can begin a token (the prefilter for
			// letters); then skip the rest of it in a tight loop.
			if k == kindLetter && i+1 < n && mayStartToken(c, b[i+1]) {
				if sp := wordToken(b, i, partial, &jwtDead); sp.s >= 0 {
					spans = append(spans, sp)
					i = max(sp.e, i+1)
					continue
				}
			}
			for i++; i < n && rkind[b[i]] >= kindWord; i++ {
			}
			continue
		}
		sp := rspan{s: -1, e: -1}
		switch k {
		case kindColon:
			// The URL case stays here: recursion through a helper would make
			// spans escape, and a clean line must not allocate.
			if schemeSlashes(b, i) {
				var ue int
				ue, sp = urlPassword(b, i, partial)
				if ue > i+3 {
					// The user name before a password: scanned on its own
					// first (a token as the user, "https://ghp_…:x@host"),
					// so the spans stay sorted.
					from := len(spans)
					spans, _ = redactScan(r, b[i+3:ue], spans, false)
					for k := from; k < len(spans); k++ {
						spans[k].s += i + 3
						spans[k].e += i + 3
					}
				}
			} else if i > 0 {
				sp = keyValue(r, b, i, partial)
			}
		case kindEq:
			if i > 0 {
				sp = keyValue(r, b, i, partial)
			}
		case kindDash:
			if pemStart(b, i) {
				var open bool
				sp.s, sp.e, open = pemInLine(b, i, partial)
				sp.t = rterm{kind: termPEM}
				if open {
					openPEM = true
				}
			} else if flagStart(b, i) {
				sp = flagValue(r, b, i, partial)
			}
		}
		if sp.s < 0 {
			i++
			continue
		}
		if sp.e > sp.s || sp.t.kind == termCtx && partial {
			spans = append(spans, sp)
		}
		if openPEM || sp.t.kind == termCtx && partial {
			break
		}
		i = max(sp.e, i+1)
	}
	return spans, openPEM
}

// wordToken matches a token at the word start i: a JWT (skipping the
// "eyJ" that a failed match already ruled out, before *jwtDead) or a
// well-known prefix.
func wordToken[T rtext](b T, i int, partial bool, jwtDead *int) rspan {
	if b[i] != 'e' {
		return tokenAt(b, i, partial)
	}
	sp := rspan{s: -1, e: -1, t: inRun(clsTokDash | clsIdent)}
	if i >= *jwtDead && hasPrefixAt(b, i, "eyJ") {
		var dead int
		if sp.s, sp.e, dead = jwtAt(b, i, partial); sp.s < 0 {
			*jwtDead = dead
		}
	}
	return sp
}

// keyValue handles a ':' or '=' at i: if the identifier before it is a secret
// key, it returns the value's span.
func keyValue[T rtext](r *Redactor, b T, i int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	if b[i] == ':' {
		if i+1 < n && b[i+1] == ':' { // Rust/C++ path "Token::new"
			return none
		}
	} else if i+1 < n && b[i+1] == '=' || i > 0 && (b[i-1] == '=' || b[i-1] == '!' || b[i-1] == '<' || b[i-1] == '>') {
		return none // comparison, not assignment
	}
	// Key end: skip blanks, a closing quote and its escaping backslash.
	j := i
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	if j > 0 && (b[j-1] == '"' || b[j-1] == '\'') {
		j--
		if j > 0 && b[j-1] == '\\' {
			j--
		}
	}
	if j == 0 || !keyMatch(r, b, j) {
		return none
	}
	// Value start.
	k := i + 1
	if k < n && (b[i] == '=' && b[k] == '>' || b[i] == ':' && b[k] == '=') {
		k++ // "=>" (Ruby, Perl), ":=" (Go)
	}
	return valueAt(b, k, partial)
}

// valueAt returns the span of the value that starts after the blanks at k
// (the value of a secret key or flag): a quoted string's content, else the
// run up to a blank, '&', a quote or a backtick, less closing punctuation.
// An auth scheme word before it is kept; '{', '[' and null/true/false are no
// value.
func valueAt[T rtext](b T, k int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k >= n {
		if partial { // the value has not arrived yet
			return rspan{s: n, e: n, t: rterm{kind: termCtx, ctx: "token="}}
		}
		return none
	}
	switch c := b[k]; {
	case c == '"' || c == '\'' || c == '`':
		vs := k + 1
		ve := vs
		for ve < n && !(b[ve] == c && b[ve-1] != '\\') {
			ve++
		}
		vs = skipScheme(b, vs, ve)
		return rspan{vs, ve, rterm{kind: termQuote, q: c}}
	case c == '\\' && k+1 < n && (b[k+1] == '"' || b[k+1] == '\''):
		return escQuotedValue(b, k)
	case c == '{' || c == '[':
		return none
	}
	if isJSONLiteral(b, k) {
		return none
	}
	ve := k
	for ve < n && rcls[b[ve]]&clsValEnd == 0 {
		ve++
	}
	if partial && ve == n {
		return rspan{k, n, outRun(clsValEnd)}
	}
	// Closing punctuation right after the value belongs to the syntax around
	// it: {"token": 123}, (password=x), secret=y; — inner punctuation stays
	// part of the value (over-redaction is the safe side).
	for ve > k+1 && strings.IndexByte(",;)]}", b[ve-1]) >= 0 {
		ve--
	}
	// "Authorization: Bearer x": keep the scheme, redact the next word.
	if ve < n && b[ve] == ' ' && isAuthScheme(b[k:ve]) {
		if sp := afterAuthScheme(b, ve, partial); sp.s >= 0 {
			return sp
		}
	}
	return rspan{k, ve, outRun(clsValEnd)}
}

// escQuotedValue is the content of a string quoted by an escaped quote at k
// (\" or \' , as JSON inside a string writes it), up to the matching escaped
// quote, whose backslash is kept, or the end of b, less an auth scheme word.
func escQuotedValue[T rtext](b T, k int) rspan {
	n := len(b)
	q := b[k+1]
	vs := k + 2
	ve := vs
	for ve < n && !(b[ve] == q && b[ve-1] == '\\') {
		ve++
	}
	if ve < n {
		ve-- // keep the escaping backslash of the closing quote
	}
	if ve < vs {
		ve = vs
	}
	vs = skipScheme(b, vs, ve)
	return rspan{vs, ve, rterm{kind: termEscQuote, q: q}}
}

// afterAuthScheme is the credential after an auth scheme word ending at ve
// ("Authorization: Bearer x": the scheme is kept, the next word redacted):
// the run after the spaces up to a clsValEnd byte. In a partial line ending
// in the spaces it returns an empty span carrying the "token: Bearer "
// context; s = -1 when no word follows.
func afterAuthScheme[T rtext](b T, ve int, partial bool) rspan {
	n := len(b)
	w := ve
	for w < n && b[w] == ' ' {
		w++
	}
	if partial && w == n {
		return rspan{s: n, e: n, t: rterm{kind: termCtx, ctx: "token: Bearer "}}
	}
	we := w
	for we < n && rcls[b[we]]&clsValEnd == 0 {
		we++
	}
	if we > w {
		return rspan{w, we, outRun(clsValEnd)}
	}
	return rspan{s: -1, e: -1}
}

// flagValue handles a command-line flag at i (at a word start): curl's
// "-u user:PASS", "--user user:PASS", "--user=user:PASS" (the password
// only), and a flag named like a secret key followed by its value as the
// next word: "--password PASS", "--api-key PASS", "-token PASS" (the "="
// form is a key/value). A next word that is another flag is no value.
// "-p" is a password only after mysql, mariadb or sshpass (shortPassword);
// uid:gid ("-u 1000:1000") is no user:password.
func flagValue[T rtext](r *Redactor, b T, i int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	j := i + 1
	if j < n && b[j] == '-' {
		j++
	}
	ns := j
	for j < n && rcls[b[j]]&clsIdent != 0 {
		j++
	}
	if j > ns && ns == i+1 && b[ns] == 'p' {
		return shortPassword(b, i, j, partial)
	}
	if j == ns || j >= n {
		return none
	}
	if name := b[ns:j]; equalT(name, "u") && ns == i+1 || equalT(name, "user") && ns == i+2 {
		k := j
		if b[k] == '=' {
			k++
		} else if b[k] != ' ' && b[k] != '\t' {
			return none
		}
		return userPassword(b, k, partial)
	}
	if b[j] != ' ' && b[j] != '\t' || !keyMatch(r, b, j) {
		return none
	}
	k := j
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k < n && b[k] == '-' {
		return none
	}
	return valueAt(b, j, partial)
}

// shortPassword handles "-p…" at i (name up to j): MySQL's and MariaDB's
// attached "-pPASS" / "-p'PASS'" when such a client is named in the 256
// bytes before it, and sshpass's "-p PASS". Elsewhere "-p" is a port or a
// parents flag.
func shortPassword[T rtext](b T, i, j int, partial bool) rspan {
	none := rspan{s: -1, e: -1}
	before := b[max(0, i-256):i]
	at := byte(0) // the byte after "-p", 0 at the end
	if j == i+2 && j < len(b) {
		at = b[j]
	}
	switch {
	case (at == ' ' || at == '\t') && indexT(before, "sshpass ") >= 0:
		return valueAt(b, j, partial)
	case indexT(before, "mysql") < 0 && indexT(before, "mariadb") < 0:
		return none
	case at == '\'' || at == '"':
		return valueAt(b, j, partial)
	case j > i+2:
		e := i + 2
		for e < len(b) && rcls[b[e]]&clsValEnd == 0 {
			e++
		}
		return rspan{i + 2, e, outRun(clsValEnd)}
	}
	return none
}

// userPassword returns the password of "user:PASS" after the blanks at k
// (quoted or not), when both halves are not all digits (uid:gid).
func userPassword[T rtext](b T, k int, partial bool) rspan {
	n := len(b)
	none := rspan{s: -1, e: -1}
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k >= n {
		if partial {
			return rspan{s: n, e: n, t: rterm{kind: termCtx, ctx: "-u "}}
		}
		return none
	}
	t := outRun(clsValEnd)
	if c := b[k]; c == '"' || c == '\'' {
		t = rterm{kind: termQuote, q: c}
		k++
	}
	colon, e := -1, k
	for ; e < n; e++ {
		c := b[e]
		if t.kind == termQuote && c == t.q || t.kind == termOut && rcls[c]&clsValEnd != 0 {
			break
		}
		if c == ':' && colon < 0 {
			colon = e
		}
	}
	if colon < 0 || colon+1 == e || allDigits(b[k:colon]) && allDigits(b[colon+1:e]) && !(partial && e == n) {
		return none
	}
	return rspan{colon + 1, e, t}
}

func allDigits[T rtext](b T) bool {
	for i := 0; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return false
		}
	}
	return len(b) > 0
}

// skipScheme moves a quoted value's start past a leading auth scheme word.
func skipScheme[T rtext](b T, vs, ve int) int {
	w := vs
	for w < ve && rIsAlnum(b[w]) {
		w++
	}
	if w == vs || w >= ve || b[w] != ' ' || !isAuthScheme(b[vs:w]) {
		return vs
	}
	for w < ve && b[w] == ' ' {
		w++
	}
	if w == ve {
		return vs
	}
	return w
}

var authSchemes = []string{"bearer", "basic", "token", "digest", "bot", "apikey", "negotiate"}

func isAuthScheme[T rtext](w T) bool {
	for _, s := range authSchemes {
		if equalFoldASCII(w, s) {
			return true
		}
	}
	return false
}

// isJSONLiteral: null, true or false at s, not followed by an identifier byte.
func isJSONLiteral[T rtext](b T, s int) bool {
	w := s
	for w < len(b) && w-s < 5 && 'a' <= b[w] && b[w] <= 'z' {
		w++
	}
	if w < len(b) && rcls[b[w]]&clsIdent != 0 {
		return false
	}
	v := b[s:w]
	return equalT(v, "null") || equalT(v, "true") || equalT(v, "false")
}

// keyMatch reports whether the identifier ending at b[j-1] ends with a secret
// keyword, ignoring case and the separators '_', '-', '.'.
func keyMatch[T rtext](r *Redactor, b T, j int) bool {
	// Prefilter: the last two letters of the identifier, skipping separators.
	k := j - 1
	c1 := b[k] | 0x20
	if rcls[b[k]]&clsAlnum == 0 || r.last2[c1] == 0 {
		return false
	}
	for k--; k >= 0 && (b[k] == '_' || b[k] == '-' || b[k] == '.'); k-- {
	}
	if k < 0 {
		return false
	}
	if c2 := b[k] | 0x20; c2 < 'a' || c2 > 'z' || r.last2[c1]>>(c2-'a')&1 == 0 {
		return false
	}
	var norm [24]byte // reversed, lower-case, separators removed
	m := 0
	for k := j - 1; k >= 0 && m < len(norm) && j-k <= 64; k-- {
		c := b[k]
		if rcls[c]&clsIdent == 0 {
			break
		}
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		norm[m] = c
		m++
	}
outer:
	for _, kw := range r.keywords {
		if len(kw) > m {
			continue
		}
		for x := 0; x < len(kw); x++ {
			if norm[x] != kw[len(kw)-1-x] {
				continue outer
			}
		}
		return true
	}
	return false
}

// urlPassword handles "://" at i: scheme://user:PASS@host → PASS. It returns
// the end of the user name when a password follows it (ue, the ':' before the
// password; -1 otherwise) and the password span. Without a password the span
// is empty at i+3, so the scan goes on through the user name and the host:
// "https://<token>@host" is scanned like any other text. In a partial text,
// an authority that reaches its end is masked whole from its start (a
// password may be in it; no host is that long).
func urlPassword[T rtext](b T, i int, partial bool) (ue int, sp rspan) {
	n := len(b)
	a := i + 3
	at, end := -1, a
	for ; end < n && rcls[b[end]]&clsAuthEnd == 0; end++ {
		if b[end] == '@' {
			at = end
		}
	}
	if partial && end == n && n > a {
		return -1, rspan{a, n, outRun(clsAuthEnd)}
	}
	if at < 0 {
		// No userinfo. (The authority ends at the next '/', so a following
		// "://" never rescans it: linear.) Hosts are scanned for other rules.
		return -1, rspan{s: a, e: a}
	}
	// The first ':' before the LAST '@' separates user and password.
	colon := -1
	for k := a; k < at; k++ {
		if b[k] == ':' {
			colon = k
			break
		}
	}
	if colon < 0 {
		return -1, rspan{s: a, e: a}
	}
	if colon+1 == at {
		return colon, rspan{s: at, e: at}
	}
	return colon, rspan{colon + 1, at, outRun(clsAuthEnd)}
}

// pemInLine handles "-----BEGIN " at i. For a private key it returns the span
// from the end of the BEGIN marker to "-----END" or the end of the line, and
// whether the block stays open past this line.
func pemInLine[T rtext](b T, i int, partial bool) (int, int, bool) {
	n := len(b)
	ls := i + len("-----BEGIN ")
	le := ls
	for le < n && le-ls <= 64 && !hasPrefixAt(b, le, "-----") {
		le++
	}
	if le >= n || le-ls > 64 || indexT(b[ls:le], "PRIVATE KEY") < 0 {
		return -1, -1, false
	}
	s := le + 5
	for s < n && b[s] == '-' {
		s++
	}
	if k := indexT(b[s:], "-----END"); k >= 0 {
		return s, s + k, false
	}
	e := n
	for e > s && isBlankByte(b[e-1]) && !partial {
		e--
	}
	return s, e, true
}

// tokenAt matches a well-known token at i (at a word start): first the
// prefix table (tokByFirst), then the shapes a prefix alone cannot describe.
// It returns the token's span, or s = e = -1 when none starts at i.
func tokenAt[T rtext](b T, i int, partial bool) rspan {
	// The prefix table, inline: it runs at every candidate word start.
	d := b[i+1] // the caller checked i+1 < len(b)
	for _, tr := range tokByFirst[b[i]] {
		if tr.prefix[1] != d || !hasPrefixAt(b, i, tr.prefix) {
			continue
		}
		if tr.exact {
			// An exact token: its prefix then exactly min bytes of its
			// class, not followed by a letter or digit.
			k := i + len(tr.prefix)
			for k < len(b) && k-i < len(tr.prefix)+tr.min && rcls[b[k]]&tr.cls != 0 {
				k++
			}
			if k-i == len(tr.prefix)+tr.min && (k == len(b) || !rIsAlnum(b[k])) {
				return rspan{i, k, inRun(clsAlnum)}
			}
			continue
		}
		if s, e := runFrom(b, i, len(tr.prefix), tr.cls, tr.min); s >= 0 {
			return rspan{s, e, inRun(tr.cls)}
		}
	}
	switch b[i] {
	case 'x':
		return slackToken(b, i)
	case 'g':
		return githubToken(b, i)
	case 'A':
		return awsOrTwilio(b, i, partial)
	case 'B':
		// Inline: "Bearer " is the commonest credential in logs.
		if hasPrefixAt(b, i, "Bearer ") {
			k := i + 7
			for k < len(b) && b[k] == ' ' {
				k++
			}
			if partial && k == len(b) {
				return rspan{s: k, e: k, t: rterm{kind: termCtx, ctx: "Bearer "}}
			}
			s, e := runFrom(b, k, 0, clsBearer, 16)
			if s < 0 {
				return rspan{s: -1, e: -1}
			}
			for e < len(b) && b[e] == '=' {
				e++
			}
			return rspan{s, e, inRun(clsBearer | clsB64)}
		}
	case 'h':
		return slackHook(b, i)
	}
	return rspan{s: -1, e: -1}
}

// slackToken matches a Slack token at i: xox, one of a b e o p r s, '-',
// then at least 10 letters, digits or dashes.
func slackToken[T rtext](b T, i int) rspan {
	if i+4 < len(b) && b[i+1] == 'o' && b[i+2] == 'x' && b[i+4] == '-' && strings.IndexByte("abeoprs", b[i+3]) >= 0 {
		s, e := runFrom(b, i, 5, clsAlnumDash, 10)
		return rspan{s, e, inRun(clsAlnumDash)}
	}
	return rspan{s: -1, e: -1}
}

// githubToken matches a GitHub token at i: gh, one of p o u s r, '_', then
// at least 30 letters or digits.
func githubToken[T rtext](b T, i int) rspan {
	if i+3 < len(b) && b[i+1] == 'h' && b[i+3] == '_' && strings.IndexByte("pousr", b[i+2]) >= 0 {
		s, e := runFrom(b, i, 4, clsAlnum, 30)
		return rspan{s, e, inRun(clsAlnum)}
	}
	return rspan{s: -1, e: -1}
}

// awsOrTwilio matches at i an AWS access key id (AKIA, ASIA, ABIA, ACCA or
// A3T, 20 upper-case letters and digits in all, not followed by a letter or
// digit) or else a Twilio SID and its auth token (twilioSecret).
func awsOrTwilio[T rtext](b T, i int, partial bool) rspan {
	if hasPrefixAt(b, i, "AKIA") || hasPrefixAt(b, i, "ASIA") || hasPrefixAt(b, i, "ABIA") || hasPrefixAt(b, i, "ACCA") || hasPrefixAt(b, i, "A3T") {
		k := i + 4
		for k < len(b) && k-i < 20 && rcls[b[k]]&clsUpDig != 0 {
			k++
		}
		if k-i == 20 && (k == len(b) || !rIsAlnum(b[k])) {
			return rspan{i, k, inRun(clsAlnum)}
		}
		return rspan{s: -1, e: -1}
	}
	if hasPrefixAt(b, i, "AC") {
		return twilioSecret(b, i, partial)
	}
	return rspan{s: -1, e: -1}
}

// slackHook matches a Slack webhook URL's secret path: what follows
// hooks.slack.com/services/, /workflows/ or /triggers/ at i.
func slackHook[T rtext](b T, i int) rspan {
	for _, hook := range []string{"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"} {
		if hasPrefixAt(b, i, hook) {
			s, e := runFrom(b, i+len(hook), 0, clsSlack, 1)
			return rspan{s, e, inRun(clsSlack)}
		}
	}
	return rspan{s: -1, e: -1}
}

// twilioSecret: a Twilio account SID (AC + 32 hex) followed by ':' and its
// auth token, as curl -u and connection strings write them: the token.
func twilioSecret[T rtext](b T, i int, partial bool) rspan {
	k := i + 2
	for k < len(b) && k-i < 34 && rcls[b[k]]&clsHex != 0 {
		k++
	}
	if k-i != 34 || k >= len(b) || b[k] != ':' {
		return rspan{s: -1, e: -1}
	}
	s, e := runFrom(b, k+1, 0, clsAlnum, 16)
	if s < 0 {
		return rspan{s: -1, e: -1}
	}
	return rspan{s, e, inRun(clsAlnum)}
}

// runFrom matches b[i:i+pre] (already checked) followed by at least min bytes
// of class cls; it returns [i, end) or -1, -1.
func runFrom[T rtext](b T, i, pre int, cls uint16, min int) (int, int) {
	k := i + pre
	for k < len(b) && rcls[b[k]]&cls != 0 {
		k++
	}
	if k-(i+pre) < min {
		return -1, -1
	}
	return i, k
}

// jwtAt matches eyJ<seg>.<seg>.<seg?> with a header of at least 10 bytes.
// On failure it returns dead, the end of the header run: any "eyJ" starting
// before it fails the same way, so the caller skips those (linear scan). In
// a partial text, a header or payload that reaches its end is taken for a
// token still arriving.
func jwtAt[T rtext](b T, i int, partial bool) (s, e, dead int) {
	n := len(b)
	k := i
	for seg := 0; seg < 3; seg++ {
		st := k
		for k < n && rcls[b[k]]&clsTokDash != 0 {
			k++
		}
		if seg == 0 {
			dead = k
		}
		if partial && k == n && (seg > 0 || k-st >= 10) {
			return i, n, dead
		}
		if seg == 0 && k-st < 10 || seg == 1 && k-st < 2 {
			return -1, -1, dead
		}
		if seg < 2 {
			if k >= n || b[k] != '.' {
				return -1, -1, dead
			}
			k++
		}
	}
	return i, k, dead
}

func hasPrefixAt[T rtext](b T, i int, p string) bool {
	if len(b)-i < len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		if b[i+k] != p[k] {
			return false
		}
	}
	return true
}

func hasPrefixT[T rtext](b T, p string) bool { return hasPrefixAt(b, 0, p) }

func equalT[T rtext](b T, p string) bool { return len(b) == len(p) && hasPrefixAt(b, 0, p) }

func equalFoldASCII[T rtext](b T, p string) bool {
	if len(b) != len(p) {
		return false
	}
	for k := 0; k < len(p); k++ {
		c := b[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[k] {
			return false
		}
	}
	return true
}

func indexT[T rtext](b T, p string) int {
	for i := 0; i+len(p) <= len(b); i++ {
		if b[i] == p[0] && hasPrefixAt(b, i, p) {
			return i
		}
	}
	return -1
}
