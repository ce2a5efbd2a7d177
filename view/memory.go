package view

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// Values tells a Memory how to read one entity's rows of type R: the value
// of each sort key, each searchable field's text and the row's id.
type Values[R any] struct {
	// Keys maps each key name of the entity's sorts (Sorts; Key.Name) to
	// the row's value of it: an int64 (times in epoch ms, weights, a
	// notification's id) or a string (compared bytewise, as the store's
	// columns are).
	Keys map[string]func(*R) any
	// Fields maps each searchable field's name (Fields; Field.Name) to the
	// row's text of it, as the console shows it.
	Fields map[string]func(*R) string
	// ID is the row's id: an int64 for notifications, else a string. It
	// breaks ties in the sort's direction, as the store's windows do.
	ID func(*R) any
}

// Memory answers window queries (core.WindowQuery) over rows held in
// memory, with the sorts and searchable fields the entity's view declares:
// the in-memory counterpart of the store's windows, for small tables,
// tests and registries that are not clawpit's. It is not safe for
// concurrent use; Set replaces every row.
type Memory[R any] struct {
	entity string
	sorts  []Sort
	keys   [][]func(*R) any // per sort, its keys' readers
	fields []func(*R) string
	id     func(*R) any

	rows []R
	// buf is every row's fields' text, lower-cased (ASCII), joined by a
	// newline, each row followed by one too (row i's text is hay(i), from
	// off[i]). A filter is one line, so it cannot match across two fields
	// or two rows: one that must test most rows reads buf in one pass
	// (scan), one that tests few searches each row's text (matches).
	buf string
	off []int
	at  map[any]int // id → index in rows
	// full is each sort's order of every row, sorted when first read;
	// last the order the last Window read (its sort and filter). A
	// filter keeps the rows of an order that pass it, in that order, so
	// after the first read of a sort nothing is sorted again: a longer
	// filter (typing on) tests only the rows the last one kept, and the
	// next window of the same order (the cursor moving on) slices it.
	// Set clears both.
	full [][]int
	last *memOrder
}

// memOrder is one sort's order of the rows passing one filter.
type memOrder struct {
	sort   int
	filter string
	rows   []int
}

// NewMemory returns an empty Memory of entity's rows (core.EntityTask, ...).
// Errors: core.ErrInvalid when entity has no view, or when v misses a key
// of its sorts or a field of its view, or has no ID.
func NewMemory[R any](entity string, v Values[R]) (*Memory[R], error) {
	m := &Memory[R]{entity: entity, sorts: Sorts(entity), id: v.ID}
	if m.sorts == nil {
		return nil, core.Invalidf("no view of %q", entity)
	}
	if v.ID == nil {
		return nil, core.Invalidf("memory window of %s: no id", entity)
	}
	for _, s := range m.sorts {
		ks := make([]func(*R) any, len(s.Keys))
		for i, k := range s.Keys {
			if ks[i] = v.Keys[k.Name]; ks[i] == nil {
				return nil, core.Invalidf("memory window of %s: no value of key %q (sort %q)", entity, k.Name, s.Name)
			}
		}
		m.keys = append(m.keys, ks)
	}
	for _, f := range Fields(entity) {
		get := v.Fields[f.Name]
		if get == nil {
			return nil, core.Invalidf("memory window of %s: no text of field %q", entity, f.Name)
		}
		m.fields = append(m.fields, get)
	}
	return m, nil
}

// Set replaces the rows and reads their searchable text. The slice is
// kept: the caller must not change it until it calls Set again.
func (m *Memory[R]) Set(rows []R) {
	m.rows, m.full, m.last = rows, nil, nil
	m.off = make([]int, len(rows)+1)
	m.at = make(map[any]int, len(rows))
	var b strings.Builder
	for i := range rows {
		m.at[m.id(&rows[i])] = i
		m.off[i] = b.Len()
		for j, get := range m.fields {
			if j > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(get(&rows[i]))
		}
		b.WriteByte('\n')
	}
	m.off[len(rows)] = b.Len()
	m.buf = lowerASCII(b.String())
}

// hay is row i's searchable text in buf.
func (m *Memory[R]) hay(i int) string { return m.buf[m.off[i] : m.off[i+1]-1] }

