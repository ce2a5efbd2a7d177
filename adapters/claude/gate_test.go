package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// TestGatedEvents: the gated hook reads a decision-worthy payload only from
// an exact PreToolUse in one JSON object without a repeated member.
func TestGatedEvents(t *testing.T) {
	pre := `"session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}`
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"PreToolUse", `{"hook_event_name":"PreToolUse",` + pre + `}`, true},
		{"surrounding whitespace", "\n {\"hook_event_name\":\"PreToolUse\"," + pre + "} \n", true},
		{"unknown event", `{"hook_event_name":"Foo",` + pre + `}`, false},
		{"lower case", `{"hook_event_name":"pretooluse",` + pre + `}`, false},
		{"trailing space", `{"hook_event_name":"PreToolUse ",` + pre + `}`, false},
		{"leading space", `{"hook_event_name":" PreToolUse",` + pre + `}`, false},
		{"escaped NUL", `{"hook_event_name":"PreToolUse\u0000",` + pre + `}`, false},
		{"other event", `{"hook_event_name":"PostToolUse",` + pre + `}`, false},
		{"permission request", `{"hook_event_name":"PermissionRequest",` + pre + `}`, false},
		{"duplicate, PreToolUse last", `{"hook_event_name":"PostToolUse","hook_event_name":"PreToolUse",` + pre + `}`, false},
		{"duplicate, PreToolUse first", `{"hook_event_name":"PreToolUse","hook_event_name":"PostToolUse",` + pre + `}`, false},
		{"duplicate elsewhere", `{"hook_event_name":"PreToolUse","session_id":"a",` + pre + `}`, false},
		{"duplicate nested", `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf /"}}`, false},
		{"duplicate in array", `{"hook_event_name":"PreToolUse",` + pre + `,"x":[{"a":1,"a":2}]}`, false},
		{"event a number", `{"hook_event_name":1,` + pre + `}`, false},
		{"event null", `{"hook_event_name":null,` + pre + `}`, false},
		{"event empty", `{"hook_event_name":"",` + pre + `}`, false},
		{"missing event", `{` + pre + `}`, false},
		{"array", `[{"hook_event_name":"PreToolUse"}]`, false},
		{"string", `"PreToolUse"`, false},
		{"null", `null`, false},
		{"empty", ``, false},
		{"truncated", `{"hook_event_name":"PreToolUse",` + pre, false},
		{"two objects", `{"hook_event_name":"PreToolUse",` + pre + `}{}`, false},
		{"garbage", "\x00\xff\xfePreToolUse", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, d, err := ReadGated(context.Background(), strings.NewReader(tc.in))
			if tc.ok {
				if err != nil || d != nil || p == nil || p.HookEventName != EventPreToolUse {
					t.Fatalf("got %+v %+v %v", p, d, err)
				}
				return
			}
			if err == nil || p != nil || d == nil || d.Permission != Deny || !errors.Is(err, core.ErrInvalid) {
				t.Fatalf("got %+v %+v %v, want a deny", p, d, err)
			}
			var out struct {
				HookSpecificOutput struct {
					HookEventName, PermissionDecision string
				}
			}
			if json.Unmarshal(d.JSON(), &out) != nil || out.HookSpecificOutput.HookEventName != EventPreToolUse ||
				out.HookSpecificOutput.PermissionDecision != Deny {
				t.Fatalf("answer %s", d.JSON())
			}
		})
	}
}

func TestReadGatedTooLarge(t *testing.T) {
	big := `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Write","tool_input":{"content":"` +
		strings.Repeat("x", MaxPayloadBytes) + `"}}`
	if _, d, err := ReadGated(context.Background(), strings.NewReader(big)); d == nil || !errors.Is(err, ErrPayloadTooLarge) {
		t.Fatalf("over-size payload: %v", err)
	}
}

// TestReadPayloadWithin: a stdin never closed is given up at the deadline,
// even with a whole payload written.
func TestReadPayloadWithin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.Write([]byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash"}`))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, d, err := ReadGated(ctx, r)
	if !errors.Is(err, ErrPayloadTimeout) || d == nil || d.Permission != Deny {
		t.Fatalf("got %v %+v", err, d)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("gave up after %s", took)
	}
	// Closed in time: read.
	p, err := ReadPayloadWithin(context.Background(), io.MultiReader(strings.NewReader(`{"hook_event_name":"Stop",`), strings.NewReader(`"session_id":"s"}`)))
	if err != nil || p.HookEventName != EventStop {
		t.Fatalf("got %+v %v", p, err)
	}
}

