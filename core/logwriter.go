package core

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/clawpit/clawpit/termtext"
)

// The output pump of a job supervisor (SPEC J2, J4, P3): it reads one of the
// command's pipes, cuts the bytes into lines, redacts each line before it
// touches disk, and appends it to the job's rotating log.

// jobRedactor is the shared, immutable J4 redactor.
var jobRedactor = NewRedactor()

// redactBlock redacts text shown to a person or a session as one block (SPEC
// J4: every tail is redacted again as a whole, catching secrets that span lines).
func redactBlock(s string) string { return jobRedactor.Block(s) }

// redactHidden catches a secret that escape sequences or stray control bytes
// split apart on disk ("sk-ant-…\x1b[0m…") and that a terminal or sanitiser
// would join again (SPEC J4, §11 Secrets). Only lines with an ESC, a C1
// introducer or invalid UTF-8 pay for it; when the stripped text holds a
// secret, the line is written stripped and redacted (it loses its colours),
// otherwise it is written as it came.
func redactHidden(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 && bytes.IndexByte(b, 0xc2) < 0 && utf8.Valid(b) {
		return b
	}
	stripped := termtext.Text(string(b), 0)
	if red := jobRedactor.String(stripped); red != stripped {
		return []byte(red)
	}
	return b
}

// StderrPrefix marks lines that came from the command's stderr (SPEC J2).
const StderrPrefix = "[stderr] "

// pumpReadSize is the read size; a pipe hands over at most 64 KiB at once.
const pumpReadSize = 64 << 10

// PumpLog copies r into sink line by line until r ends (EOF or a read error,
// which it returns; EOF gives nil) and returns the bytes read. Each line gets
// prefix and is redacted by a fresh LineRedactor (one per stream: PEM state
// spans lines) before it is written. A line longer than MaxLogLine (prefix
// included) is split into several lines, so memory stays bounded whatever
// the command prints; a final line without a newline is written at EOF.
// Lines reach the file after every read from r (a pipe read returns what is
// there, so an idle pipe means a flushed log): a line printed by a dev server
// is visible to `job tail` at once.
//
// After the sink's first write error PumpLog stops writing but keeps reading
// and discarding, so the command never blocks on a full pipe (SPEC J3); the
// caller reads the sticky error from sink.Err.
func PumpLog(r io.Reader, sink LogSink, prefix string) (int64, error) {
	lr := jobRedactor.NewLineRedactor()
	maxContent := MaxLogLine - len(prefix)
	buf := make([]byte, 2*pumpReadSize)
	out := make([]byte, 0, MaxLogLine+256)
	failed := sink.Err() != nil
	var total int64
	emit := func(line []byte) {
		if failed {
			return
		}
		var b []byte
		if prefix == "" {
			b = lr.Line(line) // line itself when clean: no copy
		} else {
			out = append(out[:0], prefix...)
			b = lr.AppendLine(out, line)
			out = b
		}
		b = redactHidden(b)
		if sink.WriteLine(b) != nil {
			failed = true
		}
	}
	// buf[start:end] holds an incomplete line (no '\n', shorter than
	// maxContent). Reads append at end; the line moves to the front only when
	// less than one read size is free, so a long line arriving a byte at a
	// time costs linear, not quadratic, time.
	start, end := 0, 0
	for {
		if start == end {
			start, end = 0, 0
		} else if len(buf)-end < pumpReadSize {
			end = copy(buf, buf[start:end])
			start = 0
		}
		n, rerr := r.Read(buf[end : end+pumpReadSize])
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
				emit(line[:maxContent])
				line = line[maxContent:]
			}
			emit(line)
			start = from + i + 1
			from = start
		}
		for end-start >= maxContent {
			emit(buf[start : start+maxContent])
			start += maxContent
		}
		if rerr != nil {
			if end > start {
				emit(buf[start:end])
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
