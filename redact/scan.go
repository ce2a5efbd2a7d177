package redact

import "strings"

// The scan: redactScan walks a line once and hands each candidate to its
// matcher (key/value, URL userinfo, PEM, flags, tokens).

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
