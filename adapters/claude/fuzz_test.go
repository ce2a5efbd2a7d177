package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadPayload: any bytes are a payload or an error, never a panic; the
// gated reader never lets anything through but an exact PreToolUse whose
// object names hook_event_name once, and its answer is always a deny.
func FuzzReadPayload(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash"}`,
		`{"hook_event_name":"PostToolUse","hook_event_name":"PreToolUse"}`,
		`{"hook_event_name":"PreToolUse "}`, `{"hook_event_name":"pretooluse"}`, `{"hook_event_name":1}`,
		`[]`, `null`, `{"a":{"b":{"b":1,"b":2}}}`, "\xff\xfe", `{"hook_event_name":"PreToolUse"`,
		`{"hook_event_name":"Pre\u0054oolUse"}`, `{"hook_event_name":"PreToolUse","HOOK_EVENT_NAME":"Stop"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(data)
		if (p == nil) == (err == nil) {
			t.Fatalf("payload %v and error %v", p, err)
		}
		gp, d, gerr := ReadGated(context.Background(), bytes.NewReader(data))
		if gerr != nil {
			if gp != nil || d == nil || d.Permission != Deny {
				t.Fatalf("refused payload answered %+v", d)
			}
			if !json.Valid(d.JSON()) {
				t.Fatalf("answer is not JSON: %q", d.JSON())
			}
			return
		}
		if d != nil || gp.HookEventName != EventPreToolUse {
			t.Fatalf("gated reader let %q through", gp.HookEventName)
		}
		// Independently: one object whose hook_event_name is exactly
		// PreToolUse, and no second member of that name.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("accepted a payload encoding/json refuses: %v", err)
		}
		var ev string
		if json.Unmarshal(m["hook_event_name"], &ev) != nil || ev != EventPreToolUse {
			t.Fatalf("accepted hook_event_name %s", m["hook_event_name"])
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.Token() // '{'
		n := 0
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatalf("accepted bad JSON: %v", err)
			}
			if k == "hook_event_name" {
				n++
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("accepted bad JSON: %v", err)
			}
		}
		if n != 1 {
			t.Fatalf("accepted %d hook_event_name members", n)
		}
	})
}
