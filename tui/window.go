package tui

import (
	"bytes"
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/termtext"
)

// window is a pane's reading of windows (feed.WindowSource): the table
// holds only the rows around the cursor, in the source's order, already
// filtered.
type window struct {
	moreBefore, moreAfter bool // rows exist beyond the window's ends

	seq      uint64 // the latest window request; older replies are dropped
	cancel   context.CancelFunc
	fetching bool
	pending  int // cursor movement past the window's end, applied when the next window arrives

	counted        bool
	total, matched int64
	capped         bool
	countSeq       uint64
	countCancel    context.CancelFunc
	counting       bool
	countDirty     bool // rows changed since the last count
	countCovers    bool // the running count was started for a change (countDirty was set)
	countNext      bool // count as soon as the window arrives (a new filter)
	// totalOK says total is the table's count since its last change: a new
	// filter then counts only its matches.
	totalOK      bool
	totalRead    bool           // the table has been counted at least once
	countedAt    core.Timestamp // when the last count finished
	recountAfter core.Timestamp // no recount before (a large table's count is not free)
	// narrowed is the previous window's row ids in order while a jumpNarrow
	// read runs, and narrowedAt the cursor's index among them: the cursor
	// then goes to its row, or the first later one that still matches.
	narrowed   []string
	narrowedAt int
	// firstKey is the position of the window's first row as the store read
	// it (WindowResult.Page.FirstKey), firstKeyID that row's id: the
	// narrowing read starts there, even if the row has moved since.
	firstKey, firstKeyID string
}

// Where the cursor goes when a window arrives.
const (
	jumpKeep = iota // on its row (by id), else where the anchor was
	jumpTop
	jumpEnd
	// jumpNarrow: a longer query read from the first row of the previous
	// query's window, which began at the top of its matches (none of the
	// new ones lie before that row): the cursor on the first row, or, once
	// the operator has moved it, on its row or the first later match.
	jumpNarrow
)

// windowMsg is a window read for a pane.
type windowMsg struct {
	kind feed.Kind
	seq  uint64
	jump int
	req  feed.WindowRequest
	b    *batch
	res  feed.WindowResult
	err  error
}

// countMsg is a pane's row counts.
type countMsg struct {
	kind  feed.Kind
	seq   uint64
	req   feed.WindowRequest
	res   feed.WindowResult
	err   error
	spent core.Timestamp
}

// headerMsg is the header's counts read from the store.
type headerMsg struct {
	c   core.HeaderCounts
	at  core.Timestamp
	err error
}

func headerCmd(ctx context.Context, src feed.WindowSource, now core.Timestamp) tea.Cmd {
	return func() tea.Msg {
		c, err := src.Header(ctx, now-day)
		return headerMsg{c: c, at: now, err: err}
	}
}

// reload reads the pane's window again after a full load: read reads the
// window around the cursor's row and count the counts (the caller may hold
// count back).
func (l *list[R]) reload() (read, count tea.Cmd) {
	return l.fetch(l.around(), jumpKeep), l.recount(false)
}

// span is how many rows a window reads after and before its anchor: a few
// pages, so moving a page does not reach the edge.
func (l *list[R]) winSpan() (before, after int) {
	page := l.pageRows()
	return max(16, 2*page), max(48, 4*page)
}

// around is the request for the window around the cursor's row (the first
// rows while the operator has not moved the cursor).
func (l *list[R]) around() feed.WindowRequest {
	req := l.winRequest()
	before, after := l.winSpan()
	req.After = after
	if l.moved && l.selID != "" {
		req.Anchor, req.Before = l.selID, before
	}
	return req
}

func (l *list[R]) winRequest() feed.WindowRequest {
	return feed.WindowRequest{Kind: l.spec.kind, Sort: l.spec.sorts[l.sort], Query: string(l.query)}
}

