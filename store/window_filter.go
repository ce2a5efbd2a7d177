package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/sqlq"
	views "github.com/clawpit/clawpit/view" // package view (the tests hold a helper named view)
)

// The task filter on SQLite reads through migration 0009's trigram indexes
// (tasks_fts, tasks_error_fts) and the status, urgency and delivery
// indexes, not through every row: a filter matches a task when a shown
// field contains the text, and the store splits that into arms that each
// read few rows.
//
//   - The text arm (id, runtime, name, session, error) reads one of three
//     ways, decided for each side of a window from where it starts:
//   - when the first nearRows rows of the pane's order from the anchor
//     hold a window of matches (or are all there is), it reads the order
//     with LIKE: the text is common there;
//   - otherwise the indexes' candidates, when there are at most
//     filterIndexCap of them, are looked up, re-checked with LIKE and
//     sorted;
//   - up to filterProbeCap candidates, it reads the order's index and
//     keeps the rows among the candidates (an index-only test per row,
//     the row itself read only for a candidate): a common text whose
//     matches lie deep in the order costs a read of the index, not of
//     every row before them.
//     A query of one or two characters finds its trigrams in the indexes'
//     vocabularies by prefix.
//   - One arm per status or delivery status containing the text (a few
//     known words each): in the urgency order a status is one range of the
//     urgency index; otherwise a small class is read through its column's
//     index and sorted, a large one by reading the order.
//   - One arm per agent whose name contains the text (sessions.agent, read
//     through sessions_agent: window_agent.go): the tasks of its sessions,
//     read as a class through tasks_owner_session.
//
// Each arm reads at most one window in the pane's order from the anchor;
// the window is the first rows of their union. PostgreSQL keeps the LIKE
// scan of selectWindow (ILIKE per field).

// filterIndexCap is the most index candidates (or rows of one class) the
// filter reads and sorts itself; above it, the text or class is common
// enough that the pane's own order finds a window quickly.
const filterIndexCap = 10_000

// filterProbeCap is the most index candidates the filter tests the pane's
// order against (an ephemeral index of their rowids, about 0.2 µs each);
// above it the text is in a large share of the table and reading the order
// with LIKE is cheaper.
const filterProbeCap = 2_000_000

// filterSortCap is the most candidates a side reads and sorts itself
// (textIndex) when testing the order against them finds no window within
// its time budget (probeRows): the probe's cost grows with how far the
// order holds the matches apart, a sort's only with the candidates. In the
// urgency order "sess-424" over 10,000,000 tasks has 10,709 candidates,
// whose 173rd lies 700,000 entries in (a 58 ms walk; sorting them: 20 ms).
const filterSortCap = 50_000

// probeBudgetPerCandidate is probeRows' time budget per candidate (a
// sort reads one row per candidate, about 0.7 µs each when cached).
const probeBudgetPerCandidate = 500 * time.Nanosecond

// probeBudgetMin is probeRows' least time budget.
const probeBudgetMin = 2 * time.Millisecond

// nearRows is how many rows of the pane's order, from the anchor, the
// filter reads with LIKE before it turns to the indexes: a text holding a
// window within them is read there at once.
const nearRows = 2_000

// denseNear multiplies nearRows for a text the table's sample holds often
// (sideText).
const denseNear = 8

// maxVocabTerms bounds the trigrams a one- or two-character query ORs
// together; more means the characters are common (read the order).
const maxVocabTerms = 2_000

// ftsIndex is one trigram index and its fts5vocab ('row') table; cols,
// when set, are the only columns (detail = 'column') a query's trigrams are
// looked for in, none meaning every column.
type ftsIndex struct {
	fts, vocab string
	cols       []string
}

// enumArm is a column holding one of a few known values (its CHECK
// constraint's set): the values containing the query become arms.
type enumArm struct {
	col        string
	values     []string
	classIndex string // an index leading with col: reads one value's rows
	// urgency, when set, maps each value to its urgencyCol value: in the
	// urgency sort (whose index leads with urgencyCol) a value is one range.
	urgency map[string]int
	// in, when set, is a subquery of col's values for one arm value (one
	// ?): the arm is "col IN (in)", its values read from the registry
	// (the agent arm: an agent's sessions), not from values.
	in string
}

