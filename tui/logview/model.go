package logview

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/clawpit/clawpit/core"
)

// Defaults for Options.
const (
	DefaultCapacity     = 10_000 // lines kept (README "The console")
	DefaultMaxLineRunes = 4096   // per-line cap handed to the sanitiser
	maxQueryRunes       = 256    // search prompt length limit
)

// Options configures a log view. Only Dir (or Source) is required.
type Options struct {
	// Title names the job in the status bar (e.g. "job 3fa2c1 npm run dev").
	// It is sanitised like log lines.
	Title string
	// Dir is the job's log directory (<jobs dir>/<job-id>), followed across
	// rotations when Source is nil.
	Dir string
	// Styles; the zero value renders plain text (see Styles).
	Styles Styles
	// Keys; the zero value selects DefaultKeyMap().
	Keys KeyMap
	// Capacity is the ring size in lines (default 10,000).
	Capacity int
	// MaxLineRunes caps each line, in runes, when it is sanitised (default 4096).
	MaxLineRunes int
	// Source overrides the default follower of Dir. It is opened by Init.
	Source Source
	// Open overrides how the source is started (takes precedence over
	// Source); mainly for tests that need the view's context.
	Open OpenFunc
	// Redact redacts one line. It is called once per line, in stream
	// order, never concurrently, so it may keep state across lines (a PEM
	// block spanning lines). nil selects core's stateful LineRedactor. The
	// log on disk is already redacted per line by the supervisor; this
	// second pass is the "every tail shown is redacted again" of docs/contract.md "Background jobs: Live, redacted log".
	Redact func(line string) string
}

// JobEndedMsg tells the view the job finished, so it marks where it ended
// with a line such as "── job completed (exit 0) at 10:04:05 ──". The parent
// sends it when it sees the job reach a terminal status. The marker always
// stays after the last line: lines that arrive later were still in flight
// from the finished job, so they belong before it.
type JobEndedMsg struct {
	Status       core.JobStatus
	ExitCode     *int      // nil when unknown
	At           time.Time // zero: no time shown; shown as 15:04:05 in At's location
	CaptureError string    // non-empty: the log is incomplete (docs/contract.md "Background jobs: Rotation")
}

var nextID atomic.Uint64

// Model is the log view. It is a Bubble Tea component, not a tea.Model: the
// parent calls Update and View and embeds the result. Copies share the line
// buffer and the reader, as usual for components.
type Model struct {
	id     uint64
	feed   *feed
	buf    *ring
	keys   KeyMap
	styles styles
	title  string

	width, height int

	follow      bool // anchored to the bottom
	top, topRow int  // first visible row when not following: line number, row within the wrapped line
	xOff        int  // first visible column when not wrapping
	wrap        bool
	newLines    int // lines received since autoscroll paused

	editing bool
	input   []rune // search prompt being typed

	query   string
	match   matcher
	matches []int // line numbers (still buffered) containing query, ascending
	cur     int   // index into matches of the current match, -1 none

	// preview holds the previews of the lines still being written (the
	// last LinesMsg's), shown after the buffered lines, never stored.
	preview []string

	ended   *JobEndedMsg
	done    bool // source ended
	doneErr error
}

