package store

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
)

// The task filter on SQLite reads through migration 0009's trigram index
// (tasks_fts) and the status and urgency indexes, not through every row:
// a filter matches a task when a shown field contains the text, and the
// store splits that into arms that each read few rows.
//
//   - The text arm (id, runtime, name, session, delivery status, error):
//     the index's candidates, re-checked with LIKE, when there are at most
//     filterIndexCap of them; a query of one or two characters finds its
//     trigrams in the index's vocabulary by prefix. A text with more
//     candidates than that is common, so reading the pane's order with
//     LIKE finds a window of matches within a few thousand rows.
//   - One arm per task status containing the text (the statuses are seven
//     known words): in the urgency order a status is one range of the
//     urgency index; in the other orders a small status is read through
//     the status index and sorted, a large one by reading the order.
//
// Each arm reads at most one window in the pane's order from the anchor;
// the window is the first rows of their union. PostgreSQL keeps the LIKE
// scan of selectWindow (ILIKE per field).

// filterIndexCap is the most index candidates (or rows of one status) the
// filter reads and sorts itself; above it, the text or status is common
// enough that the pane's own order finds a window quickly.
const filterIndexCap = 10_000

// maxVocabTerms bounds the trigrams a one- or two-character query ORs
// together; more means the characters are common (read the order).
const maxVocabTerms = 2_000

// ftsFilter describes a table's trigram-indexed filter (SQLite).
type ftsFilter struct {
	table      string   // the indexed table
	fts, vocab string   // the FTS5 table and its fts5vocab ('row') table
	text       []string // the hay fields it indexes, re-checked with LIKE
	// enumCol holds one of enumValues (the CHECK constraint's set); its
	// values containing the query become arms.
	enumCol    string
	enumValues []string
	// urgency is each enum value's urgencyCol value, for the urgency
	// sort's range seek (sortIndex["urgency"] leads with urgencyCol).
	urgencyCol string
	urgency    map[string]int
	classIndex string            // an index leading with enumCol: reads one value's rows
	sortIndex  map[string]string // sort name → the index serving it
}

// taskFilter is the tasks table's (migrations 0007 and 0009).
var taskFilter = &ftsFilter{
	table: "tasks", fts: "tasks_fts", vocab: "tasks_fts_vocab",
	text: []string{"id", "runtime", taskName, "coalesce(nullif(child_session, ''), owner_session, '')",
		"delivery_status", "error"},
	enumCol: "status",
	enumValues: []string{string(core.TaskRunning), string(core.TaskQueued), string(core.TaskLost), string(core.TaskFailed),
		string(core.TaskTimedOut), string(core.TaskCancelled), string(core.TaskSucceeded)},
	urgencyCol: "win_urgency",
	// As migration 0007's win_urgency.
	urgency:    map[string]int{"running": 6, "queued": 5, "lost": 4, "failed": 3, "timed_out": 2, "cancelled": 1, "succeeded": 0},
	classIndex: "tasks_status_ended",
	sortIndex: map[string]string{"urgency": "tasks_win_urgency", "recent": "tasks_win_recent",
		"created": "tasks_win_created", "label": "tasks_win_label"},
}

// Text arm modes.
const (
	textNone  = iota // no row's text contains the query
	textIndex        // read the index's candidates (at most filterIndexCap)
	textScan         // common: read the order with LIKE
)

