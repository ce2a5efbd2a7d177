package logview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
)

// fakeSource is a Source fed by the test through a buffered channel.
type fakeSource struct {
	ch     chan []string
	err    error
	closed atomic.Bool
}

func newFakeSource(buffer int) *fakeSource { return &fakeSource{ch: make(chan []string, buffer)} }

func (f *fakeSource) Lines() <-chan []string { return f.ch }
func (f *fakeSource) Err() error             { return f.err }
func (f *fakeSource) Close() error           { f.closed.Store(true); return nil }

// harness drives a Model synchronously: it owns the single outstanding read
// Cmd and runs it only when told to.
type harness struct {
	t   testing.TB
	m   Model
	src *fakeSource
	cmd tea.Cmd
}

func newHarness(t testing.TB, w, h int, opts Options) *harness {
	src := newFakeSource(1 << 16)
	if opts.Source == nil && opts.Open == nil {
		opts.Source = src
	}
	m := New(opts)
	m.SetSize(w, h)
	hs := &harness{t: t, m: m, src: src, cmd: m.Init()}
	t.Cleanup(m.Close)
	return hs
}

// feed queues batches on the source and lets the view read everything queued.
func (h *harness) feed(batches ...[]string) int {
	for _, b := range batches {
		h.src.ch <- b
	}
	msgs := 0
	for len(h.src.ch) > 0 {
		msg := h.cmd()
		if _, ok := msg.(LinesMsg); !ok {
			h.t.Fatalf("read Cmd returned %T, want LinesMsg", msg)
		}
		h.m, h.cmd = h.m.Update(msg)
		msgs++
	}
	return msgs
}

func (h *harness) send(msgs ...tea.Msg) {
	for _, msg := range msgs {
		var cmd tea.Cmd
		h.m, cmd = h.m.Update(msg)
		if cmd != nil {
			h.t.Fatalf("Update(%T) returned a Cmd", msg)
		}
	}
}

// keys sends key presses named as in tea.Key.String ("space", "G", "ctrl+u").
func (h *harness) keys(names ...string) {
	for _, n := range names {
		h.send(keyMsg(n))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(name string) tea.KeyPressMsg {
	switch name {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	r := []rune(name)
	if len(r) != 1 {
		panic("unknown key " + name)
	}
	k := tea.KeyPressMsg{Code: r[0], Text: name}
	if r[0] >= 'A' && r[0] <= 'Z' {
		k.Code = r[0] + ('a' - 'A')
		k.Mod = tea.ModShift
	}
	return k
}

func (h *harness) rows() []string {
	v := h.m.View()
	if strings.Contains(v, "\x1b") {
		v = ansi.Strip(v)
	}
	return strings.Split(v, "\n")
}

// content is the log rows (without the status bar), trailing blanks dropped.
func (h *harness) content() []string {
	r := h.rows()
	r = r[:len(r)-1]
	for len(r) > 0 && r[len(r)-1] == "" {
		r = r[:len(r)-1]
	}
	return r
}

func (h *harness) status() string { r := h.rows(); return r[len(r)-1] }

func numbered(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d", from+i)
	}
	return out
}

func TestBatchesKeepLast10kInOrder(t *testing.T) {
	const total, batch = 50_000, 137
	h := newHarness(t, 80, 24, Options{})
	var batches [][]string
	for n := 0; n < total; n += batch {
		batches = append(batches, numbered(n, min(batch, total-n)))
	}
	msgs := h.feed(batches...)
	if msgs > len(batches) || msgs == 0 {
		t.Fatalf("%d messages for %d batches", msgs, len(batches))
	}
	t.Logf("%d batches of %d lines coalesced into %d messages", len(batches), batch, msgs)
	if h.m.Len() != DefaultCapacity || h.m.Total() != total {
		t.Fatalf("Len=%d Total=%d", h.m.Len(), h.m.Total())
	}
	for k, l := range h.m.Lines() {
		if want := fmt.Sprintf("line %d", total-DefaultCapacity+k); l != want {
			t.Fatalf("line %d = %q, want %q", k, l, want)
		}
	}
	rows := h.rows()
	if len(rows) != 24 {
		t.Fatalf("View has %d rows, want 24", len(rows))
	}
	if rows[22] != "line 49999" || rows[0] != "line 49977" {
		t.Errorf("window = %q … %q", rows[0], rows[22])
	}
	if !strings.Contains(h.status(), "10000 lines kept (max)") {
		t.Errorf("status %q", h.status())
	}
}

func TestEachBatchIsOneMessageAndTheCmdIsReissued(t *testing.T) {
	h := newHarness(t, 40, 5, Options{})
	for i := range 3 {
		if n := h.feed(numbered(i*10, 10)); n != 1 {
			t.Fatalf("batch %d took %d messages", i, n)
		}
		if h.cmd == nil {
			t.Fatal("read Cmd not re-issued")
		}
	}
	if h.m.Total() != 30 {
		t.Fatalf("Total=%d", h.m.Total())
	}
}

func TestViewHeightAndWidth(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}, {20, 3}, {10, 1}} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			w, hgt := size[0], size[1]
			h := newHarness(t, w, hgt, Options{Title: "job abc " + strings.Repeat("x", 200)})
			h.feed(numbered(0, 5), []string{strings.Repeat("é漢", 100)})
			for _, wrap := range []bool{false, true} {
				rows := h.rows()
				if len(rows) != hgt {
					t.Fatalf("wrap=%v: %d rows, want %d", wrap, len(rows), hgt)
				}
				for _, r := range rows {
					if ansi.StringWidth(r) > w {
						t.Fatalf("wrap=%v: row %q is %d cells wide", wrap, r, ansi.StringWidth(r))
					}
				}
				h.keys("w")
			}
		})
	}
}

