// Package redact removes secrets from text before it is stored or shown
// (SPEC J4). It uses nothing else of clawpit's: core, tailer, the console and
// the CLI all share its one immutable Default redactor.
package redact

import "strings"

// Secret redaction (SPEC J4). No regular expressions — one hand-written left-to-right
// scan both finds the candidates (the cheap literal prefilter of SPEC P3) and
// matches them, so a line without a trigger costs one table lookup per byte and
// is returned as-is with zero allocation.
//
// What is redacted (the value only; keys, schemes, prefixes of URLs are kept):
//
//   - key/value secrets: an identifier whose normalised form (lower case,
//     '_' '-' '.' removed) ENDS with one of redactKeywords (…token, …secret,
//     …password, passwd, passphrase, …apikey, …accesskey, …secretkey,
//     …privatekey, …signingkey, …encryptionkey, …masterkey, …accountkey,
//     authorization, auth, credential(s), connectionstring), followed by
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
//   - Slack webhooks: hooks.slack.com/services/<REDACTED>.
//   - Well-known token prefixes, the whole token replaced, only at a word
//     start (previous byte not a letter/digit, so "task-…" is no "sk-…"):
//     sk-… (≥20), sk_live_/sk_test_/rk_live_/rk_test_… (≥10),
//     xox[abeprs]-… (≥10), gh[pousr]_… (≥30), github_pat_… (≥20),
//     AKIA/ASIA + exactly 16 [A-Z0-9], AIza + ≥35, whsec_… (≥10),
//     npm_… (≥36), pypi-… (≥16), JWTs eyJ….….… (header ≥ 10 chars).
//   - PEM private keys: in a single line, everything between
//     "-----BEGIN … PRIVATE KEY-----" and "-----END" (or the end of the line);
//     across lines, LineRedactor/Block replace every body line.
//
// Not redacted (by design, SPEC J4 "no entropy rules"): commit SHAs, UUIDs,
// ordinary hex/base64, secrets in prose without a key/value separator
// ("the password is hunter2"), cookies. A prose "token: expired" loses its
// next word (over-redaction is the safe side).
//
// Idempotent: redacting an output again returns it unchanged.

// Redacted replaces every secret value.
const Redacted = "***REDACTED***"

// StderrPrefix marks the job log lines that came from the command's stderr
// (SPEC J2). The job log writer puts it there; LineRedactor looks through it
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
	"authorization", "auth", "credential", "credentials", "connectionstring",
}

// defaultRedactor is built once at package init and never changed.
var defaultRedactor = newRedactor()

// Default returns the shared redactor with the SPEC J4 rules. Every caller
// gets the same immutable value.
func Default() *Redactor { return defaultRedactor }

// newRedactor builds the redactor with the SPEC J4 rules.
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
	spans, _ := redactScan(r, b, buf[:0])
	if len(spans) == 0 {
		return b
	}
	return redactApply(make([]byte, 0, len(b)+len(spans)*len(Redacted)), b, spans)
}

// AppendLine appends the redaction of b to dst (no allocation when dst has
// room) and returns it — for a pump that reuses one buffer.
func (r *Redactor) AppendLine(dst, b []byte) []byte {
	var buf [8]rspan
	spans, _ := redactScan(r, b, buf[:0])
	return redactApply(dst, b, spans)
}

// String is Line for strings: it returns s itself when nothing matches.
func (r *Redactor) String(s string) string {
	var buf [8]rspan
	spans, _ := redactScan(r, s, buf[:0])
	if len(spans) == 0 {
		return s
	}
	return string(redactApply(make([]byte, 0, len(s)+len(spans)*len(Redacted)), s, spans))
}

// Block redacts multi-line text as a whole: each line as by Line, plus every
// body line of a PEM private-key block (between a BEGIN … PRIVATE KEY line and
// its END line) replaced by Redacted. Line structure (count, "\n", "\r\n")
// is kept. It returns s itself when nothing matches. Every tail shown anywhere
// goes through Block again (SPEC J4).
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