// is is the arm's condition for one value (one ?); plus puts a unary + on
// the column (keeping SQLite's planner on the order's index).
func (e *enumArm) is(plus bool) string {
	col := e.col
	if plus {
		col = "+" + col
	}
	if e.in != "" {
		return col + " IN (" + e.in + ")"
	}
	return col + " = ?"
}

// taskAgentArm is the task filter's agent arm: the tasks of the sessions
// an agent whose name contains the text recorded (window_agent.go),
// through tasks_owner_session.
var taskAgentArm = &enumArm{
	col:        "owner_session",
	in:         "SELECT id FROM sessions INDEXED BY sessions_agent WHERE agent = ?",
	classIndex: "tasks_owner_session",
}

// ftsFilter describes a table's indexed filter (SQLite).
type ftsFilter struct {
	table   string
	indexes []ftsIndex
	text    []string // the fields the indexes hold, re-checked with LIKE
	enums   []*enumArm
	// agent, when set, is the agent arm (its values: agentsMatching).
	agent *enumArm
	// urgencyCol leads the urgency sort's index.
	urgencyCol string
	sortIndex  map[string]string // sort name → the index serving it
}

// taskFilter is the tasks table's (migrations 0007 and 0009).
var taskFilter = &ftsFilter{
	table: "tasks",
	indexes: []ftsIndex{{"tasks_fts", "tasks_fts_vocab", nil},
		{"tasks_error_fts", "tasks_error_fts_vocab", nil}},
	// The fields the enum arms leave to the text (view.Fields).
	text: views.SQLFields(core.EntityTask, "status", "delivery_status"),
	enums: []*enumArm{{
		col:        "status",
		values:     taskStatusValues(),
		classIndex: "tasks_status_ended",
		// As migration 0007's win_urgency (store/view_test.go checks it).
		urgency: views.TaskUrgencies(),
	}, {
		col: "delivery_status",
		values: []string{string(core.DeliveryPending), string(core.DeliveryDelivered), string(core.DeliverySessionQueued),
			string(core.DeliveryFailed), string(core.DeliveryParentMissing), string(core.DeliveryNotApplicable)},
		classIndex: "tasks_delivery",
	}},
	agent:      taskAgentArm,
	urgencyCol: "win_urgency",
	sortIndex: map[string]string{"urgency": "tasks_win_urgency", "recent": "tasks_win_recent",
		"created": "tasks_win_created", "label": "tasks_win_label"},
}

// taskStatusValues is every task status, most urgent first
// (view.TaskUrgencyOrder).
func taskStatusValues() []string {
	o := views.TaskUrgencyOrder()
	out := make([]string, len(o))
	for i, s := range o {
		out[i] = string(s)
	}
	return out
}

// taskRestFilter is taskFilter without the name: in label order the name
// arm reads the label order's own index (labelArm), and this filter the
// other fields.
var taskRestFilter = &ftsFilter{
	table: taskFilter.table,
	indexes: []ftsIndex{{"tasks_fts", "tasks_fts_vocab", []string{"id", "runtime", "session"}},
		{"tasks_error_fts", "tasks_error_fts_vocab", nil}},
	text:       views.SQLFields(core.EntityTask, "status", "delivery_status", taskName),
	enums:      taskFilter.enums,
	agent:      taskFilter.agent,
	urgencyCol: taskFilter.urgencyCol,
	sortIndex:  taskFilter.sortIndex,
}

// Text arm modes.
const (
	textNone  = iota // no row's text contains the query
	textIndex        // read the indexes' candidates (at most the cap)
	textScan         // common: read the order with LIKE
	textProbe        // many candidates: read the order's index, keep the candidates
	// textLabel (label order): names through the label order's own index
	// (labelArm), the other fields through taskRestFilter's plan.
	textLabel
	// textRows: the side's text matches were read ahead (probeRows) and
	// are looked up by rowid.
	textRows
)

// class is one arm's value: rows whose arm.col is value.
type class struct {
	arm   *enumArm
	value string
	n     int64 // its rows, counted up to the cap + 1 (0: not counted)
}