// New builds a log view. It starts nothing: Init opens the source.
func New(opts Options) Model {
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.MaxLineRunes <= 0 {
		opts.MaxLineRunes = DefaultMaxLineRunes
	}
	if opts.Keys.isZero() {
		opts.Keys = DefaultKeyMap()
	}
	maxRunes := opts.MaxLineRunes
	sanitize := func(s string) string { return sanitizeLine(s, maxRunes) }
	redact := opts.Redact
	if redact == nil {
		redact = newLineRedactor()
	}
	open := opts.Open
	if open == nil {
		if src := opts.Source; src != nil {
			open = func(context.Context) (Source, error) { return src, nil }
		} else {
			dir, backlog := opts.Dir, opts.Capacity
			open = func(ctx context.Context) (Source, error) { return followDir(ctx, dir, backlog) }
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return Model{
		id: nextID.Add(1),
		feed: &feed{
			ctx:      ctx,
			cancel:   cancel,
			open:     open,
			maxBatch: opts.Capacity,
			sanitize: sanitize,
			redact:   redact,
		},
		buf:    newRing(opts.Capacity),
		keys:   opts.Keys,
		styles: opts.Styles.compile(),
		title:  sanitize(opts.Title),
		follow: true,
		cur:    -1,
	}
}

// Init opens the source and returns the Cmd that reads its first batch.
// Call it once.
func (m Model) Init() tea.Cmd { return m.feed.next(m.id) }

// Close stops following and releases the source. Idempotent; call it when
// the parent closes the view. Later messages for this view are ignored.
func (m Model) Close() { m.feed.close() }

// SetSize sets the view's outer size in cells: h-1 rows of log and one
// status row.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(0, w), max(0, h)
}

// Keys returns the key map in use (the parent matches Keys().Close).
func (m Model) Keys() KeyMap { return m.keys }

// Editing reports whether the search prompt is open. While it is, the parent
// must forward every key (esc and q included) to the view.
func (m Model) Editing() bool { return m.editing }

// Following reports whether autoscroll is on.
func (m Model) Following() bool { return m.follow }

// NewLines is the number of lines received since autoscroll paused.
func (m Model) NewLines() int { return m.newLines }

// Len is the number of lines buffered (at most the capacity).
func (m Model) Len() int { return m.buf.len() }

// Total is the number of lines received since the view opened.
func (m Model) Total() int { return m.buf.end() }

// Lines returns a copy of the buffered lines, oldest first.
func (m Model) Lines() []string {
	out := make([]string, 0, m.buf.len())
	for i := m.buf.first(); i < m.buf.end(); i++ {
		l, _ := m.buf.at(i)
		out = append(out, l)
	}
	return out
}

// Update handles the view's own messages, keys and JobEndedMsg.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case LinesMsg:
		if msg.id != m.id {
			return m, nil
		}
		m.ingest(msg.Lines)
		m.preview = msg.Preview
		return m, m.feed.next(m.id)
	case SourceDoneMsg:
		if msg.id == m.id {
			m.done, m.doneErr = true, msg.Err
			m.preview = nil // nothing is being written any more
		}
	case JobEndedMsg:
		e := msg
		e.CaptureError = sanitizeLine(e.CaptureError, 200)
		m.ended = &e
		m.feed.stopAtEOF()
	case tea.KeyPressMsg:
		if m.editing {
			m.editKey(msg)
		} else {
			m.handleKey(msg)
		}
	case tea.PasteMsg:
		if m.editing {
			m.typeText(msg.Content)
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(-3)
		case tea.MouseWheelDown:
			m.scroll(3)
		}
	}
	return m, nil
}

// ingest appends a batch to the ring and keeps positions and matches valid.
func (m *Model) ingest(lines []string) {
	if len(lines) == 0 {
		return
	}
	start := m.buf.end()
	m.buf.push(lines)
	if !m.follow {
		m.newLines += len(lines)
	}
	first := m.buf.first()
	if m.query != "" {
		skip := max(0, first-start) // lines of this batch already evicted
		for i := skip; i < len(lines); i++ {
			if m.match.contains(lines[i]) {
				m.matches = append(m.matches, start+i)
			}
		}
		m.dropEvictedMatches(first)
	}
	if m.top < first {
		m.top, m.topRow = first, 0
	}
}

func (m *Model) dropEvictedMatches(first int) {
	k := 0
	for k < len(m.matches) && m.matches[k] < first {
		k++
	}
	if k == 0 {
		return
	}
	m.matches = m.matches[k:]
	if m.cur >= 0 {
		m.cur -= k
		if m.cur < 0 {
			m.cur = -1
		}
	}
	if cap(m.matches) > 2*len(m.matches)+1024 {
		m.matches = append([]int(nil), m.matches...)
	}
}

