package streamjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the stream-json tokenizer behind Tracker: a pull parser
// that walks one line's JSON byte by byte, validates it like encoding/json
// would, and keeps only what docs/contract.md "Result subtypes" needs — type, subtype, is_error, the
// result text, and a count of non-blank assistant text blocks. Nothing is
// materialised: arrays are walked, strings are decoded into capped sinks,
// numbers are checked and dropped. Its memory is a few capped buffers plus
// one byte per nesting level (at most maxStreamDepth), whatever the line's
// length or shape (30 MB of `{}` blocks, megabytes of numbers, a million
// text blocks).

// maxStreamDepth is the deepest nesting accepted, as in encoding/json.
const maxStreamDepth = 10000

// errStreamEOL is returned when the line ends inside a value.
var errStreamEOL = errors.New("unexpected end of line")

// streamSrc yields the bytes of one line: a whole slice (Feed), or a
// bufio.Reader up to the next '\n' (ReadLine).
type streamSrc struct {
	data []byte
	pos  int
	br   *bufio.Reader
	eol  bool  // the line's end was reached
	err  error // a read error other than io.EOF
	eof  bool  // the reader is exhausted
}

func (s *streamSrc) next() (byte, bool) {
	if s.eol {
		return 0, false
	}
	if s.br == nil {
		if s.pos >= len(s.data) {
			s.eol = true
			return 0, false
		}
		c := s.data[s.pos]
		s.pos++
		return c, true
	}
	c, err := s.br.ReadByte()
	if err != nil {
		s.eol = true
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else {
			s.err = err
		}
		return 0, false
	}
	if c == '\n' {
		s.eol = true
		return 0, false
	}
	return c, true
}

// drain consumes the rest of the line without looking at it.
func (s *streamSrc) drain() {
	if s.eol {
		return
	}
	s.eol = true
	if s.br == nil {
		s.pos = len(s.data)
		return
	}
	for {
		_, err := s.br.ReadSlice('\n')
		switch {
		case err == nil:
			return
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			s.eof = true
			return
		default:
			s.err = err
			return
		}
	}
}

// strSink receives a decoded JSON string: the first max bytes (cut on a rune
// boundary, like capString) and, when track is set, whether any rune is not
// white space.
type strSink struct {
	buf      []byte
	max      int
	full     bool
	track    bool
	nonblank bool
	set      bool // a string was decoded since the last reset
}

func (s *strSink) reset() {
	s.buf, s.full, s.nonblank, s.set = s.buf[:0], false, false, false
}

// done reports whether further runes can change nothing.
func (s *strSink) done() bool { return s.full && (!s.track || s.nonblank) }

func (s *strSink) put(r rune) {
	if s.track && !s.nonblank && !unicode.IsSpace(r) {
		s.nonblank = true
	}
	if s.full {
		return
	}
	if len(s.buf)+utf8.RuneLen(r) > s.max {
		s.full = true
		return
	}
	s.buf = utf8.AppendRune(s.buf, r)
}

func (s *strSink) String() string { return string(s.buf) }

// streamFacts is what one line holds for R4.
type streamFacts struct {
	typ, subtype, result strSink
	isError              bool
	// message.content tally (meaningful for assistant events).
	outputs int
	msgBad  bool   // message was not an object: no outputs, like encoding/json's type error
	actKind string // "text" or "tool", "" for none
	actText []byte // the last text block (capped) or tool name
	key     strSink
	bType   strSink
	bText   strSink
	bName   strSink
	use     usageFacts // the result line's usage (usage.go)
}

func newStreamFacts() *streamFacts {
	return &streamFacts{
		typ:     strSink{max: maxStreamName},
		subtype: strSink{max: maxStreamName},
		result:  strSink{max: maxStreamText},
		key:     strSink{max: maxStreamName}, // model names are keys of modelUsage
		bType:   strSink{max: maxStreamName},
		bText:   strSink{max: maxStreamText, track: true},
		bName:   strSink{max: maxStreamName},
	}
}

