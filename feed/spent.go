package feed

import (
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// spentFill passes a load's or window's tasks and runs on with what they
// spent set (the SPENT column, What it costs): a run's tokens, a task's own
// (tracked) and its run's, priced at the source's prices. Rows are looked
// up by id, one indexed read per row: a window is a screenful, a load of
// whole tables at most LoadRequest.WindowOver rows of each kind.
type spentFill struct {
	Sink
	tx     core.Tx
	prices core.Prices
	err    error // the first failed lookup (the load fails with it)
}

func newSpentFill(tx core.Tx, sink Sink, prices core.Prices) *spentFill {
	return &spentFill{Sink: sink, tx: tx, prices: prices}
}

// rows are the usage rows of scope id ("" none), nil after a failed lookup
// (kept in f.err).
func (f *spentFill) rows(scope core.UsageScope, id string) []core.UsageRow {
	if id == "" || f.err != nil {
		return nil
	}
	rs, err := f.tx.ListUsage(core.UsageFilter{Scope: scope, IDs: []string{id}})
	if err != nil {
		f.err = err
		return nil
	}
	return rs
}

// taskUsage is a task's usage rows: its own (task track) and its run's.
func taskUsage(f *spentFill, t *core.Task) []core.UsageRow {
	return append(f.rows(core.UsageTask, t.ID), f.rows(core.UsageRun, t.RunID)...)
}

func (f *spentFill) Task(t *core.Task) {
	t.Spent = core.Summarize(taskUsage(f, t), f.prices)
	f.Sink.Task(t)
}

func (f *spentFill) Run(r *core.Run) {
	r.Spent = core.Summarize(f.rows(core.UsageRun, r.RunID), f.prices)
	f.Sink.Run(r)
}

// Changed passes on a changed windowed row (ChangeSink) when the sink
// hears of them.
func (f *spentFill) Changed(k Kind, id string) {
	if cs, ok := f.Sink.(ChangeSink); ok {
		cs.Changed(k, id)
	}
}

// SpentText is the SPENT cell: the cost ("$1.23", "<$0.01"), a "+" after
// it when some model had no price, only the tokens ("45.2k tok") when none
// had, "-" when nothing was counted.
func SpentText(s core.UsageSummary) string {
	switch {
	case s.Tokens == 0:
		return "-"
	case s.CostMicroUSD == 0 && s.Unpriced:
		return compactCount(s.Tokens) + " tok"
	}
	out := core.USDText(s.CostMicroUSD)
	if s.CostMicroUSD > 0 && s.CostMicroUSD < 5_000 {
		out = "<$0.01"
	}
	if s.Unpriced {
		out += "+"
	}
	return out
}

// compactCount is n in 4 characters or so: 950, 45.2k, 1.3M.
func compactCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return trimZero(strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64)) + "k"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// usageFields are the detail view's usage lines of a task or run: one per
// model ("usage claude-sonnet-4-5": "in 1,200 · out 340 · cache write 0 ·
// cache read 5,000 · $0.0123") and "spent", the SPENT cell; none when
// nothing was counted. ok is false for other kinds.
func usageFields(tx core.Tx, v any, prices core.Prices) ([]Field, bool, error) {
	f := newSpentFill(tx, nil, prices)
	var rows []core.UsageRow
	switch x := v.(type) {
	case *core.Task:
		rows = taskUsage(f, x)
	case *core.Run:
		rows = f.rows(core.UsageRun, x.RunID)
	default:
		return nil, false, nil
	}
	if f.err != nil || len(rows) == 0 {
		return nil, true, f.err
	}
	byModel := map[string]core.Tokens{}
	var models []string
	for _, r := range rows {
		if _, ok := byModel[r.Model]; !ok {
			models = append(models, r.Model)
		}
		byModel[r.Model] = byModel[r.Model].Add(r.Tokens)
	}
	var out []Field
	for _, m := range models {
		t := byModel[m]
		cost := "no price"
		if p, ok := prices.Lookup(m); ok {
			cost = "$" + strconv.FormatFloat(p.Cost(t), 'f', 4, 64)
		}
		out = append(out, Field{Name: "usage " + m, Value: "in " + core.TokensText(t.Input) + " · out " + core.TokensText(t.Output) +
			" · cache write " + core.TokensText(t.CacheWrite) + " · cache read " + core.TokensText(t.CacheRead) + " · " + cost})
	}
	s := core.Summarize(rows, prices)
	return append(out, Field{Name: "spent", Value: SpentText(s) + " (" + core.TokensText(s.Tokens) + " tokens)"}), true, nil
}

// spentSpan is how far back LoadResult.Spent sums: 24 hours, in ms.
const spentSpan = core.Timestamp(24 * 60 * 60 * 1000)

// spentSince sums what every agent spent since since: the counts of
// sessions (their sub-agents' included) and tracked tasks, read through the
// counts' time index.
func spentSince(tx core.Tx, since core.Timestamp, prices core.Prices) (*core.UsageSummary, error) {
	var rows []core.UsageRow
	for _, scope := range []core.UsageScope{core.UsageSession, core.UsageTask} {
		rs, err := tx.SumUsage(core.UsageFilter{Scope: scope, Since: since})
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	s := core.Summarize(rows, prices)
	return &s, nil
}
