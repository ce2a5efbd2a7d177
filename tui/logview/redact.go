package logview

import (
	"sync"

	"github.com/clawpit/clawpit/core"
)

// redactor is built once: it is immutable and safe for concurrent use.
var redactor = sync.OnceValue(core.NewRedactor)

// newLineRedactor returns a stateful per-line redaction function for one
// stream (one view): core's LineRedactor keeps PEM state across lines, so
// secrets spanning lines — and spanning batches — are caught. It returns the
// line itself, without allocating, when nothing matches.
func newLineRedactor() func(string) string {
	lr := redactor().NewLineRedactor()
	var scratch []byte
	return func(s string) string {
		scratch = append(scratch[:0], s...)
		out := lr.Line(scratch)
		if len(out) == len(scratch) && (len(out) == 0 || &out[0] == &scratch[0]) {
			return s
		}
		return string(out)
	}
}
