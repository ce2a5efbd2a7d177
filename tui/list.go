package tui

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/termtext"
)

// sortKey is one sort order of a pane: a comparison (ties are broken by id,
// newest first, so every order is total and stable across reloads).
type sortKey[R any] struct {
	name string
	cmp  func(a, b *R) int
}

// listSpec is what makes a list a Tasks, Runs, ... pane.
type listSpec[R any] struct {
	kind      feed.Kind
	title     string
	columns   []column
	statusCol int
	sorts     []sortKey[R] // sorts[0] is the default: urgency, then recency
	id        func(*R) string
	status    func(*R) string
	cells     func(r *R, c *Context, now core.Timestamp, dst []string) []string
	hay       func(r *R, dst []byte) []byte // appends the row's searchable text
	// prefix, when set, points at the row's shown id length: the table keeps
	// it at the shortest prefix of the id that no other live row shares, at
	// least minPrefix characters (docs/contract.md "Entities and statuses": the CLI takes a unique prefix).
	// Column 0 shows that prefix and widens to the longest one.
	prefix  func(*R) *uint8
	target  func(*R) Target
	tally   func(r *R, since core.Timestamp, c *headerCounts, sign int) // the row's part of the header counts
	openLog bool                                                        // enter opens the log view (jobs)
	dim     func(*R) bool                                               // the row is drawn muted (a read alert)
}

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

// list is the generic live table behind every pane. Rows are compact structs
// with their display strings computed (and sanitised) once at load; the
// sorted order and the filtered view are slices of row slots, so a key press
// touches only the rows on screen, and a filter keystroke that extends the
// query narrows the current view instead of rescanning everything.
type list[R any] struct {
	ctx  *Context
	spec *listSpec[R]
	table[R]
	win *window // set while the pane reads windows of rows (a large table)

	view  []int32 // order filtered by query (aliases order when no filter)
	match bits    // slots matching query (when there is one)
	hist  []found // earlier queries of this filter, for backspace

	query   []byte // lowercased filter
	input   lineInput
	editing bool

	cursor, offset int
	selID          string // id under the cursor, kept across reloads
	// moved: the operator has moved the cursor in this pane. Until then it
	// stays on the first row, also as rows sort in above it; after, it
	// follows its row (selID) across re-sorts and reloads.
	moved     bool
	w, h      int   // h counts the column header row
	widths    []int // the layout at this width (0 = hidden); frameWidths fits them to the rows on screen
	laidWide  int   // the table's wide when widths were computed
	frame     []int // this frame's widths
	pageCells [][]string
}

func newList[R any](ctx *Context, spec *listSpec[R]) *list[R] {
	return &list[R]{ctx: ctx, spec: spec, table: newTable(spec, nil, 0)}
}

// SetSize sets the table's size; h includes the column header row.
func (l *list[R]) SetSize(w, h int) {
	l.w, l.h = w, h
	l.layout()
	l.clamp()
}

// layout computes the column widths; the id column widens to the longest
// unique id prefix (specs with prefix), so no shown id is ever truncated.
func (l *list[R]) layout() {
	cols := l.spec.columns
	if l.spec.prefix != nil && l.wide > cols[0].Width {
		cols = slices.Clone(cols)
		cols[0].Width = l.wide
	}
	for i, c := range cols {
		if c.MultiHost && !l.ctx.multiHost || c.Delivery && !l.ctx.delivers {
			if &cols[0] == &l.spec.columns[0] { // still the spec's: copy before changing
				cols = slices.Clone(cols)
			}
			cols[i].MinScreen = math.MaxInt // hidden
		}
	}
	l.widths = layoutColumns(cols, l.w-gutter)
	l.laidWide = l.wide
}

func (l *list[R]) pageRows() int { return max(1, l.h-1) }

// install swaps in a table built by newTable (possibly in a Cmd). If the
// sort key changed meanwhile, it is re-sorted here.
func (l *list[R]) install(t table[R]) {
	sort := l.sort
	l.table = t
	l.match, l.hist = nil, nil
	if t.sort != sort {
		l.table.sort = sort
		l.sortOrder(l.order)
	}
	if l.wide != l.laidWide {
		l.layout()
	}
	l.refilter()
	l.restoreCursor()
}

// applyDelta merges changed and gone rows and keeps the cursor on its row.
func (l *list[R]) applyDelta(up []R, goneIDs []string) {
	if len(up) == 0 && len(goneIDs) == 0 {
		return
	}
	touched := l.table.apply(up, goneIDs)
	if l.wide != l.laidWide {
		l.layout()
	}
	l.hist = nil
	if len(l.query) > 0 {
		for _, s := range touched {
			if !l.gone[s] && l.contains(s) {
				l.match.set(s)
			} else {
				l.match.clear(s)
			}
		}
	}
	l.refilter()
	l.restoreCursor()
}

