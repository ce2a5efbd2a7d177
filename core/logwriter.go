package core

import (
	"bytes"
	"io"
)

// The output pump of a job supervisor (SPEC J2, J4, P3): it reads one of the
// command's pipes, cuts the bytes into lines, redacts each line before it
// touches disk, and appends it to the job's rotating log.

// jobRedactor is the shared, immutable J4 redactor.
var jobRedactor = NewRedactor()

// redactBlock redacts text shown to a person or a session as one block (SPEC
// J4: every tail is redacted again as a whole, catching secrets that span lines).
func redactBlock(s string) string { return jobRedactor.Block(s) }

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
		out = append(out[:0], prefix...)
		out = lr.AppendLine(out, line)
		if sink.WriteLine(out) != nil {
			failed = true
		}
	}
	end := 0 // buf[:end] holds an incomplete line
	for {
		n, rerr := r.Read(buf[end:min(len(buf), end+pumpReadSize)])
		total += int64(n)
		data := buf[:end+n]
		start := 0
		for {
			i := bytes.IndexByte(data[start:], '\n')
			if i < 0 {
				break
			}
			line := data[start : start+i]
			for len(line) > maxContent {
				emit(line[:maxContent])
				line = line[maxContent:]
			}
			emit(line)
			start += i + 1
		}
		for len(data)-start >= maxContent {
			emit(data[start : start+maxContent])
			start += maxContent
		}
		end = copy(buf, data[start:])
		if rerr != nil {
			if end > 0 {
				emit(buf[:end])
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