// filterPlan is how one query reads (planFilter).
type filterPlan struct {
	f        *ftsFilter
	q        string // the query
	like     string // the LIKE pattern (likeArg)
	match    string // the MATCH expression of textIndex
	text     int    // textNone, textIndex or textScan
	textN    int64  // index candidates counted, capped at filterIndexCap+1 (textIndex/textScan by index)
	cap      int64  // the index cap this plan used
	classes  []string
	classN   map[string]int64 // rows of each class, capped at filterIndexCap+1 (not in the urgency sort)
	sortName string
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

// caps are the filter's caps: filterIndexCap and maxVocabTerms, unless a
// test set smaller ones.
func (db *DB) caps() (index, vocab int64) {
	index, vocab = filterIndexCap, maxVocabTerms
	if db.filterCap.index > 0 {
		index = db.filterCap.index
	}
	if db.filterCap.vocab > 0 {
		vocab = db.filterCap.vocab
	}
	return index, vocab
}

// ftsPhrase quotes s as one FTS5 phrase (a string, "" doubled).
func ftsPhrase(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// planFilter decides how q reads in sort s: the text arm's mode from the
// index's candidate count, and the statuses containing q.
func (t *tx) planFilter(f *ftsFilter, s winSort, q string, countClasses bool) (*filterPlan, error) {
	indexCap, vocabCap := t.db.caps()
	p := &filterPlan{f: f, q: q, like: likeArg(q), sortName: s.name, cap: indexCap}
	lq := asciiLower(q)
	for _, v := range f.enumValues {
		if strings.Contains(v, lq) {
			p.classes = append(p.classes, v)
		}
	}
	if countClasses || s.name != "urgency" {
		p.classN = map[string]int64{}
		for _, v := range p.classes {
			var n int64
			err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT 1 FROM tasks INDEXED BY "+f.classIndex+
				" WHERE "+f.enumCol+" = ? LIMIT ?)", v, indexCap+1).Scan(&n)
			if err != nil {
				return nil, mapErr(err)
			}
			p.classN[v] = n
		}
	}
	// The trigram tokenizer folds case as Unicode does (LIKE folds only
	// ASCII): a superset of LIKE's matches, which the arm re-checks.
	if utf8.RuneCountInString(q) >= 3 {
		p.match = ftsPhrase(q)
	} else {
		// The vocabulary's read costs as much as the rows holding the
		// characters: a sample of the table first says whether they are
		// common (then reading the order finds a window at once).
		dense, err := t.denseSample(p)
		if err != nil {
			return nil, err
		}
		if dense {
			p.text = textScan
			return p, nil
		}
		terms, err := t.vocabPrefix(f, strings.ToLower(q), vocabCap)
		if err != nil {
			return nil, err
		}
		switch {
		case len(terms) == 0:
			p.text = textNone
			return p, nil
		case int64(len(terms)) > vocabCap:
			p.text = textScan
			return p, nil
		}
		for i, term := range terms {
			terms[i] = ftsPhrase(term)
		}
		p.match = strings.Join(terms, " OR ")
	}
	err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT rowid FROM "+f.fts+" WHERE "+f.fts+" MATCH ? LIMIT ?)",
		p.match, indexCap+1).Scan(&p.textN)
	if err != nil {
		return nil, mapErr(err)
	}
	switch {
	case p.textN == 0:
		p.text = textNone
	case p.textN > indexCap:
		p.text = textScan
	default:
		p.text = textIndex
	}
	return p, nil
}

// Sample sizes of denseSample: a text in at least sampleDense of the first
// sampleRows rows (in rowid order) is common.
const (
	sampleRows  = 1000
	sampleDense = 50
)

// denseSample reports whether the plan's text is common: held by at least
// sampleDense of the table's first sampleRows rows.
func (t *tx) denseSample(p *filterPlan) (bool, error) {
	cond, args := p.textLike()
	var n int
	err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT "+cond+" AS m FROM "+p.f.table+" LIMIT "+
		strconv.Itoa(sampleRows)+") WHERE m", args...).Scan(&n)
	return n >= sampleDense, mapErr(err)
}

// vocabPrefix lists the index's trigrams that start with prefix (one or
// two characters, already case-folded), at most max+1 of them.
// Every character of an indexed value starts a trigram (the values end in
// two U+0001), so the rows containing prefix are the rows holding one of
// these trigrams.
func (t *tx) vocabPrefix(f *ftsFilter, prefix string, max int64) ([]string, error) {
	rows, err := t.tx.QueryContext(t.ctx, "SELECT term FROM "+f.vocab+" WHERE term >= ? AND term < ? LIMIT ?",
		prefix, prefix+"\U0010FFFF", max+1)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var terms []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, mapErr(err)
		}
		terms = append(terms, s)
	}
	return terms, mapErr(rows.Err())
}

