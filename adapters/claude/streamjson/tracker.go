// Package streamjson reads Claude Code / Agent SDK stream-json
// (`--output-format stream-json`) byte by byte, with memory bounded whatever
// the input: the pure half of `clawpit task track`. It does no I/O of its own
// beyond the reader it is handed and knows no registry; it imports core only
// for the shapes it reports in (core.Finish, core.TaskStatus, core.Tokens).
package streamjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
)

// This file reads Claude Code / Agent SDK stream-json (`--output-format
// stream-json`): one JSON object per line, each with a "type" ("system",
// "assistant", "user", "stream_event", "result", ...). It is the pure half of
// `clawpit task track` (docs/contract.md "Result subtypes"): no I/O and no registry; the CLI feeds it
// lines as they arrive and turns what it learns into registry calls.

// MaxLine is the longest line Feed accepts from a caller's buffer
// (bytes); a longer one is counted invalid. ReadLine has no such limit: it
// never buffers a line.
const MaxLine = 32 << 20

// maxStreamText caps the strings the tracker keeps from a line (subtype,
// result text, activity), so memory stays bounded whatever the input.
const (
	maxStreamName     = 64
	maxStreamText     = 4096
	maxStreamActivity = 120
)

// LineKind classifies one input line.
type LineKind int

const (
	// Blank is an empty or whitespace-only line (tolerated, counted).
	Blank LineKind = iota
	// Invalid is a line that is not a JSON object (tolerated, counted).
	Invalid
	// Known is an event of a type this reader knows.
	Known
	// Unknown is a JSON object of an unknown or missing type (tolerated,
	// counted; it still counts as an event).
	Unknown
)

// knownStreamTypes are the top-level event types of Claude Code and the Agent
// SDK. Anything else is reported as unknown, never rejected.
var knownStreamTypes = map[string]bool{
	"system": true, "assistant": true, "user": true, "result": true,
	"stream_event": true, "rate_limit_event": true, "tool_progress": true,
	"tool_use_summary": true, "auth_status": true, "keep_alive": true,
	"control_request": true, "control_response": true, "control_cancel_request": true,
	"prompt_suggestion": true,
}

// Event is what one line told the tracker.
type Event struct {
	Kind    LineKind
	Type    string // event type ("" for blank/invalid lines)
	Subtype string // system/result subtype, "" when none
	// Outputs is the number of non-blank text blocks in an assistant event's
	// message.content (docs/contract.md "Result subtypes": each counts one output). stream_event deltas
	// carry the same text again and count nothing.
	Outputs int
	// Terminal is true for the first `result` event: the stream's verdict.
	Terminal bool
	// AfterResult is true for an event that arrived after the terminal result
	// (it changes nothing).
	AfterResult bool
	// Activity is a short one-line description for progress summaries ("text:
	// All tests pass…", "tool: Bash"), "" when the event has none.
	Activity string
}

// IsEvent reports whether the line was a JSON object (known or unknown type).
func (e Event) IsEvent() bool { return e.Kind == Known || e.Kind == Unknown }

// Result is the terminal `result` event of a stream.
type Result struct {
	Subtype string `json:"subtype"`  // "success", "error_max_turns", "error_during_execution", ...
	IsError bool   `json:"is_error"` // the CLI reports API errors as subtype success with is_error true
	Text    string `json:"text"`     // the "result" text, capped at 4096 bytes; "" when absent
	// Usage is what the result line reports spending; nil when nothing.
	Usage *Usage `json:"usage,omitempty"`
}

// Summary is the running tally of a stream.
type Summary struct {
	Lines       int64 // every line fed, blank and invalid included
	Events      int64 // JSON objects (known and unknown types)
	Blank       int64
	Invalid     int64
	Unknown     int64
	AfterResult int64 // events after the terminal result
	Outputs     int64 // non-blank assistant text blocks before the result
	LastType    string
	LastSubtype string
	Result      *Result // nil until a result event arrives
}

// LastEvent is "<type>/<subtype>" (or "<type>") of the last event, "none" when
// there was no event at all.
func (s Summary) LastEvent() string {
	switch {
	case s.LastType == "":
		return "none"
	case s.LastSubtype == "":
		return s.LastType
	}
	return s.LastType + "/" + s.LastSubtype
}

// Finish turns the stream's verdict into a FinishTask input (docs/contract.md "Result subtypes"): the
// result's subtype and is_error when there was a result; otherwise status
// failed with "stream ended without terminal result (last event: <type/subtype>)".
// A result without a subtype counts as "success", or "error" when is_error is
// set; a subtype other than success or error_* is reported with IsError set,
// so an unfamiliar verdict never counts as success. Text is left empty: the result text repeats the last assistant text
// block, which is already counted as an output.
func (s Summary) Finish() core.Finish {
	if s.Result == nil {
		return core.Finish{
			Status: core.TaskFailed,
			Error:  fmt.Sprintf("stream ended without terminal result (last event: %s)", s.LastEvent()),
		}
	}
	sub := s.Result.Subtype
	if sub == "" {
		sub = "success"
		if s.Result.IsError {
			sub = "error"
		}
	}
	isErr := s.Result.IsError
	if sub != "success" && !strings.HasPrefix(sub, "error_") {
		// An unfamiliar verdict never counts as success.
		isErr = true
	}
	return core.Finish{Subtype: sub, IsError: isErr}
}

