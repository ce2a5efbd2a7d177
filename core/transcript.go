package core

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Limits of one transcript read.
const (
	// HeadBytes is how much of a transcript's beginning identifies it
	// (UsageSource.Head): 256 bytes, inside Claude Code's first line.
	HeadBytes = 256
	// MaxTranscriptRecord caps one transcript line held in memory: 4 MiB. A
	// longer line (a huge tool result) is skipped and noted; assistant
	// lines that carry usage are far smaller.
	MaxTranscriptRecord = 4 << 20
	// TranscriptReadBudget bounds one read: 2 s. A read that runs out
	// stops at its last complete line and the next hook goes on from there.
	TranscriptReadBudget = 2 * time.Second
)

// TranscriptRead is what one incremental read of a Claude Code transcript
// found: the tokens per model counted since the source's offset and the
// source advanced past them.
type TranscriptRead struct {
	ByModel map[string]Tokens
	Source  UsageSource // the source to store: offset, head, last message, note
	Lines   int         // complete lines read
	// Partial is set when the read stopped at its time budget before the
	// file's end: the next read goes on from Source.Offset.
	Partial bool
}

// ReadClaudeTranscript reads the Claude Code transcript at src.Path from
// src.Offset, read-only, to its last complete line (or until ctx ends or
// TranscriptReadBudget passes), and counts each assistant message's usage
// per model (transcript lines: {"type":"assistant","isSidechain":…,
// "message":{"id":…,"model":…,"usage":{…}}}). Lines of a sub-agent
// (isSidechain true) are counted only when sidechain is set: the one reading
// a sub-agent's own transcript. A file shorter than the offset, or whose head
// changed, was truncated or rotated: it is read from 0 and the note says so.
// Memory stays under a 64 KiB buffer plus MaxTranscriptRecord. Errors: only
// a file that cannot be opened or read (the caller notes it; it never fails a
// hook).
func ReadClaudeTranscript(ctx context.Context, src UsageSource, sidechain bool) (TranscriptRead, error) {
	return readTranscript(ctx, src, TranscriptClaude, sidechain)
}

// ReadCodexRollout is ReadClaudeTranscript for a Codex rollout (the
// session's .jsonl, Codex 0.169.0): each API response's usage is a line
// {"type":"token_usage_record","payload":{"usage":{"input_tokens",
// "cached_input_tokens","cache_write_input_tokens","output_tokens",…}}},
// counted for the model of the last {"type":"turn_context","payload":
// {"model":…}} before it (kept in the source across reads). OpenAI's
// input_tokens include the cached ones: input is input_tokens less cached
// and cache-write tokens; output_tokens include reasoning.
func ReadCodexRollout(ctx context.Context, src UsageSource) (TranscriptRead, error) {
	return readTranscript(ctx, src, TranscriptCodex, false)
}

// TranscriptFormat is the format of an agent's record of usage.
type TranscriptFormat string

// Transcript formats: Claude Code's transcript, Codex's rollout, Gemini
// CLI's chat record (the last two named as their agents are in
// sessions.agent).
const (
	TranscriptClaude TranscriptFormat = ""
	TranscriptCodex  TranscriptFormat = "codex"
	TranscriptGemini TranscriptFormat = "gemini"
)

// ReadGeminiTranscript is ReadClaudeTranscript for Gemini CLI's chat record
// (~/.gemini/tmp/<dir>/chats/session-….jsonl, Gemini CLI 0.61.0): each
// model message is a line {"id","type":"gemini","model","tokens":{"input",
// "output","cached","thoughts","tool","total"}}, written again (same id and
// tokens) when its tool calls are added, so a repeated id adds only what
// grew. Gemini's input includes the cached tokens: input is input less
// cached plus tool-use prompt tokens; output includes thoughts.
func ReadGeminiTranscript(ctx context.Context, src UsageSource) (TranscriptRead, error) {
	return readTranscript(ctx, src, TranscriptGemini, false)
}

