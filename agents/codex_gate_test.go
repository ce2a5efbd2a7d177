package agents

// The Codex gate end to end: the real Codex CLI 0.169.0 (CLAWPIT_CODEX),
// a plain `codex exec` (no --dangerously-bypass-hook-trust: the hooks run
// because `clawpit hooks install --agent codex` left them trusted) against
// a Responses API stand-in.

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/codex"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
	"github.com/clawpit/clawpit/internal/e2e"
)

// newCodexGate installs clawpit's hooks into a scratch $CODEX_HOME (`hooks
// install --agent codex --config-dir DIR --approval-timeout timeout`, then
// install's further flags) and sets Codex up against a stand-in answering
// script; runs are a plain `codex exec`.
func newCodexGate(t *testing.T, timeout string, script agenttest.Script, install ...string) *agentGate {
	t.Helper()
	agenttest.RequireCLI(t, agenttest.EnvCodex, "@openai/codex")
	srv := agenttest.NewResponsesAPI(t, script)
	g := &agentGate{t: t, cli: e2e.NewCLI(t, bin), srv: srv, agent: agenttest.NewCodex(t, srv.URL)}
	g.cli.OK(append([]string{"hooks", "install", "--agent", "codex", "--config-dir", g.agent.CodexHome(), "--approval-timeout", timeout}, install...)...)
	return g
}

