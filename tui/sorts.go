package tui

import (
	"fmt"

	"github.com/clawpit/clawpit/view"
)

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
