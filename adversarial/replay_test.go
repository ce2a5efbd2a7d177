package adversarial

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/e2e"
)

// replayPayload is a Claude Code PreToolUse payload (the shape of
// adapters/claude/testdata/pre_tool_use_*.json) with toolInput spliced in
// as given, so a test controls its exact bytes.
func replayPayload(session, tool, toolUseID, toolInput string) string {
	return `{"session_id":` + replayQuote(session) + `,"cwd":"/home/dev/shop","permission_mode":"default",` +
		`"hook_event_name":"PreToolUse","tool_name":` + replayQuote(tool) + `,"tool_input":` + toolInput +
		`,"tool_use_id":` + replayQuote(toolUseID) + `}`
}

func replayQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// replayHook runs the gated hook with payload on stdin and returns its
// permissionDecision ("" when it printed none) and the whole output.
func replayHook(t *testing.T, c *e2e.CLI, timeout, payload string) (string, e2e.Out) {
	t.Helper()
	o := c.RunIn(strings.NewReader(payload), "hook", "--gated", "--approval-timeout", timeout)
	var d struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if strings.TrimSpace(o.Stdout) != "" {
		if err := json.Unmarshal([]byte(o.Stdout), &d); err != nil {
			t.Fatalf("hook printed no decision: %v\n%s", err, o)
		}
	}
	return d.HookSpecificOutput.PermissionDecision, o
}

// replayApprovals lists every approval of c's registry.
func replayApprovals(t *testing.T, c *e2e.CLI) []core.Approval {
	t.Helper()
	var aps []core.Approval
	if err := json.Unmarshal([]byte(c.OK("--json", "approval", "list")), &aps); err != nil {
		t.Fatal(err)
	}
	return aps
}

// TestReplayAnswerBelongsToOneCall: an operator approves (once) tool call
// toolu_A, Bash `ls` in session s1. The same tool_use_id arriving with
// another session, tool or input is another call: it must not be allowed
// from the record but asked anew (here it expires unanswered: deny). Only
// the very same call (session, tool and input, whatever the key order or
// spacing of its JSON) is answered from the record.
func TestReplayAnswerBelongsToOneCall(t *testing.T) {
	c := newCLI(t)
	c.OK("session", "open", "s1")
	const lsInput = `{"command":"ls","description":"list files"}`
	done := make(chan string, 1)
	go func() {
		d, o := replayHook(t, c, "1m", replayPayload("s1", "Bash", "toolu_A", lsInput))
		done <- d + "\n" + o.String()
	}()
	var first core.Approval
	deadline := time.Now().Add(15 * time.Second)
	for first.ID == "" && time.Now().Before(deadline) {
		for _, a := range replayApprovals(t, c) {
			if a.ToolUseID == "toolu_A" {
				first = a
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if first.ID == "" {
		t.Fatal("the gated hook recorded no approval for toolu_A")
	}
	c.OK("approval", "approve", first.ID, "--scope", "once")
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "allow\n") {
			t.Fatalf("approved call: %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hook did not answer after the approval")
	}

	others := []struct{ name, payload, tool, command string }{
		{"another session, tool and input", replayPayload("s2", "Write", "toolu_A",
			`{"file_path":"/etc/passwd","content":"root::0:0::/root:/bin/sh\n"}`), "Write", "/etc/passwd"},
		{"same session, another input", replayPayload("s1", "Bash", "toolu_A",
			`{"command":"rm -rf ~","description":"list files"}`), "Bash", "rm -rf ~"},
		{"same session, another tool", replayPayload("s1", "Write", "toolu_A",
			`{"command":"ls","description":"list files"}`), "Write", ""},
		{"same session, input with one more field", replayPayload("s1", "Bash", "toolu_A",
			`{"command":"ls","description":"list files","run_in_background":true}`), "Bash", "ls"},
	}
	for _, o := range others {
		before := len(replayApprovals(t, c))
		d, out := replayHook(t, c, "1s", o.payload)
		if d == "allow" {
			t.Fatalf("%s: allowed from toolu_A's record:\n%s", o.name, out)
		}
		aps := replayApprovals(t, c)
		if len(aps) != before+1 {
			t.Fatalf("%s: %d approvals after the call, want a new one (%d before)\n%s", o.name, len(aps), before, out)
		}
		if n := aps[0]; n.ID == first.ID || n.Tool != o.tool || (o.command != "" && n.Command != o.command) ||
			n.Status == core.ApprovalApproved {
			t.Fatalf("%s: newest approval %+v, want a new undecided one for %s %q", o.name, n, o.tool, o.command)
		}
	}

	// The very same call, its input re-spaced and its keys in another
	// order: the same canonical input, answered from the record at once.
	before := len(replayApprovals(t, c))
	start := time.Now()
	d, out := replayHook(t, c, "1m", replayPayload("s1", "Bash", "toolu_A",
		"{ \"description\" : \"list files\",\n  \"command\": \"ls\" }"))
	if d != "allow" || time.Since(start) > 10*time.Second {
		t.Fatalf("the same call again: want allow from the record at once, got %q after %s\n%s", d, time.Since(start), out)
	}
	if n := len(replayApprovals(t, c)); n != before {
		t.Fatalf("the same call again made a new approval (%d, was %d)", n, before)
	}

	// The CLI's request path (no tool_use_id) is unchanged.
	id := c.OK("approval", "request", "--session", "s1", "--tool", "Bash", "--command", "make test")
	if id == "" {
		t.Fatal("approval request printed no id")
	}
}