// filterPlan is how one query reads (planFilter).
type filterPlan struct {
	f       *ftsFilter
	q       string   // the query
	like    string   // the LIKE pattern (likeArg)
	match   []string // per index, its MATCH expression ("" = no candidates there)
	text    int      // textNone, textIndex or textScan
	counted bool     // n holds each index's candidates (not a dense or vocabulary-wide text)
	n       []int64  // per index, its candidates counted up to the cap + 1
	cap     int64    // the index cap this plan used
	classes []class
	// Text arms for each side (sideText): grams and gramN are the
	// query's trigrams and their sample counts, indexed says p.match is
	// set (false: not yet, or the query cannot use the indexes: noIndex),
	// and probeN the candidates counted (sideText): exactly up to the sort
	// cap + 1, else an upper bound up to the probe cap + 1 or exactly
	// beyond it (-1: not yet).
	grams   []string
	gramN   []int
	indexed bool
	noIndex bool
	probeN  int64
	// dense: the sample holds the text in sampleDense of its rows or more.
	dense bool
	// far, when set, decides a side whose first rows near the anchor hold
	// too few matches, instead of the indexes' candidates (label order:
	// textLabel).
	far func() (int, error)
}

// filterCaps are the task filter's caps; a zero field takes the default.
type filterCaps struct {
	index, vocab, probe, near int64
	// sort is filterSortCap; budget (ns) replaces probeRows' time budget.
	sort, budget int64
	// bucket and split are the label order's bucket sizes
	// (labelBucketRows, labelSplitRows), chunk its read size (labelChunk),
	// rekeys a writer's renumbering cap (labelInlineRekeys).
	bucket, split, chunk, rekeys int64
}

// caps are the filter's caps: filterIndexCap, maxVocabTerms,
// filterProbeCap and nearRows, unless a test set smaller ones.
func (db *DB) caps() filterCaps {
	c := filterCaps{index: filterIndexCap, vocab: maxVocabTerms, probe: filterProbeCap, near: nearRows, sort: filterSortCap}
	o := db.filterCap
	for _, p := range []struct{ dst, src *int64 }{{&c.index, &o.index}, {&c.vocab, &o.vocab}, {&c.probe, &o.probe}, {&c.near, &o.near},
		{&c.sort, &o.sort}, {&c.budget, &o.budget}} {
		if *p.src > 0 {
			*p.dst = *p.src
		}
	}
	return c
}

// planFilter decides how q reads in sort s: the text arm's mode from the
// indexes' candidate counts, and the classes whose value contains q
// (counted, except a status in the urgency sort, unless countAll).
//
// rarity, when set, ranks q's trigrams instead of f's own sample (a plan of
// some fields ranked by every field's).
func (t *tx) planFilter(f *ftsFilter, s winSort, q string, countAll bool, rarity []int) (*filterPlan, error) {
	c := t.db.caps()
	indexCap := c.index
	p := &filterPlan{f: f, q: q, like: likeArg(q), cap: indexCap, match: make([]string, len(f.indexes)),
		n: make([]int64, len(f.indexes))}
	lq := asciiLower(q)
	type armValues struct {
		e      *enumArm
		values []string
	}
	var arms []armValues
	for _, e := range f.enums {
		arms = append(arms, armValues{e, e.values})
	}
	if f.agent != nil {
		agents, err := t.agentsMatching(q)
		if err != nil {
			return nil, err
		}
		arms = append(arms, armValues{f.agent, agents})
	}
	for _, a := range arms {
		e := a.e
		for _, v := range a.values {
			if !strings.Contains(asciiLower(v), lq) {
				continue
			}
			c := class{arm: e, value: v}
			if countAll || e.urgency == nil || s.name != "urgency" {
				err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT 1 FROM "+f.table+" INDEXED BY "+e.classIndex+
					" WHERE "+e.is(false)+" LIMIT ?)", v, indexCap+1).Scan(&c.n)
				if err != nil {
					return nil, mapErr(err)
				}
			}
			p.classes = append(p.classes, c)
		}
	}
	// The trigram tokenizer folds case as Unicode does (LIKE folds only
	// ASCII): a superset of LIKE's matches, which the arm re-checks.
	// A sample of the table says whether the text is common (then reading
	// the order finds a window at once, and the indexes would cost as much
	// as the rows holding it) and, for a longer query, which of its
	// trigrams are rarest.
	p.probeN = -1
	p.grams = trigrams(q)
	dense, gramN, err := t.sample(p, p.grams)
	if err != nil {
		return nil, err
	}
	p.gramN = gramN
	if len(rarity) == len(gramN) {
		p.gramN = rarity
	}
	// A short non-ASCII query is read with LIKE: the vocabulary holds
	// trigrams folded as FTS5 folds case, which Go's folding need not
	// match, and a missed prefix would hide rows.
	if len(p.grams) == 0 && !isASCII(q) {
		p.text, p.noIndex = textScan, true
		return p, nil
	}
	if dense {
		p.text, p.dense = textScan, true
		return p, nil
	}
	if ok, err := t.indexMatch(p); err != nil || !ok {
		return p, err
	}
	var total int64
	for i, ix := range f.indexes {
		if p.match[i] == "" {
			continue
		}
		err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT rowid FROM "+ix.fts+" WHERE "+ix.fts+" MATCH ? LIMIT ?)",
			p.match[i], indexCap+1).Scan(&p.n[i])
		if err != nil {
			return nil, mapErr(err)
		}
		if p.n[i] == 0 {
			p.match[i] = ""
		}
		total += p.n[i]
	}
	p.counted = true
	switch {
	case total == 0:
		p.text = textNone
	case total > indexCap:
		p.text = textScan
	default:
		p.text = textIndex
	}
	return p, nil
}

