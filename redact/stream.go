package redact

// Stream sizes, in bytes.
const (
	// StreamWindow is the longest line a Stream holds whole: such a line is
	// redacted exactly as LineRedactor.Line does. A longer line is redacted
	// in pieces as it arrives, in memory bounded by StreamWindow.
	StreamWindow = 96 << 10
	// streamAhead is how many bytes after a piece's end are scanned with it:
	// every match that starts in the piece is decided within them, except a
	// run that reaches the end of what has arrived (a long secret still
	// arriving), which Stream masks up to its end however long it is.
	streamAhead = 4 << 10
	// streamBehind is how many bytes before a piece are scanned with it (a
	// key before its value, a BEGIN line before a key): context only, never
	// written twice.
	streamBehind = 1 << 10
)

// termPEMBody continues a line that a PEM block opened on an earlier line
// and that is too long to hold whole: base64 and blanks (rterm.kind).
const termPEMBody = termCtx + 1

// pemEnd ends a PEM block's body on its line.
const pemEnd = "-----END"

// Stream redacts a stream of lines that arrive in pieces of any size (a job's
// stdout as the pipe hands it over), with the rules of Redactor.Line and the
// PEM state of LineRedactor, in bounded memory: a line of any length is never
// held whole beyond StreamWindow bytes. A secret of any length is masked
// wherever the pieces are cut: once the start of a secret has been seen,
// every byte up to its end is dropped (one Redacted written for it), and a
// key whose value has not arrived yet stays in the state until it does.
//
// Feed a line's bytes with Write (no '\n' in them; the caller splits lines)
// and end it with EndLine. Output comes out as it is decided: a line shorter
// than StreamWindow all at EndLine, a longer one in pieces. The output does
// not depend on how the line was cut into pieces. Use one Stream per stream;
// not safe for concurrent use.
type Stream struct {
	lr   LineRedactor
	buf  []byte // the line's bytes not yet written: buf[:ctx] context, buf[ctx:] undecided
	ctx  int
	long bool  // part of the current line has been written
	in   rterm // inside a secret (kind != termNone): its bytes are dropped until it ends
	prev byte  // the last byte dropped (a backslash escapes a quote)
	pem  int   // termPEM: how many bytes of pemEnd the last ones dropped match
}

// NewStream returns a Stream at the start of a line, outside any PEM block.
func (r *Redactor) NewStream() *Stream { return &Stream{lr: LineRedactor{r: r}} }

// InPEM reports whether the stream is inside a PEM private-key block.
func (s *Stream) InPEM() bool {
	return s.lr.inPEM || s.in.kind == termPEM || s.in.kind == termPEMBody
}

// Line redacts a whole line b when no part of a line is pending: like
// LineRedactor.Line it returns b itself, without allocating, when nothing
// matches. Otherwise (or when b is longer than StreamWindow) it is Write and
// EndLine into a new slice.
func (s *Stream) Line(b []byte) []byte {
	if len(s.buf) == 0 && !s.long && s.in.kind == termNone && len(b) <= StreamWindow {
		return s.lr.Line(b)
	}
	return s.EndLine(s.Write(nil, b))
}

// Write feeds p, the next bytes of the current line (a '\n' in p is taken for
// a blank), and appends to dst the output it decides.
func (s *Stream) Write(dst, p []byte) []byte {
	for len(p) > 0 {
		if s.in.kind != termNone {
			var k int
			dst, k = s.skip(dst, p)
			p = p[k:]
			continue
		}
		if len(s.buf) == StreamWindow {
			dst = s.piece(dst)
			continue
		}
		if s.buf == nil {
			s.buf = make([]byte, 0, StreamWindow)
		}
		k := min(StreamWindow-len(s.buf), len(p))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
	}
	return dst
}

