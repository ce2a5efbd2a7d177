// Package agenttest holds scripted stand-ins for the model APIs that the real
// agent CLIs talk to (Claude Code: Anthropic Messages; Codex CLI: OpenAI
// Responses; Gemini CLI: Gemini streamGenerateContent), and runners that
// start each real CLI against one of them in a scratch home. It is imported
// only by tests (agents/, issue 28).
//
// A stand-in is an httptest server on 127.0.0.1. It answers each model
// request from a Script: the request's conversation is found by the text of
// its first user message (a sub-agent's conversation starts with the prompt
// its Agent/Task call gave), and the turn to answer is the number of
// assistant turns already in the request's history, so a retried request
// gets the same answer. Every request is recorded with the tool results it
// carries back, so a test can read what the agent sent the model (a denial's
// reason, a command's output). Requests that match no conversation (title
// generation, command-prefix checks, count_tokens, model lists) get a minimal
// valid answer.
package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one scripted model answer: a tool call when Tool is set, else
// the text Text (which ends the conversation's agent loop).
type Turn struct {
	Tool  string         // tool (function) name: "Bash", "exec_command", "run_shell_command"
	Input map[string]any // the tool call's input (arguments)
	ID    string         // tool call id; "" generates call_<conversation>_<turn>
	// Namespace is the tool's namespace where the wire format has them
	// (Responses API: Codex's multi_agent_v1 holds spawn_agent, wait_agent).
	Namespace string
	Text      string // text to say when Tool is ""
	Usage     Usage  // token counts reported for this answer
	// Make, when set, computes the turn from the tool results the request
	// carries (every one so far, oldest first): for a call that needs an id
	// the agent handed out, such as Codex's write_stdin session_id.
	Make func(results []ToolResult) Turn
}

// Usage is the token accounting a stand-in reports for one answer, in
// tokens, mapped onto each wire format's usage fields.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// Conversation is the scripted answers of one conversation: the first whose
// Match is a substring of a request's first user message answers it.
type Conversation struct {
	Match string // "" matches every conversation: put it last
	Turns []Turn
	// Final is said once Turns are used up (default "done").
	Final string
}

// Script is the scripted conversations of one stand-in.
type Script []Conversation

// ToolResult is one tool result the agent sent back to the model.
type ToolResult struct {
	CallID  string // tool_use_id / call_id; Gemini: the functionResponse id ("" when it has none)
	Name    string // the tool's name where the wire format carries it (Gemini)
	Content string // the result as text (text blocks joined by "\n"; Gemini: the response object as JSON)
	IsError bool   // Anthropic's is_error
}

// Request is one recorded HTTP request.
type Request struct {
	At           time.Time
	Method, Path string
	Body         []byte
	Conversation int // index into the Script; -1: a side request or none matched
	Turn         int // the turn answered (len(Turns) for Final); -1 when none
	FirstUser    string
	Results      []ToolResult // every tool result in the request's history
}

// history is a model request reduced to what the script needs.
type history struct {
	firstUser string       // text of the first user message (every text part)
	turns     int          // assistant turns already in the history
	results   []ToolResult // tool results in the history
	stream    bool
	model     string
	// tools: the request offers tools. Only such requests are the agent's
	// own loop; a side request without tools (a title, a command-prefix
	// check) may carry the same first user message and must not take a turn.
	tools bool
}

// Server is one stand-in.
type Server struct {
	URL string // http://127.0.0.1:PORT

	srv *httptest.Server

	mu     sync.Mutex
	script Script
	reqs   []Request
	// changed is closed and replaced whenever a request is recorded, so
	// waiters wake without polling.
	changed chan struct{}
}

// start serves mux on 127.0.0.1 and closes the server when t ends.
func start(t testing.TB, script Script, route func(s *Server) http.Handler) *Server {
	s := &Server{script: script, changed: make(chan struct{})}
	s.srv = httptest.NewServer(route(s))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// pick finds the conversation and turn that answer h: conv indexes the
// Script, idx the turn (len(Turns) for the Final text); conv is -1 and turn
// nil when h offers no tools or no conversation matches.
func (s *Server) pick(h history) (conv int, turn *Turn, idx int) {
	if !h.tools {
		return -1, nil, -1
	}
	s.mu.Lock()
	script := s.script
	s.mu.Unlock()
	for i, c := range script {
		if c.Match != "" && !strings.Contains(h.firstUser, c.Match) {
			continue
		}
		final := c.Final
		if final == "" {
			final = "done"
		}
		if h.turns < len(c.Turns) {
			t := c.Turns[h.turns]
			if t.Make != nil {
				t = t.Make(h.results)
			}
			if t.Tool != "" && t.ID == "" {
				t.ID = fmt.Sprintf("call_%d_%d", i, h.turns)
			}
			return i, &t, h.turns
		}
		return i, &Turn{Text: final}, len(c.Turns)
	}
	return -1, nil, -1
}

// SetScript replaces the script (for a test that knows its turns only once
// the agent's scratch directories exist).
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// record stores one request and wakes waiters.
func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// Requests returns a copy of every request recorded so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Result returns the tool result of callID, if a request carried it back.
func (s *Server) Result(callID string) (ToolResult, bool) {
	for _, r := range s.Requests() {
		for _, tr := range r.Results {
			if tr.CallID == callID {
				return tr, true
			}
		}
	}
	return ToolResult{}, false
}

// Answered reports how many scripted requests conversation conv has been
// sent (retries included).
func (s *Server) Answered(conv int) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Conversation == conv {
			n++
		}
	}
	return n
}

// WaitFor blocks until ok holds for the recorded requests or ctx ends
// (then it returns ctx's error, wrapped).
func (s *Server) WaitFor(ctx context.Context, what string, ok func([]Request) bool) error {
	for {
		s.mu.Lock()
		reqs := append([]Request(nil), s.reqs...)
		ch := s.changed
		s.mu.Unlock()
		if ok(reqs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-ch:
		}
	}
}

// WaitResult waits for the tool result of callID.
func (s *Server) WaitResult(ctx context.Context, callID string) (ToolResult, error) {
	var tr ToolResult
	err := s.WaitFor(ctx, "the tool result of "+callID, func(reqs []Request) bool {
		for _, r := range reqs {
			for _, x := range r.Results {
				if x.CallID == callID {
					tr = x
					return true
				}
			}
		}
		return false
	})
	return tr, err
}

// readBody reads a request body (at most 64 MiB: CLIs send whole histories).
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s body: %w", r.URL.Path, err)
	}
	return b, nil
}

// sse writes one server-sent event (event may be "" for data-only streams)
// and flushes it.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON answers v as JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// sseHeaders starts an event stream.
func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// inputJSON is a tool call's input as compact JSON ("{}" when nil).
func inputJSON(in map[string]any) string {
	if in == nil {
		return "{}"
	}
	b, _ := json.Marshal(in)
	return string(b)
}
