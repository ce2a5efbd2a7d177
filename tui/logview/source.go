package logview

import (
	"context"
	"errors"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/clawpit/clawpit/redact"
)

// Source delivers a job log's lines in order, in batches. The default source
// (Options.Source nil) follows Options.Dir with the tailer's follower, across
// rotations. Tests and other callers may supply their own.
type Source interface {
	// Lines returns the channel of batches. Each batch holds raw log lines
	// without their newline; the view sanitises and redacts them. The
	// channel is closed when the source ends (after Close, or on error).
	// Lines must return the same channel on every call.
	Lines() <-chan []string
	// Err reports why Lines was closed: nil for a normal end or a Close.
	Err() error
	// Close stops the source and releases its resources. It is idempotent.
	Close() error
}

// Batch is one batch of a BatchSource: whole lines, then the previews of
// the lines still being written (tailer.Line.Partial: marked "[partial] ",
// raw like Lines). A batch's Preview replaces every preview before it: the
// view shows the newest batch's previews below the lines and never stores
// them.
type Batch struct {
	Lines   []string
	Preview []string
}

// BatchSource is a Source that also delivers previews. The view reads
// Batches instead of Lines when its source implements it (the default
// follower does); Lines and Batches share one stream, so use one of them.
type BatchSource interface {
	Source
	Batches() <-chan Batch
}

// EOFStopper is implemented by a Source that can finish by itself once the
// writer is done: on JobEndedMsg the view calls StopAtEOF, and the source
// delivers what is left and closes its channel. The default follower does.
type EOFStopper interface {
	StopAtEOF()
}

// OpenFunc starts a Source. The context is cancelled by Model.Close.
type OpenFunc func(ctx context.Context) (Source, error)

// LinesMsg carries one coalesced batch of lines, already sanitised and
// redacted, from the view's reader Cmd to its Update. The parent forwards it
// (like every message it does not handle itself) to the log view; a LinesMsg
// from a closed or replaced view is ignored.
type LinesMsg struct {
	id    uint64
	Lines []string
	// Preview replaces the previews shown below the lines (Batch.Preview),
	// sanitised and redacted; nil removes them.
	Preview []string
}

// SourceDoneMsg reports that the view's source ended; Err is nil for a
// normal end. The view shows it in its status bar and stops reading.
type SourceDoneMsg struct {
	id  uint64
	Err error
}

// feed is the reading side of a Model, shared by its copies: it opens the
// source once, waits for batches in a Cmd (off the UI goroutine), coalesces
// whatever else is already available, and sanitises and redacts the lines
// there so Update only appends them to the ring.
type feed struct {
	ctx    context.Context
	cancel context.CancelFunc
	open   OpenFunc

	once    sync.Once
	srcMu   sync.Mutex // guards src, eof for stopAtEOF (the UI goroutine)
	src     Source
	eof     bool // stopAtEOF was asked before the source was open
	openErr error

	maxBatch int                      // stop coalescing at this many lines
	sanitize func(string) string      // one line → terminal-safe, capped
	mu       sync.Mutex               // serialises redact (it keeps state across lines)
	redact   func(line string) string // stateful, in stream order
}

func (f *feed) source() (Source, error) {
	f.once.Do(func() {
		if f.ctx.Err() != nil {
			f.openErr = f.ctx.Err()
			return
		}
		src, err := f.open(f.ctx)
		f.srcMu.Lock()
		f.src, f.openErr = src, err
		eof := f.eof
		f.srcMu.Unlock()
		if eof {
			stopAtEOF(src)
		}
	})
	return f.src, f.openErr
}

// stopAtEOF tells the source the job ended (see EOFStopper); if it is not
// open yet, it is told as soon as it is.
func (f *feed) stopAtEOF() {
	f.srcMu.Lock()
	src := f.src
	f.eof = true
	f.srcMu.Unlock()
	stopAtEOF(src)
}

func stopAtEOF(src Source) {
	if s, ok := src.(EOFStopper); ok {
		s.StopAtEOF()
	}
}

// close cancels the context and closes the source if it was opened.
func (f *feed) close() {
	f.cancel()
	f.once.Do(func() { f.openErr = context.Canceled })
	if f.src != nil {
		_ = f.src.Close()
	}
}

// next returns the Cmd that waits for the next batch. Exactly one is
// outstanding at a time: Init issues the first, Update re-issues it after
// each LinesMsg.
func (f *feed) next(id uint64) tea.Cmd {
	return func() tea.Msg {
		src, err := f.source()
		if err != nil {
			if f.ctx.Err() != nil {
				return nil
			}
			return SourceDoneMsg{id: id, Err: err}
		}
		if src == nil {
			return SourceDoneMsg{id: id, Err: errors.New("logview: no source")}
		}
		first, open := f.recv(src, true)
		if !open {
			if f.ctx.Err() != nil {
				return nil
			}
			return SourceDoneMsg{id: id, Err: src.Err()}
		}
		if first == nil {
			return nil // cancelled
		}
		lines, preview := first.Lines, first.Preview
		copied := false
		for len(lines) < f.maxBatch {
			b, open := f.recv(src, false)
			if !open || b == nil {
				// Deliver what we have; the next call sees the close.
				break
			}
			if !copied {
				// Never append into the source's own slice.
				lines = append(make([]string, 0, len(lines)+len(b.Lines)), lines...)
				copied = true
			}
			lines = append(lines, b.Lines...)
			preview = b.Preview // a batch replaces the previews before it
		}
		return LinesMsg{id: id, Lines: f.process(lines), Preview: f.processPreview(preview)}
	}
}

// recv receives one batch from src (Batches when it is a BatchSource, else
// Lines): waiting for it when block (nil when the view's context ends),
// else nil when none is ready. open is false when the source has closed.
func (f *feed) recv(src Source, block bool) (b *Batch, open bool) {
	if bs, ok := src.(BatchSource); ok {
		if !block {
			select {
			case v, ok := <-bs.Batches():
				return &v, ok
			default:
				return nil, true
			}
		}
		select {
		case v, ok := <-bs.Batches():
			return &v, ok
		case <-f.ctx.Done():
			return nil, true
		}
	}
	if !block {
		select {
		case l, ok := <-src.Lines():
			return &Batch{Lines: l}, ok
		default:
			return nil, true
		}
	}
	select {
	case l, ok := <-src.Lines():
		return &Batch{Lines: l}, ok
	case <-f.ctx.Done():
		return nil, true
	}
}

// processPreview makes previews safe to show: sanitised like lines, and
// redacted each on its own (redact.Redactor.String), so a preview never
// disturbs the stateful redaction of the lines (Options.Redact).
func (f *feed) processPreview(raw []string) []string {
	if len(raw) == 0 {
		return nil
	}
	out := make([]string, len(raw))
	for i, l := range raw {
		out[i] = redact.Default().String(f.sanitize(l))
	}
	return out
}

// process makes raw lines safe to show: each line is sanitised (escape
// sequences and controls removed, length capped), then redacted by ONE
// stateful line redactor that sees the whole stream in order, so the body of
// a PEM private key is caught even when its BEGIN line came in an earlier
// batch (docs/contract.md "Background jobs: Live, redacted log": the same rules as redacting the whole log as one block).
// Sanitising first means the redactor sees exactly the text that reaches the
// screen.
func (f *feed) process(raw []string) []string {
	out := make([]string, len(raw))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, l := range raw {
		out[i] = f.redact(f.sanitize(l))
	}
	return out
}