// fetch starts reading a window; a read still running is cancelled (its
// reply would be dropped anyway).
func (l *list[R]) fetch(req feed.WindowRequest, jump int) tea.Cmd {
	src := l.ctx.win
	if l.win.cancel != nil {
		l.win.cancel()
	}
	ctx, cancel := context.WithCancel(l.ctx.bg)
	l.win.cancel = cancel
	l.win.seq++
	l.win.fetching = true
	seq, kind := l.win.seq, l.spec.kind
	return func() tea.Msg {
		b := newBatch()
		res, err := src.Window(ctx, req, b)
		return windowMsg{kind: kind, seq: seq, jump: jump, req: req, b: b, res: res, err: err}
	}
}

// recount starts counting the pane's rows (and those passing the filter;
// matchedOnly: only those, after a new filter, when the table's count
// stands).
func (l *list[R]) recount(matchedOnly bool) tea.Cmd {
	src := l.ctx.win
	l.stopCount()
	req := l.winRequest()
	req.Count = true
	req.MatchedOnly = matchedOnly && l.win.totalOK && req.Query != ""
	ctx, cancel := context.WithCancel(l.ctx.bg)
	l.win.countCancel = cancel
	l.win.countSeq++
	l.win.counting, l.win.countCovers = true, false
	if !req.MatchedOnly {
		// This count covers the changes so far; a count of the matches
		// alone leaves the table's count to the next one.
		l.win.countCovers, l.win.countDirty = l.win.countDirty, false
	}
	seq, kind := l.win.countSeq, l.spec.kind
	return func() tea.Msg {
		start := time.Now()
		res, err := src.Window(ctx, req, nopSink{})
		return countMsg{kind: kind, seq: seq, req: req, res: res, err: err, spent: core.Timestamp(time.Since(start).Milliseconds())}
	}
}

// stopCount cancels a running count. A change it was to cover is marked
// again, so the next recount still happens (a filter keystroke cancels the
// count a write started).
func (l *list[R]) stopCount() {
	if l.win.countCancel != nil {
		l.win.countCancel()
		l.win.countCancel = nil
	}
	if l.win.counting {
		l.win.counting = false
		l.win.countDirty = l.win.countDirty || l.win.countCovers
	}
}

// onCount installs counts.
func (l *list[R]) onCount(msg countMsg) error {
	if msg.seq != l.win.countSeq {
		return nil
	}
	l.win.counting = false
	if msg.err != nil {
		if ctxErr(msg.err) {
			return nil // cancelled: stopCount marked what it was to cover
		}
		l.win.countDirty = true
		return msg.err
	}
	r := msg.res
	total := r.Total
	if msg.req.MatchedOnly {
		total = l.win.total // the filter's count only: the table's stands
	} else {
		l.win.totalOK = !l.win.countDirty // no change since this count began
		l.win.totalRead = true
	}
	l.win.counted, l.win.total, l.win.matched, l.win.capped = r.Counted, total, r.Matched, r.Capped
	now := l.ctx.now()
	l.win.countedAt = now
	// A count that took long waits ten times as long before the next one,
	// so a large table's count never keeps a core busy under steady writes.
	l.win.recountAfter = now + 10*msg.spent
	return nil
}

// countDue reports whether a recount should start now (rows changed, none
// running, the back-off passed).
func (l *list[R]) countDue(now core.Timestamp) bool {
	return l.win.countDirty && !l.win.counting && now >= l.win.recountAfter
}

// refresh rereads the window around the cursor's row after a change, and
// marks the counts stale.
func (l *list[R]) refresh() tea.Cmd {
	l.win.countDirty, l.win.totalOK = true, false
	return l.fetch(l.around(), jumpKeep)
}