func TestPauseKeepsReadingAndCountsNewLines(t *testing.T) {
	h := newHarness(t, 40, 6, Options{})
	h.feed(numbered(0, 20))
	if !h.m.Following() || !strings.Contains(h.status(), "FOLLOWING") {
		t.Fatalf("not following: %q", h.status())
	}
	before := h.content()
	h.keys("space")
	if h.m.Following() || !strings.HasPrefix(h.status(), " PAUSED ") {
		t.Fatalf("space did not pause: %q", h.status())
	}
	h.feed(numbered(20, 5), numbered(25, 2))
	if got := h.content(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("paused window moved: %v → %v", before, got)
	}
	if h.m.NewLines() != 7 || !strings.Contains(h.status(), "PAUSED (7 new lines)") {
		t.Errorf("status %q, NewLines=%d", h.status(), h.m.NewLines())
	}
	if h.m.Total() != 27 {
		t.Errorf("stopped reading while paused: Total=%d", h.m.Total())
	}
	h.keys("space")
	got := h.content()
	if !h.m.Following() || got[len(got)-1] != "line 26" || h.m.NewLines() != 0 {
		t.Errorf("unpause: following=%v last=%q new=%d", h.m.Following(), got[len(got)-1], h.m.NewLines())
	}
}

func TestPausedWindowSurvivesEviction(t *testing.T) {
	h := newHarness(t, 40, 6, Options{Capacity: 10})
	h.feed(numbered(0, 10))
	h.keys("g")
	h.feed(numbered(10, 25))
	got := h.content()
	if got[0] != "line 25" || h.m.NewLines() != 25 {
		t.Fatalf("after eviction: top=%q new=%d", got[0], h.m.NewLines())
	}
}

