package e2e

// Budgets (What it costs) end to end through the binary and the hooks
// `hooks install` writes: a session whose counted tokens cross its budget
// raises one alert, and with the action gate its next tool call — even one
// outside the gate regex — waits for an operator, saying why, until the
// budget is raised.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// transcriptLine is a Claude Code transcript line: one assistant message of
// model with in input tokens.
func transcriptLine(id, model string, in int64) string {
	return fmt.Sprintf(`{"type":"assistant","isSidechain":false,"message":{"id":%q,"type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}},"uuid":"u"}`+"\n", id, model, in)
}

func TestBudgetGatesTheNextToolCall(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	appendLine := func(s string) {
		t.Helper()
		f, err := os.OpenFile(transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	if out := c.ok("budget", "set", "--session-cost", "1", "--action", "gate"); !strings.Contains(out, "session $1.00") {
		t.Fatalf("budget set: %s", out)
	}
	r.quiet(fixture(t, "session_start", nil))
	read := func(id string) []byte {
		return fixture(t, "pre_tool_use_bash", map[string]any{"tool_name": "Read", "tool_use_id": id,
			"tool_input": map[string]any{"file_path": "/home/dev/shop/README.md"}})
	}
	stop := fixture(t, "stop", map[string]any{"transcript_path": transcript})

	// Under budget: a tool outside the gate passes (no answer, the agent's
	// own rules decide) and nothing is recorded for it.
	appendLine(transcriptLine("msg_1", "claude-sonnet-4-5", 200_000)) // $0.60
	r.quiet(stop)
	if h := r.one(read("toolu_r1")); h.code != 0 || h.stdout != "" {
		t.Fatalf("Read under budget: %s", h)
	}
	var aps []core.Approval
	if c.json(&aps, "approval", "list"); len(aps) != 0 {
		t.Fatalf("Read under budget left approvals: %+v", aps)
	}

	// The turn that crosses it: one alert.
	appendLine(transcriptLine("msg_2", "claude-sonnet-4-5", 200_000)) // $1.20 in all
	r.quiet(stop)
	const why = "session over its budget of $1.00: $1.20 spent"
	alerts := func() int {
		var ns []core.Notification
		c.json(&ns, "notifications")
		n := 0
		for _, x := range ns {
			if x.Kind == core.NotifyBudgetExceeded {
				n++
				if !strings.HasPrefix(x.Text, why) || x.Session != fixtureSession {
					t.Errorf("alert %+v", x)
				}
			}
		}
		return n
	}
	if n := alerts(); n != 1 {
		t.Fatalf("%d budget alerts, want 1", n)
	}

	// Over budget: the next tool call waits, though Read is outside the
	// gate, and says why; the operator approves it.
	ch := r.async(read("toolu_r2"))
	a := pending(t, c, "toolu_r2")
	if a.Status != core.ApprovalPending || !strings.HasPrefix(a.Rationale, "over budget: "+why) {
		t.Fatalf("approval over budget: %+v", a)
	}
	c.ok("approval", "approve", a.ID)
	if h := answered(t, ch); h.decision != "allow" {
		t.Fatalf("approved: %s", h)
	}
	// Another turn over the budget alerts no more.
	appendLine(transcriptLine("msg_3", "claude-sonnet-4-5", 1000))
	r.quiet(stop)
	if n := alerts(); n != 1 {
		t.Fatalf("%d budget alerts after a further count, want 1", n)
	}

	// Raised: the next Read passes at once again.
	c.ok("budget", "raise", fixtureSession, "--cost", "5")
	start := time.Now()
	if h := r.one(read("toolu_r3")); h.code != 0 || h.stdout != "" || time.Since(start) > 10*time.Second {
		t.Fatalf("Read after the raise: %s", h)
	}
	if out := c.ok("budget"); !strings.Contains(out, "raised       session:"+fixtureSession+": $5.00") {
		t.Fatalf("budget: %s", out)
	}
}

// TestUsageSinceCountsTheWindow: `usage --since` sums the tokens counted
// within the window, not every token of a session counted within it.
func TestUsageSinceCountsTheWindow(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	transcript := filepath.Join(t.TempDir(), "s.jsonl")
	stop := fixture(t, "stop", map[string]any{"transcript_path": transcript})
	r.quiet(fixture(t, "session_start", nil))
	count := func(id string, in int64) {
		t.Helper()
		f, err := os.OpenFile(transcript, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(transcriptLine(id, "claude-sonnet-4-5", in))
		f.Close()
		r.quiet(stop)
	}
	input := func(since string) int64 {
		t.Helper()
		var rep struct {
			Total struct {
				Tokens core.Tokens `json:"tokens"`
			} `json:"total"`
		}
		c.json(&rep, "usage", "--since", since)
		return rep.Total.Tokens.Input
	}
	count("msg_1", 1000)
	time.Sleep(1500 * time.Millisecond)
	count("msg_2", 7)
	if got := input("1s"); got != 7 {
		t.Errorf("usage --since 1s: %d input tokens, want 7 (the second turn's)", got)
	}
	if got := input("0s"); got != 1007 {
		t.Errorf("usage --since 0s: %d input tokens, want 1007", got)
	}
}