// Status is the task status the stream's verdict maps to (docs/contract.md "Result subtypes"): succeeded
// for a result of subtype success without is_error, failed otherwise —
// including a stream without a result.
func (s Summary) Status() core.TaskStatus {
	f := s.Finish()
	if f.Status != "" {
		return f.Status
	}
	if f.Subtype == "success" && !f.IsError {
		return core.TaskSucceeded
	}
	return core.TaskFailed
}

// Tracker parses stream-json line by line. The zero value is ready to
// use. It keeps only counters and a few capped strings, so its memory is
// bounded whatever it is fed. Not safe for concurrent use.
type Tracker struct {
	sum   Summary
	facts *streamFacts // scratch of the tokenizer, reused line after line
}

// Summary returns the tally so far.
func (t *Tracker) Summary() Summary {
	s := t.sum
	if s.Result != nil {
		r := *s.Result
		s.Result = &r
	}
	return s
}

// Done reports whether the terminal result has been seen.
func (t *Tracker) Done() bool { return t.sum.Result != nil }

// ErrLine is wrapped by Feed's errors for lines it could not read. They
// are never fatal: the line is counted as invalid and the stream goes on.
var ErrLine = errors.New("invalid stream-json line")

// Feed reads one line (a trailing "\n" or "\r\n" is ignored) and updates the
// tally. The error, when not nil, wraps ErrLine and says why the line
// was counted invalid; it is informational, never fatal. The line is walked
// by a streaming tokenizer (walk.go): memory stays bounded by the
// capped fields kept, whatever the line's shape.
func (t *Tracker) Feed(line []byte) (Event, error) {
	t.sum.Lines++
	line = bytes.TrimRight(line, "\r\n")
	if t.sum.Lines == 1 {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		t.sum.Blank++
		return Event{Kind: Blank}, nil
	}
	if len(trimmed) > MaxLine {
		t.sum.Invalid++
		return Event{Kind: Invalid}, fmt.Errorf("%w: line of %d bytes exceeds %d", ErrLine, len(trimmed), MaxLine)
	}
	src := &streamSrc{data: trimmed}
	return t.parse(src)
}

// ReadLine reads the next line from r — up to and including its '\n', or to
// the end of input — and feeds it to the tracker without buffering it: a line
// of any length costs the same few kilobytes. fed is false when r had nothing
// left (readErr is then io.EOF or the read error). lineErr, when not nil,
// wraps ErrLine (the line was counted invalid; never fatal). readErr is
// a read error other than io.EOF met on the way (the line is counted with
// what was read; the stream should end there).
func (t *Tracker) ReadLine(r *bufio.Reader) (ev Event, fed bool, lineErr, readErr error) {
	if _, err := r.Peek(1); err != nil {
		return Event{}, false, nil, err
	}
	t.sum.Lines++
	src := &streamSrc{br: r}
	if t.sum.Lines == 1 {
		if b, err := r.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
			r.Discard(3) //nolint:errcheck // the bytes were just peeked
		}
	}
	ev, lineErr = t.parse(src)
	src.drain()
	return ev, true, lineErr, src.err
}

// parse walks one line from src (Lines already counted) and updates the tally.
func (t *Tracker) parse(src *streamSrc) (Event, error) {
	if t.facts == nil {
		t.facts = newStreamFacts()
	}
	f := t.facts
	f.reset()
	p := streamParser{src: src, f: f}
	p.adv()
	for p.ok && (p.c == ' ' || p.c == '\t' || p.c == '\r' || p.c == '\n' || p.c == '\v' || p.c == '\f') {
		p.adv()
	}
	switch {
	case !p.ok:
		t.sum.Blank++
		return Event{Kind: Blank}, nil
	case p.c != '{':
		t.sum.Invalid++
		return Event{Kind: Invalid}, fmt.Errorf("%w: not a JSON object", ErrLine)
	}
	if err := p.line(); err != nil {
		t.sum.Invalid++
		return Event{Kind: Invalid}, fmt.Errorf("%w: %v", ErrLine, err)
	}
	ev := Event{
		Kind:    Unknown,
		Type:    f.typ.String(),
		Subtype: f.subtype.String(),
	}
	if knownStreamTypes[ev.Type] {
		ev.Kind = Known
	} else {
		t.sum.Unknown++
	}
	t.sum.Events++
	t.sum.LastType, t.sum.LastSubtype = ev.Type, ev.Subtype
	if ev.Type == "" {
		t.sum.LastType = "unknown"
	}
	if t.sum.Result != nil {
		ev.AfterResult = true
		t.sum.AfterResult++
		return ev, nil
	}
	switch ev.Type {
	case "assistant":
		if !f.msgBad {
			ev.Outputs, ev.Activity = f.outputs, f.activity()
		}
		t.sum.Outputs, _ = core.SatAdd(t.sum.Outputs, int64(ev.Outputs))
	case "result":
		ev.Terminal = true
		t.sum.Result = &Result{Subtype: ev.Subtype, Text: f.result.String(), IsError: f.isError, Usage: f.use.result()}
	}
	return ev, nil
}

// capString cuts s to at most max bytes without splitting a rune.
func capString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// oneLine collapses whitespace runs (newlines included) to single spaces, drops
// other control characters and caps the result at max bytes with "…".
func oneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == ' ':
			space = b.Len() > 0
			continue
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() > max {
			return capString(b.String(), max) + "…"
		}
	}
	return b.String()
}
