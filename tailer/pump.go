package tailer

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/termtext"
)

// The output pump of a job supervisor (docs/contract.md "Background jobs: Live, redacted log", docs/contract.md "Background jobs: Live, redacted log", bench/README.md P3): it reads one of the
// command's pipes, cuts the bytes into lines, redacts each line before it
// touches disk, and appends it to the job's rotating log.

// LineSink is what Pump writes to: a *RotatingWriter (tests use doubles).
type LineSink interface {
	// WriteLine appends one line (without its newline). After a write error
	// every call returns that (sticky) error without writing.
	WriteLine(line []byte) error
	// Flush pushes buffered lines to the file.
	Flush() error
	// Err returns the sticky write error, or nil.
	Err() error
	// SetPartial sets (nil: removes) the preview of the line the stream
	// with prefix is still writing, kept beside the log and never in it
	// (RotatingWriter.SetPartial). Pump removes a preview before it writes
	// any of its line.
	SetPartial(prefix string, line []byte)
}

// pumpReadSize is the read size; a pipe hands over at most 64 KiB at once.
const pumpReadSize = 64 << 10

// PartialIdle is how long a line without its newline may sit in the pump
// before a preview of it is written (docs/contract.md "Background jobs: Live, redacted log": a prompt or a progress line
// shows before its newline, EOF or 64 KiB).
const PartialIdle = 200 * time.Millisecond

// PartialMark marks a preview where a live view (`job follow`, the
// console's log view) shows it: after the stream prefix, before the text of
// the line still being written. The preview itself lives in PartialFile,
// not in the log, so a stored text (`job tail`, a notification) never holds
// one, and a command's own line that starts with "[partial] " is kept
// everywhere (issue 26 item 13).
const PartialMark = "[partial] "

// holdBack is the length from which a trailing run of non-blank bytes is
// kept out of a preview: it may be a secret still arriving, which the
// redactor recognises only whole. A shorter run is kept out too when it
// starts like a token (redact.Redactor.MayStartToken).
const holdBack = 8

// deadliner is a reader with read deadlines (an *os.File on a pipe).
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// Pump copies r into sink line by line until r ends (EOF or a read error,
// which it returns; EOF gives nil) and returns the bytes read. Each line gets
// prefix ("" or redact.StderrPrefix) and is redacted by one redact.Stream for
// the whole stream (PEM state spans lines) before it is written. A line
// longer than DefaultMaxLine (prefix included) is written as several lines of
// at most DefaultMaxLine bytes, as its redaction comes out of the Stream:
// memory stays bounded whatever the command prints, and a secret of any
// length is masked wherever the line is cut (redact.Stream). A final line
// without a newline is written at EOF. Lines reach the file after every read
// from r (a pipe read returns what is there, so an idle pipe means a flushed
// log): a line printed by a dev server is visible to `job tail` at once.
//
// After the sink's first write error Pump stops writing but keeps reading
// and discarding, so the command never blocks on a full pipe (docs/contract.md "Background jobs: Rotation"); the
// caller reads the sticky error from sink.Err.
//
// When r has read deadlines (a pipe from os.Pipe), a line that has sat
// unfinished for PartialIdle with no more output is previewed through
// sink.SetPartial (beside the log, never in it) as prefix + the redaction
// of the text so far not yet written,
// only what follows its last '\r' (a progress bar's current state), without
// a trailing run of holdBack or more non-blank bytes or one that starts like
// a token (a secret may be arriving), and nothing inside a secret or a PEM
// block. It is previewed again only after more of it arrives; the preview
// is removed before any of the line is written to the log (when it ends, or
// a DefaultMaxLine piece of it is written).
func Pump(r io.Reader, sink LineSink, prefix string) (int64, error) {
	p := &pump{
		sink: sink, prefix: prefix, st: redact.Default().NewStream(),
		maxContent: DefaultMaxLine - len(prefix), failed: sink.Err() != nil,
	}
	p.out = append(make([]byte, 0, DefaultMaxLine+256), prefix...)
	buf := make([]byte, pumpReadSize)
	var total int64
	dl, _ := r.(deadliner)
	armed := false
	shown := 0 // length of the unfinished line when it was last previewed
	for {
		if dl != nil {
			if p.lineLen > 0 && p.lineLen != shown {
				armed = dl.SetReadDeadline(time.Now().Add(PartialIdle)) == nil
			} else if armed {
				_ = dl.SetReadDeadline(time.Time{})
				armed = false
			}
		}
		n, rerr := r.Read(buf)
		if n == 0 && rerr != nil && errors.Is(rerr, os.ErrDeadlineExceeded) {
			shown = p.lineLen
			p.preview()
			continue
		}
		total += int64(n)
		if p.feed(buf[:n]) {
			shown = 0
		}
		if rerr != nil {
			if p.lineLen > 0 && !p.failed {
				p.out = p.st.EndLine(p.out)
				p.writeOut(true)
			}
			p.flush()
			if rerr == io.EOF {
				return total, nil
			}
			return total, rerr
		}
		p.flush()
	}
}