// indexMatch sets p.match, the indexes' MATCH expressions (once); ok is
// false when the query cannot read through the indexes (p.noIndex: a one-
// or two-character text in more trigrams than the vocabulary cap, which is
// then read with LIKE).
func (t *tx) indexMatch(p *filterPlan) (ok bool, err error) {
	if p.indexed || p.noIndex {
		return p.indexed, nil
	}
	f := p.f
	if len(p.grams) > 0 {
		for i, ix := range f.indexes {
			p.match[i] = ix.allOf(rarest(p.grams, p.gramN, maxTrigrams))
		}
		p.indexed = true
		return true, nil
	}
	vocabCap := t.db.caps().vocab
	total := 0
	match := make([]string, len(f.indexes))
	for i, ix := range f.indexes {
		terms, err := t.vocabPrefix(ix, strings.ToLower(p.q), vocabCap)
		if err != nil {
			return false, err
		}
		total += len(terms)
		if int64(total) > vocabCap {
			p.text, p.noIndex = textScan, true
			return false, nil
		}
		for j, term := range terms {
			terms[j] = ftsPhrase(term)
		}
		match[i] = strings.Join(terms, " OR ")
	}
	p.match, p.indexed = match, true
	return true, nil
}

// sideText decides the text arm of one side of a window (the rows from
// anchor in the direction of reverse, limit of them) for a text the table
// holds often (p.text textScan): reading the order with LIKE when the rows
// near the anchor hold limit matches or are all the rows there are;
// otherwise through the indexes, by how many candidates they hold
// (textNone, textIndex, textProbe; more than filterProbeCap: textScan).
// Up to filterSortCap candidates, the probe runs here within a time budget
// (textRows: rows are its matches), and past the budget the candidates are
// sorted instead (textIndex).
// "Near" is the first nearRows rows of the order from the anchor: reading
// further with LIKE costs a read of each row (several µs each, scattered
// over the table), testing the order's index against candidates a fraction
// of that.
func (t *tx) sideText(w *winTable, p *filterPlan, s winSort, anchor []any, reverse, from bool, limit int) (text int, rows []int64, err error) {
	if p.text != textScan || p.noIndex {
		return p.text, nil, nil
	}
	c := t.db.caps()
	o := orderOf(s, reverse, from)
	cond, likeArgs := p.textLike()
	where := "1"
	var keyArgs []any
	if anchor != nil {
		where += o.after(s.keys)
		keyArgs = anchor
	}
	// nearRows is the first n rows of the order from the anchor, with the
	// fields the text is matched against.
	nearRows := func(n int64) string {
		return "SELECT id, runtime, " + taskName + ", child_session, owner_session, error FROM " + w.table + " INDEXED BY " +
			p.f.sortIndex[s.name] + " WHERE " + where + o.orderBy + " LIMIT " + strconv.FormatInt(n, 10)
	}
	var n, hits int64
	err = t.tx.QueryRowContext(t.ctx, "SELECT count(*), coalesce(sum("+cond+"), 0) FROM ("+nearRows(c.near)+")",
		append(slices.Clone(likeArgs), keyArgs...)...).Scan(&n, &hits)
	if err != nil {
		return 0, nil, mapErr(err)
	}
	if n < c.near || hits >= int64(limit) {
		return textScan, nil, nil
	}
	if p.dense {
		// A text in many of the table's rows looks further, stopping at a
		// window of matches: an order that puts a class of other rows
		// first (the urgency order's running tasks) holds it soon after
		// them, and reading those rows with LIKE (about 0.5 µs each when
		// cached) costs less than counting and probing the index's
		// candidates for a text in most rows (1,000,000 of them: 35 ms to
		// count, about 100 ms to probe).
		err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT 1 FROM ("+nearRows(c.near*denseNear)+") WHERE "+cond+
			" LIMIT "+strconv.Itoa(limit)+")", append(slices.Clone(keyArgs), likeArgs...)...).Scan(&hits)
		if err != nil {
			return 0, nil, mapErr(err)
		}
		if hits >= int64(limit) {
			return textScan, nil, nil
		}
	}
	if p.far != nil {
		text, err := p.far()
		return text, nil, err
	}
	if ok, err := t.indexMatch(p); err != nil || !ok {
		return textScan, nil, err
	}
	if p.probeN < 0 {
		// An upper bound first, the rows holding the rarest trigram (one
		// list, read without merging others: several times cheaper); the
		// candidates themselves when the bound is over the cap, or over
		// the index cap (up to the sort cap: the bound can be far off,
		// "424" in 59,572 rows, all of "sess-424"'s trigrams in 10,709).
		m, err := t.countCandidates(p, c.probe, true)
		switch {
		case err == nil && m > c.probe:
			m, err = t.countCandidates(p, c.probe, false)
		case err == nil && m > c.index && p.boundIsExact():
			// The bound's MATCH is the candidates' own: counted already.
		case err == nil && m > c.index:
			var exact int64
			if exact, err = t.countCandidates(p, c.sort, false); exact <= c.sort {
				m = exact
			}
		}
		if err != nil {
			return 0, nil, err
		}
		p.probeN = m
	}
	switch {
	case p.probeN == 0:
		return textNone, nil, nil
	case p.probeN <= c.index:
		return textIndex, nil, nil
	case p.probeN <= min(c.sort, c.probe):
		budget := max(time.Duration(p.probeN)*probeBudgetPerCandidate, probeBudgetMin)
		if c.budget > 0 {
			budget = time.Duration(c.budget)
		}
		rows, ok, err := t.probeRows(w, p, s, anchor, reverse, from, limit, budget)
		switch {
		case err != nil:
			return 0, nil, err
		case ok:
			return textRows, rows, nil
		}
		return textIndex, nil, nil
	case p.probeN <= c.probe:
		return textProbe, nil, nil
	}
	return textScan, nil, nil
}