func (f *streamFacts) reset() {
	f.typ.reset()
	f.subtype.reset()
	f.result.reset()
	f.isError, f.outputs, f.msgBad, f.actKind, f.actText = false, 0, false, "", f.actText[:0]
	f.use.reset()
}

// streamParser walks one line.
type streamParser struct {
	src   *streamSrc
	c     byte
	ok    bool
	depth int
	f     *streamFacts
	// utf-8 bytes of a rune being decoded, and a pending high surrogate
	u    [utf8.UTFMax]byte
	un   int
	high rune
	keep bool // num keeps the number's bytes in f.use.num
}

func (p *streamParser) adv() { p.c, p.ok = p.src.next() }

func (p *streamParser) ws() {
	for p.ok && (p.c == ' ' || p.c == '\t' || p.c == '\r' || p.c == '\n') {
		p.adv()
	}
}

func (p *streamParser) bad(what string) error {
	if !p.ok {
		return errStreamEOL
	}
	return fmt.Errorf("invalid character %q %s", p.c, what)
}

func (p *streamParser) expect(c byte, what string) error {
	p.ws()
	if !p.ok || p.c != c {
		return p.bad(what)
	}
	p.adv()
	return nil
}

// object walks an object at p.c == '{'; fn is called at each value with its
// key decoded in p.f.key and must consume the value.
func (p *streamParser) object(fn func() error) error {
	if p.depth++; p.depth > maxStreamDepth {
		return errors.New("exceeded max depth")
	}
	p.adv()
	p.ws()
	if p.ok && p.c == '}' {
		p.adv()
		p.depth--
		return nil
	}
	for {
		p.ws()
		if !p.ok || p.c != '"' {
			return p.bad("looking for beginning of object key string")
		}
		p.f.key.reset()
		if err := p.str(&p.f.key); err != nil {
			return err
		}
		if err := p.expect(':', "after object key"); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
		p.ws()
		if !p.ok {
			return errStreamEOL
		}
		switch p.c {
		case ',':
			p.adv()
		case '}':
			p.adv()
			p.depth--
			return nil
		default:
			return p.bad("after object key:value pair")
		}
	}
}

// array walks an array at p.c == '['; fn must consume each element.
func (p *streamParser) array(fn func() error) error {
	if p.depth++; p.depth > maxStreamDepth {
		return errors.New("exceeded max depth")
	}
	p.adv()
	p.ws()
	if p.ok && p.c == ']' {
		p.adv()
		p.depth--
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		p.ws()
		if !p.ok {
			return errStreamEOL
		}
		switch p.c {
		case ',':
			p.adv()
		case ']':
			p.adv()
			p.depth--
			return nil
		default:
			return p.bad("after array element")
		}
	}
}

// keyIs compares the current key like encoding/json matches field names
// (case-insensitively).
func (p *streamParser) keyIs(name string) bool {
	return !p.f.key.full && bytes.EqualFold(p.f.key.buf, []byte(name))
}

// skip consumes any value.
func (p *streamParser) skip() error {
	p.ws()
	if !p.ok {
		return errStreamEOL
	}
	switch c := p.c; {
	case c == '{':
		return p.object(p.skip)
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		return p.str(nil)
	case c == 't':
		return p.lit("true")
	case c == 'f':
		return p.lit("false")
	case c == 'n':
		return p.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.num()
	}
	return p.bad("looking for beginning of value")
}

// sinkString decodes a string value into s (reset first); any other value
// is consumed and leaves s empty, like rawString.
func (p *streamParser) sinkString(s *strSink) error {
	s.reset()
	p.ws()
	if p.ok && p.c == '"' {
		s.set = true
		return p.str(s)
	}
	return p.skip()
}

func (p *streamParser) lit(word string) error {
	for i := 0; i < len(word); i++ {
		if !p.ok || p.c != word[i] {
			return p.bad("in literal " + word)
		}
		p.adv()
	}
	return nil
}

