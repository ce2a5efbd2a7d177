package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// NewGeminiAPI starts a stand-in for the Gemini API (what Gemini CLI talks to;
// GOOGLE_GEMINI_BASE_URL=s.URL):
//
//	POST /v1beta/models/MODEL:streamGenerateContent?alt=sse  scripted (SSE, data-only)
//	POST /v1beta/models/MODEL:generateContent                side request: a JSON text answer
//	POST /v1beta/models/MODEL:countTokens                    {"totalTokens": 1}
//	anything else                                             {} (200)
//
// A tool turn is one chunk whose candidate has a functionCall part
// ({name, args, id}) and finishReason STOP; a text turn the same with a
// text part. Gemini CLI's non-streaming side requests (next-speaker check,
// model routing) ask for JSON: they get an object that says the user speaks
// next and the default model is fine.
func NewGeminiAPI(t testing.TB, script Script) *Server {
	return start(t, script, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1beta/models/", s.geminiModels)
		mux.HandleFunc("/", s.other)
		return mux
	})
}

// parseGemini reduces a generateContent request body to its history: the
// first user text is the text of the first user content; a turn is a
// model content; tool results are functionResponse parts.
func parseGemini(body []byte) (history, error) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return history{}, fmt.Errorf("generateContent request: %w", err)
	}
	var h history
	h.tools = len(req.Tools) > 0
	first := true
	for _, c := range req.Contents {
		if c.Role == "model" {
			h.turns++
			continue
		}
		var texts []string
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				h.results = append(h.results, ToolResult{CallID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name,
					Content: string(p.FunctionResponse.Response)})
			} else if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		if first && len(texts) > 0 {
			h.firstUser, first = strings.Join(texts, "\n"), false
		}
	}
	return h, nil
}

func (s *Server) geminiModels(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1beta/models/")
	model, method, _ := strings.Cut(rest, ":")
	body, err := readBody(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": err.Error()}})
		return
	}
	rec := Request{At: time.Now(), Method: r.Method, Path: r.URL.Path, Body: body, Conversation: -1, Turn: -1}
	switch method {
	case "countTokens":
		s.record(rec)
		writeJSON(w, 200, map[string]int{"totalTokens": 1})
		return
	case "generateContent":
		s.record(rec)
		writeJSON(w, 200, geminiChunk(model, Turn{Text: `{"reasoning": "agenttest stand-in", "next_speaker": "user", "model_choice": "flash"}`}))
		return
	case "streamGenerateContent":
	default:
		s.other(w, r)
		return
	}
	h, err := parseGemini(body)
	if err != nil {
		s.record(rec)
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": err.Error()}})
		return
	}
	turn := &Turn{Text: "ok"}
	if h.tools {
		var conv, idx int
		var t *Turn
		conv, t, idx = s.pick(h)
		rec.Conversation, rec.Turn = conv, idx
		if t != nil {
			turn = t
		}
	}
	rec.FirstUser, rec.Results = h.firstUser, h.results
	s.record(rec)
	sseHeaders(w)
	sse(w, "", geminiChunk(model, *turn))
}

// geminiChunk is one GenerateContentResponse answering turn.
func geminiChunk(model string, turn Turn) map[string]any {
	part := map[string]any{"text": turn.Text}
	if turn.Tool != "" {
		args := turn.Input
		if args == nil {
			args = map[string]any{}
		}
		part = map[string]any{"functionCall": map[string]any{"id": turn.ID, "name": turn.Tool, "args": args}}
	}
	u := turn.Usage
	return map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": []any{part}}}},
		"usageMetadata": map[string]int{"promptTokenCount": u.Input + u.CacheRead, "cachedContentTokenCount": u.CacheRead,
			"candidatesTokenCount": u.Output, "totalTokenCount": u.Input + u.CacheRead + u.Output},
		"modelVersion": model,
	}
}
