package tui

import (
	"math"
	"slices"
	"strings"

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
