package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// NewMessagesAPI starts a stand-in for the Anthropic Messages API (what Claude
// Code talks to; ANTHROPIC_BASE_URL=s.URL):
//
//	POST /v1/messages               scripted; SSE when "stream": true, else one JSON message
//	POST /v1/messages/count_tokens  {"input_tokens": 1}
//	anything else                   {} (200)
//
// A tool turn streams message_start, content_block_start (tool_use, empty
// input), one input_json_delta with the whole input, content_block_stop,
// message_delta (stop_reason "tool_use", output usage), message_stop; a
// text turn the same with a text block and stop_reason "end_turn".
func NewMessagesAPI(t testing.TB, script Script) *Server {
	return start(t, script, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
		mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
			b, _ := readBody(r)
			s.record(Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Body: b, Conversation: -1, Turn: -1})
			writeJSON(w, 200, map[string]int{"input_tokens": 1})
		})
		mux.HandleFunc("/", s.other)
		return mux
	})
}

// other answers a side request the script does not know with an empty
// object, recording it.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	b, _ := readBody(r)
	s.record(Request{At: time.Now(), Method: r.Method, Path: r.URL.Path + "?" + r.URL.RawQuery, Body: b, Conversation: -1, Turn: -1})
	writeJSON(w, 200, map[string]any{})
}

// anthropicBlock is one content block of a Messages API message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or text blocks
	IsError   bool            `json:"is_error"`
}

// parseAnthropic reduces a Messages API request body to its history.
func parseAnthropic(body []byte) (history, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"` // a string or blocks
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return history{}, fmt.Errorf("messages request: %w", err)
	}
	h := history{stream: req.Stream, model: req.Model, tools: len(req.Tools) > 0}
	first := true
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			h.turns++
			continue
		}
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			if first {
				h.firstUser, first = str, false
			}
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return history{}, fmt.Errorf("message content: %w", err)
		}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_result":
				h.results = append(h.results, ToolResult{CallID: b.ToolUseID, Content: blockText(b.Content), IsError: b.IsError})
			}
		}
		if first {
			h.firstUser, first = strings.Join(texts, "\n"), false
		}
	}
	return h, nil
}

// blockText is a tool_result's content as text: the string, or its text
// blocks joined by "\n".
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	h, err := parseAnthropic(body)
	if err != nil {
		writeJSON(w, 400, map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	conv, turn, idx := s.pick(h)
	s.record(Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Body: body, Conversation: conv, Turn: idx, FirstUser: h.firstUser, Results: h.results})
	if turn == nil {
		// A side request (title, command prefix, …): a short text answer.
		turn = &Turn{Text: "ok"}
	}
	model := h.model
	if model == "" {
		model = "claude-agenttest"
	}
	msgID := fmt.Sprintf("msg_agenttest_%d_%d", conv+1, idx+1)
	u := turn.Usage
	usage := map[string]int{"input_tokens": u.Input, "output_tokens": u.Output,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite}
	block, stop := map[string]any{"type": "text", "text": ""}, "end_turn"
	if turn.Tool != "" {
		block, stop = map[string]any{"type": "tool_use", "id": turn.ID, "name": turn.Tool, "input": map[string]any{}}, "tool_use"
	}
	if !h.stream {
		full := map[string]any{"type": "text", "text": turn.Text}
		if turn.Tool != "" {
			full = map[string]any{"type": "tool_use", "id": turn.ID, "name": turn.Tool, "input": turn.Input}
		}
		writeJSON(w, 200, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	sseHeaders(w)
	start := map[string]int{"input_tokens": u.Input, "output_tokens": 0,
		"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite}
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": start}})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	if turn.Tool != "" {
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": inputJSON(turn.Input)}})
	} else {
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": turn.Text}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