// onWindow installs a window: the cursor stays on its row, on the same
// screen line, and any movement that went past the old window's edge is
// applied now.
func (l *list[R]) onWindow(rows []R, msg windowMsg) (tea.Cmd, error) {
	if msg.seq != l.win.seq {
		return nil, nil
	}
	l.win.fetching = false
	if msg.err != nil {
		if ctxErr(msg.err) {
			return nil, nil
		}
		return nil, msg.err
	}
	if msg.res.Page.Rows == 0 && msg.req.Anchor != "" {
		// The anchor row is gone (pruned): start again from the top. (A
		// window placed by a position is empty only when nothing matches.)
		l.moved = false
		req := l.winRequest()
		_, req.After = l.winSpan()
		return l.fetch(req, jumpTop), nil
	}
	line := l.cursor - l.offset
	// Viewing the top of the list: rows that arrive above stay in view
	// (the offset stays at 0), while the cursor keeps its row as long as
	// it stays on the page.
	atTop := l.offset == 0 && !l.win.moreBefore
	l.table = newTable(l.spec, rows, msg.res.Unique)
	l.view = make([]int32, len(rows))
	for i := range l.view {
		l.view[i] = int32(i) // the source's order
	}
	if l.wide != l.laidWide {
		l.layout()
	}
	l.win.moreBefore, l.win.moreAfter = msg.res.Page.MoreBefore, msg.res.Page.MoreAfter
	l.win.firstKey, l.win.firstKeyID = msg.res.Page.FirstKey, ""
	if len(rows) > 0 {
		l.win.firstKeyID = l.spec.id(&rows[0])
	}
	switch {
	case msg.jump == jumpTop || !l.moved:
		l.cursor, l.offset = 0, 0
	case msg.jump == jumpNarrow:
		l.cursor = l.narrowedCursor()
		l.offset = l.cursor - line
	case msg.jump == jumpEnd:
		l.cursor = len(l.view) - 1
		l.offset = l.cursor - l.pageRows() + 1
	default:
		if s, ok := l.ids[l.selID]; ok {
			l.cursor = int(s)
		} else {
			l.cursor = msg.res.Page.Before // where the anchor was
		}
		l.offset = l.cursor - line
		if atTop && !msg.res.Page.MoreBefore && l.cursor < l.pageRows() {
			l.offset = 0
		}
	}
	l.clamp()
	var count tea.Cmd
	if l.win.countNext {
		l.win.countNext = false
		if !l.win.moreBefore && !l.win.moreAfter && l.win.total > 0 && l.win.totalOK {
			// Every match is in the window: that is the count (the table's
			// own count is unchanged by a filter).
			l.win.matched, l.win.capped, l.win.counted = int64(len(l.view)), false, true
		} else {
			count = l.recount(true)
		}
	}
	if d := l.win.pending; d != 0 {
		l.win.pending = 0
		return tea.Batch(count, l.wmove(d)), nil
	}
	return tea.Batch(count, l.edge()), nil
}

// narrowedCursor is where the cursor goes in a jumpNarrow window: on the
// row it was on, else on the first row that came after it in the previous
// window or lies past that window's end (the new rows are in the store's
// order, and all of them were in the previous window or come after it),
// else on the last row.
func (l *list[R]) narrowedCursor() int {
	at := make(map[string]int, len(l.win.narrowed))
	for i, id := range l.win.narrowed {
		at[id] = i
	}
	for i, s := range l.view {
		if j, ok := at[l.spec.id(&l.rows[s])]; !ok || j >= l.win.narrowedAt {
			return i
		}
	}
	return len(l.view) - 1
}

// wmove moves the cursor: past the window's edge the
// rest of the movement waits for the next window (the view never waits).
func (l *list[R]) wmove(d int) tea.Cmd {
	l.moved = true
	target := l.cursor + d
	n := len(l.view)
	if target > n-1 && l.win.moreAfter {
		l.win.pending += target - max(0, n-1)
		target = n - 1
	}
	if target < 0 && l.win.moreBefore {
		l.win.pending += target
		target = 0
	}
	l.cursor = target
	l.clamp()
	return l.edge()
}

// edge reads the next window when the cursor is within a page of the
// current one's end and more rows lie beyond it.
func (l *list[R]) edge() tea.Cmd {
	if l.win.fetching {
		return nil
	}
	page := l.pageRows()
	near := (l.win.moreAfter && l.cursor >= len(l.view)-page-1) || (l.win.moreBefore && l.cursor < page)
	if !near && l.win.pending == 0 {
		return nil
	}
	return l.fetch(l.around(), jumpKeep)
}

// wtop and wbottom jump to the first or last row.
func (l *list[R]) wtop() tea.Cmd {
	l.moved = true
	if !l.win.moreBefore {
		l.cursor = 0
		l.clamp()
		return nil
	}
	l.win.pending = 0
	req := l.winRequest()
	_, req.After = l.winSpan()
	return l.fetch(req, jumpTop)
}