func TestTopBottomAndScrolling(t *testing.T) {
	h := newHarness(t, 40, 11, Options{}) // 10 content rows
	h.feed(numbered(0, 100))
	h.keys("g")
	if got := h.content(); got[0] != "line 0" || h.m.Following() {
		t.Fatalf("g: top=%q following=%v", got[0], h.m.Following())
	}
	h.keys("j", "down", "pgdown", "ctrl+d")
	if got := h.content(); got[0] != "line 17" {
		t.Fatalf("after j,down,pgdown,ctrl+d: top=%q", got[0])
	}
	h.keys("k", "ctrl+u", "pgup")
	if got := h.content(); got[0] != "line 1" {
		t.Fatalf("after k,ctrl+u,pgup: top=%q", got[0])
	}
	h.keys("pgup", "pgup")
	if got := h.content(); got[0] != "line 0" {
		t.Fatalf("scrolled above the top: %q", got[0])
	}
	h.keys("G")
	if got := h.content(); !h.m.Following() || got[len(got)-1] != "line 99" {
		t.Fatalf("G: following=%v last=%q", h.m.Following(), got[len(got)-1])
	}
	// Scrolling up pauses, like a pager; scrolling back down to the end
	// does not resume (G does), and never goes past the last line.
	h.keys("k")
	if h.m.Following() {
		t.Fatal("k did not pause")
	}
	h.keys("pgdown", "pgdown", "j")
	if got := h.content(); h.m.Following() || got[len(got)-1] != "line 99" || len(got) != 10 {
		t.Fatalf("scrolled past the end or resumed: following=%v rows=%v", h.m.Following(), got)
	}
	// Down while following changes nothing.
	h.keys("G", "j", "pgdown")
	if !h.m.Following() {
		t.Fatal("down while following paused the view")
	}
}