// cycleSort switches to the next sort key.
func (l *list[R]) cycleSort() {
	l.sort = (l.sort + 1) % len(l.spec.sorts)
	l.sortOrder(l.order)
	l.refilter()
	l.restoreCursor()
}

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

// restoreCursor puts the cursor back on the row it was on (by id), or keeps
// its position when that row is gone or filtered out.
func (l *list[R]) restoreCursor() {
	if !l.moved {
		l.cursor, l.offset = 0, 0
		l.clamp()
		return
	}
	if l.selID != "" {
		if s, ok := l.ids[l.selID]; ok {
			// Near the old position first: reloads rarely move the row far.
			c := min(l.cursor, len(l.view))
			lo, hi := max(0, c-64), min(len(l.view), c+64)
			if i := slices.Index(l.view[lo:hi], s); i >= 0 {
				l.cursor = lo + i
				l.clamp()
				return
			}
			if i := slices.Index(l.view, s); i >= 0 {
				l.cursor = i
				l.clamp()
				return
			}
		}
	}
	l.clamp()
}

// clamp keeps cursor and offset in range and the cursor on screen, and
// records the selected id.
func (l *list[R]) clamp() {
	n := len(l.view)
	l.cursor = max(0, min(l.cursor, n-1))
	page := l.pageRows()
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+page {
		l.offset = l.cursor - page + 1
	}
	l.offset = max(0, min(l.offset, n-page))
	if n > 0 {
		l.selID = l.spec.id(&l.rows[l.view[l.cursor]])
	} else {
		l.selID = ""
	}
}

// pin keeps the cursor on its row from now on, as if the operator had
// moved it there: an operator who acted on a row (detail, log, an action)
// chose it, and it should stay selected when it re-sorts after the action.
func (l *list[R]) pin() {
	if len(l.view) > 0 {
		l.moved = true
	}
}

func (l *list[R]) move(d int) {
	l.cursor += d
	l.moved = true
	l.clamp()
}

// selected returns the row under the cursor.
func (l *list[R]) selected() (*R, bool) {
	if len(l.view) == 0 {
		return nil, false
	}
	return &l.rows[l.view[l.cursor]], true
}

// prefixOf is id as this list shows it: its unique prefix when the row is
// loaded, else up to 18 characters (a whole 12-character task id, or an older
// UUIDv7's timestamp, version and 12 random bits).
func (l *list[R]) prefixOf(id string) string {
	if s, ok := l.ids[id]; ok && l.spec.prefix != nil {
		if n := int(*l.spec.prefix(&l.rows[s])); n > 0 && n <= len(id) {
			return id[:n]
		}
	}
	return id[:min(len(id), 18)]
}

// statusOf is the status the loaded row with id shows.
func (l *list[R]) statusOf(id string) (string, bool) {
	if s, ok := l.ids[id]; ok && !l.gone[s] {
		return l.spec.status(&l.rows[s]), true
	}
	return "", false
}

// Selected returns the action target of the row under the cursor.
func (l *list[R]) Selected() (Target, bool) {
	r, ok := l.selected()
	if !ok {
		return Target{}, false
	}
	return l.spec.target(r), true
}

// Counts returns the rows shown (after the filter) and all live rows (a
// windowed pane: the store's counts, 0 until counted).
func (l *list[R]) Counts() (int, int) {
	if l.win != nil {
		return int(l.win.matched), int(l.win.total)
	}
	return len(l.view), l.live
}

// CountCapped implements pane: a windowed pane's filtered count stopped at
// its limit.
func (l *list[R]) CountCapped() bool { return l.win != nil && l.win.capped }

// CountKnown implements pane.
func (l *list[R]) CountKnown() bool { return l.win == nil || l.win.totalRead }

// Editing reports whether the filter prompt has the keyboard.
func (l *list[R]) Editing() bool { return l.editing }

// Filtered reports whether a filter is applied.
func (l *list[R]) Filtered() bool { return len(l.query) > 0 }

// Title is the pane's name.
func (l *list[R]) Title() string { return l.spec.title }

// Kind is the pane's entity kind.
func (l *list[R]) Kind() feed.Kind { return l.spec.kind }

// SortName names the current sort key.
func (l *list[R]) SortName() string { return l.spec.sorts[l.sort].name }

