package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
)

// Compile-time check: *tx serves the console's windows.
var _ core.WindowTx = (*tx)(nil)

// Sort keys that are computed are migration 0007's generated columns
// (win_*: virtual on SQLite, stored on PostgreSQL): an index on columns lets one row-value comparison seek to
// a window's anchor.
const taskName = "win_name"

// pgTaskHay is the task filter's fields on PostgreSQL as one text, joined
// by chr(1) (no filter holds it, so a match never spans two fields), under
// the C collation (ILIKE then folds ASCII only, as SQLite's LIKE): the
// expression of the trigram index tasks_filter_trgm (store/postgres/migrations 0011),
// which a filter reads through instead of the pane's order.
const pgTaskHay = `((id || chr(1) || status || chr(1) || runtime || chr(1) || coalesce(win_name, '') || chr(1) || ` +
	`coalesce(nullif(child_session, ''), owner_session, '') || chr(1) || delivery_status || chr(1) || error) COLLATE "C")`

// pgTaskChars is the characters of pgTaskHay, lowercased as ILIKE folds them
// under the C collation (ASCII only): the expression of store/postgres/migrations 0013's
// index tasks_filter_chars, term for term. A row holding a one- or
// two-character text holds its characters.
const pgTaskChars = `string_to_array(lower(` + pgTaskHay + `), NULL)`

// winSort is one order: its key expressions (the id last), all descending
// (desc) or all ascending, so one row-value comparison is the keyset seek.
type winSort struct {
	name string
	keys []string
	desc bool
}

// winTable describes how one entity's windows are read.
type winTable struct {
	table, id, cols string
	// hay are the searchable fields (the ones the console shows): a row
	// passes the filter when one of them contains it (a query never spans
	// two fields, as in the console's own filter). Text only: PostgreSQL
	// has no LIKE on numbers.
	hay []string
	// pgHay, when set, is hay as one expression on PostgreSQL (pgTaskHay),
	// with a trigram index; pgChars its characters, with an index too
	// (pgTaskChars).
	pgHay, pgChars string
	// agentSession is the column naming the row's session whose agent the
	// console shows and filters by (window_agent.go); "" for none. agents
	// are the agents the query's filter names (agentsMatching), set per
	// query.
	agentSession string
	agents       []string
	sorts        []winSort
	// filter, when set, is how the filter reads on SQLite (window_filter.go).
	filter *ftsFilter
	scan   func(r *sql.Rows, sink core.RowSink) error
}

// planned reports whether filter q reads through w's indexed filter
// (window_filter.go): SQLite, a table that has one, a non-empty query of
// valid UTF-8 without NUL (FTS5 reads its query as a C string; anything
// else reads with LIKE).
func (w *winTable) planned(d dialect, q string) bool {
	return q != "" && w.filter != nil && d == dialectSQLite && utf8.ValidString(q) && strings.IndexByte(q, 0) < 0
}

func (w *winTable) sort(name string) (winSort, error) {
	if name == "" {
		return w.sorts[0], nil
	}
	for _, s := range w.sorts {
		if s.name == name {
			return s, nil
		}
	}
	return winSort{}, core.Invalidf("sort key %q for %s", name, w.table)
}

// filterWhere is the condition "a shown field contains q" and its
// arguments: one LIKE per field, so SQLite stops at the first field that
// matches and builds no joined string; and, when the filter names agents
// (w.agents), "or the row's session is one of theirs".
//
// SQLite's LIKE ignores ASCII case; PostgreSQL's does not, so there the
// condition is ILIKE (which also folds non-ASCII letters).
func (w *winTable) filterWhere(d dialect, q string) (string, []any) {
	arg := likeArg(q)
	like := " LIKE "
	agent, agentArgs := agentWhere(w.agentSession, w.agents, false)
	if d == dialectPostgres {
		like = " ILIKE "
		if w.pgHay != "" && !strings.ContainsRune(q, 1) {
			if agent == "" {
				return w.pgHay + like + `? ESCAPE '\'`, []any{arg}
			}
			return "(" + w.pgHay + like + `? ESCAPE '\' OR ` + agent + ")", append([]any{arg}, agentArgs...)
		}
	}
	parts := make([]string, len(w.hay))
	args := make([]any, len(w.hay))
	for i, f := range w.hay {
		parts[i] = f + like + `? ESCAPE '\'`
		args[i] = arg
	}
	if agent != "" {
		parts = append(parts, agent)
		args = append(args, agentArgs...)
	}
	return "(" + strings.Join(parts, " OR ") + ")", args
}