// EndLine ends the current line: it appends the rest of its output to dst.
func (s *Stream) EndLine(dst []byte) []byte {
	switch {
	case s.in.kind == termPEM:
		s.lr.inPEM = true // BEGIN without END on this line: the body follows
	case s.in.kind == termPEMBody:
	case s.in.kind != termNone:
	case !s.long:
		dst = s.lr.AppendLine(dst, s.buf)
	default:
		var open bool
		if dst, open = s.appendRest(dst); open {
			s.lr.inPEM = true
		}
	}
	s.buf, s.ctx, s.long, s.in = s.buf[:0], 0, false, rterm{}
	return dst
}

// AppendPending appends the redaction of the current line's bytes not yet
// written, as if the line ended there, without changing the state (a preview
// of a line still being written). Inside a secret or a PEM block it appends
// nothing.
func (s *Stream) AppendPending(dst []byte) []byte {
	if s.InPEM() || s.in.kind != termNone {
		return dst
	}
	if !s.long {
		return s.lr.r.AppendLine(dst, s.buf)
	}
	dst, _ = s.appendRest(dst)
	return dst
}

// MayStartToken reports whether word (a run of non-blank bytes) may be the
// start of a token recognised by its prefix (ghp_…, sk-…, eyJ…): its first
// two bytes are those of one. A preview of a line still arriving holds such
// a run back, however short, since its end decides whether it is a secret.
func (r *Redactor) MayStartToken(word []byte) bool {
	return len(word) >= 2 && rkind[word[0]] == kindLetter && mayStartToken(word[0], word[1])
}

// Pending is the number of bytes of the current line not yet written.
func (s *Stream) Pending() int { return len(s.buf) - s.ctx }

// appendRest appends buf[ctx:] redacted as the end of a line, and reports
// whether it leaves a PEM block open.
func (s *Stream) appendRest(dst []byte) ([]byte, bool) {
	var sb [8]rspan
	spans, open := redactScan(s.lr.r, s.buf, sb[:0], false)
	pos := s.ctx
	for _, sp := range spans {
		if sp.e <= pos {
			continue
		}
		dst = append(dst, s.buf[pos:max(sp.s, pos)]...)
		dst = append(dst, Redacted...)
		pos = sp.e
	}
	return append(dst, s.buf[pos:]...), open
}

// piece writes what is decided of a full buffer: everything up to
// streamAhead bytes before its end, every match that ends before the end of
// the buffer, and the start of a match that reaches it (whose bytes are then
// dropped as they arrive).
func (s *Stream) piece(dst []byte) []byte {
	if !s.long {
		s.long = true
		if s.lr.inPEM {
			var done bool
			if dst, done = s.pemLine(dst); done {
				return dst
			}
		}
	}
	var sb [8]rspan
	spans, _ := redactScan(s.lr.r, s.buf, sb[:0], true)
	n := len(s.buf)
	safe := n - streamAhead
	pos := s.ctx
	for _, sp := range spans {
		if sp.t.kind == termCtx {
			// A key and blanks up to the end: the value is still to come.
			dst = append(dst, s.buf[pos:n]...)
			s.enter(sp.t)
			return dst
		}
		if sp.e <= pos {
			continue // in the context: written before
		}
		st := max(sp.s, pos)
		if st >= safe && sp.e == n {
			break // may still turn out no secret ("token=nu" → "null")
		}
		// A span that ends before n is decided wherever it starts: its key
		// may be far before (a URL's long user name), so it is taken now.
		dst = append(dst, s.buf[pos:st]...)
		dst = append(dst, Redacted...)
		if sp.e == n {
			s.enter(sp.t)
			return dst
		}
		pos = sp.e
	}
	if pos < safe {
		dst = append(dst, s.buf[pos:safe]...)
		pos = safe
	}
	s.keep(pos)
	return dst
}

