package logview

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tailer"
)

// TestFollowAcrossRotations drives the view through the real follower: a
// RotatingWriter with a tiny rotation threshold writes numbered lines while
// the view follows the directory; output.log is renamed to output.1.log and
// a fresh output.log started many times. Every line must arrive, in order.
func TestFollowAcrossRotations(t *testing.T) {
	dir := t.TempDir()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{MaxBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	m := New(Options{Dir: dir, Capacity: 100_000})
	defer m.Close()
	m.SetSize(80, 24)
	msgs := make(chan any, 1)
	var cmd = m.Init()
	read := func() {
		go func() { msgs <- cmd() }()
	}
	read()

	// 34-byte lines, 16 KiB per rotation: about 40 rotations. The writer
	// stays at most one chunk (< one rotation) ahead of the view, so a
	// correct follower cannot miss a generation (J3 keeps only two).
	const total, chunk = 20_000, 200
	written := 0
	deadline := time.After(60 * time.Second)
	for m.Total() < total {
		if written < total && written-m.Total() <= chunk {
			for range chunk {
				if err := w.WriteLine(fmt.Appendf(nil, "line %06d %s", written, "payload-payload-payload")); err != nil {
					t.Fatal(err)
				}
				written++
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case msg := <-msgs:
			switch msg := msg.(type) {
			case LinesMsg:
				m, cmd = m.Update(msg)
				read()
			case SourceDoneMsg:
				t.Fatalf("follower stopped after %d lines: %v", m.Total(), msg.Err)
			default:
				t.Fatalf("unexpected %T", msg)
			}
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("only %d of %d lines after 60 s", m.Total(), total)
		}
	}
	lines := m.Lines()
	if len(lines) != total {
		t.Fatalf("%d lines, want %d", len(lines), total)
	}
	for i, l := range lines {
		if want := fmt.Sprintf("line %06d payload-payload-payload", i); l != want {
			t.Fatalf("line %d = %q, want %q", i, l, want)
		}
	}
	if w.Rotations() < 10 {
		t.Fatalf("only %d rotations", w.Rotations())
	}
}

// followView runs the view's read loop in the background the way Bubble
// Tea would (one outstanding Cmd), applying messages on the test goroutine
// through step.
type followView struct {
	t    testing.TB
	m    Model
	cmd  tea.Cmd
	msgs chan tea.Msg
	done *SourceDoneMsg
}

func startFollowView(t testing.TB, opts Options) *followView {
	m := New(opts)
	m.SetSize(80, 24)
	fv := &followView{t: t, m: m, cmd: m.Init(), msgs: make(chan tea.Msg, 1)}
	t.Cleanup(m.Close)
	fv.read()
	return fv
}

func (fv *followView) read() {
	cmd := fv.cmd
	go func() { fv.msgs <- cmd() }()
}

// step applies one message, waiting at most d; it reports whether one came.
func (fv *followView) step(d time.Duration) bool {
	select {
	case msg := <-fv.msgs:
		switch msg := msg.(type) {
		case LinesMsg:
			fv.m, fv.cmd = fv.m.Update(msg)
			fv.read()
		case SourceDoneMsg:
			fv.m, fv.cmd = fv.m.Update(msg)
			fv.done = &msg
		default:
			fv.t.Fatalf("unexpected %T", msg)
		}
		return true
	case <-time.After(d):
		return false
	}
}

// until steps until cond holds or 30 s pass.
func (fv *followView) until(what string, cond func() bool) {
	fv.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			fv.t.Fatalf("timed out waiting for %s (Total=%d, done=%v)", what, fv.m.Total(), fv.done)
		}
		if fv.done != nil {
			fv.t.Fatalf("source ended (%v) while waiting for %s", fv.done.Err, what)
		}
		fv.step(50 * time.Millisecond)
	}
}