func (m *Model) handleKey(k tea.KeyPressMsg) {
	ch := m.contentHeight()
	switch {
	case key.Matches(k, m.keys.Pause):
		if m.follow {
			m.pause()
		} else {
			m.resume()
		}
	case key.Matches(k, m.keys.Bottom):
		m.resume()
	case key.Matches(k, m.keys.Top):
		m.pause()
		m.top, m.topRow = m.buf.first(), 0
	case key.Matches(k, m.keys.Wrap):
		if !m.follow {
			m.top, m.topRow = m.position()
			m.topRow = 0
		}
		m.wrap = !m.wrap
	case key.Matches(k, m.keys.Search):
		m.editing = true
		m.input = m.input[:0]
	case key.Matches(k, m.keys.NextMatch):
		m.stepMatch(+1)
	case key.Matches(k, m.keys.PrevMatch):
		m.stepMatch(-1)
	case key.Matches(k, m.keys.Up):
		m.scroll(-1)
	case key.Matches(k, m.keys.Down):
		m.scroll(1)
	case key.Matches(k, m.keys.PageUp):
		m.scroll(-max(1, ch))
	case key.Matches(k, m.keys.PageDown):
		m.scroll(max(1, ch))
	case key.Matches(k, m.keys.HalfPageUp):
		m.scroll(-max(1, ch/2))
	case key.Matches(k, m.keys.HalfPageDown):
		m.scroll(max(1, ch/2))
	case key.Matches(k, m.keys.Left):
		if !m.wrap {
			m.xOff = max(0, m.xOff-m.hStep())
		}
	case key.Matches(k, m.keys.Right):
		if !m.wrap {
			m.xOff = min(m.xOff+m.hStep(), max(0, m.maxVisibleWidth()-m.width))
		}
	}
}

func (m *Model) hStep() int { return max(1, m.width/2) }

// pause freezes the window where it is; reading continues.
func (m *Model) pause() {
	if m.follow {
		m.top, m.topRow = m.bottomTop()
		m.follow = false
		m.newLines = 0
	}
}

// resume jumps to the bottom and follows again.
func (m *Model) resume() {
	m.follow = true
	m.newLines = 0
}

// scroll moves the window by n rows (negative: up). Moving up pauses
// autoscroll, like a pager; moving down never resumes it (G or space does).
func (m *Model) scroll(n int) {
	if n == 0 || (m.follow && n > 0) {
		return
	}
	m.pause()
	top, row := m.position()
	first := m.buf.first()
	if n < 0 {
		for ; n < 0; n++ {
			if row > 0 {
				row--
				continue
			}
			if top <= first {
				break
			}
			top--
			row = m.rowsOf(top) - 1
		}
	} else {
		bt, br := m.bottomTop()
		for ; n > 0 && posLess(top, row, bt, br); n-- {
			if row+1 < m.rowsOf(top) {
				row++
			} else {
				top, row = top+1, 0
			}
		}
	}
	m.top, m.topRow = top, row
}

func posLess(l1, r1, l2, r2 int) bool { return l1 < l2 || (l1 == l2 && r1 < r2) }

// --- geometry ---------------------------------------------------------------

func (m Model) contentHeight() int { return max(0, m.height-1) }

// end is one past the last displayable line: the buffered lines, the
// previews, plus the end marker once the job ended.
func (m Model) end() int {
	n := m.buf.end() + len(m.preview)
	if m.ended != nil {
		return n + 1
	}
	return n
}

// text returns displayable line i (a buffered line, then the previews) and
// whether it is the end marker.
func (m Model) text(i int) (string, bool) {
	if k := i - m.buf.end(); k >= 0 && k < len(m.preview) {
		return m.preview[k], false
	}
	if i == m.buf.end()+len(m.preview) && m.ended != nil {
		return m.ended.marker(), true
	}
	l, _ := m.buf.at(i)
	return l, false
}

// Preview returns a copy of the previews shown below the lines: the lines
// still being written, marked "[partial] " (see Batch).
func (m Model) Preview() []string { return slices.Clone(m.preview) }

// rowsOf is the number of screen rows line i takes.
func (m Model) rowsOf(i int) int {
	if !m.wrap {
		return 1
	}
	s, _ := m.text(i)
	return lineRows(s, m.width)
}

// bottomTop is the first visible (line, row) when the last line sits on the
// last content row. It looks only at the lines that fit on screen.
func (m Model) bottomTop() (int, int) {
	first := m.buf.first()
	remaining := m.contentHeight()
	for i := m.end() - 1; i >= first; i-- {
		h := m.rowsOf(i)
		if h >= remaining {
			return i, h - remaining
		}
		remaining -= h
	}
	return first, 0
}

// position is the first visible (line, row): the bottom when following, else
// the saved position, clamped so the window never starts past the bottom.
func (m Model) position() (int, int) {
	bt, br := m.bottomTop()
	if m.follow {
		return bt, br
	}
	top, row := max(m.top, m.buf.first()), m.topRow
	if top != m.top {
		row = 0
	}
	if posLess(bt, br, top, row) {
		return bt, br
	}
	return top, min(row, m.rowsOf(top)-1)
}

