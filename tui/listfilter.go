package tui

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
)

// The filter: a case-insensitive substring over each row's search text,
// narrowed keystroke by keystroke.

// setQuery filters by a case-insensitive substring. A query that extends
// the previous one only re-tests the rows that still match; one that an
// earlier keystroke already answered (backspace) is restored.
func (l *list[R]) setQuery(q string) {
	low := []byte(strings.ToLower(q))
	prev := l.query
	l.query = low
	switch h, ok := l.recall(string(low)); {
	case len(low) == 0:
		l.match, l.hist = nil, nil
		l.view = l.order
		l.restoreCursor()
		return
	case ok:
		l.match = h.match.clone()
		l.view = l.fromMatch(h.n)
	case len(prev) > 0 && bytes.HasPrefix(low, prev) && len(l.view)*64 < len(l.rows):
		// Few rows left: test just those, in view order.
		out := make([]int32, 0, len(l.view))
		m := newBits(len(l.rows))
		for _, s := range l.view {
			if l.contains(s) {
				out = append(out, s)
				m.set(s)
			}
		}
		l.view, l.match = out, m
	case len(prev) > 0 && bytes.HasPrefix(low, prev):
		l.view = l.fromMatch(l.scanInto(l.match))
	default:
		l.view = l.fromMatch(l.scanInto(nil))
	}
	l.remember(len(l.view))
	l.restoreCursor()
}

// refilter rebuilds the view from the order after a sort or a load.
func (l *list[R]) refilter() {
	if len(l.query) == 0 {
		l.view = l.order
		return
	}
	n := -1
	if len(l.match) == 0 {
		n = l.scanInto(nil)
	}
	l.view = l.fromMatch(n)
}

// scanInto sets match from a scan and returns how many rows matched.
func (l *list[R]) scanInto(within bits) int {
	var n int
	l.match, n = l.scan(within)
	return n
}

// contains tests one row against the query.
func (l *list[R]) contains(s int32) bool {
	h := l.hays[s]
	return bytes.Contains(l.arena[h.off:h.off+h.n], l.query)
}

// scan tests every live row (only those in within, when given) in slot
// order — the arena's order, so memory is read sequentially — and returns
// the matching slots as a bit set. A row whose byte-class mask lacks one of
// the query's classes cannot match and is skipped without reading its text;
// for a one-letter (or digit) query the mask is the answer.
func (l *list[R]) scan(within bits) (bits, int) {
	rows := len(l.rows)
	m := newBits(rows)
	q := l.query
	qm, qg := maskOf(q), bloomOf(q)
	exact := len(q) == 1 && exactClass(q[0])
	// Large tables are split across the CPUs in chunks of whole bit-set
	// words, so each goroutine writes only its own words.
	parts := min(runtime.GOMAXPROCS(0), rows/scanChunk+1)
	counts := make([]int, parts)
	per := (rows/parts + 63) &^ 63
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*per, min(rows, (p+1)*per)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for i := lo; i < hi; i++ {
				s := int32(i)
				if (within != nil && !within.has(s)) || l.masks[s]&qm != qm || !l.grams[s].covers(&qg) || l.gone[s] {
					continue
				}
				if !exact {
					h := l.hays[s]
					if !bytes.Contains(l.arena[h.off:h.off+h.n], q) {
						continue
					}
				}
				m[s>>6] |= 1 << (uint(s) & 63)
				n++
			}
			counts[p] = n
		}()
	}
	wg.Wait()
	n := 0
	for _, c := range counts {
		n += c
	}
	return m, n
}

// scanChunk is the fewest rows worth a goroutine of their own.
const scanChunk = 16384

// bloom is a 256-bit Bloom filter of the byte pairs of a row's text: a row
// lacking one of the query's pairs cannot contain it. About 80 pairs per row
// set a quarter of the bits, so a three-letter query rejects most rows
// without reading their text.
type bloom [4]uint64

func bloomOf(b []byte) (f bloom) {
	for i := 0; i+1 < len(b); i++ {
		h := (uint32(b[i])<<8 | uint32(b[i+1])) * 0x9E3779B1 >> 24
		f[h>>6] |= 1 << (h & 63)
	}
	return f
}

// covers reports whether f has every bit of q.
func (f *bloom) covers(q *bloom) bool {
	return f[0]&q[0] == q[0] && f[1]&q[1] == q[1] && f[2]&q[2] == q[2] && f[3]&q[3] == q[3]
}

// maskOf is the set of byte classes in b: one bit per letter and digit,
// shared bits for punctuation, one for every non-ASCII byte.
func maskOf(b []byte) uint64 {
	var m uint64
	for _, c := range b {
		m |= 1 << byteClass[c]
	}
	return m
}

// exactClass reports whether c has a bit of its own (so a mask answers a
// one-byte query exactly).
func exactClass(c byte) bool { return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') }

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z':
			t[c] = uint8(c - 'a') // 0–25
		case 'A' <= c && c <= 'Z':
			t[c] = uint8(c - 'A')
		case '0' <= c && c <= '9':
			t[c] = uint8(26 + c - '0') // 26–35
		case c < 0x80:
			t[c] = uint8(36 + c%27) // 36–62, shared
		default:
			t[c] = 63
		}
	}
	return t
}()

// fromMatch is the order restricted to the matching slots (n of them, or
// -1 when unknown).
func (l *list[R]) fromMatch(n int) []int32 {
	if n < 0 {
		n = 64
	}
	out := make([]int32, 0, n)
	for _, s := range l.order {
		if l.match.has(s) {
			out = append(out, s)
		}
	}
	return out
}

// found is an earlier query's result: backspace restores it instead of
// rescanning. Cleared whenever rows change.
type found struct {
	q     string
	match bits
	n     int
}

// remember records the current query's match, replacing entries that are
// not prefixes of it (at most one per length).
func (l *list[R]) remember(n int) {
	q := string(l.query)
	keep := l.hist[:0]
	for _, h := range l.hist {
		if len(h.q) < len(q) && strings.HasPrefix(q, h.q) {
			keep = append(keep, h)
		}
	}
	l.hist = append(keep, found{q: q, match: l.match, n: n})
}

// recall finds the result of query q among the earlier ones.
func (l *list[R]) recall(q string) (found, bool) {
	for _, h := range l.hist {
		if h.q == q {
			return h, true
		}
	}
	return found{}, false
}

// bits is a set of row slots.
type bits []uint64

func newBits(n int) bits { return make(bits, (n+63)/64) }

func (b *bits) set(i int32) {
	for int(i>>6) >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i>>6] |= 1 << (uint(i) & 63)
}

func (b bits) clone() bits { return append(bits(nil), b...) }

func (b bits) clear(i int32) {
	if int(i>>6) < len(b) {
		b[i>>6] &^= 1 << (uint(i) & 63)
	}
}

func (b bits) has(i int32) bool {
	return int(i>>6) < len(b) && b[i>>6]&(1<<(uint(i)&63)) != 0
}
