package agents

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestClaudeGateOnAskSuggestion: in --gate-on ask mode Claude Code
// 2.1.328's permission_suggestions are recorded on the approval exactly
// (`approval show` lists them). A write outside the working directories
// (touch) is offered addDirectories; approved with it, the hook answers
// allow with it as updatedPermissions, which Claude Code applies: a read in
// that directory (cat) then runs with no approval. Approved once instead,
// the same read asks again (Claude Code asks about a read outside its
// directories too: agents/NOTES.md), and waits in clawpit.
func TestClaudeGateOnAskSuggestion(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	for _, withSuggestion := range []bool{true, false} {
		t.Run("suggestion="+strconv.FormatBool(withSuggestion), func(t *testing.T) {
			testClaudeSuggestion(t, withSuggestion)
		})
	}
}

func testClaudeSuggestion(t *testing.T, withSuggestion bool) {
	const firstID, secondID = "toolu_agents_suggest_first", "toolu_agents_suggest_second"
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "second.txt"), []byte("SECOND-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(outside, "first")
	g := newClaudeGate(t, "1m", agenttest.Script{{Match: "SUGGEST-MAIN", Turns: []agenttest.Turn{
		bash(firstID, "touch "+first), bash(secondID, "cat "+filepath.Join(outside, "second.txt"))}}}, "--gate-on", "ask")
	p := g.start("SUGGEST-MAIN: write, then read, outside")
	a := g.pending(p, "")
	var items []struct {
		Type        string   `json:"type"`
		Directories []string `json:"directories"`
	}
	if err := json.Unmarshal(a.Suggestions, &items); err != nil {
		t.Fatalf("the approval's suggestions %q: %v", a.Suggestions, err)
	}
	n := 0
	for i, it := range items {
		if it.Type == "addDirectories" && slicesHasDir(it.Directories, outside) {
			n = i + 1
		}
	}
	if n == 0 {
		t.Fatalf("no addDirectories suggestion for %s among %s", outside, a.Suggestions)
	}
	show := g.cli.OK("approval", "show", a.ID)
	for i, s := range core.SuggestionList(a.Suggestions) {
		var c bytes.Buffer // `--json approval list` indents it; show prints it as recorded (compact)
		if err := json.Compact(&c, s); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(show, "suggestion "+strconv.Itoa(i+1)+":") || !strings.Contains(show, c.String()) {
			t.Errorf("approval show lacks suggestion %d %s:\n%s", i+1, s, show)
		}
	}
	decided := time.Now()
	if withSuggestion {
		g.cli.OK("approval", "approve", a.ID, "--suggestion", strconv.Itoa(n))
	} else {
		g.cli.OK("approval", "approve", a.ID)
	}
	ranWithin(t, p, first, decided)
	if !withSuggestion {
		// The read asks again: it waits in clawpit; deny it to finish.
		b := g.pending(p, "")
		if b.ID == a.ID || b.Command != "cat "+filepath.Join(outside, "second.txt") {
			t.Fatalf("the second approval is %s %q", b.ID, b.Command)
		}
		g.cli.OK("approval", "deny", b.ID, "--reason", "control run")
		finish(t, p)
		return
	}
	// The read asks nobody: were it to wait, its result would come only at
	// the approval timeout (1 m), past this wait.
	r := waitResult(g, secondID, 30*time.Second)
	if !strings.Contains(r, "SECOND-CONTENT") {
		t.Errorf("the read in the added directory did not run: %q (approvals: %d)", r, len(g.approvals()))
	}
	finish(t, p)
	if aps := g.approvals(); len(aps) != 1 {
		t.Errorf("%d approvals, want 1: the added directory needs no second one", len(aps))
	}
}

// slicesHasDir reports whether dirs holds dir (a trailing slash aside).
func slicesHasDir(dirs []string, dir string) bool {
	for _, d := range dirs {
		if strings.TrimSuffix(d, "/") == strings.TrimSuffix(dir, "/") {
			return true
		}
	}
	return false
}

// waitResult waits up to d for the model API to receive the tool result of
// id, and returns its content ("" when it never came).
func waitResult(g *agentGate, id string, d time.Duration) string {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if tr, ok := g.srv.Result(id); ok {
			return tr.Content
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ""
}
