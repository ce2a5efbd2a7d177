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

// The output pump of a job supervisor (SPEC J2, J4, P3): it reads one of the
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
}

// pumpReadSize is the read size; a pipe hands over at most 64 KiB at once.
const pumpReadSize = 64 << 10

// cutOverlap is how many bytes after a split point of a long line the
// redactor sees (SPEC J2, J4): a secret that the 64 KiB split cuts is
// recognised whole when it ends within this many bytes of the cut.
const cutOverlap = 8 << 10

// PartialIdle is how long a line without its newline may sit in the pump
// before a preview of it is written (SPEC J2: a prompt or a progress line
// shows before its newline, EOF or 64 KiB).
const PartialIdle = 200 * time.Millisecond

// PartialMark starts a preview line (after the stream prefix): the text of
// a line still being written, shown after PartialIdle without output. The
// whole line is written again, unmarked, when it ends.
const PartialMark = "[partial] "

// holdBack is the length from which a trailing run of non-blank bytes is
// kept out of a preview: it may be a secret still arriving, which the
// redactor recognises only whole.
const holdBack = 8

// deadliner is a reader with read deadlines (an *os.File on a pipe).
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// Pump copies r into sink line by line until r ends (EOF or a read error,
// which it returns; EOF gives nil) and returns the bytes read. Each line gets
// prefix ("" or redact.StderrPrefix) and is redacted by a fresh
// redact.LineRedactor (one per stream: PEM state spans lines) before it is
// written. A line longer than DefaultMaxLine (prefix included) is split into
// several lines, so memory stays bounded whatever the command prints; the
// redactor sees cutOverlap bytes past each split point, and the part of a
// secret after the cut starts the next line as redact.Redacted. A final line
// without a newline is written at EOF. Lines reach the file after every read
// from r (a pipe read returns what is there, so an idle pipe means a flushed
// log): a line printed by a dev server is visible to `job tail` at once.
//
// After the sink's first write error Pump stops writing but keeps reading
// and discarding, so the command never blocks on a full pipe (SPEC J3); the
// caller reads the sticky error from sink.Err.
//
// When r has read deadlines (a pipe from os.Pipe), a line that has sat
// unfinished for PartialIdle with no more output is previewed: written as
// prefix + PartialMark + the text so far, redacted on its own, without a
// trailing run of holdBack or more non-blank bytes (a secret may be
// arriving), only what follows its last '\r' (a progress bar's current
// state), and nothing inside a PEM block. It is previewed again only after
// more of it arrives, and written whole when it ends.
func Pump(r io.Reader, sink LineSink, prefix string) (int64, error) {
	lr := redact.Default().NewLineRedactor()
	maxContent := DefaultMaxLine - len(prefix)
	buf := make([]byte, 2*pumpReadSize+cutOverlap)
	out := make([]byte, 0, DefaultMaxLine+256)
	failed := sink.Err() != nil
	var total int64
	carry := 0 // bytes at the start of the next piece that belong to a cut secret
	write := func(b []byte) {
		if sink.WriteLine(redactHidden(b)) != nil {
			failed = true
		}
	}
	// emit writes b[:cut] as one line; b[cut:] is what follows on the same
	// line as far as it has arrived (last: nothing follows, cut == len(b)).
	emit := func(b []byte, cut int, last bool) {
		if failed {
			return
		}
		skip := min(carry, cut)
		carry -= skip
		if last {
			carry = 0
		}
		if skip == 0 && last && prefix == "" {
			write(lr.Line(b)) // b itself when clean: no copy
			return
		}
		out = append(out[:0], prefix...)
		if skip > 0 {
			out = append(out, redact.Redacted...)
		}
		if skip < cut {
			var more int
			out, more = lr.AppendLineCut(out, b[skip:], cut-skip)
			if !last {
				carry = more
			}
		}
		write(out)
	}
	// buf[start:end] holds an incomplete line (no '\n', shorter than
	// maxContent+cutOverlap). Reads append at end; the line moves to the
	// front only when less than one read size is free, so a long line
	// arriving a byte at a time costs linear, not quadratic, time.
	start, end := 0, 0
	dl, _ := r.(deadliner)
	armed := false
	shown := 0 // length of the unfinished line when it was last previewed
	preview := func(b []byte) {
		if failed || lr.InPEM() {
			return
		}
		// A progress bar redraws with '\r': show what a terminal would,
		// not the whole history of the line each time.
		if k := bytes.LastIndexByte(b, '\r'); k >= 0 {
			b = b[k+1:]
		}
		cut := len(b)
		i := bytes.LastIndexAny(b, " \t\r")
		if cut-(i+1) >= holdBack {
			cut = i + 1
		}
		if cut == 0 {
			return
		}
		out = append(append(out[:0], prefix...), PartialMark...)
		out = redact.Default().AppendLine(out, b[:cut])
		write(out)
		if !failed && sink.Flush() != nil {
			failed = true
		}
	}
	for {
		if start == end {
			start, end = 0, 0
		} else if len(buf)-end < pumpReadSize {
			end = copy(buf, buf[start:end])
			start = 0
		}
		if dl != nil {
			if end > start && end-start != shown {
				armed = dl.SetReadDeadline(time.Now().Add(PartialIdle)) == nil
			} else if armed {
				_ = dl.SetReadDeadline(time.Time{})
				armed = false
			}
		}
		n, rerr := r.Read(buf[end : end+pumpReadSize])
		if n == 0 && rerr != nil && errors.Is(rerr, os.ErrDeadlineExceeded) {
			shown = end - start
			preview(buf[start:end])
			continue
		}
		total += int64(n)
		from := end // buf[start:end] is known to hold no '\n': scan only new bytes
		end += n
		for {
			i := bytes.IndexByte(buf[from:end], '\n')
			if i < 0 {
				break
			}
			line := buf[start : from+i]
			for len(line) > maxContent {
				emit(line[:min(len(line), maxContent+cutOverlap)], maxContent, false)
				line = line[maxContent:]
			}
			emit(line, len(line), true)
			start = from + i + 1
			from = start
			shown = 0
		}
		for end-start >= maxContent+cutOverlap {
			emit(buf[start:start+maxContent+cutOverlap], maxContent, false)
			start += maxContent
			shown = 0
		}
		if rerr != nil {
			for end-start > maxContent {
				emit(buf[start:end], maxContent, false)
				start += maxContent
			}
			if end > start {
				emit(buf[start:end], end-start, true)
			}
			if !failed && sink.Flush() != nil {
				failed = true
			}
			if rerr == io.EOF {
				return total, nil
			}
			return total, rerr
		}
		if !failed && sink.Flush() != nil {
			failed = true
		}
	}
}

// redactHidden catches a secret that escape sequences or stray control bytes
// split apart on disk ("sk-ant-…\x1b[0m…") and that a terminal or sanitiser
// would join again (SPEC J4, §11 Secrets). Only lines with an ESC, a C1
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