// textLike is "a text field contains the query" (LIKE per field).
func (p *filterPlan) textLike() (string, []any) {
	parts := make([]string, len(p.f.text))
	args := make([]any, len(p.f.text))
	for i, f := range p.f.text {
		parts[i] = f + ` LIKE ? ESCAPE '\'`
		args[i] = p.like
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// selectFiltered is selectWindow for a planned filter: the union of the
// arms, each one window in the order from the anchor, then the first limit
// rows of the union in that order.
func (w *winTable) selectFiltered(p *filterPlan, s winSort, anchor []any, reverse, from bool, limit int) (string, []any) {
	desc := s.desc != reverse
	dir := " ASC"
	if desc {
		dir = " DESC"
	}
	order := make([]string, len(s.keys))
	for i, k := range s.keys {
		order[i] = k + dir
	}
	orderBy := " ORDER BY " + strings.Join(order, ", ")
	lim := " LIMIT " + strconv.Itoa(limit)
	var keyset string
	var keyArgs []any
	if anchor != nil {
		op := "<"
		if !desc {
			op = ">"
		}
		if from {
			op += "="
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(s.keys)), ", ")
		keyset = " AND (" + strings.Join(s.keys, ", ") + ") " + op + " (" + marks + ")"
		keyArgs = anchor
	}
	var arms []string
	var args []any
	arm := func(from, where string, wargs []any) {
		arms = append(arms, "SELECT r FROM (SELECT "+w.table+".rowid AS r FROM "+from+" WHERE "+where+keyset+orderBy+lim+")")
		args = append(args, wargs...)
		args = append(args, keyArgs...)
	}
	f := p.f
	sortIdx := w.table + " INDEXED BY " + f.sortIndex[s.name]
	switch p.text {
	case textIndex:
		cond, cargs := p.textLike()
		// NOT INDEXED: look the candidates up by rowid and sort them,
		// never read the order probing them.
		arm(w.table+" NOT INDEXED", "rowid IN (SELECT rowid FROM "+f.fts+" WHERE "+f.fts+" MATCH ?) AND "+cond,
			append([]any{p.match}, cargs...))
	case textScan:
		cond, cargs := p.textLike()
		arm(sortIdx, cond, cargs)
	}
	for _, v := range p.classes {
		switch {
		case s.name == "urgency":
			// One status is one range of the urgency index.
			arm(sortIdx, f.urgencyCol+" = ? AND "+f.enumCol+" = ?", []any{f.urgency[v], v})
		case p.classN[v] <= p.cap:
			arm(w.table+" INDEXED BY "+f.classIndex, f.enumCol+" = ?", []any{v})
		default:
			// Unary + keeps the planner on the order's index.
			arm(sortIdx, "+"+f.enumCol+" = ?", []any{v})
		}
	}
	if len(arms) == 0 {
		// No row matches: a rowid lookup that finds nothing.
		return "SELECT " + w.cols + " FROM " + w.table + " WHERE rowid = NULL", nil
	}
	// The union holds at most one window per arm: look its rows up by
	// rowid and sort them.
	return "SELECT " + w.cols + " FROM " + w.table + " NOT INDEXED WHERE rowid IN (" + strings.Join(arms, " UNION ALL ") + ")" + orderBy + lim, args
}

// countFiltered counts the rows passing a planned filter, up to limit
// (capped: more). A text or status with more rows than the limit answers
// at once; otherwise the union of the index's re-checked candidates and
// the small statuses is counted. ok is false when the plan cannot count
// (a common one- or two-character text): the caller reads with LIKE.
func (t *tx) countFiltered(w *winTable, p *filterPlan, limit int64) (n int64, capped, ok bool, err error) {
	f := p.f
	if limit > p.cap {
		return 0, false, false, nil // the plan's counts stop at its cap
	}
	for _, v := range p.classes {
		if p.classN[v] > limit {
			return limit, true, true, nil
		}
	}
	var arms []string
	var args []any
	switch p.text {
	case textScan:
		if p.textN <= limit {
			return 0, false, false, nil // too many vocabulary terms: not counted
		}
		// More index candidates than the limit (a superset of LIKE's
		// matches only by non-ASCII case variants).
		return limit, true, true, nil
	case textIndex:
		cond, cargs := p.textLike()
		arms = append(arms, "SELECT rowid AS r FROM "+w.table+" NOT INDEXED WHERE rowid IN (SELECT rowid FROM "+f.fts+" WHERE "+f.fts+" MATCH ?) AND "+cond)
		args = append(append(args, p.match), cargs...)
	}
	if len(p.classes) > 0 {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(p.classes)), ", ")
		arms = append(arms, "SELECT rowid AS r FROM "+w.table+" INDEXED BY "+f.classIndex+" WHERE "+f.enumCol+" IN ("+marks+")")
		for _, v := range p.classes {
			args = append(args, v)
		}
	}
	if len(arms) == 0 {
		return 0, false, true, nil
	}
	err = t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT r FROM ("+strings.Join(arms, " UNION ")+") LIMIT ?)",
		append(args, limit+1)...).Scan(&n)
	if err != nil {
		return 0, false, false, mapErr(err)
	}
	if n > limit {
		return limit, true, true, nil
	}
	return n, false, true, nil
}