func readTranscript(ctx context.Context, src UsageSource, format TranscriptFormat, sidechain bool) (TranscriptRead, error) {
	ctx, cancel := context.WithTimeout(ctx, TranscriptReadBudget)
	defer cancel()
	out := TranscriptRead{ByModel: map[string]Tokens{}, Source: src}
	out.Source.Note = ""
	f, err := os.Open(src.Path)
	if err != nil {
		return out, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return out, fmt.Errorf("stat transcript: %w", err)
	}
	if reset := resetReason(f, st.Size(), src); reset != "" {
		out.Source = UsageSource{Path: src.Path, Session: src.Session, RunID: src.RunID, Note: reset}
	}
	if _, err := f.Seek(out.Source.Offset, io.SeekStart); err != nil {
		return out, fmt.Errorf("seek transcript: %w", err)
	}
	count := func(line []byte, out *TranscriptRead) bool { return countLine(line, out, sidechain) }
	switch format {
	case TranscriptCodex:
		count = countCodexLine
	case TranscriptGemini:
		count = countGeminiLine
	}
	if err := scanTranscript(ctx, bufio.NewReaderSize(f, 64<<10), &out, count); err != nil {
		return out, err
	}
	// One 256-byte read: cheaper than remembering how much the old head covered.
	out.Source.Head, err = headHash(f, out.Source.Offset)
	return out, err
}

// resetReason says why src's offset no longer fits the file ("" when it
// does): the file is shorter, or its first bytes changed.
func resetReason(f *os.File, size int64, src UsageSource) string {
	if src.Offset == 0 {
		return ""
	}
	if size < src.Offset {
		return fmt.Sprintf("transcript truncated (%d bytes, %d read before): read again from the start", size, src.Offset)
	}
	if h, err := headHash(f, src.Offset); err == nil && src.Head != "" && h != src.Head {
		return "transcript replaced (its first bytes changed): read again from the start"
	}
	return ""
}