// pump is the state of one Pump.
type pump struct {
	sink       LineSink
	prefix     string
	st         *redact.Stream
	maxContent int    // DefaultMaxLine less the prefix
	out        []byte // prefix + the current line's output not yet written
	lineLen    int    // bytes of the current line read so far
	failed     bool   // a write failed: read and discard from now on
	pv         []byte // preview scratch
	previewed  bool   // a preview of the current line is in the sink
	pl         []byte // the preview line: prefix + preview text
}

// feed takes the bytes of one read; it reports whether a line ended in them.
func (p *pump) feed(data []byte) bool {
	ended := false
	for len(data) > 0 && !p.failed {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			p.out = p.st.Write(p.out, data)
			p.lineLen += len(data)
			p.writeOut(false)
			break
		}
		if p.lineLen == 0 {
			// A whole line in one read: written without a copy when clean.
			red := p.st.Line(data[:i])
			if p.prefix == "" && len(red) <= p.maxContent {
				p.write(red)
			} else {
				p.out = append(p.out, red...)
				p.writeOut(true)
			}
		} else {
			p.out = p.st.EndLine(p.st.Write(p.out, data[:i]))
			p.writeOut(true)
		}
		p.lineLen, ended = 0, true
		data = data[i+1:]
	}
	return ended
}

// writeOut writes out in lines of maxContent bytes of output each, and the
// rest too when the line has ended.
func (p *pump) writeOut(end bool) {
	pl := len(p.prefix)
	for len(p.out)-pl > p.maxContent {
		p.write(p.out[:pl+p.maxContent])
		p.out = append(p.out[:pl], p.out[pl+p.maxContent:]...)
	}
	if end {
		p.write(p.out)
		p.out = p.out[:pl]
	}
}

func (p *pump) write(b []byte) {
	if p.previewed {
		// Before the line reaches the log: see RotatingWriter.SetPartial.
		p.sink.SetPartial(p.prefix, nil)
		p.previewed = false
	}
	if !p.failed && p.sink.WriteLine(redactHidden(b)) != nil {
		p.failed = true
	}
}

func (p *pump) flush() {
	if !p.failed && p.sink.Flush() != nil {
		p.failed = true
	}
}

// preview writes the partial-line preview (see Pump).
func (p *pump) preview() {
	if p.failed || p.st.InPEM() {
		return
	}
	b := p.st.AppendPending(p.pv[:0])
	p.pv = b[:0]
	// A progress bar redraws with '\r': show what a terminal would, not the
	// whole history of the line each time.
	if k := bytes.LastIndexByte(b, '\r'); k >= 0 {
		b = b[k+1:]
	}
	cut := len(b)
	i := bytes.LastIndexAny(b, " \t\r")
	if run := b[i+1:]; len(run) >= holdBack || redact.Default().MayStartToken(run) {
		cut = i + 1
	}
	b = b[:cut]
	// Room for PartialMark: a marked preview fits a line of the log.
	if lim := p.maxContent - len(PartialMark); len(b) > lim {
		b = b[len(b)-lim:]
	}
	if len(b) == 0 {
		return
	}
	p.pl = append(append(p.pl[:0], p.prefix...), b...)
	p.sink.SetPartial(p.prefix, redactHidden(p.pl))
	p.previewed = true
}

// redactHidden catches a secret that escape sequences or stray control bytes
// split apart on disk ("sk-ant-…\x1b[0m…") and that a terminal or sanitiser
// would join again (docs/contract.md "Background jobs: Live, redacted log", bench/README.md Secrets). Only lines with an ESC, a C1
// introducer or invalid UTF-8 pay for it; when the sanitised text holds a
// secret, the line is written sanitised and redacted (it loses its colours),
// otherwise it is written as it came.
func redactHidden(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 && bytes.IndexByte(b, 0xc2) < 0 && utf8.Valid(b) {
		return b
	}
	stripped := termtext.Text(string(b), 0)
	if red := redact.Default().String(stripped); red != stripped {
		return []byte(red)
	}
	return b
}
