package logview

import (
	"strings"
	"unicode"
)

// matcher finds a search query in a line. Smart case: a query that is all
// lower-case ASCII matches ASCII letters of either case; a query with an
// upper-case letter or a non-ASCII character matches exactly.
type matcher struct {
	q    string
	fold bool // q is lower-case ASCII; compare ASCII case-insensitively
}

func newMatcher(q string) matcher {
	fold := true
	for _, r := range q {
		if r >= unicode.MaxASCII || unicode.IsUpper(r) {
			fold = false
			break
		}
	}
	return matcher{q: q, fold: fold}
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// index returns the byte offset of the first match in s at or after from, or -1.
func (m matcher) index(s string, from int) int {
	if m.q == "" || from > len(s) {
		return -1
	}
	if !m.fold {
		if i := strings.Index(s[from:], m.q); i >= 0 {
			return from + i
		}
		return -1
	}
	q := m.q
	c0 := q[0]
	c0u := c0
	if 'a' <= c0 && c0 <= 'z' {
		c0u = c0 - ('a' - 'A')
	}
	last := len(s) - len(q)
	for i := from; i <= last; i++ {
		if c := s[i]; c != c0 && c != c0u {
			continue
		}
		j := 1
		for ; j < len(q); j++ {
			if lowerASCII(s[i+j]) != q[j] {
				break
			}
		}
		if j == len(q) {
			return i
		}
	}
	return -1
}

// contains reports whether s has a match.
func (m matcher) contains(s string) bool { return m.index(s, 0) >= 0 }

// spans appends the byte ranges [start, end) of the non-overlapping matches
// in s to dst.
func (m matcher) spans(s string, dst [][2]int) [][2]int {
	for from := 0; ; {
		i := m.index(s, from)
		if i < 0 {
			return dst
		}
		dst = append(dst, [2]int{i, i + len(m.q)})
		from = i + len(m.q)
	}
}