// filterAgents sets w.agents, the agents filter names (none when the table
// shows no agent).
func (t *tx) filterAgents(w *winTable, filter string) error {
	if w.agentSession == "" {
		return nil
	}
	var err error
	w.agents, err = t.agentsMatching(filter)
	return err
}

// likeArg is a LIKE pattern matching q anywhere ('\' escapes % and _).
func likeArg(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(q) + "%"
}

// selectWindow builds one side of a window: rows after the anchor's key
// values in the sort's order (from = true: the anchor included), or,
// reversed, the rows before it; no anchor (nil): from the first row.
func (w *winTable) selectWindow(d dialect, s winSort, q core.WindowQuery, anchor []any, reverse, from bool, limit int) (string, []any) {
	var where []string
	var args []any
	if q.Filter != "" {
		cond, fargs := w.filterWhere(d, q.Filter)
		where = append(where, cond)
		args = append(args, fargs...)
	}
	desc := s.desc != reverse
	if anchor != nil {
		op := "<"
		if !desc {
			op = ">"
		}
		if from {
			op += "="
		}
		// The anchor's key values as parameters: SQLite seeks a row-value
		// range on an index's columns (not on a subquery's result).
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(s.keys)), ", ")
		where = append(where, "("+strings.Join(s.keys, ", ")+") "+op+" ("+marks+")")
		args = append(args, anchor...)
	}
	dir := " ASC"
	if desc {
		dir = " DESC"
	}
	var b strings.Builder
	b.WriteString("SELECT " + w.cols + " FROM " + w.table)
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	b.WriteString(" ORDER BY ")
	for i, k := range s.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + dir)
	}
	b.WriteString(" LIMIT " + strconv.Itoa(limit))
	return b.String(), args
}

// anchorArg is the anchor id as the table's id column compares it
// (notifications have integer ids); ok is false when no row can have it
// (a notification id that is not an integer: PostgreSQL would refuse to
// compare it, SQLite finds nothing).
func anchorArg(w *winTable, id string) (arg any, ok bool) {
	if w.table == "notifications" {
		n, err := strconv.ParseInt(id, 10, 64)
		return n, err == nil
	}
	return id, true
}

// Window implements core.WindowTx: each side is one indexed range read of
// at most Before+1 or After+1 rows (the extra row only says "more").
func (t *tx) Window(q core.WindowQuery, sink core.RowSink) (core.WindowPage, error) {
	var page core.WindowPage
	w, ok := winTableOf(q.Entity)
	if !ok {
		return page, core.Invalidf("no windows of %q", q.Entity)
	}
	s, err := w.sort(q.Sort)
	if err != nil {
		return page, err
	}
	if err := t.filterAgents(w, q.Filter); err != nil {
		return page, err
	}
	sel, err := t.windowSelect(w, s, q)
	if err != nil {
		return page, err
	}
	first := &firstRow{RowSink: sink}
	found := true
	if q.Anchor == "" && q.AnchorKey == "" {
		page, err = t.readEdge(w, q, sel, first)
	} else {
		page, found, err = t.readAnchored(w, s, q, sel, first)
	}
	if err != nil || !found {
		return page, err // a missing anchor: an empty window without a FirstKey
	}
	page.FirstKey, err = t.firstKey(w, s, first)
	return page, err
}

// winSelect builds the statement that reads one side of a window: up to
// limit rows from anchor (a sort key as anchorKey gives it; nil: from the
// edge), backwards when reverse, including the anchor's own row when from.
// It returns the SQL and its arguments, or the error of a plan's read.
type winSelect func(anchor []any, reverse, from bool, limit int) (string, []any, error)

// windowSelect chooses how Window reads w in sort s for q: selectWindow by
// default; a filter plan when the filter is planned (w.planned), which in
// label order may read names through the label order's index (plannedSelect);
// and, on PostgreSQL, a trigram read sorted afterwards when few rows pass the
// filter (pgFewMatches), whatever the planner would guess.
func (t *tx) windowSelect(w *winTable, s winSort, q core.WindowQuery) (winSelect, error) {
	sel := func(anchor []any, reverse, from bool, limit int) (string, []any, error) {
		sq, args := w.selectWindow(t.db.dialect, s, q, anchor, reverse, from, limit)
		return sq, args, nil
	}
	if w.planned(t.db.dialect, q.Filter) {
		var err error
		if sel, err = t.plannedSelect(w, s, q.Filter); err != nil {
			return nil, err
		}
	}
	if few, err := t.pgFewMatches(w, q.Filter); err != nil {
		return nil, err
	} else if few {
		// Few rows pass: read them through the trigram index and sort
		// them, whatever the planner would guess (see pgFewMatches).
		sel = func(anchor []any, reverse, from bool, limit int) (string, []any, error) {
			sq, args := w.selectFew(t.db.dialect, s, q.Filter, anchor, reverse, from, limit)
			return sq, args, nil
		}
	}
	return sel, nil
}