// headHash is the hex SHA-256 of f's first min(n, HeadBytes) bytes.
func headHash(f *os.File, n int64) (string, error) {
	buf := make([]byte, min(n, HeadBytes))
	if _, err := f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read transcript head: %w", err)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}

// scanTranscript counts the complete lines of r into out, advancing
// out.Source.Offset past each; a partial last line is left for the next read.
func scanTranscript(ctx context.Context, r *bufio.Reader, out *TranscriptRead, count func([]byte, *TranscriptRead) bool) error {
	var long []byte
	skipping, bad, skipped := false, 0, 0
	for n := 0; ; n++ {
		if n%512 == 0 && ctx.Err() != nil {
			out.Partial = true
			break
		}
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !skipping && len(long)+len(chunk) <= MaxTranscriptRecord {
				long = append(long, chunk...)
			} else {
				skipping, long = true, nil
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read transcript: %w", err)
		}
		if err != nil { // EOF: a partial line stays for the next read
			break
		}
		size := int64(len(long) + len(chunk))
		line := chunk
		if long != nil {
			line = append(long, chunk...)
		}
		switch {
		case skipping || size > MaxTranscriptRecord:
			skipped++
		case !count(line, out):
			bad++
		}
		long, skipping = nil, false
		out.Source.Offset += size
		out.Lines++
	}
	if bad > 0 {
		out.Source.Note = joinNote(out.Source.Note, "transcript: "+plural(bad, "line is", "lines are")+" not JSON, not counted")
	}
	if skipped > 0 {
		out.Source.Note = joinNote(out.Source.Note, fmt.Sprintf("transcript: %s over %d bytes skipped", plural(skipped, "line", "lines"), MaxTranscriptRecord))
	}
	return nil
}

// transcriptLine is the part of a transcript line usage needs.
type transcriptLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Message     struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// countLine adds line's usage to out; false when line is not JSON. Lines
// without "usage" are not parsed at all (most of a transcript).
func countLine(line []byte, out *TranscriptRead, sidechain bool) bool {
	if !bytes.Contains(line, []byte(`"usage"`)) {
		return true
	}
	var l transcriptLine
	if err := json.Unmarshal(line, &l); err != nil {
		return false
	}
	if l.Type != "assistant" || l.Message.Usage == nil || (l.IsSidechain && !sidechain) {
		return true
	}
	u := l.Message.Usage
	t := Tokens{Input: u.Input, Output: u.Output, CacheWrite: u.CacheWrite, CacheRead: u.CacheRead}
	if t.IsZero() {
		return true // synthetic messages ("<synthetic>") carry zero usage
	}
	s := &out.Source
	add := t
	if l.Message.ID != "" && l.Message.ID == s.LastMessage {
		// Another content block of the message counted: only what grew.
		add = s.Last.growth(t)
		t = s.Last.Add(add)
	}
	s.LastMessage, s.LastModel, s.Last = l.Message.ID, l.Message.Model, t
	if !add.IsZero() {
		out.ByModel[l.Message.Model] = out.ByModel[l.Message.Model].Add(add)
	}
	return true
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// codexLine is the part of a Codex rollout line usage needs.
type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Model string    `json:"model"` // turn_context
		Usage *struct { // token_usage_record: one API response's
			Input      int64 `json:"input_tokens"`
			Cached     int64 `json:"cached_input_tokens"`
			CacheWrite int64 `json:"cache_write_input_tokens"`
			Output     int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"payload"`
}

// countCodexLine adds a Codex rollout line's usage to out; false when the
// line is not JSON. Only turn_context and token_usage_record lines are
// parsed.
func countCodexLine(line []byte, out *TranscriptRead) bool {
	rec, ctxLine := bytes.Contains(line, []byte(`"token_usage_record"`)), bytes.Contains(line, []byte(`"turn_context"`))
	if !rec && !ctxLine {
		return true
	}
	var l codexLine
	if err := json.Unmarshal(line, &l); err != nil {
		return false
	}
	s := &out.Source
	switch {
	case l.Type == "turn_context" && l.Payload.Model != "":
		s.LastModel = l.Payload.Model
	case l.Type == "token_usage_record" && l.Payload.Usage != nil:
		u := l.Payload.Usage
		t := Tokens{Input: max(u.Input-u.Cached-u.CacheWrite, 0), Output: u.Output, CacheWrite: u.CacheWrite, CacheRead: u.Cached}
		model := s.LastModel
		if model == "" {
			model = "unknown"
		}
		if !t.IsZero() {
			out.ByModel[model] = out.ByModel[model].Add(t)
		}
	}
	return true
}

// geminiLine is the part of a Gemini CLI chat record line usage needs.
type geminiLine struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Model  string `json:"model"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
	} `json:"tokens"`
}

// countGeminiLine adds a Gemini CLI chat record line's tokens to out; false
// when the line is not JSON. Lines without "tokens" are not parsed.
func countGeminiLine(line []byte, out *TranscriptRead) bool {
	if !bytes.Contains(line, []byte(`"tokens"`)) {
		return true
	}
	var l geminiLine
	if err := json.Unmarshal(line, &l); err != nil {
		return false
	}
	if l.Type != "gemini" || l.Tokens == nil {
		return true
	}
	u := l.Tokens
	t := Tokens{Input: max(u.Input-u.Cached, 0) + u.Tool, Output: u.Output + u.Thoughts, CacheRead: u.Cached}
	if t.IsZero() {
		return true
	}
	s := &out.Source
	add := t
	if l.ID != "" && l.ID == s.LastMessage {
		add = s.Last.growth(t) // the same message written again
		t = s.Last.Add(add)
	}
	s.LastMessage, s.LastModel, s.Last = l.ID, l.Model, t
	if !add.IsZero() {
		out.ByModel[l.Model] = out.ByModel[l.Model].Add(add)
	}
	return true
}
