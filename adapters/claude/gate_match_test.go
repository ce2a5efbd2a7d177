package claude

import "testing"

// TestCompileGate: a gate of plain names is a list of exact tool names, as
// Claude Code reads such a matcher; any other gate is an unanchored
// regular expression, as Claude Code reads that.
func TestCompileGate(t *testing.T) {
	tests := []struct {
		gate, tool string
		gated      bool
	}{
		{"Bash|Write", "Bash", true},
		{"Bash|Write", "Write", true},
		{"Bash|Write", "BashOutput", false},
		{"Bash|Write", "TodoWrite", false},
		{"Bash|Write", "mcp__x__Bash", false},
		{"Bash", "Bash", true},
		{"Bash", "Bashful", false},
		{"mcp__github_x", "mcp__github_x", true},
		{"mcp__github_x", "mcp__github_xy", false},
		{"mcp__.*", "mcp__github__create_issue", true},
		{"mcp__.*", "Bash", false},
		{"Bash|mcp__.*", "BashOutput", true}, // a regex: unanchored, as Claude Code's
		{"Edit.*", "MultiEdit", true},
		{"^Bash$", "BashOutput", false},
		{".*", "Read", true},
	}
	for _, tc := range tests {
		re, err := CompileGate(tc.gate)
		if err != nil {
			t.Fatalf("CompileGate(%q): %v", tc.gate, err)
		}
		if got := !(Config{Gate: re}).Outside(tc.tool); got != tc.gated {
			t.Errorf("gate %q, tool %q: gated %v, want %v", tc.gate, tc.tool, got, tc.gated)
		}
	}
	if _, err := CompileGate("Bash("); err == nil {
		t.Error(`CompileGate("Bash(") succeeded, want an error`)
	}
}