// scan marks the rows whose hay holds filter (one line), reading buf once:
// for a filter that tests most rows, one pass over one string is several
// times faster than a search per row (bench P6, a keystroke over 100,000
// rows).
func (m *Memory[R]) scan(filter string) []bool {
	hit := make([]bool, len(m.rows))
	if filter == "" {
		for i := range hit {
			hit[i] = true
		}
		return hit
	}
	r, pos := 0, 0
	for {
		j := strings.Index(m.buf[pos:], filter)
		if j < 0 {
			return hit
		}
		at := pos + j
		for m.off[r+1] <= at {
			r++
		}
		hit[r] = true
		pos = m.off[r+1] // on to the next row
	}
}

// Len is the number of rows held.
func (m *Memory[R]) Len() int { return len(m.rows) }

// Window sends one window of the rows to send, in window order, with the
// same meaning as the store's (core.WindowQuery, core.WindowPage): a
// missing anchor gives an empty page without a FirstKey; FirstKey is the
// first row's sort-key values and id (JSON), for a later AnchorKey. The
// pointer passed to send is only valid during the call. Errors:
// core.ErrInvalid for another entity, an unknown sort or a malformed
// AnchorKey.
func (m *Memory[R]) Window(q core.WindowQuery, send func(*R)) (core.WindowPage, error) {
	var page core.WindowPage
	if q.Entity != m.entity {
		return page, core.Invalidf("memory window of %s: asked for %q", m.entity, q.Entity)
	}
	si, err := m.sortIndex(q.Sort)
	if err != nil {
		return page, err
	}
	order := m.ordered(si, lowerASCII(q.Filter))
	after := max(q.After, 0)
	var lo, hi int // the window: order[lo:hi]
	switch {
	case q.AnchorKey != "" || q.Anchor != "":
		var key []any
		if q.AnchorKey != "" {
			if key, err = m.decodeKey(si, q.AnchorKey); err != nil {
				return page, err
			}
		} else {
			i, ok := -1, false
			if len(m.rows) > 0 {
				i, ok = m.at[anyID(q.Anchor, m.id(&m.rows[0]))]
			}
			if !ok {
				return page, nil // gone: an empty window
			}
			key = m.keyOf(si, i)
		}
		// The first row at or after the anchor's position.
		at, _ := slices.BinarySearchFunc(order, key, func(r int, key []any) int {
			return m.compareKeys(si, m.keyOf(si, r), key)
		})
		lo, hi = max(0, at-max(q.Before, 0)), min(len(order), at+after)
		page.Before = at - lo
		page.MoreBefore = lo > 0
		page.MoreAfter = hi < len(order)
	case q.End:
		lo, hi = max(0, len(order)-after), len(order)
		page.MoreBefore = lo > 0
	default:
		lo, hi = 0, min(len(order), after)
		page.MoreAfter = hi < len(order)
	}
	for _, r := range order[lo:hi] {
		send(&m.rows[r])
	}
	page.Rows = hi - lo
	if hi > lo {
		b, err := json.Marshal(m.keyOf(si, order[lo]))
		if err != nil {
			return core.WindowPage{}, fmt.Errorf("memory window of %s: position: %w", m.entity, err)
		}
		page.FirstKey = string(b)
	}
	return page, nil
}

// Count returns how many rows pass filter (every row for ""), stopping at
// limit (0 = 10,000, as the store's count) with capped set when more do.
func (m *Memory[R]) Count(filter string, limit int64) (n int64, capped bool) {
	if limit <= 0 {
		limit = 10_000
	}
	f := lowerASCII(filter)
	if f == "" {
		n := int64(len(m.rows))
		return min(n, limit), n > limit
	}
	if l := m.last; l != nil && l.filter == f {
		// The window just read for this filter: its rows are the count.
		n := int64(len(l.rows))
		return min(n, limit), n > limit
	}
	for i := range m.rows {
		if m.matches(i, f) {
			if n == limit {
				return n, true
			}
			n++
		}
	}
	return n, false
}

// sortIndex finds the sort named name ("" = the first).
func (m *Memory[R]) sortIndex(name string) (int, error) {
	if name == "" {
		return 0, nil
	}
	for i, s := range m.sorts {
		if s.Name == name {
			return i, nil
		}
	}
	return 0, core.Invalidf("no sort %q of %s (one of %s)", name, m.entity, strings.Join(SortNames(m.entity), ", "))
}

