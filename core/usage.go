package core

// Usage: the tokens an agent spent, per session, run and task, per model
// (issue 27). The counts come from the agent's own record (Claude Code's
// transcript, the stream-json result line of `task track`); clawpit never
// estimates them.

// Tokens are the four token counts a model API reports for a call
// (Anthropic Messages API usage: input_tokens, output_tokens,
// cache_creation_input_tokens, cache_read_input_tokens). All are counts of
// tokens.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheWrite int64 `json:"cache_write"`
	CacheRead  int64 `json:"cache_read"`
}

// Add is t + o, field by field.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{t.Input + o.Input, t.Output + o.Output, t.CacheWrite + o.CacheWrite, t.CacheRead + o.CacheRead}
}

// Total is the sum of the four counts, in tokens.
func (t Tokens) Total() int64 { return t.Input + t.Output + t.CacheWrite + t.CacheRead }

// IsZero reports whether every count is 0.
func (t Tokens) IsZero() bool { return t == Tokens{} }

// growth is how far each count of u exceeds t's (0 where it does not): the
// part of a repeated message's usage not counted yet.
func (t Tokens) growth(u Tokens) Tokens {
	d := func(a, b int64) int64 { return max(b-a, 0) }
	return Tokens{d(t.Input, u.Input), d(t.Output, u.Output), d(t.CacheWrite, u.CacheWrite), d(t.CacheRead, u.CacheRead)}
}

// UsageScope is what a usage row counts for.
type UsageScope string

// Usage scopes: a session (its own calls and its sub-agents'), a sub-agent
// run, a tracked task (`task track`).
const (
	UsageSession UsageScope = "session"
	UsageRun     UsageScope = "run"
	UsageTask    UsageScope = "task"
)

// UsageRow is the tokens one session, run or task spent on one model.
type UsageRow struct {
	Scope  UsageScope `json:"scope"`
	ID     string     `json:"id"` // session id, run id or task id
	Model  string     `json:"model"`
	Tokens Tokens     `json:"tokens"`
	// ReportedCostMicroUSD is the cost the agent itself reported
	// (stream-json total_cost_usd), in millionths of a US dollar; 0 when
	// it reported none.
	ReportedCostMicroUSD int64     `json:"reported_cost_micro_usd,omitempty"`
	CountedAt            Timestamp `json:"counted_at"` // the last count
}

// UsageFilter selects usage rows; zero fields match everything.
type UsageFilter struct {
	Scope UsageScope
	IDs   []string  // scope ids, matched whole
	Since Timestamp // counted_at >= Since
}

// UsageSource is how far clawpit has read one transcript file.
type UsageSource struct {
	Path    string
	Session string
	RunID   string // "" for a session's own transcript
	// Offset is the byte offset after the last complete line counted.
	Offset int64
	// Head is the hex SHA-256 of the file's first min(Offset, HeadBytes)
	// bytes: an append-only file keeps them, a rotated or rewritten one
	// does not.
	Head string
	// LastMessage, LastModel and Last are the last assistant message
	// counted: Claude Code writes one line per content block, each with the
	// message's usage, so a later line of the same message adds only what
	// grew.
	LastMessage string
	LastModel   string
	Last        Tokens
	Note        string    // what the last read could not do; "" when all went well
	ReadAt      Timestamp // the last read
}

// UsageSummary is usage rows summed for a glance (the console's SPENT
// column): Tokens (the four counts, summed) and CostMicroUSD (millionths of
// a US dollar) of the models with a price; Unpriced is set when some
// model has none (its tokens count, its cost is unknown).
type UsageSummary struct {
	Tokens       int64
	CostMicroUSD int64
	Unpriced     bool
}

// Summarize sums rows at prices.
func Summarize(rows []UsageRow, prices Prices) UsageSummary {
	var s UsageSummary
	var usd float64
	for _, r := range rows {
		s.Tokens += r.Tokens.Total()
		if p, ok := prices.Lookup(r.Model); ok {
			usd += p.Cost(r.Tokens)
		} else if !r.Tokens.IsZero() {
			s.Unpriced = true
		}
	}
	s.CostMicroUSD = MicroUSD(usd)
	return s
}
