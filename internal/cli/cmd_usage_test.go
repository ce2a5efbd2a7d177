package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestUsageLines: tokens are summed per key and priced per model; a model
// without a price keeps its tokens and says "no price"; the agent's own
// cost is shown beside clawpit's.
func TestUsageLines(t *testing.T) {
	prices := core.Prices{"priced": {Input: 1, Output: 2, CacheWrite: 3, CacheRead: 4}}
	rows := []core.UsageRow{
		{Scope: core.UsageSession, ID: "s1", Model: "priced-2026", Tokens: core.Tokens{Input: 1_000_000}},
		{Scope: core.UsageSession, ID: "s1", Model: "mystery", Tokens: core.Tokens{Output: 7}},
		{Scope: core.UsageSession, ID: "s2", Model: "mystery", Tokens: core.Tokens{Input: 5}},
		{Scope: core.UsageTask, ID: "t1", Model: "priced", Tokens: core.Tokens{Output: 1_000_000}, ReportedCostMicroUSD: 1_990_000},
	}
	tests := []struct {
		name string
		key  func(core.UsageRow) string
		want []string // "key tokens-total cost"
	}{
		{"by id", func(r core.UsageRow) string { return r.ID }, []string{
			"t1 1000000 $2.00 (agent: $1.99)", "s1 1000007 $1.00 + no price", "s2 5 no price"}},
		{"by model", func(r core.UsageRow) string { return r.Model }, []string{
			"priced 1000000 $2.00 (agent: $1.99)", "priced-2026 1000000 $1.00", "mystery 12 no price"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range usageLines(rows, prices, tt.key) {
				got = append(got, strings.Join([]string{l.Key, strconv.FormatInt(l.Tokens.Total(), 10), costText(l)}, " "))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestUSD(t *testing.T) {
	for v, want := range map[float64]string{0: "$0.0000", 0.01636: "$0.0164", 1: "$1.00", 1.999: "$2.00", 1234.5: "$1,234.50"} {
		if got := usd(v); got != want {
			t.Errorf("usd(%v) = %q, want %q", v, got, want)
		}
	}
}