// Update handles navigation, filter and sort keys. It reports whether the
// key was used; other keys are left to the root (actions, panes, quit).
func (l *list[R]) Update(msg tea.Msg) (bool, tea.Cmd) {
	if l.editing {
		switch l.input.update(msg) {
		case inputChanged:
			if l.win != nil {
				return true, l.wquery([]byte(strings.ToLower(l.input.value())))
			}
			l.setQuery(l.input.value())
			return true, nil
		case inputSubmit:
			l.editing = false
			return true, nil
		case inputCancel:
			l.editing = false
			l.input.set("")
			if l.win != nil {
				return true, l.wquery(nil)
			}
			l.setQuery("")
			return true, nil
		case inputSame:
			return true, nil
		}
		return false, nil
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	keys := l.ctx.Keys
	if l.win != nil {
		switch {
		case key.Matches(k, keys.Up):
			return true, l.wmove(-1)
		case key.Matches(k, keys.Down):
			return true, l.wmove(1)
		case key.Matches(k, keys.PageUp):
			return true, l.wmove(-l.pageRows())
		case key.Matches(k, keys.PageDown):
			return true, l.wmove(l.pageRows())
		case key.Matches(k, keys.Top):
			return true, l.wtop()
		case key.Matches(k, keys.Bottom):
			return true, l.wbottom()
		case key.Matches(k, keys.Sort):
			return true, l.wsort()
		case key.Matches(k, keys.Back) && l.Filtered():
			l.input.set("")
			return true, l.wquery(nil)
		}
	}
	switch {
	case key.Matches(k, keys.Up):
		l.move(-1)
	case key.Matches(k, keys.Down):
		l.move(1)
	case key.Matches(k, keys.PageUp):
		l.move(-l.pageRows())
	case key.Matches(k, keys.PageDown):
		l.move(l.pageRows())
	case key.Matches(k, keys.Top):
		l.cursor = 0
		l.move(0)
	case key.Matches(k, keys.Bottom):
		l.cursor = len(l.view) - 1
		l.move(0)
	case key.Matches(k, keys.Filter):
		l.editing = true
	case key.Matches(k, keys.Sort):
		l.cycleSort()
	case key.Matches(k, keys.Back) && l.Filtered():
		l.input.set("")
		l.setQuery("")
	default:
		return false, nil
	}
	return true, nil
}

// View renders the column titles and the visible rows, exactly h lines of w
// cells (empty rows are blank lines). The selected row carries the cursor
// mark and the theme's Selected style, so it stands out in every theme
// (mono included). Column widths fit the rows on screen (frameWidths).
func (l *list[R]) View() string {
	var b strings.Builder
	b.Grow((l.w + 32) * l.h)
	th := l.ctx.Theme
	now := l.ctx.now()
	end := min(len(l.view), l.offset+l.pageRows())
	n := end - l.offset
	for len(l.pageCells) < n {
		l.pageCells = append(l.pageCells, nil)
	}
	for i := l.offset; i < end; i++ {
		j := i - l.offset
		l.pageCells[j] = l.spec.cells(&l.rows[l.view[i]], l.ctx, now, l.pageCells[j][:0])
	}
	cols := l.spec.columns
	l.frame = frameWidths(cols, l.widths, l.pageCells[:n], [2]int{0, l.spec.statusCol}, l.w-gutter, l.frame)
	b.WriteString(l.ctx.paint(th.TableHead, "head").on(l.headerLine()))
	for i := l.offset; i < end; i++ {
		b.WriteByte('\n')
		r := &l.rows[l.view[i]]
		cells := l.pageCells[i-l.offset]
		var row string
		if i == l.cursor {
			row = l.ctx.paint(th.Selected, "selected").on(cursorMark + l.line(cells, ""))
		} else if l.spec.dim != nil && l.spec.dim(r) {
			row = l.ctx.paint(th.Muted, "muted").on(spaces(gutter) + l.line(cells, ""))
		} else {
			row = spaces(gutter) + l.line(cells, l.spec.status(r))
		}
		// The columns' least widths need about 52 cells: a narrower
		// terminal sees each row cut at its edge, not wrapped.
		b.WriteString(clipLine(row, l.w))
	}
	for i := n; i < l.pageRows(); i++ {
		b.WriteByte('\n')
		if i == 0 && len(l.view) == 0 {
			b.WriteString(l.ctx.Theme.Muted.Render(fit(l.emptyText(), l.w)))
		}
	}
	return b.String()
}

func (l *list[R]) emptyText() string {
	if l.Filtered() {
		return "  no " + l.spec.kind.String() + "s match the filter (esc clears it)"
	}
	return "  no " + l.spec.kind.String() + "s"
}

func (l *list[R]) headerLine() string {
	var b strings.Builder
	for i, c := range l.spec.columns {
		w := l.frame[i]
		if w == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		} else {
			w += gutter // the first title spans the cursor gutter
		}
		if c.Right {
			b.WriteString(fitRight(c.Title, w))
		} else {
			b.WriteString(fit(c.Title, w))
		}
	}
	return fit(b.String(), l.w)
}