func TestFollowBacklogThenLive(t *testing.T) {
	dir := t.TempDir()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{MaxBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const before = 12_000 // ~250 KiB: output.1.log and output.log both hold some
	for i := range before {
		if err := w.WriteLine(fmt.Appendf(nil, "old %05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fv := startFollowView(t, Options{Dir: dir, Capacity: 1000})
	fv.until("backlog", func() bool { return fv.m.Total() >= 1000 })
	if fv.m.Total() != 1000 {
		t.Fatalf("backlog delivered %d lines, want the last 1000", fv.m.Total())
	}
	if l := fv.m.Lines(); l[0] != "old 11000" || l[999] != "old 11999" {
		t.Fatalf("backlog %q … %q", l[0], l[999])
	}
	// Live lines follow, then the job ends: the unterminated last line
	// arrives, the follower stops by itself, and the marker is last.
	for i := range 10 {
		w.WriteLine(fmt.Appendf(nil, "new %d", i))
	}
	w.Flush()
	f, err := os.OpenFile(filepath.Join(dir, tailer.CurrentLog), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("no newline at the end")
	f.Close()
	fv.until("live lines", func() bool { return fv.m.Total() >= 1010 })
	exit := 0
	fv.m, _ = fv.m.Update(JobEndedMsg{Status: core.JobCompleted, ExitCode: &exit})
	deadline := time.Now().Add(30 * time.Second)
	for fv.done == nil && time.Now().Before(deadline) {
		fv.step(50 * time.Millisecond)
	}
	if fv.done == nil || fv.done.Err != nil {
		t.Fatalf("follower did not end cleanly after JobEndedMsg: %v", fv.done)
	}
	lines := fv.m.Lines()
	if got := lines[len(lines)-1]; got != "no newline at the end" || lines[len(lines)-2] != "new 9" {
		t.Fatalf("tail %q", lines[len(lines)-3:])
	}
	rows := strings.Split(fv.m.View(), "\n")
	if rows[22] != "── job completed (exit 0) ──" || strings.Contains(rows[23], "follow ended") {
		t.Fatalf("end rows %q / %q", rows[22], rows[23])
	}
}

func TestFollowMissingDir(t *testing.T) {
	fv := startFollowView(t, Options{Dir: filepath.Join(t.TempDir(), "gone")})
	fv.step(10 * time.Second)
	if fv.done == nil || fv.done.Err == nil {
		t.Fatalf("want an error, got %v", fv.done)
	}
	if st := fv.m.View(); !strings.Contains(st, "follow stopped:") {
		t.Fatalf("status %q", st)
	}
}

// BenchmarkFollow measures lines/s from a rotating writer on disk through
// the real follower into the view (bench/README.md P5: ≥ 100,000 lines/s, no line lost
// across 100 rotations). One op = 100 rotations at 256 KiB of 80-byte lines;
// the writer stays less than one rotation ahead of the view.
func BenchmarkFollow(b *testing.B) {
	line := strings.Repeat("x", 72)
	const rotate = 256 << 10
	const perOp = 100 * rotate / 80 // lines for ~100 rotations
	total := 0
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		w, err := tailer.OpenWriter(dir, tailer.WriterOptions{MaxBytes: rotate})
		if err != nil {
			b.Fatal(err)
		}
		fv := startFollowView(b, Options{Dir: dir, Capacity: DefaultCapacity})
		b.StartTimer()
		var seen atomic.Int64
		go func() {
			buf := make([]byte, 0, 96)
			for i := 0; i < perOp; i++ {
				for int64(i)-seen.Load() > rotate/80-64 {
					time.Sleep(100 * time.Microsecond)
				}
				buf = fmt.Appendf(buf[:0], "%07d %s", i, line)
				w.WriteLine(buf)
				if i%64 == 63 {
					w.Flush()
				}
			}
			w.Flush()
		}()
		for fv.m.Total() < perOp {
			if !fv.step(10 * time.Second) {
				b.Fatalf("stalled at %d of %d lines", fv.m.Total(), perOp)
			}
			seen.Store(int64(fv.m.Total()))
		}
		b.StopTimer()
		if w.Rotations() < 99 {
			b.Fatalf("%d rotations", w.Rotations())
		}
		lines := fv.m.Lines()
		for k, l := range lines {
			if want := fmt.Sprintf("%07d %s", perOp-len(lines)+k, line); l != want {
				b.Fatalf("line %d = %q, want %q", k, l, want)
			}
		}
		w.Close()
		fv.m.Close()
		total += perOp
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "lines/s")
}

// The line a command is still writing shows below the log after 200 ms of
// silence (tailer.PartialIdle), marked "[partial] ", on screen but not
// among the stored lines; the whole line replaces it (issue 26 item 13).
func TestFollowPreviewShownThenReplaced(t *testing.T) {
	dir := t.TempDir()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		_, _ = tailer.Pump(r, w, "")
	}()
	defer func() { pw.Close(); <-pumped; r.Close() }()
	fv := startFollowView(t, Options{Dir: dir})
	if _, err := pw.WriteString("start\nprogress 7%"); err != nil {
		t.Fatal(err)
	}
	fv.until("the preview", func() bool { return len(fv.m.Preview()) > 0 })
	if got, want := fv.m.Preview(), []string{"[partial] progress 7%"}; !slices.Equal(got, want) {
		t.Fatalf("preview %q, want %q", got, want)
	}
	if got := fv.m.Lines(); !slices.Equal(got, []string{"start"}) {
		t.Fatalf("stored lines %q, want only the whole line", got)
	}
	rows := strings.Split(fv.m.View(), "\n")
	if rows[0] != "start" || rows[1] != "[partial] progress 7%" {
		t.Fatalf("top rows %q, want the preview below the lines", rows[:3])
	}
	if _, err := pw.WriteString(" done\n"); err != nil {
		t.Fatal(err)
	}
	fv.until("the whole line", func() bool { return fv.m.Total() == 2 })
	if got := fv.m.Preview(); len(got) != 0 {
		t.Fatalf("preview %q still shown after its line ended", got)
	}
	rows = strings.Split(fv.m.View(), "\n")
	if rows[1] != "progress 7% done" || strings.Contains(fv.m.View(), "[partial]") {
		t.Fatalf("top rows %q, want the whole line in place of the preview", rows[:3])
	}
}
