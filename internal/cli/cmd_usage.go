package cli

// `clawpit usage`: what agents cost (issue 27). Tokens come from the
// registry's token_usage rows (counted from the agents' own records); cost
// is tokens × the price table (core.DefaultPrices overridden by config.toml
// [prices."model"]).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// usageLine is one line of a usage report: the tokens of one key (a
// session, run, task, model or agent) and their cost.
type usageLine struct {
	Key    string      `json:"key"`
	Models []string    `json:"models"`
	Tokens core.Tokens `json:"tokens"`
	// CostUSD is the cost of the priced models' tokens, US dollars; nil
	// when no model of the line has a price.
	CostUSD *float64 `json:"cost_usd"`
	// Unpriced lists the models without a price ("no price"): their tokens
	// are in Tokens but not in CostUSD.
	Unpriced []string `json:"unpriced_models"`
	// ReportedCostUSD is what the agent itself reported (task track's
	// total_cost_usd), US dollars; nil when it reported none.
	ReportedCostUSD *float64       `json:"reported_cost_usd"`
	CountedAt       core.Timestamp `json:"counted_at"`
}

// usageLines groups rows by key(row), prices each model's tokens and sorts
// the lines by cost, then tokens, highest first.
func usageLines(rows []core.UsageRow, prices core.Prices, key func(core.UsageRow) string) []usageLine {
	by := map[string]*usageLine{}
	var order []string
	for _, r := range rows {
		k := key(r)
		l := by[k]
		if l == nil {
			l = &usageLine{Key: k, Models: []string{}, Unpriced: []string{}}
			by[k] = l
			order = append(order, k)
		}
		addUsage(l, r, prices)
	}
	out := make([]usageLine, 0, len(order))
	for _, k := range order {
		out = append(out, *by[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		ci, cj := costOf(out[i]), costOf(out[j])
		if ci != cj {
			return ci > cj
		}
		return out[i].Tokens.Total() > out[j].Tokens.Total()
	})
	return out
}

// addUsage adds row r to line l.
func addUsage(l *usageLine, r core.UsageRow, prices core.Prices) {
	model := r.Model
	if model == "" {
		model = "(model not reported)"
	}
	if !contains(l.Models, model) {
		l.Models = append(l.Models, model)
	}
	l.Tokens = l.Tokens.Add(r.Tokens)
	if p, ok := prices.Lookup(r.Model); ok {
		c := costOf(*l) + p.Cost(r.Tokens)
		l.CostUSD = &c
	} else if !contains(l.Unpriced, model) {
		l.Unpriced = append(l.Unpriced, model)
	}
	if r.ReportedCostMicroUSD > 0 {
		c := float64(r.ReportedCostMicroUSD) / 1e6
		if l.ReportedCostUSD != nil {
			c += *l.ReportedCostUSD
		}
		l.ReportedCostUSD = &c
	}
	l.CountedAt = max(l.CountedAt, r.CountedAt)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func costOf(l usageLine) float64 {
	if l.CostUSD == nil {
		return 0
	}
	return *l.CostUSD
}

// costText is a line's cost as an operator reads it: "$1.23", "no price",
// or "$1.23 + no price" when some of its models have none.
func costText(l usageLine) string {
	var s string
	switch {
	case l.CostUSD == nil:
		s = "no price"
	case len(l.Unpriced) > 0:
		s = usd(*l.CostUSD) + " + no price"
	default:
		s = usd(*l.CostUSD)
	}
	if l.ReportedCostUSD != nil {
		s += " (agent: " + usd(*l.ReportedCostUSD) + ")"
	}
	return s
}

// usd is dollars with cents, or four decimals under a dollar ("$0.0164").
func usd(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	cents := int64(math.Round(v * 100))
	return fmt.Sprintf("$%s.%02d", termtext.Thousands(cents/100), cents%100)
}

// usageBy are the groupings of `clawpit usage --by`.
var usageBy = []string{"session", "run", "task", "model", "agent"}

func usageCommand(a *app) *cobra.Command {
	var since time.Duration
	var by string
	c := &cobra.Command{
		Use:   "usage",
		Short: "Tokens and cost of the agents' work: per session, run, task, model or agent",
		Long: `Tokens (input, output, cache write, cache read) per session, sub-agent run,
tracked task, model or agent, counted from the agents' own records, and their
cost at the price table (defaults per model; config.toml [prices."model"]
overrides). A model without a price shows its tokens and "no price".

--since counts the tokens counted within that long (each turn's tokens are
counted at its end, with that time): a session that began last week shows
only what it spent since then; 0 counts everything. A sub-agent run's
tokens are in its session's too: --by model and --by agent count sessions
and tracked tasks, never runs again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(usageBy, by) {
				return usageError{fmt.Errorf("--by %q: want one of %s", by, strings.Join(usageBy, ", "))}
			}
			if since < 0 {
				return usageError{fmt.Errorf("--since %s: want a positive duration", since)}
			}
			prices, err := a.prices()
			if err != nil {
				return err
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			lines, err := usageReport(cmd.Context(), reg, prices, by, since)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(orderedObject{{"since", termtext.Duration(since)}, {"by", by}, {"lines", lines}, {"total", usageTotal(lines)}})
			}
			if err := printUsage(a.stdout, by, since, lines); err != nil || len(lines) > 0 || by != "session" {
				return err
			}
			// A tracked task (task track) counts into its task, not into
			// the session named by --session: say where its tokens are.
			tasks, err := usageReport(cmd.Context(), reg, prices, "task", since)
			if err != nil || len(tasks) == 0 {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "%d tracked task(s) spent tokens in that time: clawpit usage --by task\n", len(tasks))
			return err
		},
	}
	c.Flags().DurationVar(&since, "since", 24*time.Hour, "count the tokens counted within this long (0: all)")
	c.Flags().StringVar(&by, "by", "session", "one line per session, run, task, model or agent")
	return c
}

// usageReport reads the rows --by needs and groups them.
func usageReport(ctx context.Context, reg *core.Registry, prices core.Prices, by string, since time.Duration) ([]usageLine, error) {
	f := core.UsageFilter{}
	if since > 0 {
		f.Since = core.TS(reg.Clock().Now().Add(-since))
	}
	switch by {
	case "session":
		f.Scope = core.UsageSession
	case "run":
		f.Scope = core.UsageRun
	case "task":
		f.Scope = core.UsageTask
	}
	list := reg.ListUsage // every token: the running totals
	if f.Since != 0 {
		list = reg.SumUsage // the tokens counted since then, from each count
	}
	rows, err := list(ctx, f)
	if err != nil {
		return nil, err
	}
	if by == "model" || by == "agent" {
		rows = dropRunRows(rows)
	}
	key := func(r core.UsageRow) string { return r.ID }
	switch by {
	case "model":
		key = func(r core.UsageRow) string { return r.Model }
	case "agent":
		agents, err := sessionAgents(ctx, reg, rows)
		if err != nil {
			return nil, err
		}
		key = func(r core.UsageRow) string { return agents[string(r.Scope)+":"+r.ID] }
	}
	return usageLines(rows, prices, key), nil
}

// dropRunRows leaves out run rows: a run's tokens are its session's too.
func dropRunRows(rows []core.UsageRow) []core.UsageRow {
	out := rows[:0:0]
	for _, r := range rows {
		if r.Scope != core.UsageRun {
			out = append(out, r)
		}
	}
	return out
}

// sessionAgents maps "session:<id>" to its session's agent ("claude",
// "codex", "gemini"; "unknown" when unsaid) and "task:<id>" to "task
// track".
func sessionAgents(ctx context.Context, reg *core.Registry, rows []core.UsageRow) (map[string]string, error) {
	out := map[string]string{}
	for _, r := range rows {
		k := string(r.Scope) + ":" + r.ID
		if _, ok := out[k]; ok {
			continue
		}
		if r.Scope == core.UsageTask {
			out[k] = "task track"
			continue
		}
		out[k] = "unknown"
		s, _, err := reg.WholeIDs().GetSession(ctx, r.ID)
		if err == nil && s.Agent != "" {
			out[k] = s.Agent
		} else if err != nil && !errors.Is(err, core.ErrNotFound) {
			return nil, err
		}
	}
	return out, nil
}

// usageTotal is the sum of lines as one line keyed "total".
func usageTotal(lines []usageLine) usageLine {
	t := usageLine{Key: "total", Models: []string{}, Unpriced: []string{}}
	for _, l := range lines {
		t.Tokens = t.Tokens.Add(l.Tokens)
		if l.CostUSD != nil {
			c := costOf(t) + *l.CostUSD
			t.CostUSD = &c
		}
		if l.ReportedCostUSD != nil {
			c := *l.ReportedCostUSD
			if t.ReportedCostUSD != nil {
				c += *t.ReportedCostUSD
			}
			t.ReportedCostUSD = &c
		}
		for _, m := range l.Models {
			if !contains(t.Models, m) {
				t.Models = append(t.Models, m)
			}
		}
		for _, m := range l.Unpriced {
			if !contains(t.Unpriced, m) {
				t.Unpriced = append(t.Unpriced, m)
			}
		}
		t.CountedAt = max(t.CountedAt, l.CountedAt)
	}
	return t
}

// printUsage prints the table an operator pastes into a chat.
func printUsage(w io.Writer, by string, since time.Duration, lines []usageLine) error {
	window := "all time"
	if since > 0 {
		window = "counted in the last " + termtext.Duration(since)
	}
	if len(lines) == 0 {
		_, err := fmt.Fprintf(w, "no usage recorded (%s)\n", window)
		return err
	}
	tw := newTable(w)
	row(tw, strings.ToUpper(by), "MODELS", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "COST", "LAST COUNT")
	n := now()
	for _, l := range append(lines, usageTotal(lines)) {
		models := strings.Join(l.Models, ", ")
		if by == "model" {
			models = ""
		}
		row(tw, termtext.Exact(l.Key, 40), termtext.Exact(models, 60), termtext.Thousands(l.Tokens.Input),
			termtext.Thousands(l.Tokens.Output), termtext.Thousands(l.Tokens.CacheWrite),
			termtext.Thousands(l.Tokens.CacheRead), costText(l), age(n, l.CountedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s, by %s; cost = tokens × the price table (clawpit usage --help)\n", window, by)
	return err
}

// prices is the price table: core.DefaultPrices overridden by config.toml
// [prices."model"]. Errors: a malformed config; a negative price (exit 2,
// naming the model).
func (a *app) prices() (core.Prices, error) {
	cfg, err := a.config()
	if err != nil {
		return nil, err
	}
	for name, p := range cfg.Prices {
		if p.Input < 0 || p.Output < 0 || p.CacheWrite < 0 || p.CacheRead < 0 {
			return nil, usageError{fmt.Errorf("%s: [prices.%q]: a price is negative", cfg.Path, name)}
		}
	}
	return core.DefaultPrices().With(cfg.Prices), nil
}

// showUsage is the usage of the entity a show command printed: its rows
// per model (scope and id), nil when x has none.
func showUsage(ctx context.Context, reg *core.Registry, prices core.Prices, x any) (*orderedObject, []usageLine, error) {
	var scope core.UsageScope
	var id string
	switch v := x.(type) {
	case *core.Session:
		scope, id = core.UsageSession, v.ID
	case *core.Run:
		scope, id = core.UsageRun, v.RunID
	case *core.Task:
		scope, id = core.UsageTask, v.ID
	default:
		return nil, nil, nil
	}
	rows, err := reg.ListUsage(ctx, core.UsageFilter{Scope: scope, IDs: []string{id}})
	if err != nil {
		return nil, nil, err
	}
	lines := usageLines(rows, prices, func(r core.UsageRow) string { return r.Model })
	obj := orderedObject{{"by_model", lines}, {"total", usageTotal(lines)}}
	return &obj, lines, nil
}

// printShowUsage prints a show command's usage section: one line per model
// and the total, or nothing when none was counted.
func printShowUsage(w io.Writer, lines []usageLine) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nusage:")
	tw := newTable(w)
	row(tw, "  MODEL", "INPUT", "OUTPUT", "CACHE WRITE", "CACHE READ", "COST")
	for _, l := range append(lines, usageTotal(lines)) {
		row(tw, "  "+termtext.Exact(l.Key, 60), termtext.Thousands(l.Tokens.Input), termtext.Thousands(l.Tokens.Output),
			termtext.Thousands(l.Tokens.CacheWrite), termtext.Thousands(l.Tokens.CacheRead), costText(l))
	}
	tw.Flush()
}
