package tui

import (
	"bytes"
	"slices"
	"strings"
)

// span locates a row's lowercased search text in the list's arena.
type span struct{ off, n uint32 }

// table is a list's data: the rows, their search text and the sorted order.
// It is built off the UI goroutine for a full load (newTable, in a Cmd) and
// installed in O(1); deltas are merged in place (apply).
type table[R any] struct {
	spec  *listSpec[R]
	rows  []R
	gone  []bool // slot deleted (compacted at the next full load)
	ids   map[string]int32
	hays  []span
	masks []uint64 // which byte classes each row's text contains (filter prefilter)
	grams []bloom  // which byte pairs it contains (filter prefilter)
	arena []byte   // lowercased search text of every row, back to back
	stale int      // bytes of arena no row points to any more
	live  int      // rows not gone
	order []int32  // live slots in sort order
	sort  int
	byID  []int32 // live slots in id order (specs with prefix only)
	wide  int     // longest id prefix shown (specs with prefix only)
	// wholeIDs shows every id whole: the rows are a window of the table,
	// and a prefix unique among them may not be unique in the table.
	wholeIDs bool
}

// newTable indexes and sorts rows by sort key sort.
func newTable[R any](spec *listSpec[R], rows []R, sort int) table[R] {
	t := table[R]{
		spec:  spec,
		rows:  rows,
		gone:  make([]bool, len(rows)),
		ids:   make(map[string]int32, len(rows)),
		hays:  make([]span, len(rows)),
		masks: make([]uint64, len(rows)),
		grams: make([]bloom, len(rows)),
		arena: make([]byte, 0, len(rows)*64),
		order: make([]int32, len(rows)),
		live:  len(rows),
		sort:  sort,
	}
	for i := range rows {
		t.ids[spec.id(&rows[i])] = int32(i)
		t.index(int32(i))
		t.order[i] = int32(i)
	}
	t.sortOrder(t.order)
	if spec.prefix != nil {
		t.byID = make([]int32, len(rows))
		for i := range t.byID {
			t.byID[i] = int32(i)
		}
		slices.SortFunc(t.byID, t.cmpID)
		for p := range t.byID {
			t.setPrefix(p)
		}
	}
	return t
}

// showWholeIDs makes the table show every id whole (see wholeIDs).
func (t *table[R]) showWholeIDs() {
	t.wholeIDs = true
	if t.spec.prefix == nil {
		return
	}
	for p := range t.byID {
		t.setPrefix(p)
	}
}

// minPrefix is the fewest id characters shown: 13, the millisecond timestamp
// (8+1+4) of the UUIDv7 task ids older registries hold. Shorter ids (12
// base32 characters for tasks, 12 hex for jobs and approvals) are shown whole.
const minPrefix = 13

func (t *table[R]) cmpID(a, b int32) int {
	return strings.Compare(t.spec.id(&t.rows[a]), t.spec.id(&t.rows[b]))
}