// probeRows reads a side's text arm as textProbe does (the order's index
// tested against the candidates, from the anchor, limit matches at most),
// returning their rowids; ok is false when the read took longer than
// budget and was interrupted: the candidates are then sorted instead. A
// walk's cost depends on how far apart the order holds the matches, which
// nothing cheaper than the walk tells; the budget bounds what a far-apart
// walk wastes to a fraction of the sort.
func (t *tx) probeRows(w *winTable, p *filterPlan, s winSort, anchor []any, reverse, from bool, limit int, budget time.Duration) (rows []int64, ok bool, err error) {
	o := orderOf(s, reverse, from)
	where, args := p.candidateWhere()
	q := "SELECT rowid FROM " + w.table + " INDEXED BY " + p.f.sortIndex[s.name] + " WHERE " + where
	if anchor != nil {
		q += o.after(s.keys)
		args = append(args, anchor...)
	}
	q += o.orderBy + " LIMIT " + strconv.Itoa(limit)
	ctx, cancel := context.WithTimeout(t.ctx, budget)
	defer cancel()
	rows, err = sqlq.QueryColumn[int64](ctx, t.tx, q, args...)
	switch {
	case err == nil:
		return rows, true, nil
	case t.ctx.Err() != nil:
		return nil, false, t.ctx.Err() // the read itself was cancelled
	case ctx.Err() != nil:
		// Over budget: SQLite interrupted the walk. (A deadline that ends
		// before the statement's first step is lost, and the walk runs to
		// its first match; mattn/go-sqlite3 says so of its interrupt.)
		return nil, false, nil
	}
	return nil, false, mapErr(err)
}