func (m Model) maxVisibleWidth() int {
	top, _ := m.position()
	w := 0
	for i, n := top, 0; i < m.end() && n < m.contentHeight(); i, n = i+1, n+1 {
		s, _ := m.text(i)
		w = max(w, textWidth(s))
	}
	return w
}

// --- search -----------------------------------------------------------------

func (m *Model) editKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.editing = false
		m.runSearch(string(m.input))
	case "esc", "ctrl+c":
		m.editing = false
	case "backspace", "ctrl+h":
		if len(m.input) > 0 {
			m.input = m.input[:len(m.input)-1]
		}
	case "ctrl+u":
		m.input = m.input[:0]
	case "ctrl+w":
		s := strings.TrimRight(string(m.input), " ")
		if i := strings.LastIndexByte(s, ' '); i >= 0 {
			m.input = []rune(s[:i+1])
		} else {
			m.input = m.input[:0]
		}
	default:
		if k.Text != "" && k.Mod&^(tea.ModShift|tea.ModCapsLock|tea.ModNumLock) == 0 {
			m.typeText(k.Text)
		}
	}
}

// typeText appends typed or pasted text to the prompt, keeping it one line
// of printable characters.
func (m *Model) typeText(s string) {
	s = sanitizeLine(strings.ReplaceAll(s, "\n", " "), maxQueryRunes)
	for _, r := range s {
		if len(m.input) >= maxQueryRunes {
			return
		}
		m.input = append(m.input, r)
	}
}

// runSearch sets the query, collects the buffered lines matching it and
// jumps to the first match at or after the top of the window (wrapping
// around). An empty query clears the search.
func (m *Model) runSearch(q string) {
	m.query, m.matches, m.cur = q, m.matches[:0], -1
	if q == "" {
		m.matches = nil
		return
	}
	m.match = newMatcher(q)
	for i := m.buf.first(); i < m.buf.end(); i++ {
		if l, _ := m.buf.at(i); m.match.contains(l) {
			m.matches = append(m.matches, i)
		}
	}
	m.stepMatch(+1)
}

// stepMatch moves to the next (dir > 0) or previous match, wrapping around.
// With no current match it starts from the top of the window.
func (m *Model) stepMatch(dir int) {
	n := len(m.matches)
	if n == 0 {
		return
	}
	switch {
	case m.cur >= 0 && dir > 0:
		m.cur = (m.cur + 1) % n
	case m.cur >= 0:
		m.cur = (m.cur - 1 + n) % n
	default:
		top, _ := m.position()
		m.cur = 0
		for i, l := range m.matches {
			if l >= top {
				m.cur = i
				break
			}
		}
		if dir < 0 {
			m.cur = (m.cur - 1 + n) % n
		}
	}
	m.showLine(m.matches[m.cur])
}

// showLine pauses and puts line i at the top of the window (or as near as
// the bottom allows), scrolling horizontally to its first match.
func (m *Model) showLine(i int) {
	m.pause()
	m.top, m.topRow = i, 0
	m.top, m.topRow = m.position()
	if m.wrap || m.query == "" {
		return
	}
	l, _ := m.buf.at(i)
	at := m.match.index(l, 0)
	if at < 0 {
		return
	}
	col := textWidth(l[:at])
	qw := textWidth(l[at : at+len(m.query)])
	if col < m.xOff || col+qw > m.xOff+m.width {
		m.xOff = max(0, col-m.width/4)
	}
}

// --- end marker -------------------------------------------------------------

// marker is the text of the end-of-job line.
func (e *JobEndedMsg) marker() string {
	return "── " + e.summary() + " ──"
}

// summary reads "job completed (exit 0) at 10:04:05".
func (e *JobEndedMsg) summary() string {
	var b strings.Builder
	b.WriteString("job ")
	switch e.Status {
	case core.JobTimedOut:
		b.WriteString("timed out")
	case "":
		b.WriteString("ended")
	default:
		b.WriteString(string(e.Status))
	}
	if e.ExitCode != nil {
		fmt.Fprintf(&b, " (exit %d)", *e.ExitCode)
	}
	if !e.At.IsZero() {
		b.WriteString(" at ")
		b.WriteString(e.At.Format("15:04:05"))
	}
	if e.CaptureError != "" {
		b.WriteString(" · log incomplete: ")
		b.WriteString(e.CaptureError)
	}
	return b.String()
}