// line lays out one row; status, when not empty, colours the status cell.
func (l *list[R]) line(cells []string, status string) string {
	var b strings.Builder
	b.Grow(l.w + 24)
	first := true
	for i, c := range l.spec.columns {
		w := l.frame[i]
		if w == 0 {
			continue
		}
		if !first {
			b.WriteByte(' ')
		}
		first = false
		var s string
		switch {
		case c.Right:
			s = fitRight(cells[i], w)
		case c.Command:
			s = fitCommand(cells[i], w)
		default:
			s = fit(cells[i], w)
		}
		if status != "" && i == l.spec.statusCol {
			s = l.ctx.paint(l.ctx.Theme.Status(status), status).on(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

// InfoLine is the line under the table: the filter (or prompt), the sort
// key and the counts.
func (l *list[R]) InfoLine(w int) string {
	th := l.ctx.Theme
	shown, total := l.Counts()
	right := "sort: " + l.SortName() + "  " + counts(shown, total)
	if l.win != nil {
		right = "sort: " + l.SortName() + "  " + l.wcounts()
	}
	if l.spec.kind == feed.KindAlert {
		if note := unreadNote(l.ctx, total); note != "" && !l.Filtered() {
			right = "sort: " + l.SortName() + "  " + note
		} else if note != "" {
			right += " · " + note
		}
	}
	var left string
	switch {
	case l.editing:
		left = th.Filter.Render("filter: ") + l.input.view(th.Input, max(8, w-width(right)-12))
	case l.Filtered():
		left = th.Filter.Render("filter: "+l.input.value()) + th.Muted.Render("  (esc clears)")
	default:
		left = th.Muted.Render("/ filter")
	}
	gap := w - lipgloss.Width(left) - width(right)
	if gap < 1 {
		gap = 1
	}
	return left + spaces(gap) + th.Muted.Render(right)
}

func counts(shown, total int) string {
	if shown == total {
		if total == 1 {
			return "1 row"
		}
		return termtext.Thousands(total) + " rows"
	}
	return termtext.Thousands(shown) + " of " + termtext.Thousands(total)
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

// enterBinding is what enter does in this pane, for help.
func (l *list[R]) enterBinding() key.Binding {
	b := l.ctx.Keys.Detail
	if l.spec.openLog {
		b.SetHelp(b.Help().Key, "log")
	}
	return b
}

// actionKeys are the pane's action bindings; none in a read-only console.
func (l *list[R]) actionKeys() []key.Binding {
	if l.ctx.ReadOnly {
		return nil
	}
	keys := actionKeysFor(l.ctx.Keys, l.spec.kind)
	if l.spec.kind == feed.KindAlert {
		keys = append(keys, l.ctx.Keys.AckAll)
	}
	return keys
}

// ShortHelp implements help.KeyMap: the keys worth a reminder in this pane.
func (l *list[R]) ShortHelp() []key.Binding {
	k := l.ctx.Keys
	out := []key.Binding{l.enterBinding()}
	if l.spec.openLog {
		out = append(out, k.Info)
	}
	out = append(out, l.actionKeys()...)
	return append(out, k.Filter, k.Sort, k.Help, k.Quit)
}

// FullHelp implements help.KeyMap: every key of this pane, by group.
func (l *list[R]) FullHelp() [][]key.Binding {
	k := l.ctx.Keys
	view := []key.Binding{l.enterBinding(), k.Info}
	if l.spec.openLog {
		view = append(view, k.Log)
	}
	view = append(view, k.Filter, k.Sort, k.Back)
	groups := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.Tasks, k.Runs, k.Approvals, k.Jobs, k.Alerts},
		view,
	}
	if acts := l.actionKeys(); len(acts) > 0 || !l.ctx.ReadOnly {
		if !l.ctx.ReadOnly {
			acts = append(acts, k.Maintenance)
		}
		groups = append(groups, acts)
	}
	return append(groups, []key.Binding{k.Help, k.Quit})
}
