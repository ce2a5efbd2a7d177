package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/agenttest"
)

// TestGatedHookStoppedWithdraws: when the agent stops the gated hook that
// waits for a decision (a signal, as at its own timeout or an interrupt),
// the approval is withdrawn at once (the hook's process watch, for every
// agent), not left pending for an operator to approve a call nobody waits
// for; the call does not run.
func TestGatedHookStoppedWithdraws(t *testing.T) {
	tests := []struct {
		name  string
		start func(t *testing.T) (*agentGate, *agenttest.Proc)
	}{
		{name: "codex", start: func(t *testing.T) (*agentGate, *agenttest.Proc) {
			g := newCodexGate(t, "1m", agenttest.Script{{Match: "WITHDRAW", Turns: []agenttest.Turn{execCommand("call_withdraw_1", "touch marker")}}})
			return g, g.start("WITHDRAW: make the marker")
		}},
		{name: "gemini", start: func(t *testing.T) (*agentGate, *agenttest.Proc) {
			g := newGeminiGate(t, "1m", agenttest.Script{{Match: "WITHDRAW", Turns: []agenttest.Turn{shellCommand("call_withdraw_1", "touch marker")}}})
			return g, g.start("WITHDRAW: make the marker")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, p := tc.start(t)
			id := "call_withdraw_1"
			if tc.name == "gemini" {
				id = "" // Gemini CLI gives no call id
			}
			a := g.pending(p, id)
			pid := gatedHookPID(t, g.cli.DB)
			stopped := time.Now()
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for {
				var got core.Approval
				decode(t, g.cli.OK("--json", "approval", "show", a.ID), &got)
				if got.Status == core.ApprovalCancelled {
					t.Logf("withdrawn %s after the hook was stopped: %q", time.Since(stopped).Round(time.Millisecond), got.Reason)
					break
				}
				if time.Since(stopped) > 2*time.Second {
					t.Fatalf("2 s after the hook was stopped the approval is %s", got.Status)
				}
				time.Sleep(20 * time.Millisecond)
			}
			finish(t, p)
			if exists(filepath.Join(g.agent.Work, "marker")) {
				t.Fatal("the call ran after its hook was stopped")
			}
		})
	}
}

// gatedHookPID is the pid of the gated clawpit hook writing to db (found in
// /proc by its command line), failing the test unless there is exactly one.
func gatedHookPID(t *testing.T, db string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
		hasDB, hook, gated := false, false, false
		for _, a := range args {
			switch string(a) {
			case db:
				hasDB = true
			case "hook":
				hook = true
			case "--gated":
				gated = true
			}
		}
		if hasDB && hook && gated {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d gated hook processes for %s: %v", len(pids), db, pids)
	}
	return pids[0]
}