// plannedSelect is the winSelect of a planned filter: each side of the window
// picks its own text strategy (sideText). In label order a text of three
// characters or more whose matches do not lie near the anchor finds names
// through the label order's own index (labelArm) and the other fields through
// a plan of their own (rest, planned on first use), whose index reads start
// from the trigrams rarest in every field (its own sample holds no names).
func (t *tx) plannedSelect(w *winTable, s winSort, filter string) (winSelect, error) {
	p, err := t.planFilter(w.filter, s, filter, false, nil)
	if err != nil {
		return nil, err
	}
	var grams []string
	var rest *filterPlan
	if w.filter == taskFilter && s.name == "label" && p.text == textScan && !p.noIndex {
		if grams, err = t.nameGrams(filter); err != nil {
			return nil, err
		}
	}
	if grams != nil {
		p.far = func() (int, error) {
			if rest == nil {
				var err error
				if rest, err = t.planFilter(taskRestFilter, s, filter, false, p.gramN); err != nil {
					return 0, err
				}
			}
			return textLabel, nil
		}
	}
	return func(anchor []any, reverse, from bool, limit int) (string, []any, error) {
		text, rows, err := t.sideText(w, p, s, anchor, reverse, from, limit)
		if err != nil {
			return "", nil, err
		}
		if text != textLabel {
			sq, args := w.selectFiltered(p, text, s, anchor, reverse, from, limit, rows)
			return sq, args, nil
		}
		if text, rows, err = t.sideText(w, rest, s, anchor, reverse, from, limit); err != nil {
			return "", nil, err
		}
		t.db.labelReads.Add(1)
		names, err := t.labelArm(filter, grams, anchor, reverse, from, limit)
		if err != nil {
			return "", nil, err
		}
		sq, args := w.selectFiltered(rest, text, s, anchor, reverse, from, limit, append(rows, names...))
		return sq, args, nil
	}, nil
}

// readEdge reads a window without an anchor into sink: the first q.After rows,
// or with q.End the last ones read backwards. The page's Rows and MoreAfter
// (MoreBefore with End) are set; FirstKey is left to Window.
func (t *tx) readEdge(w *winTable, q core.WindowQuery, sel winSelect, sink core.RowSink) (core.WindowPage, error) {
	var page core.WindowPage
	after := max(q.After, 0)
	sq, args, err := sel(nil, q.End, false, after+1)
	if err != nil {
		return page, err
	}
	n, more, err := t.readWindow(w, sq, args, after, q.End, sink)
	if err != nil {
		return page, err
	}
	page.Rows = n
	if q.End {
		page.MoreBefore = more
	} else {
		page.MoreAfter = more
	}
	return page, nil
}

// readAnchored reads a window around q's anchor (AnchorKey, else the row
// Anchor names) into sink: q.Before rows before it, read backwards, then the
// anchor's row and q.After rows after it. Rows counts both sides. found is
// false, with an empty page and no error, when the anchor row no longer exists.
func (t *tx) readAnchored(w *winTable, s winSort, q core.WindowQuery, sel winSelect, sink core.RowSink) (page core.WindowPage, found bool, err error) {
	var key []any
	if q.AnchorKey != "" {
		if key, err = decodeKey(q.AnchorKey, len(s.keys)); err != nil {
			return page, false, err
		}
	} else if key, err = t.anchorKey(w, s, q.Anchor); err != nil || key == nil {
		return page, false, err
	}
	if q.Before > 0 {
		sq, args, err := sel(key, true, false, q.Before+1)
		if err != nil {
			return page, false, err
		}
		n, more, err := t.readWindow(w, sq, args, q.Before, true, sink)
		if err != nil {
			return page, false, err
		}
		page.Before, page.MoreBefore = n, more
	}
	after := max(q.After, 0)
	sq, args, err := sel(key, false, true, after+1)
	if err != nil {
		return page, false, err
	}
	n, more, err := t.readWindow(w, sq, args, after, false, sink)
	if err != nil {
		return page, false, err
	}
	page.Rows = page.Before + n
	page.MoreAfter = more
	return page, true, nil
}

