package tailer_test

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/clawpit/clawpit/tailer"
)

// countSink checks each line as it is written and keeps nothing.
type countSink struct {
	lines, longest, leaked int
	tail                   []byte // the last bytes written
}

func (c *countSink) WriteLine(b []byte) error {
	c.lines++
	c.longest = max(c.longest, len(b))
	c.leaked += bytes.Count(b, []byte("QZ7"))
	c.tail = append(c.tail[:0], b[max(0, len(b)-16):]...)
	return nil
}
func (c *countSink) Flush() error              { return nil }
func (c *countSink) SetPartial(string, []byte) {}
func (c *countSink) Err() error                { return nil }

// endlessLine reads as one line: head, then n bytes of secret, then tail.
type endlessLine struct {
	head, tail []byte
	n          int
}

func (e *endlessLine) Read(p []byte) (int, error) {
	switch {
	case len(e.head) > 0:
		k := copy(p, e.head)
		e.head = e.head[k:]
		return k, nil
	case e.n > 0:
		k := min(len(p), e.n)
		for i := 0; i < k; i++ {
			p[i] = "QZ7"[i%3]
		}
		e.n -= k
		return k, nil
	case len(e.tail) > 0:
		k := copy(p, e.tail)
		e.tail = e.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// A single line of many MB (a secret in it) goes through the pump in bounded
// memory: written as it arrives in lines of at most DefaultMaxLine bytes, no
// byte of the secret in them, and the pump allocates far less than the line.
func TestPumpEndlessLineBoundedMemory(t *testing.T) {
	const size = 24 << 20
	for _, head := range []string{"log ", "log password=", "log -----BEGIN PRIVATE " + "KEY-----"} {
		sink := &countSink{}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := tailer.Pump(&endlessLine{head: []byte(head), tail: []byte(" done\n"), n: size}, sink, "")
		runtime.ReadMemStats(&after)
		if err != nil || n != int64(len(head)+size+6) {
			t.Fatalf("%q: Pump: %d, %v", head, n, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Errorf("%q: the pump allocated %d bytes for a %d-byte line", head, alloc, size)
		}
		if sink.longest > tailer.DefaultMaxLine {
			t.Errorf("%q: a line of %d bytes", head, sink.longest)
		}
		if head == "log " {
			if sink.lines < size/tailer.DefaultMaxLine {
				t.Errorf("clean line: %d lines written", sink.lines)
			}
			continue
		}
		// (A one-line PEM key is masked to its END or the end of the line.)
		if sink.leaked > 0 || head == "log password=" && !bytes.HasSuffix(sink.tail, []byte(" done")) {
			t.Errorf("%q: %d pieces of the secret kept; ends %q", head, sink.leaked, sink.tail)
		}
	}
}
