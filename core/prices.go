package core

import (
	"math"
	"sort"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens (MTok).
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheWrite float64 `toml:"cache-write" json:"cache_write"`
	CacheRead  float64 `toml:"cache-read" json:"cache_read"`
}

// Cost is what t costs at p, in US dollars.
func (p Price) Cost(t Tokens) float64 {
	return (float64(t.Input)*p.Input + float64(t.Output)*p.Output +
		float64(t.CacheWrite)*p.CacheWrite + float64(t.CacheRead)*p.CacheRead) / 1e6
}

// Prices is a price table: model name (or the start of one) → price.
type Prices map[string]Price

// Lookup is the price of model: the entry whose name is the longest prefix
// of model ("claude-haiku-4-5" prices "claude-haiku-4-5-20251001"); false
// when none is ("no price").
func (ps Prices) Lookup(model string) (Price, bool) {
	best, found := "", false
	for name := range ps {
		if strings.HasPrefix(model, name) && (!found || len(name) > len(best)) {
			best, found = name, true
		}
	}
	return ps[best], found
}

// With is ps overridden by over (config.toml [prices."model"]), a new table.
func (ps Prices) With(over Prices) Prices {
	out := make(Prices, len(ps)+len(over))
	for k, v := range ps {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Names is the table's model names, sorted.
func (ps Prices) Names() []string {
	out := make([]string, 0, len(ps))
	for k := range ps {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MicroUSD is usd in millionths of a dollar, rounded.
func MicroUSD(usd float64) int64 { return int64(math.Round(usd * 1e6)) }

// DefaultPrices is the shipped price table, USD per million tokens, taken
// 2026-11-26.
//
// Claude: Anthropic's pricing page
// (https://platform.claude.com/docs/en/about-claude/pricing, "Model
// pricing"), as quoted by the search index on 2026-11-26; Sonnet 5.5, Opus
// 5.5 and Haiku 5.5 as cited from that page by third-party price tables
// (claudit v1.9.2, synaps 0.10.2, agent-telemetry v1.6.4), not seen on it
// directly. Cache write is the 1-hour rate (2× input): Claude Code writes
// 1-hour cache entries — checked against a recorded result line
// (adapters/claude/streamjson/testdata/claude-stream/03-…: claude-haiku-4-5, costUSD 0.0163509 =
// 18×$1 + 259×$5 + 5,101×$2 + 48,359×$0.10 per MTok). Haiku 5.5 is the
// ≤100k-token-prompt tier; longer prompts cost more.
//
// OpenAI and Google: GitHub's published per-token list prices of the
// models Copilot serves (github/docs, data/tables/copilot/models-and-pricing.yml
// at commit 024f6b0f8c26, read 2026-11-26), the default (shorter-prompt)
// tier; gpt-5 also from OpenAI's own model page (developers.openai.com,
// "gpt-5-codex": $1.25 input, $0.125 cached input, $10 output). OpenAI
// bills no cache write before GPT-5.6 (cache write = input there); Gemini
// lists none either (cache write = input; cache storage not included).
// Entries marked "older, unverified" are from the providers' pages as the
// engineer knew them in 2025 and were not in that table: check them and
// override in config.toml.
func DefaultPrices() Prices {
	return Prices{
		// Anthropic (verified from the pricing page as above).
		"claude-fable-5-1":  {Input: 10, Output: 50, CacheWrite: 20, CacheRead: 0.25},
		"claude-fable-5":    {Input: 10, Output: 50, CacheWrite: 20, CacheRead: 1},
		"claude-opus-5-5":   {Input: 4, Output: 20, CacheWrite: 8, CacheRead: 0.20},
		"claude-opus-5":     {Input: 5, Output: 25, CacheWrite: 10, CacheRead: 0.50},
		"claude-opus-4-8":   {Input: 5, Output: 25, CacheWrite: 10, CacheRead: 0.50},
		"claude-opus-4-7":   {Input: 5, Output: 25, CacheWrite: 10, CacheRead: 0.50},
		"claude-opus-4-6":   {Input: 5, Output: 25, CacheWrite: 10, CacheRead: 0.50},
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheWrite: 10, CacheRead: 0.50},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheWrite: 30, CacheRead: 1.50},
		"claude-opus-4":     {Input: 15, Output: 75, CacheWrite: 30, CacheRead: 1.50},
		"claude-sonnet-5-5": {Input: 2, Output: 10, CacheWrite: 4, CacheRead: 0.10},
		"claude-sonnet-5":   {Input: 2, Output: 10, CacheWrite: 4, CacheRead: 0.20},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheWrite: 6, CacheRead: 0.30},
		"claude-haiku-5-5":  {Input: 0.10, Output: 0.50, CacheWrite: 0.20, CacheRead: 0.01},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheWrite: 2, CacheRead: 0.10},
		"claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheWrite: 1.60, CacheRead: 0.08},
		// OpenAI (GitHub's table, see above).
		"gpt-5.6-sol":   {Input: 5, Output: 30, CacheWrite: 6.25, CacheRead: 0.50},
		"gpt-5.6-terra": {Input: 2, Output: 12, CacheWrite: 2.50, CacheRead: 0.20},
		"gpt-5.6-luna":  {Input: 0.20, Output: 1.20, CacheWrite: 0.25, CacheRead: 0.02},
		"gpt-5.5":       {Input: 5, Output: 30, CacheWrite: 5, CacheRead: 0.50},
		"gpt-5.4":       {Input: 2.50, Output: 15, CacheWrite: 2.50, CacheRead: 0.25},
		"gpt-5.4-mini":  {Input: 0.75, Output: 4.50, CacheWrite: 0.75, CacheRead: 0.075},
		"gpt-5.4-nano":  {Input: 0.20, Output: 1.25, CacheWrite: 0.20, CacheRead: 0.02},
		"gpt-5.3-codex": {Input: 1.75, Output: 14, CacheWrite: 1.75, CacheRead: 0.175},
		"gpt-5.2":       {Input: 1.75, Output: 14, CacheWrite: 1.75, CacheRead: 0.175},
		"gpt-5":         {Input: 1.25, Output: 10, CacheWrite: 1.25, CacheRead: 0.125},
		"gpt-5-mini":    {Input: 0.25, Output: 2, CacheWrite: 0.25, CacheRead: 0.025},
		"gpt-4.1":       {Input: 2, Output: 8, CacheWrite: 2, CacheRead: 0.50},
		// OpenAI, older, unverified.
		"gpt-5-nano": {Input: 0.05, Output: 0.40, CacheWrite: 0.05, CacheRead: 0.005},
		"o3":         {Input: 2, Output: 8, CacheWrite: 2, CacheRead: 0.50},
		// Google Gemini (GitHub's table, see above).
		"gemini-3.1-pro":   {Input: 2, Output: 12, CacheWrite: 2, CacheRead: 0.20},
		"gemini-3.5-flash": {Input: 1.50, Output: 9, CacheWrite: 1.50, CacheRead: 0.15},
		"gemini-3.6-flash": {Input: 0.75, Output: 3.75, CacheWrite: 0.75, CacheRead: 0.075},
		"gemini-3.7-flash": {Input: 0.75, Output: 3.75, CacheWrite: 0.75, CacheRead: 0.075},
		// Google Gemini, older, unverified.
		"gemini-3-pro":          {Input: 2, Output: 12, CacheWrite: 2, CacheRead: 0.20},
		"gemini-2.5-pro":        {Input: 1.25, Output: 10, CacheWrite: 1.25, CacheRead: 0.125},
		"gemini-2.5-flash":      {Input: 0.30, Output: 2.50, CacheWrite: 0.30, CacheRead: 0.03},
		"gemini-2.5-flash-lite": {Input: 0.10, Output: 0.40, CacheWrite: 0.10, CacheRead: 0.01},
	}
}
