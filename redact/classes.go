package redact

// The byte tables of the scan (character classes, the prefilter's kinds)
// and the byte-string helpers both instantiations of rtext share.

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

// mayStartToken: the prefilter on a word's first two bytes.
func mayStartToken(c, d byte) bool { return rnext[c][d/64]>>(d%64)&1 != 0 }

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
