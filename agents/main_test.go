// Package agents tests clawpit against the real agent CLIs (issue 28):
// Claude Code, Codex CLI and Gemini CLI, installed by .ci/agents and named
// by CLAWPIT_CLAUDE, CLAWPIT_CODEX and CLAWPIT_GEMINI, each run headless
// (Codex also in its interactive TUI, under tmux) against a scripted
// stand-in for its model API (internal/agenttest) on 127.0.0.1. A test whose CLI is not installed skips and says why.
//
// Files: claude_test.go (the Claude Code gate end to end, and its headless
// PermissionRequest), claude_ask_test.go (--gate-on ask), codex_test.go and
// gemini_test.go (the hook payloads each CLI sends, the answers it obeys,
// trust, sub-agents),
// gate_test.go (what every CLI does alike, against each CLI in turn: a
// scripted call run, the gate's decisions), codex_gate_test.go and gemini_gate_test.go (the rest of
// their gates end to end through `hooks install --agent codex|gemini`;
// Codex's --gate-on ask headless and in its interactive TUI under tmux),
// withdraw_test.go (a stopped gated hook withdraws its approval),
// harness_test.go (the gate's helpers),
// dump_test.go (hooks that save their payloads or give a set answer),
// NOTES.md (the observed hook contracts, each tied to its test). Set
// CLAWPIT_AGENTS_DUMP=DIR to keep every payload in DIR.
package agents

import (
	"fmt"
	"os"
	"testing"

	"github.com/clawpit/clawpit/internal/e2e"
)

// bin is the clawpit binary under test, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	b, cleanup, err := e2e.BuildBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}