// AppendLineCut is AppendLine for one piece of a line too long to write
// whole (SPEC J2 splits lines longer than 64 KiB): b is the piece, b[:cut],
// followed by the bytes of the same line that come after it, as many as the
// caller has. All of b is scanned, so a secret that the cut splits is still
// recognised; the redaction of b[:cut] only is appended to dst. more is how
// many bytes after cut belong to a secret begun before it: the caller
// replaces them (one Redacted) at the start of the next piece. Like
// AppendLine it advances the PEM state.
func (l *LineRedactor) AppendLineCut(dst, b []byte, cut int) (out []byte, more int) {
	var buf [8]rspan
	spans := lineRedactorStep(l, b, buf[:0])
	k := 0
	var after []rspan // spans found only with the bytes before the cut
	for _, sp := range spans {
		switch {
		case sp.s >= cut:
			after = append(after, sp)
			continue
		case sp.e > cut:
			more = sp.e - cut
			sp.e = cut
		}
		spans[k] = sp
		k++
	}
	if len(after) > 0 {
		// A value after the cut whose key is before it ("password: " | "x")
		// is not found in the next piece alone: carry it over too, with the
		// few bytes between the cut and the value.
		var buf2 [8]rspan
		alone, _ := redactScan(l.r, b[cut:], buf2[:0])
	next:
		for _, sp := range after {
			for _, a := range alone {
				if a.s+cut <= sp.s && a.e+cut >= sp.e {
					continue next
				}
			}
			more = max(more, sp.e-cut)
		}
	}
	return redactApply(dst, b[:cut], spans[:k]), more
}

// rtext is what the scanner reads: both instantiations index bytes directly.
type rtext interface{ ~string | ~[]byte }

// rspan is a half-open byte range [s, e) to replace with Redacted.
type rspan struct{ s, e int }

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
				spans = append(spans, rspan{body, end})
			}
			return spans
		default:
			l.inPEM = false
		}
	}
	spans, open := redactScan(l.r, b, spans)
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

// rkind classifies bytes for the scan (the prefilter): kindPlain bytes are
// skipped at once, words (letters and digits) are skipped after a look at
// their first two bytes, and only ':', '=', '-' call a matcher. rnext holds,
// for each letter that can start a token, the bytes that can follow it (bit
// d-'A').
const (
	kindPlain  = iota // not a letter or digit, starts nothing
	kindColon         // ':' key/value, "://"
	kindEq            // '=' key/value
	kindDash          // '-' "-----BEGIN"
	kindWord          // letter or digit that starts no token
	kindLetter        // letter that can start a token
)

var rkind, rnext = func() (t [256]uint8, nx [256]uint64) {
	for c := 0; c < 256; c++ {
		if rcls[c]&clsAlnum != 0 {
			t[c] = kindWord
		}
	}
	t[':'], t['='], t['-'] = kindColon, kindEq, kindDash
	for _, p := range []string{"sk", "rk", "xo", "gh", "gi", "AK", "AS", "AI", "wh", "np", "py", "ey", "Be", "ho"} {
		t[p[0]] = kindLetter
		nx[p[0]] |= 1 << (p[1] - 'A')
	}
	return
}()

