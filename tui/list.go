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

// listSpec is what makes a list a Tasks, Runs, ... pane.
type listSpec[R any] struct {
	kind      feed.Kind
	title     string
	columns   []column
	statusCol int
	// sorts are the names of the entity's sorts (view.Sorts), the default
	// (urgency, then recency) first: the source orders the rows.
	sorts  []string
	id     func(*R) string
	status func(*R) string
	cells  func(r *R, c *Context, now core.Timestamp, dst []string) []string
	hay    func(r *R, dst []byte) []byte // appends the row's searchable text
	// prefix, when set, points at the row's shown id length: the shortest
	// prefix of the id that no other row of the table shares, at least
	// minPrefix characters, when the source says it
	// (feed.WindowResult.Unique; docs/contract.md "Entities and statuses":
	// the CLI takes a unique prefix), else the whole id. Column 0 shows that
	// prefix and widens to the longest one.
	prefix  func(*R) *uint8
	target  func(*R) Target
	openLog bool          // enter opens the log view (jobs)
	dim     func(*R) bool // the row is drawn muted (a read alert)
}

// list is the generic live table behind every pane: a cursor, a viewport
// and the rendering of one window of rows read from the source
// (feed.WindowSource; window.go), which sorts, filters and counts them.
// Rows are compact structs with their display strings computed (and
// sanitised) once, when their window arrives.
type list[R any] struct {
	ctx  *Context
	spec *listSpec[R]
	table[R]
	win  window
	sort int // index in spec.sorts

	// view are the slots shown, in order: the window's rows, or those of
	// them a longer filter kept without a read (narrow).
	view []int32

	query   []byte // the filter, ASCII letters lowercased (as the source folds them)
	input   lineInput
	editing bool

	cursor, offset int
	selID          string // id under the cursor, kept across windows
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
	return &list[R]{ctx: ctx, spec: spec, table: newTable(spec, nil, nil)}
}

// SetSize sets the table's size; h includes the column header row.
func (l *list[R]) SetSize(w, h int) {
	l.w, l.h = w, h
	l.layout()
	l.clamp()
}

// layout computes the column widths; the id column widens to the longest
// id prefix shown (specs with prefix), so no shown id is ever truncated.
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

// restoreCursor puts the cursor back on the row it was on (by id), or keeps
// its position when that row is gone or filtered out.
func (l *list[R]) restoreCursor() {
	if !l.moved {
		l.cursor, l.offset = 0, 0
		l.clamp()
		return
	}
	if s, ok := l.ids[l.selID]; ok && l.selID != "" {
		if i := slices.Index(l.view, s); i >= 0 {
			l.cursor = i
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

// selected returns the row under the cursor.
func (l *list[R]) selected() (*R, bool) {
	if len(l.view) == 0 {
		return nil, false
	}
	return &l.rows[l.view[l.cursor]], true
}

// prefixOf is id as this list shows it: its unique prefix when the row is
// in the window, else up to 18 characters (a whole 12-character task id, or
// an older UUIDv7's timestamp, version and 12 random bits).
func (l *list[R]) prefixOf(id string) string {
	if s, ok := l.ids[id]; ok && l.spec.prefix != nil {
		if n := int(*l.spec.prefix(&l.rows[s])); n > 0 && n <= len(id) {
			return id[:n]
		}
	}
	return id[:min(len(id), 18)]
}

// statusOf is the status the row with id shows, when it is in the window.
func (l *list[R]) statusOf(id string) (string, bool) {
	if s, ok := l.ids[id]; ok {
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

// Counts returns the rows passing the filter and all rows, as the source
// counted them (0 until counted).
func (l *list[R]) Counts() (int, int) { return int(l.win.matched), int(l.win.total) }

// CountCapped implements pane: the filtered count stopped at its limit.
func (l *list[R]) CountCapped() bool { return l.win.capped }

// CountKnown implements pane.
func (l *list[R]) CountKnown() bool { return l.win.totalRead }

// Editing reports whether the filter prompt has the keyboard.
func (l *list[R]) Editing() bool { return l.editing }

// Filtered reports whether a filter is applied.
func (l *list[R]) Filtered() bool { return len(l.query) > 0 }

// Title is the pane's name.
func (l *list[R]) Title() string { return l.spec.title }

// Kind is the pane's entity kind.
func (l *list[R]) Kind() feed.Kind { return l.spec.kind }

// SortName names the current sort key.
func (l *list[R]) SortName() string { return l.spec.sorts[l.sort] }

// Update handles navigation, filter and sort keys. It reports whether the
// key was used; other keys are left to the root (actions, panes, quit).
func (l *list[R]) Update(msg tea.Msg) (bool, tea.Cmd) {
	if l.editing {
		switch l.input.update(msg) {
		case inputChanged:
			q := []byte(l.input.value())
			lowerASCII(q)
			return true, l.wquery(q)
		case inputSubmit:
			l.editing = false
			return true, nil
		case inputCancel:
			l.editing = false
			l.input.set("")
			return true, l.wquery(nil)
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
	case key.Matches(k, keys.Filter):
		l.editing = true
		return true, nil
	case key.Matches(k, keys.Sort):
		return true, l.wsort()
	case key.Matches(k, keys.Back) && l.Filtered():
		l.input.set("")
		return true, l.wquery(nil)
	}
	return false, nil
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
	_, total := l.Counts()
	right := "sort: " + l.SortName() + "  " + l.wcounts()
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