func (l *list[R]) wbottom() tea.Cmd {
	l.moved = true
	if !l.win.moreAfter {
		l.cursor = len(l.view) - 1
		l.clamp()
		return nil
	}
	l.win.pending = 0
	req := l.winRequest()
	_, req.After = l.winSpan()
	req.End = true
	return l.fetch(req, jumpEnd)
}

// wquery applies a filter keystroke: the window and the counts are read
// again with it (a read still running for the previous keystroke is
// cancelled).
func (l *list[R]) wquery(low []byte) tea.Cmd {
	prev := l.query
	l.query = low
	l.win.pending = 0
	if len(prev) > 0 && bytes.HasPrefix(low, prev) && !l.win.moreBefore && !l.win.moreAfter && !l.win.fetching {
		// Every match of the shorter query is in the window: a longer
		// one narrows it here, without reading the store.
		l.narrow()
		return nil
	}
	l.win.counted = false
	l.stopCount() // the previous query's count
	// The count starts once the window is on screen: the rows come first.
	l.win.countNext = true
	if len(prev) > 0 && bytes.HasPrefix(low, prev) && !l.win.moreBefore && !l.win.fetching && len(l.view) > 0 &&
		l.win.firstKey != "" && l.spec.id(&l.rows[l.view[0]]) == l.win.firstKeyID {
		// The window begins at the top of the shorter query's matches, and
		// the longer query's matches are among them: none lies before the
		// window's first row, so the read starts at that row's position
		// (as the store read it: the row may have moved since), reading
		// as far past the cursor as a read around it would, instead of at
		// the top or backwards from the cursor: the rows before it, which
		// a deep first match makes millions, match neither.
		req := l.winRequest()
		_, after := l.winSpan()
		req.AnchorKey = l.win.firstKey
		req.After = after + l.cursor
		l.win.narrowed = make([]string, len(l.view))
		for i, s := range l.view {
			l.win.narrowed[i] = l.spec.id(&l.rows[s])
		}
		l.win.narrowedAt = l.cursor
		return l.fetch(req, jumpNarrow)
	}
	return l.fetch(l.around(), jumpKeep)
}

// narrow keeps the window's rows that contain the query (all of its
// matches are in the window), and counts them.
func (l *list[R]) narrow() {
	keep := make([]int32, 0, len(l.view))
	for _, s := range l.view {
		if l.contains(s, l.query) {
			keep = append(keep, s)
		}
	}
	l.view = keep
	l.stopCount()
	l.win.countNext = false
	l.win.matched, l.win.capped, l.win.counted = int64(len(keep)), false, l.win.total > 0
	l.restoreCursor()
}

// wsort switches to the next sort key: the window is read again in it.
func (l *list[R]) wsort() tea.Cmd {
	l.sort = (l.sort + 1) % len(l.spec.sorts)
	l.win.pending = 0
	return l.fetch(l.around(), jumpKeep)
}

// wcounts are the numbers the info line shows: the rows, or those the
// filter passes of them.
func (l *list[R]) wcounts() string {
	w := l.win
	if w.fetching && len(l.query) > 0 {
		return "searching…"
	}
	if !w.counted {
		return "counting…"
	}
	switch {
	case len(l.query) == 0:
		return counts(int(w.total), int(w.total))
	case w.capped:
		return termtext.Thousands(w.matched) + "+ of " + termtext.Thousands(w.total)
	}
	// A filter every row passes reads as no filter: "3 rows".
	return counts(int(w.matched), int(w.total))
}

// ctxErr reports a read cancelled because a newer one replaced it.
func ctxErr(err error) bool { return errors.Is(err, context.Canceled) }

// nopSink drops rows (count-only requests).
type nopSink struct{}

func (nopSink) Task(*core.Task)                {}
func (nopSink) Run(*core.Run)                  {}
func (nopSink) Approval(*core.Approval)        {}
func (nopSink) Job(*core.Job)                  {}
func (nopSink) Alert(*core.Notification)       {}
func (nopSink) Gone(kind feed.Kind, id string) {}