func rIsAlnum(c byte) bool    { return rcls[c]&clsAlnum != 0 }
func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// redactScan appends the spans to redact in b and reports whether b opens a
// PEM private-key block that it does not close.
func redactScan[T rtext](r *Redactor, b T, spans []rspan) ([]rspan, bool) {
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
		s, e := -1, -1
		switch k {
		case kindWord, kindLetter:
			// A word: only its start can begin a token (the prefilter for
			// letters); then skip the rest of it in a tight loop.
			if k == kindLetter && i+1 < n {
				if d := b[i+1] - 'A'; d < 64 && rnext[c]>>d&1 != 0 {
					if c == 'e' {
						if i >= jwtDead && hasPrefixAt(b, i, "eyJ") {
							var dead int
							if s, e, dead = jwtAt(b, i); s < 0 {
								jwtDead = dead
							}
						}
					} else {
						s, e = tokenAt(b, i)
					}
				}
			}
			if s < 0 {
				for i++; i < n && rkind[b[i]] >= kindWord; i++ {
				}
				continue
			}
		case kindColon:
			if i+2 < n && b[i+1] == '/' && b[i+2] == '/' {
				var ue int
				ue, s, e = urlPassword(b, i)
				if ue > i+3 {
					// The user name before a password: scanned on its own
					// first (a token as the user, "https://ghp_…:x@host"),
					// so the spans stay sorted.
					from := len(spans)
					spans, _ = redactScan(r, b[i+3:ue], spans)
					for k := from; k < len(spans); k++ {
						spans[k].s += i + 3
						spans[k].e += i + 3
					}
				}
			} else if i > 0 {
				s, e = keyValue(r, b, i)
			}
		case kindEq:
			if i > 0 {
				s, e = keyValue(r, b, i)
			}
		case kindDash:
			if i+10 < n && b[i+1] == '-' && b[i+5] == 'B' && hasPrefixAt(b, i, "-----BEGIN ") {
				var open bool
				s, e, open = pemInLine(b, i)
				if open {
					openPEM = true
				}
			}
		}
		if s < 0 {
			i++
			continue
		}
		if e > s {
			spans = append(spans, rspan{s, e})
		}
		if openPEM {
			break
		}
		i = max(e, i+1)
	}
	return spans, openPEM
}