// pgFewMatches is how many rows passing a task filter PostgreSQL reads
// through an index and sorts itself; above it the text is common enough
// that the pane's order finds a window soon.
const pgFewMatches = 10_000

// pgFewMatches reports whether at most pgFewMatches rows pass filter
// (PostgreSQL, a table with the filter's indexes). The planner estimates a
// trigram ILIKE at about 1% of the table and so reads the pane's order with
// the filter, row by row: "task 424" at 1,000,000 tasks read 134,871 rows in
// the urgency order to find its window (290 ms), where its 1,122 matches
// come from the index in 12 ms; and a one- or two-character text, which has
// no trigram, read every row when it is rare. The count stops at
// pgFewMatches+1 (a common text: a sequential scan that stops early).
func (t *tx) pgFewMatches(w *winTable, filter string) (bool, error) {
	cond, args, ok := w.pgFewWhere(t.db.dialect, filter, t.db.pgTrgm)
	if !ok {
		return false, nil
	}
	// A text in many of the table's first rows is common: the pane's order
	// finds a window at once, and counting 10,001 of its rows would cost
	// more (37–45 ms at 1,000,000 tasks for a first character) than that.
	hayCond, hayArgs := w.filterWhere(t.db.dialect, filter)
	var hits int64
	if err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT count(*) FROM (SELECT "+w.pgHay+" AS hay FROM "+w.table+
		" LIMIT "+strconv.Itoa(sampleRows)+") s WHERE "+strings.Replace(hayCond, w.pgHay, "hay", 1)), hayArgs...).Scan(&hits); err != nil {
		return false, mapErr(err)
	}
	if hits >= sampleDense {
		return false, nil
	}
	var n int64
	err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT count(*) FROM (SELECT 1 FROM "+w.table+" WHERE "+cond+
		" LIMIT "+strconv.Itoa(pgFewMatches+1)+") c"), args...).Scan(&n)
	if err != nil {
		return false, mapErr(err)
	}
	return n <= pgFewMatches, nil
}

// pgFewWhere is the condition "passes filter" in the shape an index serves
// (PostgreSQL): the trigram ILIKE for three characters or more (trgm: the
// registry has that index); for one or two, "holds its characters"
// (tasks_filter_chars) and the ILIKE re-check. ok is false where no index
// serves (SQLite, a table without them, a text holding chr(1)).
func (w *winTable) pgFewWhere(d dialect, filter string, trgm bool) (string, []any, bool) {
	if d != dialectPostgres || w.pgHay == "" || filter == "" || strings.ContainsRune(filter, 1) || len(w.agents) > 0 {
		// An agent's name: its rows are its sessions', not the trigram
		// index's (the filter then reads the pane's order).
		return "", nil, false
	}
	cond, args := w.filterWhere(d, filter)
	if utf8.RuneCountInString(filter) >= 3 {
		return cond, args, trgm
	}
	if w.pgChars == "" {
		return "", nil, false
	}
	// The text's characters are split and lowercased by the server, as
	// the index's are (bytes in a SQL_ASCII database, characters in UTF-8).
	return w.pgChars + ` @> string_to_array(lower(?::text COLLATE "C"), NULL) AND ` + cond, append([]any{filter}, args...), true
}

// selectFew is selectWindow for a filter few rows pass (pgFewMatches): the
// rows passing it, read once through the filter's index (a materialized
// CTE, so the planner cannot turn it into a walk of the order), then the
// window's side of them sorted.
func (w *winTable) selectFew(d dialect, s winSort, filter string, anchor []any, reverse, from bool, limit int) (string, []any) {
	cond, fargs, _ := w.pgFewWhere(d, filter, true)
	m := *w
	m.table = "m"
	sq, args := m.selectWindow(d, s, core.WindowQuery{}, anchor, reverse, from, limit)
	return "WITH m AS MATERIALIZED (SELECT * FROM " + w.table + " WHERE " + cond + ") " + sq, append(fargs, args...)
}

// firstRow passes rows on and keeps the id of the first (the window's
// first row: rows read backwards are sent in window order).
type firstRow struct {
	core.RowSink
	id   string
	seen bool
}

