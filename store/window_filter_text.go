package store

// The task filter's text helpers: trigrams and their MATCH expressions,
// and the SQL of a filtered read's order and candidates.

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// isASCII reports whether s is ASCII only.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower folds ASCII letters only, as SQLite's LIKE does.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// maxTrigrams is how many of a query's trigrams the indexes are asked for:
// its rarest in the sample. Each trigram's list costs a read as long as the
// rows holding it, and the rarest few already narrow the candidates to
// about the rows that contain the query.
const maxTrigrams = 3

// trigrams are q's distinct trigrams (of characters), none when q is
// shorter than three.
func trigrams(q string) []string {
	r := []rune(q)
	seen := map[string]bool{}
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		g := string(r[i : i+3])
		if k := strings.ToLower(g); !seen[k] {
			seen[k] = true
			out = append(out, g)
		}
	}
	return out
}

// rarest are the at most max grams with the fewest sample rows (n), in
// their order in the query, leaving out any held by more than half the
// sample (and for that reason by most rows) unless it is the rarest: its
// list would cost a read as long as the table and narrow nothing.
func rarest(grams []string, n []int, max int) []string {
	idx := make([]int, len(grams))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return n[a] - n[b] })
	idx = idx[:min(max, len(idx))]
	for k := 1; k < len(idx); k++ {
		if n[idx[k]] > sampleRows/2 {
			idx = idx[:k]
			break
		}
	}
	slices.Sort(idx)
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = grams[k]
	}
	return out
}

// allOf is the MATCH expression "a row holds every one of grams" (in the
// index's columns, ix.cols). The grams may lie in different columns: the
// rows are candidates, which LIKE re-checks, and one merge of the grams'
// lists costs a third of one per column ("k 4" AND " 42" over 10,000,000
// tasks: 5 ms against 17).
func (ix ftsIndex) allOf(grams []string) string {
	terms := make([]string, len(grams))
	for i, g := range grams {
		terms[i] = ftsPhrase(g)
	}
	all := strings.Join(terms, " AND ")
	if len(ix.cols) == 0 {
		return all
	}
	return "{" + strings.Join(ix.cols, " ") + "} : (" + all + ")"
}

// ftsPhrase quotes s as one FTS5 phrase (a string, "" doubled).
func ftsPhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// order is a sort read in one direction: its ORDER BY and the keyset
// comparison from an anchor.
type order struct {
	desc    bool
	orderBy string // " ORDER BY k1 DESC, …"
	op      string // the keyset comparison: "<", "<=", ">" or ">="
}

// orderOf is s read forwards or (reverse) backwards; from includes the
// anchor row itself.
func orderOf(s winSort, reverse, from bool) order {
	o := order{desc: s.desc != reverse}
	dir := " ASC"
	if o.desc {
		dir = " DESC"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k + dir
	}
	o.orderBy = " ORDER BY " + strings.Join(parts, ", ")
	o.op = "<"
	if !o.desc {
		o.op = ">"
	}
	if from {
		o.op += "="
	}
	return o
}

// after is the condition "keys, from the anchor's (one ? each), come after
// it", with a leading " AND ".
func (o order) after(keys []string) string {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ")
	return " AND (" + strings.Join(keys, ", ") + ") " + o.op + " (" + marks + ")"
}

// candidateWhere is "a candidate that holds the text": the indexes'
// candidates re-checked with LIKE (a row can hold every trigram of a query
// without the query), and its arguments (textIndex, textProbe, probeRows).
func (p *filterPlan) candidateWhere() (string, []any) {
	cand, args := p.candidates()
	cond, cargs := p.textLike()
	return "rowid IN (" + cand + ") AND " + cond, append(args, cargs...)
}

// candidates is the subquery of the indexes' candidate rowids and its
// arguments (textIndex).
func (p *filterPlan) candidates() (string, []any) {
	var parts []string
	var args []any
	for i, ix := range p.f.indexes {
		if p.match[i] != "" {
			parts = append(parts, "SELECT rowid FROM "+ix.fts+" WHERE "+ix.fts+" MATCH ?")
			args = append(args, p.match[i])
		}
	}
	return strings.Join(parts, " UNION "), args
}

// textLike is "a text field contains the query" (LIKE per field).
func (p *filterPlan) textLike() (string, []any) { return p.f.likeAny(p.like) }

// likeAny is "a text field is LIKE pattern".
func (f *ftsFilter) likeAny(pattern string) (string, []any) {
	parts := make([]string, len(f.text))
	args := make([]any, len(f.text))
	for i, c := range f.text {
		parts[i] = c + ` LIKE ? ESCAPE '\'`
		args[i] = pattern
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}
