package agents

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// reportedTokens is the tokens Claude Code's own stream-json result line
// reports (modelUsage, summed over models) in a run's stdout.
func reportedTokens(t *testing.T, stdout string) core.Tokens {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Type       string `json:"type"`
			ModelUsage map[string]struct {
				In  int64 `json:"inputTokens"`
				Out int64 `json:"outputTokens"`
				CW  int64 `json:"cacheCreationInputTokens"`
				CR  int64 `json:"cacheReadInputTokens"`
			} `json:"modelUsage"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "result" {
			continue
		}
		var sum core.Tokens
		for _, m := range l.ModelUsage {
			sum = sum.Add(core.Tokens{Input: m.In, Output: m.Out, CacheWrite: m.CW, CacheRead: m.CR})
		}
		return sum
	}
	t.Fatalf("no result line in the run's stdout:\n%s", stdout)
	return core.Tokens{}
}

// sessionUsage is `clawpit usage --json --by session`'s lines: session id
// → tokens.
func (g *agentGate) usageBy(by string) map[string]core.Tokens {
	g.t.Helper()
	var rep struct {
		Lines []struct {
			Key    string      `json:"key"`
			Tokens core.Tokens `json:"tokens"`
		} `json:"lines"`
	}
	decode(g.t, g.cli.OK("--json", "usage", "--since", "0s", "--by", by), &rep)
	out := map[string]core.Tokens{}
	for _, l := range rep.Lines {
		out[l.Key] = l.Tokens
	}
	return out
}

// TestClaudeUsageMatchesResult: a run whose stand-in model reports known
// usage numbers gives, in clawpit, exactly the tokens Claude Code's own
// result line reports (counted from its transcript on Stop and SessionEnd).
func TestClaudeUsageMatchesResult(t *testing.T) {
	const callID = "toolu_agents_usage_read_1"
	g := newClaudeGate(t, "1m", nil)
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("usage notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.SetScript(agenttest.Script{{Match: "USAGE-MAIN", Turns: []agenttest.Turn{
		{Tool: "Read", ID: callID, Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 1200, Output: 345, CacheRead: 5000, CacheWrite: 678}},
		{Tool: "Read", ID: callID + "_2", Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 31, Output: 42, CacheRead: 7000, CacheWrite: 9}},
	}}})
	r := finish(t, g.start("USAGE-MAIN: read the notes twice"))
	want := reportedTokens(t, r.Stdout)
	if want.Total() < 1200+345+5000+678 {
		t.Fatalf("Claude Code reports %+v: the stand-in's usage did not reach it, the test could not fail", want)
	}
	got := g.usageBy("session")
	if len(got) != 1 {
		t.Fatalf("usage by session %+v, want one session", got)
	}
	for id, tok := range got {
		if tok != want {
			t.Errorf("session %s: clawpit counted %+v, Claude Code's result line says %+v", id, tok, want)
		}
	}
}

// TestClaudeUsageSubagent: a sub-agent's tokens are its run's (counted from
// its own transcript on SubagentStop) and its session's, and the session's
// total is still what Claude Code's result line reports.
func TestClaudeUsageSubagent(t *testing.T) {
	const agentCall, subRead = "toolu_agents_usage_agent_1", "toolu_agents_usage_sub_read_1"
	g := newClaudeGate(t, "1m", nil)
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("sub-agent notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	subUsage := agenttest.Usage{Input: 777, Output: 88, CacheRead: 9999, CacheWrite: 111}
	g.srv.SetScript(agenttest.Script{
		{Match: "SUBAGENT-USAGE", Turns: []agenttest.Turn{{Tool: "Read", ID: subRead, Input: map[string]any{"file_path": file}, Usage: subUsage}}, Final: "sub-agent done"},
		{Match: "USAGE-MAIN", Turns: []agenttest.Turn{{Tool: "Agent", ID: agentCall, Input: map[string]any{
			"description": "read the notes", "subagent_type": "general-purpose",
			"prompt": "SUBAGENT-USAGE: read the notes"}, Usage: agenttest.Usage{Input: 1000, Output: 10, CacheRead: 20, CacheWrite: 30}}}},
	})
	r := finish(t, g.start("USAGE-MAIN: delegate reading the notes"))
	want := reportedTokens(t, r.Stdout)
	runs := g.usageBy("run")
	if len(runs) != 1 {
		t.Fatalf("usage by run %+v, want the sub-agent's run\nstdout:\n%s", runs, r.Stdout)
	}
	wantRun := core.Tokens{Input: int64(subUsage.Input), Output: int64(subUsage.Output), CacheWrite: int64(subUsage.CacheWrite), CacheRead: int64(subUsage.CacheRead)}
	for id, tok := range runs {
		if tok != wantRun {
			t.Errorf("run %s: %+v, the sub-agent's stand-in reported %+v", id, tok, wantRun)
		}
	}
	for id, tok := range g.usageBy("session") {
		if tok != want {
			t.Errorf("session %s: clawpit counted %+v, Claude Code's result line says %+v", id, tok, want)
		}
	}
}

// TestClaudeBudgetGatesNextCall: with a session budget of 20,000 tokens and
// the action gate, a turn whose first answer spends 25,000 (counted from
// the transcript before the next tool call is decided, within the one
// turn, with no Stop between) has its next call — a Read, outside the gate
// regex — wait in clawpit with the reason; approved, the run finishes.
func TestClaudeBudgetGatesNextCall(t *testing.T) {
	const callID = "toolu_agents_budget_read_1"
	g := newClaudeGate(t, "1m", nil)
	g.cli.OK("budget", "set", "--session-tokens", "20000", "--action", "gate")
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("budget notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.srv.SetScript(agenttest.Script{{Match: "BUDGET-MAIN", Turns: []agenttest.Turn{
		{Tool: "Read", ID: callID, Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 20000, Output: 5000}},
		{Tool: "Read", ID: callID + "_2", Input: map[string]any{"file_path": file}, Usage: agenttest.Usage{Input: 10, Output: 10}},
	}}})
	p := g.start("BUDGET-MAIN: read the notes twice")
	// The first call's own answer may already be in the transcript when
	// its PreToolUse is decided: then it waits too. Either way the second
	// one must.
	deadline := time.Now().Add(approvalWait)
	var second core.Approval
	for second.ID == "" && time.Now().Before(deadline) {
		for _, a := range g.approvals() {
			if a.Status != core.ApprovalPending {
				continue
			}
			if !strings.HasPrefix(a.Rationale, "over budget: session over its budget of 20,000 tokens: ") {
				t.Fatalf("approval %+v: rationale does not say the budget", a)
			}
			g.cli.OK("approval", "approve", a.ID)
			if a.ToolUseID == callID+"_2" {
				second = a
			}
		}
		select {
		case <-p.Done():
			if second.ID == "" {
				t.Fatalf("the run ended without its second call waiting:\n%s\napprovals %+v", p.Wait(), g.approvals())
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	if second.ID == "" {
		t.Fatalf("no pending approval for the second call; approvals %+v", g.approvals())
	}
	finish(t, p)
	var ns []core.Notification
	decode(t, g.cli.OK("--json", "notifications"), &ns)
	alerts := 0
	for _, n := range ns {
		if n.Kind == core.NotifyBudgetExceeded {
			alerts++
		}
	}
	if alerts != 1 {
		t.Errorf("%d budget alerts, want 1: %+v", alerts, ns)
	}
}

// TestClaudeRunBudgetGatesSubagent: with a run budget of 20,000 tokens and
// the action gate, a sub-agent whose first answer spends 25,000 has its
// next call — a Read, outside the gate regex — wait in clawpit with the
// run's reason, though Claude Code names the sub-agent's own transcript
// only at SubagentStop: clawpit counts it before each of the sub-agent's
// calls from the file beside the session's transcript. Approved, the run
// finishes, and the run's tokens are the stand-in's, counted once.
func TestClaudeRunBudgetGatesSubagent(t *testing.T) {
	const agentCall, subRead = "toolu_agents_runbudget_agent_1", "toolu_agents_runbudget_sub_read_1"
	g := newClaudeGate(t, "1m", nil)
	g.cli.OK("budget", "set", "--run-tokens", "20000", "--action", "gate")
	file := filepath.Join(g.agent.Work, "notes.txt")
	if err := os.WriteFile(file, []byte("run budget notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, second := agenttest.Usage{Input: 20000, Output: 5000}, agenttest.Usage{Input: 10, Output: 10}
	g.srv.SetScript(agenttest.Script{
		{Match: "SUBAGENT-RUNBUDGET", Turns: []agenttest.Turn{
			{Tool: "Read", ID: subRead, Input: map[string]any{"file_path": file}, Usage: first},
			{Tool: "Read", ID: subRead + "_2", Input: map[string]any{"file_path": file}, Usage: second},
		}, Final: "sub-agent done"},
		{Match: "RUNBUDGET-MAIN", Turns: []agenttest.Turn{{Tool: "Agent", ID: agentCall, Input: map[string]any{
			"description": "read the notes twice", "subagent_type": "general-purpose",
			"prompt": "SUBAGENT-RUNBUDGET: read the notes twice"}}}},
	})
	p := g.start("RUNBUDGET-MAIN: delegate reading the notes")
	// The sub-agent's first answer may already be in its transcript when
	// its first call is decided: then that call waits too. Either way the
	// second one must.
	deadline := time.Now().Add(approvalWait)
	var held core.Approval
	for held.ID == "" && time.Now().Before(deadline) {
		for _, a := range g.approvals() {
			if a.Status != core.ApprovalPending {
				continue
			}
			if a.RunID == "" || !strings.HasPrefix(a.Rationale, "over budget: run over its budget of 20,000 tokens: ") {
				t.Fatalf("approval %+v: not the sub-agent's run over its budget", a)
			}
			g.cli.OK("approval", "approve", a.ID)
			if a.ToolUseID == subRead+"_2" {
				held = a
			}
		}
		select {
		case <-p.Done():
			if held.ID == "" {
				t.Fatalf("the run ended without the sub-agent's second call waiting:\n%s\napprovals %+v", p.Wait(), g.approvals())
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	if held.ID == "" {
		t.Fatalf("no pending approval for the sub-agent's second call; approvals %+v", g.approvals())
	}
	finish(t, p)
	runs := g.usageBy("run")
	want := core.Tokens{Input: int64(first.Input + second.Input), Output: int64(first.Output + second.Output)}
	if len(runs) != 1 {
		t.Fatalf("usage by run %+v, want the sub-agent's run", runs)
	}
	for id, tok := range runs {
		if id != held.RunID || tok != want {
			t.Errorf("run %s: %+v, want run %s with the stand-in's %+v", id, tok, held.RunID, want)
		}
	}
}
