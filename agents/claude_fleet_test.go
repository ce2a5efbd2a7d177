package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
	"github.com/clawpit/clawpit/internal/e2e"
	"github.com/clawpit/clawpit/store/storetest"
)

// TestClaudeFleetTwoHosts is the whole job across two hosts on one
// PostgreSQL registry: the real Claude Code on host A (CLAWPIT_HOST=host-a)
// gated through clawpit's hooks; an operator approving it over a real ssh
// session of `clawpit serve` running as host B (CLAWPIT_HOST=host-b); the
// command runs on host A, within a second of the decision (the waiting
// hook wakes on the decision's NOTIFY). With CLAWPIT_TEST_PGBOUNCER set,
// both hosts write through PgBouncer in transaction mode and listen on the
// direct URL (CLAWPIT_LISTEN_DB, as --listen-db).
func TestClaudeFleetTwoHosts(t *testing.T) {
	agenttest.RequireCLI(t, agenttest.EnvClaude, "@anthropic-ai/claude-code")
	e2e.RequireSSH(t)
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set (.ci/pg start): the two-host test needs a PostgreSQL registry")
	}
	loc, listen := storetest.Schema(t, base), ""
	if p := os.Getenv(storetest.PoolerEnv); p != "" {
		loc, listen = storetest.Pooled(t, base, p)
	}
	hostEnv := func(host string) []string {
		env := []string{"CLAWPIT_HOST=" + host}
		if listen != "" {
			env = append(env, "CLAWPIT_LISTEN_DB="+listen)
		}
		return env
	}

	// Host A: Claude Code and its hooks.
	const callID = "toolu_fleet_gate_1"
	g := newClaudeGate(t, "1m", agenttest.Script{{Match: "GATE-FLEET", Turns: []agenttest.Turn{bash(callID, "touch marker")}}})
	g.cli.DB, g.cli.Env = loc, hostEnv("host-a")
	g.cli.OK("hooks", "install", "--settings", g.settings, "--approval-timeout", "1m", "--on-failure", "block")
	g.agent.Env = append(g.agent.Env, hostEnv("host-a")...)
	marker := filepath.Join(g.agent.Work, "marker")

	// Host B: serve on the same registry, an operator's key.
	hostB := e2e.NewCLI(t, bin)
	hostB.DB, hostB.Env = loc, hostEnv("host-b")
	key := e2e.SSHKey(t, "opb")
	e2e.AddOperator(hostB, "opb", "operator", key)
	s := e2e.StartServe(t, hostB)
	tm := s.Connect(t, key, 120, 40, nil)

	p := g.start("GATE-FLEET: make the marker")
	a := g.pending(p, callID)
	if exists(marker) {
		t.Fatal("the gated call ran before any decision")
	}
	tm.SwitchPane("3")
	scr := tm.WaitText(a.ID)
	if len(scr) < 2 || !strings.Contains(scr[1], "live") {
		t.Errorf("serve's header does not say its registry is live (LISTEN):\n%s", strings.Join(scr, "\n"))
	}
	// Filter the pane down to the approval (e2e.SelectRow waits for the
	// local console's "1/N" count; the pane, holding one approval, says
	// "1 row").
	tm.Keys("/")
	tm.WaitText("filter: ")
	tm.TypeText(a.ID)
	tm.Keys("Enter")
	tm.WaitFor("the filter on "+a.ID, func(s []string) bool {
		return e2e.ScreenHas(s, "filter: "+a.ID) && e2e.ScreenHas(s, "(esc clears)") && e2e.ScreenHas(s, "1 row")
	})
	tm.Keys("a")
	tm.WaitText("Approve " + a.ID)
	decided := time.Now()
	tm.Keys("Enter")
	at, ok := waitFile(marker, 10*time.Second)
	if !ok {
		t.Fatalf("the approved call did not run on host A within 10 s:\n%s", strings.Join(tm.Capture(), "\n"))
	}
	if lag := at.Sub(decided); lag > decisionLatency {
		t.Errorf("the call ran %s after the operator's Enter on host B, want < %s", lag, decisionLatency)
	} else {
		t.Logf("operator's Enter on host B → command ran on host A: %s", lag)
	}
	finish(t, p)

	// The decision is host B's operator's, recorded in the shared registry.
	var shown core.Approval
	out := hostB.OK("--json", "approval", "show", a.ID)
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("approval show: %v\n%s", err, out)
	}
	if shown.Status != core.ApprovalApproved || !strings.Contains(shown.DecidedBy, "opb") {
		t.Errorf("approval after host B approved: status %s decided by %q, want approved by opb\n%s", shown.Status, shown.DecidedBy, out)
	}
}