func (f *firstRow) keep(id string) {
	if !f.seen {
		f.id, f.seen = id, true
	}
}

func (f *firstRow) Task(x *core.Task)         { f.keep(x.ID); f.RowSink.Task(x) }
func (f *firstRow) Run(x *core.Run)           { f.keep(x.RunID); f.RowSink.Run(x) }
func (f *firstRow) Approval(x *core.Approval) { f.keep(x.ID); f.RowSink.Approval(x) }
func (f *firstRow) Job(x *core.Job)           { f.keep(x.ID); f.RowSink.Job(x) }
func (f *firstRow) Alert(x *core.Notification) {
	f.keep(strconv.FormatInt(x.ID, 10))
	f.RowSink.Alert(x)
}

// firstKey is WindowPage.FirstKey: the first row's sort-key values, read in
// the same transaction as the window, encoded; "" when no row was sent.
func (t *tx) firstKey(w *winTable, s winSort, f *firstRow) (string, error) {
	if !f.seen {
		return "", nil
	}
	key, err := t.anchorKey(w, s, f.id)
	if err != nil || key == nil {
		return "", err
	}
	return encodeKey(key)
}

// encodeKey writes sort-key values (int64, float64, text, NULL) as a JSON
// array: WindowPage.FirstKey.
func encodeKey(key []any) (string, error) {
	vals := make([]any, len(key))
	for i, v := range key {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		vals[i] = v
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return "", fmt.Errorf("window position: %w", err)
	}
	return string(b), nil
}

// decodeKey reads a WindowQuery.AnchorKey of n sort-key values (integers
// back as int64). Errors: ErrInvalid for anything else.
func decodeKey(s string, n int) ([]any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var vals []any
	if err := d.Decode(&vals); err != nil || len(vals) != n {
		return nil, core.Invalidf("window position %q: want %d sort-key values", s, n)
	}
	for i, v := range vals {
		switch x := v.(type) {
		case json.Number:
			if k, err := x.Int64(); err == nil {
				vals[i] = k
			} else if f, err := x.Float64(); err == nil {
				vals[i] = f
			} else {
				return nil, core.Invalidf("window position %q: value %d", s, i)
			}
		case string, nil:
		default:
			return nil, core.Invalidf("window position %q: value %d", s, i)
		}
	}
	return vals, nil
}

// anchorKey reads the anchor row's sort-key values; nil when it is gone.
func (t *tx) anchorKey(w *winTable, s winSort, id string) ([]any, error) {
	arg, ok := anchorArg(w, id)
	if !ok {
		return nil, nil // gone: no row has that id
	}
	vals := make([]any, len(s.keys))
	ptrs := make([]any, len(s.keys))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT "+strings.Join(s.keys, ", ")+" FROM "+w.table+" WHERE "+w.id+" = ?"),
		arg).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return vals, nil
}

