package agenttest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// post sends body to the stand-in and returns the SSE events' names (or
// data "type" fields for data-only streams) and data objects, or the JSON
// answer as one data object.
func post(t *testing.T, url, body string) (names []string, datas []map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var d map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
			t.Fatal(err)
		}
		return nil, []map[string]any{d}
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, ev)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var d map[string]any
			if err := json.Unmarshal([]byte(data), &d); err != nil {
				t.Fatalf("data %q: %v", data, err)
			}
			datas = append(datas, d)
		}
	}
	return names, datas
}

// TestMessagesAPI: the Anthropic stand-in picks the conversation by the
// first user message and the turn by the assistant messages so far, streams
// Claude Code's event sequence with the scripted usage, records tool
// results, and answers side requests (no tools) with text.
func TestMessagesAPI(t *testing.T) {
	s := NewMessagesAPI(t, Script{
		{Match: "SUB-7", Turns: []Turn{{Text: "sub says hi"}}},
		{Match: "MAIN-7", Turns: []Turn{
			{Tool: "Bash", ID: "toolu_1", Input: map[string]any{"command": "touch marker"}, Usage: Usage{Input: 11, Output: 7, CacheRead: 5}},
		}, Final: "all done"},
	})
	url := s.URL + "/v1/messages"
	tools := `"tools": [{"name": "Bash"}], "stream": true`
	tests := []struct {
		name      string
		body      string
		wantNames []string
		check     func(datas []map[string]any) bool
	}{
		{name: "first turn calls the tool",
			body:      `{"model": "m", ` + tools + `, "messages": [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "MAIN-7 go"}]}]}`,
			wantNames: []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			check: func(d []map[string]any) bool {
				block := d[1]["content_block"].(map[string]any)
				delta := d[2]["delta"].(map[string]any)
				md := d[4]
				return block["type"] == "tool_use" && block["id"] == "toolu_1" && block["name"] == "Bash" &&
					delta["type"] == "input_json_delta" && delta["partial_json"] == `{"command":"touch marker"}` &&
					md["delta"].(map[string]any)["stop_reason"] == "tool_use" && md["usage"].(map[string]any)["output_tokens"] == 7.0 &&
					d[0]["message"].(map[string]any)["usage"].(map[string]any)["cache_read_input_tokens"] == 5.0
			}},
		{name: "after the tool result, the final text",
			body: `{"model": "m", ` + tools + `, "messages": [{"role": "user", "content": "MAIN-7 go"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]},
				{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "denied: frozen"}]}]}]}`,
			wantNames: []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			check: func(d []map[string]any) bool {
				return d[2]["delta"].(map[string]any)["text"] == "all done" && d[4]["delta"].(map[string]any)["stop_reason"] == "end_turn"
			}},
		{name: "a sub-agent's conversation",
			body:      `{"model": "m", ` + tools + `, "messages": [{"role": "user", "content": "SUB-7: do it"}]}`,
			wantNames: []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"},
			check:     func(d []map[string]any) bool { return d[2]["delta"].(map[string]any)["text"] == "sub says hi" }},
		{name: "a side request without tools gets text, not a turn",
			body:  `{"model": "m", "messages": [{"role": "user", "content": "MAIN-7 go"}]}`,
			check: func(d []map[string]any) bool { return d[0]["content"].([]any)[0].(map[string]any)["text"] == "ok" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names, datas := post(t, url, tc.body)
			if !slices.Equal(names, tc.wantNames) || !tc.check(datas) {
				t.Fatalf("events %v\n%v", names, datas)
			}
		})
	}
	tr, ok := s.Result("toolu_1")
	if !ok || tr.Content != "denied: frozen" || !tr.IsError {
		t.Fatalf("recorded result %+v %v", tr, ok)
	}
	if got := s.Answered(1); got != 2 {
		t.Errorf("main conversation answered %d times, want 2", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := s.WaitResult(ctx, "toolu_1"); err != nil {
		t.Error(err)
	}
	if _, err := s.WaitResult(ctx, "toolu_never"); err == nil {
		t.Error("WaitResult of a call never made returned no error")
	}
}

// TestResponsesAPI: the OpenAI stand-in streams a function_call turn, then
// the final message once a function_call is in the input, and records the
// function_call_output.
func TestResponsesAPI(t *testing.T) {
	s := NewResponsesAPI(t, Script{{Match: "MAIN-7", Turns: []Turn{
		{Tool: "spawn_agent", Namespace: "multi_agent_v1", ID: "call_1", Input: map[string]any{"message": "hi"}, Usage: Usage{Input: 3, Output: 2}},
	}}})
	url := s.URL + "/v1/responses"
	user := `{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
		{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "MAIN-7 go"}]}`
	names, d := post(t, url, `{"model": "m", "tools": [{}], "input": [`+user+`]}`)
	want := []string{"response.created", "response.output_item.added", "response.function_call_arguments.done", "response.output_item.done", "response.completed"}
	item := d[3]["item"].(map[string]any)
	usage := d[4]["response"].(map[string]any)["usage"].(map[string]any)
	if !slices.Equal(names, want) || item["call_id"] != "call_1" || item["name"] != "spawn_agent" ||
		item["namespace"] != "multi_agent_v1" || item["arguments"] != `{"message":"hi"}` || usage["output_tokens"] != 2.0 {
		t.Fatalf("tool turn: %v\n%v", names, d)
	}
	names, d = post(t, url, `{"model": "m", "tools": [{}], "input": [`+user+`, {"type": "function_call", "call_id": "call_1", "name": "spawn_agent"},
		{"type": "function_call_output", "call_id": "call_1", "output": "agent 42"}]}`)
	item = d[3]["item"].(map[string]any)
	if item["type"] != "message" || item["content"].([]any)[0].(map[string]any)["text"] != "done" {
		t.Fatalf("final turn: %v\n%v", names, d)
	}
	if tr, ok := s.Result("call_1"); !ok || tr.Content != "agent 42" {
		t.Fatalf("recorded result %+v", tr)
	}
}

// TestGeminiAPI: the Gemini stand-in answers streamGenerateContent with a
// functionCall, then the final text after a model turn, records the
// functionResponse, and answers generateContent side requests with JSON.
func TestGeminiAPI(t *testing.T) {
	s := NewGeminiAPI(t, Script{{Match: "MAIN-7", Turns: []Turn{
		{Tool: "run_shell_command", ID: "g1", Input: map[string]any{"command": "ls"}, Usage: Usage{Input: 4, Output: 1}},
	}}})
	url := s.URL + "/v1beta/models/gem:streamGenerateContent?alt=sse"
	_, d := post(t, url, `{"tools": [{}], "contents": [{"role": "user", "parts": [{"text": "MAIN-7 go"}]}]}`)
	part := d[0]["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	fc, _ := part["functionCall"].(map[string]any)
	if len(d) != 1 || fc["name"] != "run_shell_command" || fc["args"].(map[string]any)["command"] != "ls" ||
		d[0]["usageMetadata"].(map[string]any)["candidatesTokenCount"] != 1.0 {
		t.Fatalf("tool turn: %v", d)
	}
	_, d = post(t, url, `{"tools": [{}], "contents": [{"role": "user", "parts": [{"text": "MAIN-7 go"}]},
		{"role": "model", "parts": [{"functionCall": {"name": "run_shell_command"}}]},
		{"role": "user", "parts": [{"functionResponse": {"id": "g1", "name": "run_shell_command", "response": {"output": "a b"}}}]}]}`)
	part = d[0]["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if part["text"] != "done" {
		t.Fatalf("final turn: %v", d)
	}
	if tr, ok := s.Result("g1"); !ok || tr.Name != "run_shell_command" || tr.Content != `{"output": "a b"}` {
		t.Fatalf("recorded result %+v", tr)
	}
	_, d = post(t, s.URL+"/v1beta/models/gem:generateContent", `{"contents": []}`)
	if _, ok := d[0]["candidates"]; !ok {
		t.Fatalf("side request: %v", d)
	}
}
