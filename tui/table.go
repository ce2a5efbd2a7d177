package tui

import (
	"bytes"
)

// span locates a row's lowercased search text in the list's arena.
type span struct{ off, n uint32 }

// table is a list's data: one window of rows, in the source's order (the
// store's, or feed.MemoryWindow's with the same sorts), and their search
// text. It is built off the UI goroutine (the window's Cmd) or in onWindow,
// and replaced whole by the next window.
type table[R any] struct {
	spec  *listSpec[R]
	rows  []R
	ids   map[string]int32
	hays  []span
	arena []byte // lowercased search text of every row, back to back
	wide  int    // longest id prefix shown (specs with prefix only)
}

// newTable indexes a window's rows. unique, when it holds a length for
// every row (feed.WindowResult.Unique), gives the shortest prefix of each
// id that no other row of the table shares: the id column shows that
// prefix, at least minPrefix characters; without it ids are shown whole (a
// prefix unique within a window may not be unique in the table).
func newTable[R any](spec *listSpec[R], rows []R, unique []int) table[R] {
	t := table[R]{
		spec:  spec,
		rows:  rows,
		ids:   make(map[string]int32, len(rows)),
		hays:  make([]span, len(rows)),
		arena: make([]byte, 0, len(rows)*64),
	}
	for i := range rows {
		t.ids[spec.id(&rows[i])] = int32(i)
		t.index(int32(i))
		if spec.prefix != nil {
			id := spec.id(&rows[i])
			n := len(id)
			if len(unique) == len(rows) && unique[i] > 0 {
				n = min(max(unique[i], minPrefix), len(id))
			}
			n = min(n, 255)
			*spec.prefix(&rows[i]) = uint8(n)
			t.wide = max(t.wide, n)
		}
	}
	return t
}

// minPrefix is the fewest id characters shown: 13, the millisecond timestamp
// (8+1+4) of the UUIDv7 task ids older registries hold. Shorter ids (12
// base32 characters for tasks, 12 hex for jobs and approvals) are shown whole.
const minPrefix = 13

// index computes a slot's search text.
func (t *table[R]) index(slot int32) {
	start := len(t.arena)
	t.arena = t.spec.hay(&t.rows[slot], t.arena)
	// ASCII letters only, as the store's filter and view.Memory fold them.
	lowerASCII(t.arena[start:])
	t.hays[slot] = span{uint32(start), uint32(len(t.arena) - start)}
}

// contains reports whether the row in slot s holds the lowercased query q.
func (t *table[R]) contains(s int32, q []byte) bool {
	h := t.hays[s]
	return bytes.Contains(t.arena[h.off:h.off+h.n], q)
}

// lowerASCII lowercases ASCII letters in place.
func lowerASCII(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
}