// pemLine handles a long line inside a PEM block opened on an earlier line:
// the END line ends the block (scanned normally); a base64 line is a body
// line, masked whole; any other line ends the block too.
func (s *Stream) pemLine(dst []byte) ([]byte, bool) {
	if indexT(s.buf, "-----END ") >= 0 {
		s.lr.inPEM = false
		return dst, false
	}
	for _, c := range s.buf {
		if rcls[c]&(clsB64|clsBlank) == 0 {
			s.lr.inPEM = false
			return dst, false
		}
	}
	s.enter(rterm{kind: termPEMBody, cls: clsB64 | clsBlank})
	return append(dst, Redacted...), true
}

// enter starts dropping the bytes of a secret that reaches the end of buf.
func (s *Stream) enter(t rterm) {
	s.in, s.prev, s.pem = t, 0, 0
	if n := len(s.buf); n > 0 {
		s.prev = s.buf[n-1]
		if t.kind == termPEM {
			for m := min(len(pemEnd)-1, n); m > 0; m-- {
				if string(s.buf[n-m:]) == pemEnd[:m] {
					s.pem = m
					break
				}
			}
		}
	}
	s.buf, s.ctx = s.buf[:0], 0
}

// keep drops buf[:pos], written, but for up to streamBehind bytes of context
// before pos that start at a word start. Runs of blanks in the context are
// cut to one blank and runs of dashes to 16 (the rules skip any number of
// them), so a key far before its value ("token=" and thousands of blanks, a
// BEGIN line and a long rule of dashes) stays in it.
func (s *Stream) keep(pos int) {
	var c [streamBehind]byte
	k, dashes := len(c), 0
	for i := pos - 1; i >= 0 && k > 0; i-- {
		b := s.buf[i]
		if rcls[b]&clsBlank != 0 && i+1 < pos && rcls[s.buf[i+1]]&clsBlank != 0 {
			continue
		}
		if b != '-' {
			dashes = 0
		} else if dashes++; dashes > 16 {
			continue
		}
		k--
		c[k] = b
	}
	if k == 0 { // cut at streamBehind: start at a word start
		for k < len(c) && rIsAlnum(c[k]) {
			k++
		}
	}
	n := copy(s.buf, c[k:])
	n += copy(s.buf[n:], s.buf[pos:])
	s.buf = s.buf[:n]
	s.ctx = len(c) - k
}

// skip drops the bytes of p that belong to the secret being dropped and
// returns how many it took; when the secret ends, what follows it is scanned
// normally again.
func (s *Stream) skip(dst, p []byte) ([]byte, int) {
	t := s.in
	for i, c := range p {
		switch t.kind {
		case termIn, termPEMBody:
			if rcls[c]&t.cls != 0 {
				continue
			}
			if t.kind == termPEMBody {
				s.lr.inPEM = false
			}
		case termOut:
			if rcls[c]&t.cls == 0 {
				continue
			}
		case termQuote:
			if c != t.q || s.prev == '\\' {
				s.prev = c
				continue
			}
		case termEscQuote:
			if c != t.q || s.prev != '\\' {
				s.prev = c
				continue
			}
			dst = append(dst, '\\') // the escaping backslash of the closing quote
		case termPEM:
			if s.pem = pemStep(s.pem, c); s.pem < len(pemEnd) {
				continue
			}
			s.in = rterm{}
			return append(dst, pemEnd...), i + 1
		case termCtx:
			if c == ' ' || c == '\t' {
				dst = append(dst, c)
				continue
			}
			s.in = rterm{}
			s.buf = append(s.buf[:0], t.ctx...)
			s.ctx = len(t.ctx)
			return dst, i
		}
		s.in = rterm{}
		return dst, i
	}
	return dst, len(p)
}

// pemStep advances a match of pemEnd ("-----END") by one byte c.
func pemStep(m int, c byte) int {
	switch {
	case c == pemEnd[m]:
		return m + 1
	case c == '-' && m == 5:
		return 5 // "------END": still five dashes before the E
	case c == '-':
		return 1
	}
	return 0
}