func TestWrapToggle(t *testing.T) {
	long := strings.Repeat("0123456789", 25) // 250 cells
	h := newHarness(t, 80, 11, Options{})
	h.feed([]string{"short", long, "after"})
	got := h.content()
	// A line cut on the right ends with "…" in its last cell.
	if len(got) != 3 || got[1] != long[:79]+"…" {
		t.Fatalf("wrap off: %q", got)
	}
	if !strings.Contains(h.status(), "wrap off") {
		t.Errorf("status %q", h.status())
	}
	h.keys("right")
	if got := h.content(); got[1] != long[40:119]+"…" || !strings.Contains(h.status(), "col 41") {
		t.Fatalf("right: %q, status %q", got[1], h.status())
	}
	h.keys("right", "right", "right", "right", "right")
	if got := h.content(); got[1] != long[170:250] {
		t.Fatalf("scrolled past the longest line: %q", got[1])
	}
	h.keys("w")
	got = h.content()
	want := []string{"short", long[:80], long[80:160], long[160:240], long[240:], "after"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("wrap on:\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(h.status(), "wrap on") {
		t.Errorf("status %q", h.status())
	}
	// Wide characters wrap on cell boundaries, never past the width.
	h.feed([]string{strings.Repeat("漢", 45)})
	rows := h.content()
	if r := rows[len(rows)-2]; r != strings.Repeat("漢", 40) {
		t.Errorf("wide wrap row %q", r)
	}
}

func TestWrappedScrollingMovesByRows(t *testing.T) {
	long := strings.Repeat("x", 30) // 3 rows at width 10
	h := newHarness(t, 10, 5, Options{})
	h.feed([]string{"a", long, "b", long, "c"})
	h.keys("w")
	if got := h.content(); strings.Join(got, ",") != "xxxxxxxxxx,xxxxxxxxxx,xxxxxxxxxx,c" {
		t.Fatalf("bottom of wrapped view: %q", got)
	}
	h.keys("k")
	if got := h.content(); strings.Join(got, ",") != "b,xxxxxxxxxx,xxxxxxxxxx,xxxxxxxxxx" {
		t.Fatalf("one row up: %q", got)
	}
	h.keys("k", "k")
	if got := h.content(); got[0] != "xxxxxxxxxx" || got[2] != "b" {
		t.Fatalf("three rows up: %q", got)
	}
	h.keys("g")
	if got := h.content(); got[0] != "a" {
		t.Fatalf("top: %q", got)
	}
}

func TestSearchCyclesMatchesWithWraparound(t *testing.T) {
	h := newHarness(t, 80, 6, Options{})
	lines := numbered(0, 100)
	for _, i := range []int{10, 40, 70} {
		lines[i] += " ERROR disk full"
	}
	h.feed(lines)
	h.keys("g", "/")
	if !h.m.Editing() {
		t.Fatal("/ did not open the prompt")
	}
	h.typeText("errox")
	h.keys("backspace")
	h.typeText("r")
	if got := strings.TrimRight(h.status(), " "); got != "/error" {
		t.Fatalf("prompt %q", got)
	}
	h.keys("enter")
	if h.m.Editing() {
		t.Fatal("enter did not close the prompt")
	}
	step := func(key, wantTop, wantStatus string) {
		t.Helper()
		if key != "" {
			h.keys(key)
		}
		got := h.content()
		if got[0] != wantTop || !strings.Contains(h.status(), wantStatus) {
			t.Fatalf("after %q: top=%q status=%q; want top=%q status ~ %q", key, got[0], h.status(), wantTop, wantStatus)
		}
	}
	step("", "line 10 ERROR disk full", "/error match 1/3") // smart case: lower-case query ignores case
	step("n", "line 40 ERROR disk full", "match 2/3")
	step("n", "line 70 ERROR disk full", "match 3/3")
	step("n", "line 10 ERROR disk full", "match 1/3")
	step("N", "line 70 ERROR disk full", "match 3/3")
	step("N", "line 40 ERROR disk full", "match 2/3")

	// New lines keep counting; an upper-case query is exact and starts
	// from the top of the window (line 40).
	h.feed([]string{"late ERROR", "late error"})
	if !strings.Contains(h.status(), "match 2/5") {
		t.Errorf("after new lines: %q", h.status())
	}
	h.keys("/")
	h.typeText("ERROR")
	h.keys("enter")
	if !strings.Contains(h.status(), "/ERROR match 2/4") {
		t.Errorf("exact case: %q", h.status())
	}
	h.keys("/")
	h.typeText("nothing here")
	h.keys("enter")
	if !strings.Contains(h.status(), "/nothing here no match") {
		t.Errorf("no match: %q", h.status())
	}
	// esc cancels the prompt and keeps the previous search.
	h.keys("/")
	h.typeText("q")
	h.keys("esc")
	if h.m.Editing() || !strings.Contains(h.status(), "/nothing here") {
		t.Errorf("esc: editing=%v status=%q", h.m.Editing(), h.status())
	}
	// An empty query clears the search.
	h.keys("/", "enter")
	if strings.Contains(h.status(), "/nothing") {
		t.Errorf("empty query kept the search: %q", h.status())
	}
}

func TestSearchHighlightsMatches(t *testing.T) {
	st := Styles{
		Match:        lipglossMark("M"),
		CurrentMatch: lipglossMark("C"),
	}
	h := newHarness(t, 80, 4, Options{Styles: st})
	h.feed([]string{"a foo b foo", "c foo"})
	h.keys("g", "/")
	h.typeText("foo")
	h.keys("enter")
	got := h.m.View()
	if !strings.Contains(got, "a [C:foo] b [M:foo]") || !strings.Contains(got, "c [M:foo]") {
		t.Fatalf("highlighting:\n%s", got)
	}
	h.keys("n")
	if got := h.m.View(); !strings.Contains(got, "a [M:foo] b [M:foo]\nc [C:foo]") {
		t.Fatalf("current match after n:\n%s", got)
	}
}

func TestSearchScrollsHorizontallyToTheMatch(t *testing.T) {
	h := newHarness(t, 40, 4, Options{})
	h.feed([]string{strings.Repeat(".", 100) + "needle" + strings.Repeat(".", 50)})
	h.keys("/")
	h.typeText("needle")
	h.keys("enter")
	if got := h.content(); !strings.Contains(got[0], "needle") {
		t.Fatalf("match not scrolled into view: %q", got[0])
	}
}

func TestEndMarker(t *testing.T) {
	h := newHarness(t, 120, 8, Options{Title: "job 3fa2"})
	h.feed(numbered(0, 3))
	exit := 0
	h.send(JobEndedMsg{Status: core.JobCompleted, ExitCode: &exit, At: time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)})
	h.feed([]string{"flushed late"})
	got := h.content()
	want := []string{"line 0", "line 1", "line 2", "flushed late", "── job completed (exit 0) at 10:04:05 ──"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("content:\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(h.status(), "job completed (exit 0) at 10:04:05") {
		t.Errorf("status %q", h.status())
	}
	code := 3
	for _, tc := range []struct {
		msg  JobEndedMsg
		want string
	}{
		{JobEndedMsg{Status: core.JobFailed, ExitCode: &code}, "── job failed (exit 3) ──"},
		{JobEndedMsg{Status: core.JobTimedOut}, "── job timed out ──"},
		{JobEndedMsg{Status: core.JobReaped}, "── job reaped ──"},
		{JobEndedMsg{Status: core.JobCancelled, CaptureError: "write: no space\x1b[2J left"}, "── job cancelled · log incomplete: write: no space left ──"},
	} {
		h.send(tc.msg)
		got := h.content()
		if got[len(got)-1] != tc.want {
			t.Errorf("marker %q, want %q", got[len(got)-1], tc.want)
		}
	}
}

func TestSourceEndAndErrorShowInStatus(t *testing.T) {
	h := newHarness(t, 120, 4, Options{})
	h.feed(numbered(0, 2))
	h.src.err = errors.New("log dir removed")
	close(h.src.ch)
	msg := h.cmd()
	done, ok := msg.(SourceDoneMsg)
	if !ok || done.Err == nil {
		t.Fatalf("got %#v", msg)
	}
	h.m, h.cmd = h.m.Update(msg)
	if h.cmd != nil {
		t.Error("read Cmd re-issued after the source ended")
	}
	if !strings.Contains(h.status(), "follow stopped: log dir removed") {
		t.Errorf("status %q", h.status())
	}
}

func TestOpenErrorIsReported(t *testing.T) {
	m := New(Options{Open: func(context.Context) (Source, error) { return nil, errors.New("no such job dir") }})
	defer m.Close()
	msg := m.Init()()
	done, ok := msg.(SourceDoneMsg)
	if !ok || done.Err == nil || done.Err.Error() != "no such job dir" {
		t.Fatalf("got %#v", msg)
	}
}

func TestCloseStopsReadingAndClosesTheSource(t *testing.T) {
	h := newHarness(t, 40, 5, Options{})
	h.feed(numbered(0, 1))
	res := make(chan tea.Msg)
	go func() { res <- h.cmd() }()
	h.m.Close()
	select {
	case msg := <-res:
		if msg != nil {
			t.Fatalf("read Cmd after Close returned %#v", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read Cmd still blocked after Close")
	}
	if !h.src.closed.Load() {
		t.Error("source not closed")
	}
	h.m.Close() // idempotent
}

func TestMessagesOfAnotherViewAreIgnored(t *testing.T) {
	a := newHarness(t, 40, 5, Options{})
	b := newHarness(t, 40, 5, Options{})
	b.src.ch <- []string{"for b"}
	msg := b.cmd()
	a.m, _ = a.m.Update(msg)
	if a.m.Total() != 0 {
		t.Fatal("view a took view b's lines")
	}
}

func TestRedactsAcrossBatches(t *testing.T) {
	h := newHarness(t, 80, 12, Options{})
	h.feed([]string{"starting", "-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"})
	h.feed([]string{"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "-----END RSA PRIVATE KEY-----", "api_key=abcdef123456 done"})
	all := strings.Join(h.m.Lines(), "\n")
	for _, secret := range []string{"MIIEow", "VTLw7o", "abcdef123456"} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q shown:\n%s", secret, all)
		}
	}
	if !strings.Contains(all, redact.Redacted) || !strings.Contains(all, "starting") {
		t.Errorf("unexpected redaction:\n%s", all)
	}
}

func TestCustomRedactAndTitleSanitised(t *testing.T) {
	var calls int
	h := newHarness(t, 80, 3, Options{
		Title:  "job\x1b]0;pwned\x07 x",
		Redact: func(l string) string { calls++; return strings.ReplaceAll(l, "hunter2", "***") },
	})
	h.feed([]string{"pw hunter2", "ok"})
	if calls != 2 || h.m.Lines()[0] != "pw ***" {
		t.Fatalf("calls=%d lines=%q", calls, h.m.Lines())
	}
	if strings.Contains(h.m.View(), "pwned") || strings.ContainsRune(h.m.View(), 0x07) {
		t.Errorf("title not sanitised: %q", h.status())
	}
}

func TestKeyMapHelp(t *testing.T) {
	k := DefaultKeyMap()
	if len(k.ShortHelp()) == 0 || len(k.FullHelp()) != 3 {
		t.Fatal("help empty")
	}
	for _, col := range k.FullHelp() {
		for _, b := range col {
			if b.Help().Key == "" || b.Help().Desc == "" || len(b.Keys()) == 0 {
				t.Errorf("binding without help: %+v", b.Keys())
			}
		}
	}
	if New(Options{}).Keys().isZero() {
		t.Error("zero KeyMap not defaulted")
	}
}

func TestEditingCapturesCloseKeys(t *testing.T) {
	h := newHarness(t, 40, 3, Options{})
	h.keys("/")
	h.typeText("q")
	if !h.m.Editing() || strings.TrimRight(h.status(), " ") != "/q" {
		t.Fatalf("q while editing: editing=%v %q", h.m.Editing(), h.status())
	}
	h.send(tea.PasteMsg{Content: "a\nb\x1b[31m"})
	if h.status() != "/qa bb" && h.status() != "/qa b" {
		// the sanitiser may drop or show the ESC; it must not pass it through
		if strings.ContainsRune(h.m.View(), 0x1b) {
			t.Fatalf("paste kept an escape: %q", h.m.View())
		}
	}
}

// batchSource is a BatchSource fed by the test through a buffered channel.
type batchSource struct {
	fakeSource
	bch chan Batch
}

func (b *batchSource) Batches() <-chan Batch { return b.bch }

// Previews come from a BatchSource: a batch replaces the previews before it
// (also within one coalesced read), they are sanitised and redacted, shown
// below the lines and never stored; a batch without previews removes them.
func TestPreviewsReplacedNeverStored(t *testing.T) {
	src := &batchSource{bch: make(chan Batch, 8)}
	hs := newHarness(t, 40, 6, Options{Source: src})
	read := func(batches ...Batch) {
		t.Helper()
		for _, b := range batches {
			src.bch <- b
		}
		msg := hs.cmd()
		lm, ok := msg.(LinesMsg)
		if !ok {
			t.Fatalf("read %T, want LinesMsg", msg)
		}
		hs.m, hs.cmd = hs.m.Update(lm)
	}
	read(Batch{Lines: []string{"a"}, Preview: []string{"[partial] 1%"}},
		Batch{Preview: []string{"[partial] 2% \x1b[31mpassword=hunter2hunter2"}})
	wantPv := []string{"[partial] 2% password=" + redact.Redacted}
	if got := hs.m.Preview(); !slices.Equal(got, wantPv) {
		t.Fatalf("preview %q, want %q", got, wantPv)
	}
	if got := hs.m.Lines(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("lines %q, want [a]", got)
	}
	if rows := strings.Split(hs.m.View(), "\n"); rows[1] != wantPv[0] {
		t.Fatalf("row 1 %q, want the preview", rows[1])
	}
	read(Batch{Lines: []string{"2% done"}})
	if got := hs.m.Preview(); got != nil {
		t.Fatalf("preview %q after a batch without previews", got)
	}
	if got := hs.m.Lines(); !slices.Equal(got, []string{"a", "2% done"}) {
		t.Fatalf("lines %q", got)
	}
}