// keyValue handles a ':' or '=' at i: if the identifier before it is a secret
// key, it returns the value's span.
func keyValue[T rtext](r *Redactor, b T, i int) (int, int) {
	n := len(b)
	if b[i] == ':' {
		if i+1 < n && b[i+1] == ':' { // Rust/C++ path "Token::new"
			return -1, -1
		}
	} else if i+1 < n && b[i+1] == '=' || i > 0 && (b[i-1] == '=' || b[i-1] == '!' || b[i-1] == '<' || b[i-1] == '>') {
		return -1, -1 // comparison, not assignment
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
		return -1, -1
	}
	// Value start.
	k := i + 1
	if k < n && (b[i] == '=' && b[k] == '>' || b[i] == ':' && b[k] == '=') {
		k++ // "=>" (Ruby, Perl), ":=" (Go)
	}
	for k < n && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	if k >= n {
		return -1, -1
	}
	switch c := b[k]; {
	case c == '"' || c == '\'' || c == '`':
		vs := k + 1
		ve := vs
		for ve < n && !(b[ve] == c && b[ve-1] != '\\') {
			ve++
		}
		vs = skipScheme(b, vs, ve)
		return vs, ve
	case c == '\\' && k+1 < n && (b[k+1] == '"' || b[k+1] == '\''):
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
		return vs, ve
	case c == '{' || c == '[':
		return -1, -1
	}
	if isJSONLiteral(b, k) {
		return -1, -1
	}
	ve := k
	for ve < n && rcls[b[ve]]&clsValEnd == 0 {
		ve++
	}
	// Closing punctuation right after the value belongs to the syntax around
	// it: {"token": 123}, (password=x), secret=y; — inner punctuation stays
	// part of the value (over-redaction is the safe side).
	for ve > k+1 && strings.IndexByte(",;)]}", b[ve-1]) >= 0 {
		ve--
	}
	// "Authorization: Bearer x": keep the scheme, redact the next word.
	if ve < n && b[ve] == ' ' && isAuthScheme(b[k:ve]) {
		w := ve
		for w < n && b[w] == ' ' {
			w++
		}
		we := w
		for we < n && rcls[b[we]]&clsValEnd == 0 {
			we++
		}
		if we > w {
			return w, we
		}
	}
	return k, ve
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
// "https://<token>@host" is scanned like any other text.
func urlPassword[T rtext](b T, i int) (ue, s, e int) {
	n := len(b)
	a := i + 3
	at, end := -1, a
	for ; end < n && rcls[b[end]]&clsAuthEnd == 0; end++ {
		if b[end] == '@' {
			at = end
		}
	}
	if at < 0 {
		// No userinfo. (The authority ends at the next '/', so a following
		// "://" never rescans it: linear.) Hosts are scanned for other rules.
		return -1, a, a
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
		return -1, a, a
	}
	if colon+1 == at {
		return colon, at, at
	}
	return colon, colon + 1, at
}

// pemInLine handles "-----BEGIN " at i. For a private key it returns the span
// from the end of the BEGIN marker to "-----END" or the end of the line, and
// whether the block stays open past this line.
func pemInLine[T rtext](b T, i int) (int, int, bool) {
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
	for e > s && isBlankByte(b[e-1]) {
		e--
	}
	return s, e, true
}

// tokenAt matches a well-known token prefix at i (at a word start).
func tokenAt[T rtext](b T, i int) (int, int) {
	switch b[i] {
	case 's':
		if hasPrefixAt(b, i, "sk-") {
			return runFrom(b, i, 3, clsTokDash, 20)
		}
		if hasPrefixAt(b, i, "sk_live_") || hasPrefixAt(b, i, "sk_test_") {
			return runFrom(b, i, 8, clsAlnum, 10)
		}
	case 'r':
		if hasPrefixAt(b, i, "rk_live_") || hasPrefixAt(b, i, "rk_test_") {
			return runFrom(b, i, 8, clsAlnum, 10)
		}
	case 'x':
		if i+4 < len(b) && b[i+1] == 'o' && b[i+2] == 'x' && b[i+4] == '-' && strings.IndexByte("abeprs", b[i+3]) >= 0 {
			return runFrom(b, i, 5, clsAlnumDash, 10)
		}
	case 'g':
		if i+3 < len(b) && b[i+1] == 'h' && b[i+3] == '_' && strings.IndexByte("pousr", b[i+2]) >= 0 {
			return runFrom(b, i, 4, clsAlnum, 30)
		}
		if hasPrefixAt(b, i, "github_pat_") {
			return runFrom(b, i, 11, clsTokDash, 20)
		}
	case 'A':
		if hasPrefixAt(b, i, "AKIA") || hasPrefixAt(b, i, "ASIA") {
			k := i + 4
			for k < len(b) && k-i < 20 && rcls[b[k]]&clsUpDig != 0 {
				k++
			}
			if k-i == 20 && (k == len(b) || !rIsAlnum(b[k])) {
				return i, k
			}
			return -1, -1
		}
		if hasPrefixAt(b, i, "AIza") {
			return runFrom(b, i, 4, clsTokDash, 35)
		}
	case 'w':
		if hasPrefixAt(b, i, "whsec_") {
			return runFrom(b, i, 6, clsB64, 10)
		}
	case 'n':
		if hasPrefixAt(b, i, "npm_") {
			return runFrom(b, i, 4, clsAlnum, 36)
		}
	case 'p':
		if hasPrefixAt(b, i, "pypi-") {
			return runFrom(b, i, 5, clsTokDash, 16)
		}
	case 'B':
		if hasPrefixAt(b, i, "Bearer ") {
			k := i + 7
			for k < len(b) && b[k] == ' ' {
				k++
			}
			s, e := runFrom(b, k, 0, clsBearer, 16)
			if s < 0 {
				return -1, -1
			}
			for e < len(b) && b[e] == '=' {
				e++
			}
			return s, e
		}
	case 'h':
		const hook = "hooks.slack.com/services/"
		if hasPrefixAt(b, i, hook) {
			s, e := runFrom(b, i+len(hook), 0, clsSlack, 1)
			return s, e
		}
	}
	return -1, -1
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
// before it fails the same way, so the caller skips those (linear scan).
func jwtAt[T rtext](b T, i int) (s, e, dead int) {
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
