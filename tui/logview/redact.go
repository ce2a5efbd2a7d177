package logview

import "github.com/clawpit/clawpit/redact"

// newLineRedactor returns a stateful per-line redaction function for one
// stream (one view), over the shared redact.Default(): its LineRedactor keeps
// PEM state across lines, so secrets spanning lines — and spanning batches —
// are caught. It returns the line itself, without allocating, when nothing
// matches.
func newLineRedactor() func(string) string {
	lr := redact.Default().NewLineRedactor()
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