// readWindow sends up to limit rows of query (reversed: in the opposite
// order, as the query read them backwards) and reports whether more exist.
func (t *tx) readWindow(w *winTable, query string, args []any, limit int, reversed bool, sink core.RowSink) (int, bool, error) {
	// dialectSQL, not t.sql: window statements vary with the limit and
	// the filter, so they are rewritten each time rather than cached.
	rows, err := t.tx.QueryContext(t.ctx, t.db.dialectSQL(query), args...)
	if err != nil {
		return 0, false, mapErr(err)
	}
	defer rows.Close()
	// Rows read backwards are kept to be sent in window order. On
	// PostgreSQL every window is kept until its rows are closed: a sink
	// may read in the same transaction (the console's feed reads each
	// task's and run's usage), and a connection serves one result at a
	// time there.
	var buf *bufSink
	out := sink
	if reversed || t.db.dialect == dialectPostgres {
		buf = &bufSink{}
		out = buf
	}
	n := 0
	more := false
	for rows.Next() {
		if n == limit {
			more = true
			break
		}
		if err := w.scan(rows, out); err != nil {
			return n, false, mapErr(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, false, mapErr(err)
	}
	if err := rows.Close(); err != nil {
		return n, false, mapErr(err)
	}
	if buf != nil {
		buf.replay(sink, reversed)
	}
	return n, more, nil
}

// bufSink keeps a window's rows, to send them in window order (rows read
// backwards reversed) once the query's rows are closed.
type bufSink struct{ rows []func(core.RowSink) }

func (b *bufSink) Task(x *core.Task) {
	c := *x
	b.rows = append(b.rows, func(s core.RowSink) { s.Task(&c) })
}
func (b *bufSink) Run(x *core.Run) {
	c := *x
	b.rows = append(b.rows, func(s core.RowSink) { s.Run(&c) })
}
func (b *bufSink) Approval(x *core.Approval) {
	c := *x
	b.rows = append(b.rows, func(s core.RowSink) { s.Approval(&c) })
}
func (b *bufSink) Job(x *core.Job) {
	c := *x
	b.rows = append(b.rows, func(s core.RowSink) { s.Job(&c) })
}
func (b *bufSink) Alert(x *core.Notification) {
	c := *x
	b.rows = append(b.rows, func(s core.RowSink) { s.Alert(&c) })
}

func (b *bufSink) replay(sink core.RowSink, reversed bool) {
	if reversed {
		slices.Reverse(b.rows)
	}
	for _, f := range b.rows {
		f(sink)
	}
}

// CountWindow implements core.WindowTx. A negative limit counts every row.
func (t *tx) CountWindow(q core.WindowQuery, limit int64) (int64, bool, error) {
	w, ok := winTableOf(q.Entity)
	if !ok {
		return 0, false, core.Invalidf("no windows of %q", q.Entity)
	}
	if err := t.filterAgents(w, q.Filter); err != nil {
		return 0, false, err
	}
	if limit >= 0 && w.planned(t.db.dialect, q.Filter) {
		p, err := t.planFilter(w.filter, winSort{}, q.Filter, true, nil)
		if err != nil {
			return 0, false, err
		}
		if n, capped, ok, err := t.countFiltered(w, p, limit); ok || err != nil {
			return n, capped, err
		}
	}
	var where string
	var args []any
	if q.Filter != "" {
		cond, fargs, ok := w.pgFewWhere(t.db.dialect, q.Filter, t.db.pgTrgm) // in the shape an index serves
		if !ok {
			cond, fargs = w.filterWhere(t.db.dialect, q.Filter)
		}
		where, args = " WHERE "+cond, fargs
	}
	var n int64
	if limit < 0 {
		err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT COUNT(*) FROM "+w.table+where), args...).Scan(&n)
		return n, false, mapErr(err)
	}
	// The alias: PostgreSQL before 16 requires one on a subquery in FROM.
	err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT COUNT(*) FROM (SELECT 1 FROM "+w.table+where+" LIMIT ?) AS w"),
		append(args, limit+1)...).Scan(&n)
	if err != nil {
		return 0, false, mapErr(err)
	}
	if n > limit {
		return limit, true, nil
	}
	return n, false, nil
}

// HeaderCounts implements core.WindowTx: one statement of indexed counts
// (partial indexes for the active sets, (status, end) ranges for the last
// 24 h).
func (t *tx) HeaderCounts(since core.Timestamp) (core.HeaderCounts, error) {
	var c core.HeaderCounts
	err := t.tx.QueryRowContext(t.ctx, t.sql(headerCountsSQL), int64(since)).
		Scan(&c.PendingApprovals, &c.RunningTasks, &c.RunningRuns, &c.ActiveJobs, &c.Failed, &c.Lost, &c.Unread)
	return c, mapErr(err)
}

// headerCountsSQL counts the header's numbers; ?1 is the 24 h cutoff. The
// pending count names its partial index, which the bundled SQLite (3.50)
// picks on its own; without statistics SQLite 3.40 (a build against the
// system library) scans a covering index of every approval instead (407 ms
// cold at 1,000,000 approvals, against 14 ms).
const headerCountsSQL = `SELECT
		(SELECT COUNT(*) FROM approvals INDEXED BY approvals_pending WHERE status = 'pending'),
		(SELECT COUNT(*) FROM tasks WHERE status = 'running'),
		(SELECT COUNT(*) FROM runs WHERE ended_at IS NULL),
		(SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'running')),
		(SELECT COUNT(*) FROM tasks WHERE status IN ('failed', 'timed_out') AND ended_at >= ?1) +
		(SELECT COUNT(*) FROM jobs WHERE status IN ('failed', 'timed_out') AND completed_at >= ?1),
		(SELECT COUNT(*) FROM tasks WHERE status = 'lost' AND ended_at >= ?1) +
		(SELECT COUNT(*) FROM jobs WHERE status = 'lost' AND coalesce(completed_at, created_at) >= ?1),
		(SELECT COUNT(*) FROM notifications INDEXED BY notifications_undelivered WHERE delivered_at IS NULL)`