// ordered returns the indexes of the rows passing filter (lower-cased), in
// sort si's order (the caller must not change them).
func (m *Memory[R]) ordered(si int, filter string) []int {
	if filter == "" {
		return m.fullOrder(si)
	}
	base := m.fullOrder(si)
	if l := m.last; l != nil && l.sort == si {
		if l.filter == filter {
			return l.rows
		}
		if strings.Contains(filter, l.filter) {
			base = l.rows // a row holding filter holds l.filter too
		}
	}
	out := make([]int, 0, min(len(base), 1024))
	if len(base) > len(m.rows)/8 && strings.IndexByte(filter, '\n') < 0 {
		hit := m.scan(filter)
		for _, i := range base {
			if hit[i] {
				out = append(out, i)
			}
		}
	} else {
		for _, i := range base {
			if m.matches(i, filter) {
				out = append(out, i)
			}
		}
	}
	m.last = &memOrder{sort: si, filter: filter, rows: out}
	return out
}

// fullOrder is every row in sort si's order, sorted on first use.
func (m *Memory[R]) fullOrder(si int) []int {
	if m.full == nil {
		m.full = make([][]int, len(m.sorts))
	}
	if m.full[si] == nil {
		m.full[si] = m.sortRows(si)
	}
	return m.full[si]
}

// sortRows sorts the indexes of every row in sort si's order.
func (m *Memory[R]) sortRows(si int) []int {
	type keyed struct {
		i   int
		key []any
	}
	rows := make([]keyed, len(m.rows))
	for i := range m.rows {
		rows[i] = keyed{i, m.keyOf(si, i)} // read once, not per comparison
	}
	slices.SortFunc(rows, func(a, b keyed) int { return m.compareKeys(si, a.key, b.key) })
	out := make([]int, len(rows))
	for j, r := range rows {
		out[j] = r.i
	}
	return out
}

// matches reports whether row i holds filter within one of its fields.
func (m *Memory[R]) matches(i int, filter string) bool {
	if filter == "" {
		return true
	}
	if strings.IndexByte(filter, '\n') < 0 {
		return strings.Contains(m.hay(i), filter)
	}
	for _, get := range m.fields { // a filter never spans two fields
		if strings.Contains(lowerASCII(get(&m.rows[i])), filter) {
			return true
		}
	}
	return false
}

// keyOf is row i's position in sort si: its keys' values, then its id.
func (m *Memory[R]) keyOf(si, i int) []any {
	ks := m.keys[si]
	out := make([]any, len(ks)+1)
	for j, k := range ks {
		out[j] = k(&m.rows[i])
	}
	out[len(ks)] = m.id(&m.rows[i])
	return out
}

// compareKeys orders two positions of sort si (every value in the sort's
// direction, the id last).
func (m *Memory[R]) compareKeys(si int, a, b []any) int {
	for j := range a {
		if c := compareValue(a[j], b[j]); c != 0 {
			if m.sorts[si].Desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// decodeKey reads an AnchorKey (a FirstKey of sort si) back.
func (m *Memory[R]) decodeKey(si int, s string) ([]any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var vals []any
	if err := d.Decode(&vals); err != nil || len(vals) != len(m.keys[si])+1 {
		return nil, core.Invalidf("window position %q: want %d values", s, len(m.keys[si])+1)
	}
	for i, v := range vals {
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, core.Invalidf("window position %q: value %d", s, i)
			}
			vals[i] = n
		case string:
		default:
			return nil, core.Invalidf("window position %q: value %d", s, i)
		}
	}
	return vals, nil
}

// compareValue orders two key values: int64s by value, strings bytewise;
// an int64 before a string (a malformed position, never a real row).
func compareValue(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
		return -1
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
		return 1
	}
	return 0
}

// anyID is the anchor id text as the kind of value the entity's ids are
// (like): an int64 for notifications; a text that is not a number matches
// no notification.
func anyID(id string, like any) any {
	if _, ok := like.(int64); ok {
		var n int64
		if _, err := fmt.Sscan(id, &n); err != nil || fmt.Sprint(n) != id {
			return nil
		}
		return n
	}
	return id
}

// lowerASCII folds ASCII letters only, as the store's filter does.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