func TestKnownEvent(t *testing.T) {
	for _, ev := range Events {
		if !KnownEvent(ev) || KnownEvent(strings.ToLower(ev)) || KnownEvent(ev+" ") {
			t.Fatalf("KnownEvent(%q)", ev)
		}
	}
}

func TestDurationCaps(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		ok     bool
		gateTO int
	}{
		{time.Second, true, 31},
		{10 * time.Minute, true, 630},
		{MaxApprovalTimeout, true, 2073630},
		{MaxApprovalTimeout + time.Second, false, MaxHookTimeoutSeconds},
		{2562047*time.Hour + 47*time.Minute + 16*time.Second, false, MaxHookTimeoutSeconds},
		{1<<63 - 1, false, MaxHookTimeoutSeconds},
		{0, false, 30},
		{-time.Second, false, 29},
	} {
		err := CheckApprovalTimeout("--approval-timeout", tc.d)
		// The value and the cap read as the flag takes them ("600h", not
		// Go's "600h0m0s"; "576h", not "24d").
		if (err == nil) != tc.ok || (err != nil && (!strings.Contains(err.Error(), "--approval-timeout "+termtext.FlagDuration(tc.d)+":") ||
			!strings.Contains(err.Error(), "at most 576h ") || strings.Contains(err.Error(), "0m0s"))) {
			t.Errorf("CheckApprovalTimeout(%s) = %v", tc.d, err)
		}
		if got := GateTimeoutSeconds(tc.d); got != tc.gateTO || got > MaxHookTimeoutSeconds {
			t.Errorf("GateTimeoutSeconds(%s) = %d, want %d", tc.d, got, tc.gateTO)
		}
	}
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{
		{time.Millisecond, true}, {MaxRunInactivity, true}, {MaxRunInactivity + 1, false}, {0, false}, {time.Microsecond, false}, {-time.Hour, false},
	} {
		if err := CheckRunInactivity("--run-inactivity", tc.d); (err == nil) != tc.ok {
			t.Errorf("CheckRunInactivity(%s) = %v", tc.d, err)
		}
	}
	if MaxHookTimeoutSeconds*1000 > 1<<31-1 || GateTimeoutSeconds(MaxApprovalTimeout) > MaxHookTimeoutSeconds {
		t.Fatal("the gated hook's timeout overflows Claude Code's timer")
	}
}

// TestInstallRefusesTimeouts: nothing is written for an approval timeout
// out of range.
func TestInstallRefusesTimeouts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	orig := []byte("{\n  \"model\": \"opus\"\n}\n")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{-time.Second, MaxApprovalTimeout + time.Second, 2562047*time.Hour + 47*time.Minute + 16*time.Second} {
		_, err := Install(InstallOptions{Settings: path, Binary: "/bin/clawpit", DB: "/r.db", ApprovalTimeout: d})
		if !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("Install with %s: %v", d, err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, orig) {
			t.Fatalf("settings changed by a refused install:\n%s", b)
		}
	}
}

// EventDocs documents exactly the events clawpit installs, each with
// session_id among its fields.
func TestEventDocsCoverEvents(t *testing.T) {
	var names []string
	for _, e := range EventDocs() {
		names = append(names, e.Name)
		if !slices.Contains(e.Fields, "session_id") || e.Records == "" {
			t.Errorf("%s: fields %v, records %q", e.Name, e.Fields, e.Records)
		}
	}
	if want := slices.Sorted(slices.Values(Events)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Fatalf("EventDocs names %v, want %v", names, want)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(SamplePayload), &p); err != nil || p["hook_event_name"] != EventPreToolUse {
		t.Fatalf("SamplePayload: %v %v", p, err)
	}
}

// TestPassPrintsNothing: a pass (a tool outside the gate, under budget)
// answers with silence, which Claude Code takes as no decision; an empty
// permissionDecision it refuses (and, with onFailure block, blocks).
func TestPassPrintsNothing(t *testing.T) {
	if b := (Decision{}).JSON(); len(b) != 0 {
		t.Fatalf("pass printed %q", b)
	}
	if b := (Decision{Permission: Allow}).JSON(); len(b) == 0 {
		t.Fatal("allow printed nothing")
	}
}