// num consumes a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *streamParser) num() error {
	if p.c == '-' {
		p.numAdv()
	}
	digits := func() error {
		if !p.ok || p.c < '0' || p.c > '9' {
			return p.bad("in numeric literal")
		}
		for p.ok && p.c >= '0' && p.c <= '9' {
			p.numAdv()
		}
		return nil
	}
	if p.ok && p.c == '0' {
		p.numAdv()
	} else if err := digits(); err != nil {
		return err
	}
	if p.ok && p.c == '.' {
		p.numAdv()
		if err := digits(); err != nil {
			return err
		}
	}
	if p.ok && (p.c == 'e' || p.c == 'E') {
		p.numAdv()
		if p.ok && (p.c == '+' || p.c == '-') {
			p.numAdv()
		}
		if err := digits(); err != nil {
			return err
		}
	}
	return nil
}

// numAdv advances within a number, keeping its bytes when p.keep (at most
// 40: a count or a price never needs more).
func (p *streamParser) numAdv() {
	if p.keep && len(p.f.use.num) < 40 {
		p.f.use.num = append(p.f.use.num, p.c)
	}
	p.adv()
}

// str consumes a string at p.c == '"', decoding it into s (nil: validate
// only). Decoding follows encoding/json: invalid UTF-8 and lone surrogates
// become U+FFFD.
func (p *streamParser) str(s *strSink) error {
	p.adv()
	p.un, p.high = 0, 0
	for {
		if !p.ok {
			return errStreamEOL
		}
		c := p.c
		switch {
		case c == '"':
			p.adv()
			p.flush(s)
			return nil
		case c < 0x20:
			return p.bad("in string literal")
		case c == '\\':
			p.adv()
			if !p.ok {
				return errStreamEOL
			}
			var r rune
			switch p.c {
			case '"', '\\', '/':
				r = rune(p.c)
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				for i := 0; i < 4; i++ {
					p.adv()
					if !p.ok {
						return errStreamEOL
					}
					h := unhex(p.c)
					if h < 0 {
						return p.bad("in \\u hexadecimal character escape")
					}
					r = r<<4 | rune(h)
				}
				p.adv()
				if s != nil {
					p.flushBytes(s)
					p.escRune(s, r)
				}
				continue
			default:
				return p.bad("in string escape code")
			}
			p.adv()
			if s != nil {
				p.flush(s)
				s.put(r)
			}
		default:
			p.adv()
			if s == nil || s.done() {
				continue
			}
			if c < utf8.RuneSelf {
				p.flush(s)
				s.put(rune(c))
				continue
			}
			if p.high != 0 {
				s.put(unicode.ReplacementChar)
				p.high = 0
			}
			if utf8.RuneStart(c) {
				p.flushBytes(s)
			}
			p.u[p.un] = c
			p.un++
			for p.un > 0 && utf8.FullRune(p.u[:p.un]) {
				p.decodeOne(s)
			}
		}
	}
}

// escRune handles a \u escape, pairing surrogates like encoding/json.
func (p *streamParser) escRune(s *strSink, r rune) {
	if p.high != 0 {
		h := p.high
		p.high = 0
		if d := utf16.DecodeRune(h, r); d != unicode.ReplacementChar {
			s.put(d)
			return
		}
		s.put(unicode.ReplacementChar)
	}
	if utf16.IsSurrogate(r) {
		if r < 0xdc00 {
			p.high = r
			return
		}
		r = unicode.ReplacementChar
	}
	s.put(r)
}

// flush ends any pending surrogate or partial UTF-8 sequence.
func (p *streamParser) flush(s *strSink) {
	if s == nil {
		return
	}
	if p.high != 0 {
		s.put(unicode.ReplacementChar)
		p.high = 0
	}
	p.flushBytes(s)
}

func (p *streamParser) flushBytes(s *strSink) {
	for p.un > 0 {
		p.decodeOne(s)
	}
}