// boundIsExact reports whether countCandidates' bound (the rarest
// trigram's rows) is the candidates' count itself: the query has one
// trigram, or none (one or two characters: the bound is the vocabulary's
// terms, as the candidates are), and no index restricts it to columns.
func (p *filterPlan) boundIsExact() bool {
	for _, ix := range p.f.indexes {
		if len(ix.cols) > 0 {
			return false
		}
	}
	return len(p.grams) <= 1
}

// countCandidates counts the indexes' candidates for p, each index's up to
// max+1; bound counts the rows holding the query's rarest trigram instead
// (at least as many). An index with none is left out of p.match.
func (t *tx) countCandidates(p *filterPlan, max int64, bound bool) (int64, error) {
	var total int64
	for i, ix := range p.f.indexes {
		if p.match[i] == "" {
			continue
		}
		expr := p.match[i]
		if bound && len(p.grams) > 0 {
			expr = ftsPhrase(rarest(p.grams, p.gramN, 1)[0])
		}
		var m int64
		err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT rowid FROM "+ix.fts+" WHERE "+ix.fts+" MATCH ? LIMIT ?)",
			expr, max+1).Scan(&m)
		if err != nil {
			return 0, mapErr(err)
		}
		if m == 0 {
			p.match[i] = ""
		}
		total += m
	}
	return total, nil
}

// Sample sizes of sample: a text in at least sampleDense of the first
// sampleRows rows (in rowid order) is common.
const (
	sampleRows  = 1000
	sampleDense = 50
)

