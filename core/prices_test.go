package core

import (
	"math"
	"testing"
)

func TestPricesLookup(t *testing.T) {
	ps := DefaultPrices().With(Prices{"my-model": {Input: 1}})
	tests := []struct {
		model string
		want  string // the entry that prices it, "" for no price
	}{
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},
		{"claude-opus-4-5-20251101", "claude-opus-4-5"},
		{"claude-opus-4-20250514", "claude-opus-4"},
		{"claude-sonnet-5-5[1m]", "claude-sonnet-5-5"},
		{"claude-sonnet-5", "claude-sonnet-5"},
		{"gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"my-model", "my-model"},
		{"<synthetic>", ""},
		{"", ""},
	}
	for _, tt := range tests {
		p, ok := ps.Lookup(tt.model)
		if ok != (tt.want != "") || (ok && p != ps[tt.want]) {
			t.Errorf("Lookup(%q) = %+v %v, want the price of %q", tt.model, p, ok, tt.want)
		}
	}
}

// TestPriceMatchesRecordedCost: the shipped Claude Haiku 4.5 price gives
// the cost Claude Code itself reported for a recorded run (modelUsage
// costUSD of adapters/claude/streamjson/testdata/claude-stream/03-agentharness-bash-done.jsonl).
func TestPriceMatchesRecordedCost(t *testing.T) {
	p, _ := DefaultPrices().Lookup("claude-haiku-4-5-20251001")
	got := p.Cost(Tokens{Input: 18, Output: 259, CacheWrite: 5101, CacheRead: 48359})
	if math.Abs(got-0.0163509) > 1e-9 {
		t.Errorf("cost $%v, Claude Code reported $0.0163509", got)
	}
}