func (p *streamParser) decodeOne(s *strSink) {
	r, n := utf8.DecodeRune(p.u[:p.un])
	s.put(r)
	copy(p.u[:], p.u[n:p.un])
	p.un -= n
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// line parses one event object (p.c == '{') and checks that only white
// space follows it on the line.
func (p *streamParser) line() error {
	f := p.f
	err := p.object(func() error {
		if ok, err := p.usageKey(); ok {
			return err
		}
		switch {
		case p.keyIs("type"):
			return p.sinkString(&f.typ)
		case p.keyIs("subtype"):
			return p.sinkString(&f.subtype)
		case p.keyIs("result"):
			return p.sinkString(&f.result)
		case p.keyIs("is_error"):
			p.ws()
			f.isError = p.ok && p.c == 't'
			return p.skip()
		case p.keyIs("message"):
			p.ws()
			if p.ok && p.c == '{' {
				return p.object(p.message)
			}
			if !(p.ok && p.c == 'n') {
				f.msgBad = true
			}
			return p.skip()
		}
		return p.skip()
	})
	if err != nil {
		return err
	}
	// Trailing white space, \v and \f included (bytes.TrimSpace trims
	// them from a Feed line too).
	for p.ok && (p.c == ' ' || p.c == '\t' || p.c == '\r' || p.c == '\n' || p.c == '\v' || p.c == '\f') {
		p.adv()
	}
	if p.ok {
		return p.bad("after top-level value")
	}
	return nil
}

// message handles one key of message; content is tallied (the last content
// key wins, as in encoding/json).
func (p *streamParser) message() error {
	if !p.keyIs("content") {
		return p.skip()
	}
	f := p.f
	f.outputs, f.actKind, f.actText = 0, "", f.actText[:0]
	p.ws()
	switch {
	case p.ok && p.c == '"':
		// A plain string counts as one text block.
		f.bText.reset()
		if err := p.str(&f.bText); err != nil {
			return err
		}
		if f.bText.nonblank {
			f.outputs, f.actKind, f.actText = 1, "text", append(f.actText, f.bText.buf...)
		}
		return nil
	case p.ok && p.c == '[':
		badElem := false
		err := p.array(func() error {
			p.ws()
			switch {
			case p.ok && p.c == '{':
				return p.block()
			case p.ok && p.c == 'n':
				return p.skip()
			}
			badElem = true // not a block: encoding/json's type error drops the lot
			return p.skip()
		})
		if badElem {
			f.outputs, f.actKind, f.actText = 0, "", f.actText[:0]
			f.msgBad = true
		}
		return err
	}
	return p.skip()
}

// block reads one content block and counts it.
func (p *streamParser) block() error {
	f := p.f
	f.bType.reset()
	f.bText.reset()
	f.bName.reset()
	err := p.object(func() error {
		if ok, err := p.usageKey(); ok {
			return err
		}
		switch {
		case p.keyIs("type"):
			return p.sinkString(&f.bType)
		case p.keyIs("text"):
			return p.sinkString(&f.bText)
		case p.keyIs("name"):
			return p.sinkString(&f.bName)
		}
		return p.skip()
	})
	if err != nil {
		return err
	}
	switch string(f.bType.buf) {
	case "text":
		if f.bText.nonblank {
			f.outputs++
			f.actKind, f.actText = "text", append(f.actText[:0], f.bText.buf...)
		}
	case "tool_use", "server_tool_use":
		if len(f.bName.buf) > 0 {
			f.actKind, f.actText = "tool", append(f.actText[:0], f.bName.buf...)
		}
	}
	return nil
}

// activity renders the last block for progress summaries.
func (f *streamFacts) activity() string {
	switch f.actKind {
	case "text":
		return "text: " + oneLine(string(f.actText), maxStreamActivity)
	case "tool":
		return "tool: " + oneLine(string(f.actText), maxStreamActivity)
	}
	return ""
}