// sample reads the table's first sampleRows rows and reports whether the
// plan's text is common (held by at least sampleDense of them) and, for
// each of grams, how many hold it.
func (t *tx) sample(p *filterPlan, grams []string) (dense bool, gramN []int, err error) {
	cond, args := p.textLike()
	cols := []string{"sum(" + cond + ")"}
	for _, g := range grams {
		gc, gargs := p.f.likeAny(likeArg(g))
		cols = append(cols, "sum("+gc+")")
		args = append(args, gargs...)
	}
	vals := make([]sql.NullInt64, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err = t.tx.QueryRowContext(t.ctx, "SELECT "+strings.Join(cols, ", ")+" FROM (SELECT * FROM "+p.f.table+" LIMIT "+
		strconv.Itoa(sampleRows)+")", args...).Scan(ptrs...)
	if err != nil {
		return false, nil, mapErr(err)
	}
	gramN = make([]int, len(grams))
	for i := range grams {
		gramN[i] = int(vals[i+1].Int64)
	}
	return vals[0].Int64 >= sampleDense, gramN, nil
}

// vocabPrefix lists index ix's trigrams that start with prefix (one or
// two characters, already case-folded), at most max+1 of them.
// Every character of an indexed value starts a trigram (the values end in
// two U+0001), so the rows containing prefix are the rows holding one of
// these trigrams.
func (t *tx) vocabPrefix(ix ftsIndex, prefix string, max int64) ([]string, error) {
	terms, err := sqlq.QueryColumn[string](t.ctx, t.tx, "SELECT term FROM "+ix.vocab+" WHERE term >= ? AND term < ? LIMIT ?",
		prefix, prefix+"\U0010FFFF", max+1)
	return terms, mapErr(err)
}

// selectFiltered is selectWindow for a planned filter: the union of the
// arms, each one window in the order from the anchor, then the first limit
// rows of the union in that order. text is the text arm's mode on this side
// (sideText); rows are rowids read ahead (textRows, the label order's names).
func (w *winTable) selectFiltered(p *filterPlan, text int, s winSort, anchor []any, reverse, from bool, limit int, rows []int64) (string, []any) {
	o := orderOf(s, reverse, from)
	desc, orderBy := o.desc, o.orderBy
	lim := " LIMIT " + strconv.Itoa(limit)
	var arms []string
	var args []any
	armOn := func(from, where string, wargs []any, keyset string, keyArgs []any) {
		arms = append(arms, "SELECT r FROM (SELECT "+w.table+".rowid AS r FROM "+from+" WHERE "+where+keyset+orderBy+lim+")")
		args = append(args, wargs...)
		args = append(args, keyArgs...)
	}
	arm := func(from, where string, wargs []any) {
		if anchor == nil {
			armOn(from, where, wargs, "", nil)
			return
		}
		armOn(from, where, wargs, o.after(s.keys), anchor)
	}
	f := p.f
	sortIdx := w.table + " INDEXED BY " + f.sortIndex[s.name]
	if len(rows) > 0 {
		// Rows read ahead (the label order's names, labelArm, and a probe's
		// matches, textRows), looked up by rowid.
		arm(w.table+" NOT INDEXED", "rowid IN (SELECT value FROM json_each(?))", []any{sqlq.JSONInts(slices.Values(rows))})
	}
	switch text {
	case textIndex:
		// NOT INDEXED: look the candidates up by rowid and sort them,
		// never read the order probing them.
		where, wargs := p.candidateWhere()
		arm(w.table+" NOT INDEXED", where, wargs)
	case textScan:
		cond, cargs := p.textLike()
		arm(sortIdx, cond, cargs)
	case textProbe:
		// The order's index entries hold the rowid: the candidate test
		// needs no read of the row, LIKE only a candidate's.
		where, wargs := p.candidateWhere()
		arm(sortIdx, where, wargs)
	}
	for _, c := range p.classes {
		switch {
		case s.name == "urgency" && c.arm.urgency != nil:
			// One status is one range of the urgency index: with the
			// urgency fixed, the anchor compares on the other keys (a
			// seek), or the class lies wholly after or before it.
			u := int64(c.arm.urgency[c.value])
			where, wargs := f.urgencyCol+" = ? AND "+c.arm.col+" = ?", []any{u, c.value}
			if anchor == nil {
				armOn(sortIdx, where, wargs, "", nil)
				break
			}
			a0, ok := anchor[0].(int64)
			switch {
			case !ok: // not an integer: compare every key
				armOn(sortIdx, where, wargs, o.after(s.keys), anchor)
			case a0 == u:
				armOn(sortIdx, where, wargs, o.after(s.keys[1:]), anchor[1:])
			case (u < a0) == desc:
				armOn(sortIdx, where, wargs, "", nil) // the whole class comes after the anchor
			}
		case c.n <= p.cap:
			arm(w.table+" INDEXED BY "+c.arm.classIndex, c.arm.is(false), []any{c.value})
		default:
			// Unary + keeps the planner on the order's index.
			arm(sortIdx, c.arm.is(true), []any{c.value})
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

// countFiltered counts the rows passing a planned filter (planned with
// countAll), up to limit (capped: more). A class beyond the limit answers
// at once; otherwise each arm reads at most limit+1 rows (the text arm the
// indexes' candidates in their order, each looked up and re-checked with
// LIKE: a candidate holds the query's trigrams, not always the text), and
// their union is counted. ok is false when the plan cannot count (a text
// common in the table's sample, or a one- or two-character one in too many
// trigrams): the caller reads with LIKE.
func (t *tx) countFiltered(w *winTable, p *filterPlan, limit int64) (n int64, capped, ok bool, err error) {
	for _, c := range p.classes {
		if c.n > limit {
			return limit, true, true, nil
		}
	}
	lim := " LIMIT " + strconv.FormatInt(limit+1, 10)
	var arms []string
	var args []any
	if p.text != textNone {
		if !p.counted {
			return 0, false, false, nil
		}
		cond, cargs := p.textLike()
		for i, ix := range p.f.indexes {
			if p.match[i] == "" {
				continue
			}
			// CROSS JOIN: the candidates drive, so the read stops at the
			// limit.
			arms = append(arms, "SELECT r FROM (SELECT c.r AS r FROM (SELECT rowid AS r FROM "+ix.fts+" WHERE "+ix.fts+
				" MATCH ?) AS c CROSS JOIN "+w.table+" WHERE "+w.table+".rowid = c.r AND "+cond+lim+")")
			args = append(append(args, p.match[i]), cargs...)
		}
	}
	for _, c := range p.classes {
		arms = append(arms, "SELECT r FROM (SELECT rowid AS r FROM "+w.table+" INDEXED BY "+c.arm.classIndex+" WHERE "+c.arm.is(false)+lim+")")
		args = append(args, c.value)
	}
	if len(arms) == 0 {
		return 0, false, true, nil
	}
	err = t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM (SELECT r FROM ("+strings.Join(arms, " UNION ")+")"+lim+")", args...).Scan(&n)
	if err != nil {
		return 0, false, false, mapErr(err)
	}
	if n > limit {
		return limit, true, true, nil
	}
	return n, false, true, nil
}
