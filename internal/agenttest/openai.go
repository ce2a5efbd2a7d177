package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// NewResponsesAPI starts a stand-in for the OpenAI Responses API (what Codex CLI
// talks to through a custom provider with wire_api = "responses" and
// base_url = s.URL+"/v1"):
//
//	POST /v1/responses  scripted, always SSE
//	GET  /v1/models     {"object": "list", "data": []}
//	anything else       {} (200)
//
// A tool turn streams response.created, response.output_item.added (a
// function_call with empty arguments), response.function_call_arguments.done,
// response.output_item.done (the function_call with its arguments),
// response.completed (with usage); a text turn the same with an assistant
// message item and a response.output_text.delta.
func NewResponsesAPI(t testing.TB, script Script) *Server {
	return start(t, script, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/responses", s.openaiResponses)
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			s.record(Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Conversation: -1, Turn: -1})
			writeJSON(w, 200, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
		})
		mux.HandleFunc("/", s.other)
		return mux
	})
}

// parseOpenAI reduces a Responses API request body to its history: the
// first user text is every user message before the first model output
// (Codex sends its environment context and instructions as user messages
// ahead of the prompt); a turn is a function_call or assistant message.
func parseOpenAI(body []byte) (history, error) {
	var req struct {
		Model string            `json:"model"`
		Tools []json.RawMessage `json:"tools"`
		Input []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			CallID  string          `json:"call_id"`
			Name    string          `json:"name"`
			Output  json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return history{}, fmt.Errorf("responses request: %w", err)
	}
	h := history{stream: true, model: req.Model, tools: len(req.Tools) > 0}
	var first []string
	seenModel := false
	for _, it := range req.Input {
		switch {
		case it.Type == "function_call" || it.Type == "custom_tool_call" || it.Role == "assistant":
			h.turns++
			seenModel = true
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			h.results = append(h.results, ToolResult{CallID: it.CallID, Content: outputText(it.Output)})
		case it.Role == "user" && !seenModel:
			first = append(first, contentText(it.Content))
		}
	}
	h.firstUser = strings.Join(first, "\n")
	return h, nil
}

// contentText is a Responses message content as text: a string or the
// text of its input_text/output_text parts joined by "\n".
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n")
}

// outputText is a function_call_output's output as text: a string, or an
// object's "content"/"output" text, else the raw JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := contentText(raw); t != "" {
		return t
	}
	return string(raw)
}

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]string{"message": err.Error()}})
		return
	}
	h, err := parseOpenAI(body)
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]string{"message": err.Error()}})
		return
	}
	conv, turn, idx := s.pick(h)
	s.record(Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Body: body, Conversation: conv, Turn: idx, FirstUser: h.firstUser, Results: h.results})
	if turn == nil {
		turn = &Turn{Text: "ok"}
	}
	respID := fmt.Sprintf("resp_agenttest_%d_%d", conv+1, idx+1)
	u := turn.Usage
	usage := map[string]any{"input_tokens": u.Input + u.CacheRead, "input_tokens_details": map[string]int{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
		"total_tokens": u.Input + u.CacheRead + u.Output}
	var item, added map[string]any
	if turn.Tool != "" {
		itemID := "fc_" + turn.ID
		item = map[string]any{"type": "function_call", "id": itemID, "call_id": turn.ID, "name": turn.Tool,
			"arguments": inputJSON(turn.Input), "status": "completed"}
		added = map[string]any{"type": "function_call", "id": itemID, "call_id": turn.ID, "name": turn.Tool,
			"arguments": "", "status": "in_progress"}
		if turn.Namespace != "" {
			item["namespace"], added["namespace"] = turn.Namespace, turn.Namespace
		}
	} else {
		itemID := "msg_" + respID
		item = map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}}}
		added = map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "in_progress", "content": []any{}}
	}
	resp := func(status string, output []any, usage any) map[string]any {
		return map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": h.model, "output": output, "usage": usage}
	}
	sseHeaders(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": resp("in_progress", []any{}, nil)})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added})
	if turn.Tool != "" {
		sse(w, "response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done",
			"output_index": 0, "item_id": item["id"], "arguments": item["arguments"]})
	} else {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "output_index": 0,
			"content_index": 0, "item_id": item["id"], "delta": turn.Text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp("completed", []any{item}, usage)})
}
