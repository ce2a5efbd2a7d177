package streamjson

import (
	"strconv"

	"github.com/clawpit/clawpit/core"
)

// maxStreamModels caps the models a result line's modelUsage may name (a
// run uses a few): further ones are skipped, keeping the tracker bounded.
const maxStreamModels = 16

// Usage is what a stream-json result line reports spending (Claude
// Code: "modelUsage" per model, "usage" for the main model,
// "total_cost_usd").
type Usage struct {
	// ByModel is modelUsage per model (inputTokens, outputTokens,
	// cacheCreationInputTokens, cacheReadInputTokens), in tokens; when the
	// line has no modelUsage, usage is given under the model "". Models
	// with no tokens are left out.
	ByModel map[string]core.Tokens
	// CostUSD is total_cost_usd in US dollars; HasCost is false when absent.
	CostUSD float64
	HasCost bool
	// ModelCostUSD is modelUsage's costUSD per model, US dollars.
	ModelCostUSD map[string]float64
}

// usageFacts is the usage part of one line's facts.
type usageFacts struct {
	usage    core.Tokens
	hasUsage bool
	models   []modelTokens
	cost     float64
	hasCost  bool
	num      []byte // the digits of the number being read
}

type modelTokens struct {
	model string
	t     core.Tokens
	cost  float64 // costUSD, US dollars
}

func (u *usageFacts) reset() {
	u.usage, u.hasUsage, u.models, u.cost, u.hasCost = core.Tokens{}, false, u.models[:0], 0, false
}

// result is the line's Usage; nil when it reported none.
func (u *usageFacts) result() *Usage {
	if !u.hasUsage && len(u.models) == 0 && !u.hasCost {
		return nil
	}
	out := &Usage{ByModel: map[string]core.Tokens{}, CostUSD: u.cost, HasCost: u.hasCost, ModelCostUSD: map[string]float64{}}
	for _, m := range u.models {
		if !m.t.IsZero() {
			out.ByModel[m.model] = out.ByModel[m.model].Add(m.t)
			out.ModelCostUSD[m.model] += m.cost
		}
	}
	if len(u.models) == 0 && u.hasUsage && !u.usage.IsZero() {
		out.ByModel[""] = u.usage
	}
	return out
}

// number reads a number value into u.num (at most 40 bytes kept); a value
// of another type is consumed and gives "".
func (p *streamParser) number() (string, error) {
	u := &p.f.use
	u.num = u.num[:0]
	p.ws()
	if !(p.ok && (p.c == '-' || (p.c >= '0' && p.c <= '9'))) {
		return "", p.skip()
	}
	p.keep = true
	err := p.num()
	p.keep = false
	return string(u.num), err
}

// tokens reads an object of four token counts named by names (input,
// output, cache write, cache read) into t, and a cost in US dollars named
// costKey into cost (when not nil); other keys are skipped.
func (p *streamParser) tokens(t *core.Tokens, names [4]string, costKey string, cost *float64) error {
	p.ws()
	if !(p.ok && p.c == '{') {
		return p.skip()
	}
	fields := [4]*int64{&t.Input, &t.Output, &t.CacheWrite, &t.CacheRead}
	return p.object(func() error {
		if cost != nil && p.keyIs(costKey) {
			s, err := p.number()
			if v, perr := strconv.ParseFloat(s, 64); perr == nil && v >= 0 {
				*cost = v
			}
			return err
		}
		for i, n := range names {
			if p.keyIs(n) {
				s, err := p.number()
				if v, perr := strconv.ParseInt(s, 10, 64); perr == nil && v >= 0 {
					*fields[i] = v
				}
				return err
			}
		}
		return p.skip()
	})
}

// usageKey reads the usage keys of a line's top level: reports whether key
// was one (and consumed its value).
func (p *streamParser) usageKey() (bool, error) {
	u := &p.f.use
	switch {
	case p.keyIs("usage"):
		p.ws()
		u.hasUsage = p.ok && p.c == '{'
		return true, p.tokens(&u.usage, [4]string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}, "", nil)
	case p.keyIs("total_cost_usd"):
		s, err := p.number()
		if v, perr := strconv.ParseFloat(s, 64); perr == nil && v >= 0 {
			u.cost, u.hasCost = v, true
		}
		return true, err
	case p.keyIs("modelUsage"):
		p.ws()
		if !(p.ok && p.c == '{') {
			return true, p.skip()
		}
		return true, p.object(func() error {
			if p.f.key.full || len(u.models) >= maxStreamModels {
				return p.skip()
			}
			m := modelTokens{model: string(p.f.key.buf)}
			err := p.tokens(&m.t, [4]string{"inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"}, "costUSD", &m.cost)
			u.models = append(u.models, m)
			return err
		})
	}
	return false, nil
}
