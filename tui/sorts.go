package tui

import (
	"fmt"

	"github.com/clawpit/clawpit/view"
)

// sortsOf derives a pane's sorts from its entity's view (view.Sorts): each
// sort compares its keys in turn, each by keys[its name] (ascending), the
// arguments swapped when the sort is descending. A key the pane does not
// compare is a programming error: it panics when the package loads.
func sortsOf[R any](entity string, keys map[string]func(a, b *R) int) []sortKey[R] {
	var out []sortKey[R]
	for _, s := range view.Sorts(entity) {
		fs := make([]func(a, b *R) int, len(s.Keys))
		for i, k := range s.Keys {
			f, ok := keys[k.Name]
			if !ok {
				panic(fmt.Sprintf("tui: the %s pane does not compare key %q of sort %q", entity, k.Name, s.Name))
			}
			fs[i] = f
		}
		out = append(out, sortKey[R]{name: s.Name, cmp: compose(fs, s.Desc)})
	}
	return out
}

// compose compares by fs in turn, descending when desc. One and two keys
// (every sort today) get closures of their own: comparisons run in sorts
// of a million rows.
func compose[R any](fs []func(a, b *R) int, desc bool) func(a, b *R) int {
	switch {
	case len(fs) == 1 && !desc:
		return fs[0]
	case len(fs) == 1:
		f := fs[0]
		return func(a, b *R) int { return f(b, a) }
	case len(fs) == 2 && desc:
		f, g := fs[0], fs[1]
		return func(a, b *R) int {
			if c := f(b, a); c != 0 {
				return c
			}
			return g(b, a)
		}
	}
	return func(a, b *R) int {
		if desc {
			a, b = b, a
		}
		for _, f := range fs {
			if c := f(a, b); c != 0 {
				return c
			}
		}
		return 0
	}
}

// hayOf derives a pane's search text from its entity's view (view.Fields):
// each field's text, by fields[its name], in the view's order, separated by
// a newline (a byte no query can contain: queries are one line). fields
// must name exactly the view's fields: another set is a programming error
// and panics when the package loads.
func hayOf[R any](entity string, fields map[string]func(*R) string) func(r *R, dst []byte) []byte {
	vf := view.Fields(entity)
	if len(vf) != len(fields) {
		panic(fmt.Sprintf("tui: the %s pane searches %d fields, its view declares %d", entity, len(fields), len(vf)))
	}
	fs := make([]func(*R) string, len(vf))
	for i, f := range vf {
		get, ok := fields[f.Name]
		if !ok {
			panic(fmt.Sprintf("tui: the %s pane does not search field %q", entity, f.Name))
		}
		fs[i] = get
	}
	return func(r *R, dst []byte) []byte {
		for i, get := range fs {
			if i > 0 {
				dst = append(dst, '\n')
			}
			dst = append(dst, get(r)...)
		}
		return dst
	}
}