// setPrefix sets the shown id length of the slot at position p of byID:
// one past its longest common prefix with either neighbour (in sorted order
// the neighbours share the most with it), so the prefix is unique.
func (t *table[R]) setPrefix(p int) {
	s := t.byID[p]
	id := t.spec.id(&t.rows[s])
	n := minPrefix
	if p > 0 {
		n = max(n, commonPrefix(id, t.spec.id(&t.rows[t.byID[p-1]]))+1)
	}
	if p+1 < len(t.byID) {
		n = max(n, commonPrefix(id, t.spec.id(&t.rows[t.byID[p+1]]))+1)
	}
	if t.wholeIDs {
		n = len(id)
	}
	n = min(n, len(id), 255)
	*t.spec.prefix(&t.rows[s]) = uint8(n)
	t.wide = max(t.wide, n)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// insertIDs removes the gone slots from byID and merges the new slots in,
// then recomputes the prefixes of the new slots and their neighbours (a
// neighbour may now need more characters). Prefixes next to removed ids are
// left as they are: longer than needed, still unique; the next full load
// shortens them.
func (t *table[R]) insertIDs(fresh []int32, gone bool) {
	ids := t.byID
	if gone {
		ids = slices.DeleteFunc(ids, func(s int32) bool { return t.gone[s] })
	}
	if len(fresh) == 0 {
		t.byID = ids
		return
	}
	slices.SortFunc(fresh, t.cmpID)
	out := make([]int32, 0, len(ids)+len(fresh))
	at := make([]int, 0, len(fresh))
	i := 0
	for _, s := range fresh {
		j, _ := slices.BinarySearchFunc(ids[i:], s, t.cmpID)
		out = append(out, ids[i:i+j]...)
		at = append(at, len(out))
		out = append(out, s)
		i += j
	}
	t.byID = append(out, ids[i:]...)
	for _, p := range at {
		for q := max(0, p-1); q <= min(len(t.byID)-1, p+1); q++ {
			t.setPrefix(q)
		}
	}
}

// index (re)computes a slot's search text.
func (t *table[R]) index(slot int32) {
	t.stale += int(t.hays[slot].n)
	start := len(t.arena)
	t.arena = t.spec.hay(&t.rows[slot], t.arena)
	if isPlainBytes(t.arena[start:]) {
		lowerASCII(t.arena[start:])
	} else {
		low := bytes.ToLower(t.arena[start:])
		t.arena = append(t.arena[:start], low...)
	}
	t.hays[slot] = span{uint32(start), uint32(len(t.arena) - start)}
	t.masks[slot] = maskOf(t.arena[start:])
	t.grams[slot] = bloomOf(t.arena[start:])
}

func (t *table[R]) cmp(a, b int32) int {
	ra, rb := &t.rows[a], &t.rows[b]
	if c := t.spec.sorts[t.sort].cmp(ra, rb); c != 0 {
		return c
	}
	return strings.Compare(t.spec.id(rb), t.spec.id(ra))
}

func (t *table[R]) sortOrder(s []int32) { slices.SortFunc(s, t.cmp) }

// merge inserts the sorted slots b into the sorted order a: a binary search
// per inserted slot, so a delta of k rows costs O(k log n) comparisons plus
// one copy, not a comparison per row.
func (t *table[R]) merge(a, b []int32) []int32 {
	if len(b) == 0 {
		return a
	}
	out := make([]int32, 0, len(a)+len(b))
	i := 0
	for _, s := range b {
		j, _ := slices.BinarySearchFunc(a[i:], s, t.cmp)
		out = append(out, a[i:i+j]...)
		out = append(out, s)
		i += j
	}
	return append(out, a[i:]...)
}

// apply merges a delta: rows changed or added, and ids that are gone. Only
// the touched rows are re-sorted; they are merged into the order. It
// returns the touched slots.
func (t *table[R]) apply(up []R, goneIDs []string) []int32 {
	mark := newBits(len(t.rows) + len(up))
	var touched []int32
	for _, id := range goneIDs {
		if s, ok := t.ids[id]; ok && !t.gone[s] {
			t.gone[s] = true
			t.stale += int(t.hays[s].n)
			delete(t.ids, id)
			mark.set(s)
			touched = append(touched, s)
			t.live--
		}
	}
	var fresh, added []int32
	for i := range up {
		id := t.spec.id(&up[i])
		s, ok := t.ids[id]
		if !ok {
			added = append(added, int32(len(t.rows)))
			s = int32(len(t.rows))
			t.rows = append(t.rows, up[i])
			t.gone = append(t.gone, false)
			t.hays = append(t.hays, span{})
			t.masks = append(t.masks, 0)
			t.grams = append(t.grams, bloom{})
			t.ids[id] = s
			t.live++
		} else if t.spec.prefix != nil {
			n := *t.spec.prefix(&t.rows[s]) // same id, same prefix
			t.rows[s] = up[i]
			*t.spec.prefix(&t.rows[s]) = n
		} else {
			t.rows[s] = up[i]
		}
		t.index(s)
		if !mark.has(s) {
			fresh = append(fresh, s)
			touched = append(touched, s)
		}
		mark.set(s)
	}
	// Keep the order without the touched slots, then merge them back in.
	kept := make([]int32, 0, len(t.order)+len(fresh))
	for _, s := range t.order {
		if !mark.has(s) {
			kept = append(kept, s)
		}
	}
	t.sortOrder(fresh)
	t.order = t.merge(kept, fresh)
	if t.spec.prefix != nil && (len(added) > 0 || len(goneIDs) > 0) {
		t.insertIDs(added, len(goneIDs) > 0)
	}
	t.compactArena()
	return touched
}

// compactArena drops stale search text once it is more than half the arena.
func (t *table[R]) compactArena() {
	if len(t.arena) < 1<<16 || t.stale*2 < len(t.arena) {
		return
	}
	used := len(t.arena) - t.stale
	fresh := make([]byte, 0, used+used/4)
	for s, h := range t.hays {
		if t.gone[s] {
			t.hays[s] = span{}
			continue
		}
		start := len(fresh)
		fresh = append(fresh, t.arena[h.off:h.off+h.n]...)
		t.hays[s] = span{uint32(start), h.n}
	}
	t.arena = fresh
	t.stale = 0
}

// lowerASCII lowercases ASCII letters in place.
func lowerASCII(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
}

func isPlainBytes(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