// TestCodexGateTrusted: after `hooks install --agent codex`, `hooks status
// --agent codex` reports every hook trusted and Codex itself agrees
// (`codex app-server` hooks/list); after uninstall nothing is left.
func TestCodexGateTrusted(t *testing.T) {
	g := newCodexGate(t, "1m", nil)
	out := g.cli.OK("hooks", "status", "--agent", "codex", "--config-dir", g.agent.CodexHome())
	if strings.Contains(out, "NOT TRUSTED") || !strings.Contains(out, "7 clawpit hooks") {
		t.Fatalf("hooks status:\n%s", out)
	}
	hs := codexHooksList(t, g.agent)
	if len(hs) != len(codex.Events) {
		t.Fatalf("codex app-server lists %d hooks, want %d: %+v", len(hs), len(codex.Events), hs)
	}
	for _, h := range hs {
		if h.TrustStatus != "trusted" {
			t.Errorf("codex app-server: %s is %q (timeout %d s, hash %s), want trusted", h.Key, h.TrustStatus, h.TimeoutSec, h.CurrentHash)
		}
	}
	// Any change un-trusts a hook: status then fails and says the step.
	hooksPath := filepath.Join(g.agent.CodexHome(), "hooks.json")
	b, err := os.ReadFile(hooksPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooksPath, bytes.Replace(b, []byte(`"timeout": 30`), []byte(`"timeout": 31`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	st := g.cli.Run("hooks", "status", "--agent", "codex", "--config-dir", g.agent.CodexHome())
	if st.Code == 0 || !hasAll(st.String(), "NOT TRUSTED", "clawpit hooks install --agent codex") {
		t.Errorf("status of a changed hook:\n%s", st)
	}
	untrusted := 0
	for _, h := range codexHooksList(t, g.agent) {
		if h.TrustStatus != "trusted" {
			untrusted++
		}
	}
	if untrusted != 1 {
		t.Errorf("codex sees %d untrusted hooks after one changed, want 1", untrusted)
	}
	g.cli.OK("hooks", "install", "--agent", "codex", "--config-dir", g.agent.CodexHome())
	g.cli.OK("hooks", "status", "--agent", "codex", "--config-dir", g.agent.CodexHome())
	g.cli.OK("hooks", "uninstall", "--agent", "codex", "--config-dir", g.agent.CodexHome())
	if hs := codexHooksList(t, g.agent); len(hs) != 0 {
		t.Errorf("after uninstall codex still lists %+v", hs)
	}
}

// TestCodexGateSubagent: a sub-agent (spawn_agent, then wait_agent) asks
// for a gated call; it waits in clawpit bound to the sub-agent's run (its
// agent_id) and runs once approved.
func TestCodexGateSubagent(t *testing.T) {
	const spawnID, waitID, subCall = "call_agents_codex_gspawn", "call_agents_codex_gwait", "call_agents_codex_gsub_1"
	g := newCodexGate(t, "1m", agenttest.Script{
		{Match: "SUBAGENT-TASK", Turns: []agenttest.Turn{execCommand(subCall, "touch sub-marker")}, Final: "sub-agent done"},
		{Match: "CODEX-GSUB", Turns: []agenttest.Turn{
			{Tool: "spawn_agent", Namespace: "multi_agent_v1", ID: spawnID, Input: map[string]any{"message": "SUBAGENT-TASK: touch sub-marker"}},
			{Make: func(results []agenttest.ToolResult) agenttest.Turn {
				var targets []string
				for _, r := range results {
					if m := codexAgentID.FindStringSubmatch(r.Content); r.CallID == spawnID && m != nil {
						targets = append(targets, m[1])
					}
				}
				return agenttest.Turn{Tool: "wait_agent", Namespace: "multi_agent_v1", ID: waitID,
					Input: map[string]any{"targets": targets, "timeout_ms": 60000}}
			}},
		}},
	})
	marker := filepath.Join(g.agent.Work, "sub-marker")
	p := g.start("CODEX-GSUB: delegate to a sub-agent")
	a := g.pending(p, subCall)
	var runs []core.Run
	decode(t, g.cli.OK("--json", "run", "list"), &runs)
	if len(runs) == 0 || a.RunID == "" || a.RunID != runs[0].RunID {
		t.Errorf("the sub-agent's approval is bound to run %q; runs %+v", a.RunID, runs)
	}
	decided := time.Now()
	g.cli.OK("approval", "approve", a.ID)
	ranWithin(t, p, marker, decided)
	finish(t, p)
	if tr := result(t, g.srv, waitID); !strings.Contains(tr.Content, "sub-agent done") {
		t.Errorf("wait_agent's result %q lacks the sub-agent's answer", tr.Content)
	}
}

// TestCodexUngatedRunsAtOnce: a read-only tool outside the gate (get_goal)
// runs at once with no approval recorded.
func TestCodexUngatedRunsAtOnce(t *testing.T) {
	const callID = "call_agents_codex_ungated_1"
	g := newCodexGate(t, "1m", agenttest.Script{{Match: "CODEX-UNGATED", Turns: []agenttest.Turn{
		{Tool: "get_goal", ID: callID, Input: map[string]any{}}}}})
	r := finish(t, g.start("CODEX-UNGATED: read the goal"))
	tr := result(t, g.srv, callID)
	t.Logf("get_goal result: %q (codex finished in %s)", tr.Content, r.Elapsed.Round(time.Millisecond))
	if aps := g.approvals(); len(aps) != 0 {
		t.Fatalf("an ungated tool recorded approvals: %+v", aps)
	}
	g.wantSessionAgent("codex")
}

// TestCodexGateInteractiveShell: an interactive session — a bare shell, or
// any command with "tty": true (found in the rollout by call id, since the
// payload shows only the command) — waits in clawpit with the warning that
// what is typed into it is not gated, in both gate modes (under --gate-on
// ask, with `codex exec --approve-for-me`, Codex itself would not ask);
// denied, it never opens, so the write_stdin that follows has nothing to
// type into and its command never runs.
func TestCodexGateInteractiveShell(t *testing.T) {
	for _, mode := range []string{"tool", "ask"} {
		for _, cmd := range []string{"bash", "cat"} {
			t.Run(mode+"/"+cmd, func(t *testing.T) { codexInteractive(t, cmd, mode) })
		}
	}
}

func codexInteractive(t *testing.T, cmd, gateOn string) {
	const openID, typeID = "call_agents_codex_gtty_1", "call_agents_codex_gtty_2"
	g := newCodexGate(t, "1m", agenttest.Script{{Match: "CODEX-GTTY", Turns: []agenttest.Turn{
		{Tool: "exec_command", ID: openID, Input: map[string]any{"cmd": cmd, "tty": true, "yield_time_ms": 500}},
		{Make: func(results []agenttest.ToolResult) agenttest.Turn {
			n := 0
			for _, r := range results {
				if m := codexSessionID.FindStringSubmatch(r.Content); r.CallID == openID && m != nil {
					n, _ = strconv.Atoi(m[1])
				}
			}
			return agenttest.Turn{Tool: "write_stdin", ID: typeID, Input: map[string]any{
				"session_id": n, "chars": "touch tty-marker\n", "yield_time_ms": 1000}}
		}},
	}}}, "--gate-on", gateOn)
	if gateOn == "ask" {
		g.args = []string{"--approve-for-me"}
	}
	p := g.start("CODEX-GTTY: open a shell and type into it")
	a := g.pending(p, openID)
	if !strings.Contains(a.Rationale, "WITHOUT clawpit's gate") {
		t.Errorf("the interactive shell's approval carries no warning: rationale %q", a.Rationale)
	}
	g.cli.OK("approval", "deny", a.ID, "--reason", "no interactive shells")
	finish(t, p)
	if _, ok := waitFile(filepath.Join(g.agent.Work, "tty-marker"), 2*time.Second); ok {
		t.Fatal("write_stdin ran a command in a shell the operator denied")
	}
	t.Logf("open: %q\ntype: %q", result(t, g.srv, openID).Content, result(t, g.srv, typeID).Content)
}

// TestCodexGateOnAsk: with `hooks install --agent codex --gate-on ask`, only
// what Codex 0.169.0 would ask its user about waits in clawpit, headless
// under `codex exec --approve-for-me` (approval policy on-request, the
// workspace-write sandbox; a plain exec never asks, TestCodexExecNeverAsks)
// and in the interactive `codex -a on-request` (in tmux): a write inside the
// working directory runs with no approval, and one asking for escalation
// (sandbox_permissions "require_escalated") fires PermissionRequest, which
// waits as an approval paired with its call's id through the rollout.
// Approved, it runs within a second (the TUI asks nobody itself); denied,
// Codex gives the model the operator's reason and never runs it.
func TestCodexGateOnAsk(t *testing.T) {
	for _, tc := range []struct {
		name       string
		decide     func(g *agentGate, a core.Approval)
		wantRan    bool
		wantResult []string
	}{
		{name: "approve runs it", wantRan: true, decide: func(g *agentGate, a core.Approval) { g.cli.OK("approval", "approve", a.ID) }},
		{name: "deny gives the model the reason", wantResult: []string{"Rejected", "outside writes are frozen"},
			decide: func(g *agentGate, a core.Approval) {
				g.cli.OK("approval", "deny", a.ID, "--reason", "outside writes are frozen")
			}},
	} {
		for _, tui := range []bool{false, true} {
			name := "exec/" + tc.name
			if tui {
				name = "tui/" + tc.name
			}
			t.Run(name, func(t *testing.T) {
				const insideID, outsideID = "call_agents_codex_ask_inside", "call_agents_codex_ask_outside"
				outside := filepath.Join(t.TempDir(), "outside-marker")
				g := newCodexGate(t, "1m", agenttest.Script{{Match: "CODEX-ASK", Turns: []agenttest.Turn{
					execCommand(insideID, "touch inside-marker"),
					{Tool: "exec_command", ID: outsideID, Input: map[string]any{"cmd": "touch " + outside,
						"sandbox_permissions": "require_escalated", "justification": "the report goes outside the workspace"}},
				}}}, "--gate-on", "ask")
				const prompt = "CODEX-ASK: write inside, then outside"
				var p *agenttest.Proc
				if tui {
					startCodexTUI(t, g, "-a", "on-request", "-s", "workspace-write", prompt)
				} else {
					g.args = []string{"--approve-for-me"}
					p = g.start(prompt)
				}
				a := g.pending(p, outsideID)
				if a.Tool != "Bash" || a.Command != "touch "+outside || !strings.Contains(a.Rationale, "the report goes outside the workspace") {
					t.Fatalf("the approval shows tool %q command %q rationale %q", a.Tool, a.Command, a.Rationale)
				}
				if !exists(filepath.Join(g.agent.Work, "inside-marker")) {
					t.Fatalf("the write Codex's own rules allow did not run before the one it asks about: %q", result(t, g.srv, insideID).Content)
				}
				if n := len(g.approvals()); n != 1 {
					t.Fatalf("%d approvals, want only the one Codex asked about", n)
				}
				if exists(outside) {
					t.Fatal("the escalated call ran before any decision")
				}
				decided := time.Now()
				tc.decide(g, a)
				if tc.wantRan {
					ranWithin(t, p, outside, decided)
				}
				if p != nil {
					finish(t, p)
				}
				tr := g.awaitResult(outsideID)
				t.Logf("tool result: %q", tr.Content)
				if exists(outside) != tc.wantRan {
					t.Fatalf("the escalated call ran = %v, want %v", exists(outside), tc.wantRan)
				}
				if !hasAll(tr.Content, tc.wantResult...) {
					t.Fatalf("tool result %q, want it to contain %q", tr.Content, tc.wantResult)
				}
				g.wantSessionAgent("codex")
			})
		}
	}
}

// startCodexTUI starts the interactive `codex -C WORK args…` in a tmux
// window (120×40, --no-alt-screen) with the agent's environment but for
// TERM and NO_COLOR. When the test ends it is ended, and so is what it
// started: the TUI leaves Codex's background app-server (`codex
// app-server --managed-daemon`, in a session of its own) running, which
// would otherwise keep writing under the scratch HOME after the test's
// temp dirs are removed (e2e.StartTerm).
func startCodexTUI(t *testing.T, g *agentGate, args ...string) *e2e.Term {
	t.Helper()
	var env []string
	for _, e := range g.agent.Environ() {
		if !strings.HasPrefix(e, "TERM=") && !strings.HasPrefix(e, "NO_COLOR=") {
			env = append(env, e)
		}
	}
	return e2e.StartTerm(t, 120, 40, env, append([]string{g.agent.Bin, "-C", g.agent.Work, "--no-alt-screen"}, args...)...)
}
