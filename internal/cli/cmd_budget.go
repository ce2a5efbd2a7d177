package cli

// Budgets (What it costs): [budget] in config.toml and the --budget-* flags
// of `daemon` and `serve`, published into the registry when they start;
// `clawpit budget` shows, sets and raises them. The registry holds the
// budgets in force because the process that must apply them is the hook
// the agent runs (`clawpit hook`), started with the agent's environment,
// maybe on another host, from a command line fixed at `hooks install`: it
// reads neither the daemon's flags nor, reliably, the operator's config
// file. One copy in the registry gives every hook and every host the same
// limits and the same prices.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// BudgetConfig is the [budget] table: limits per session, per sub-agent run
// and per hour across every agent, in US dollars (*-cost) and tokens
// (*-tokens; the four counts summed); 0 or absent is no limit. Action is
// "alert" (default) or "gate".
type BudgetConfig struct {
	SessionCost   float64 `toml:"session-cost"`
	SessionTokens int64   `toml:"session-tokens"`
	RunCost       float64 `toml:"run-cost"`
	RunTokens     int64   `toml:"run-tokens"`
	HourCost      float64 `toml:"hour-cost"`
	HourTokens    int64   `toml:"hour-tokens"`
	Action        string  `toml:"action"`
}

// budgetKeys are the keys of [budget], which are also the flags of `budget
// set` and, prefixed with "budget-", of `daemon` and `serve`.
var budgetKeys = []struct {
	name, usage string
	cost        bool
}{
	{"session-cost", "US dollars one session may spend (its sub-agents' included)", true},
	{"session-tokens", "tokens one session may spend (input, output, cache write and read summed)", false},
	{"run-cost", "US dollars one sub-agent run may spend", true},
	{"run-tokens", "tokens one sub-agent run may spend", false},
	{"hour-cost", "US dollars every agent together may spend in an hour", true},
	{"hour-tokens", "tokens every agent together may spend in an hour", false},
}

// addBudgetFlags adds the budget flags with prefix ("budget-" on daemon and
// serve, "" on `budget set`).
func addBudgetFlags(fs *pflag.FlagSet, prefix string) {
	for _, k := range budgetKeys {
		if k.cost {
			fs.Float64(prefix+k.name, 0, k.usage+" (0: no limit)")
		} else {
			fs.Int64(prefix+k.name, 0, k.usage+" (0: no limit)")
		}
	}
	fs.String(prefix+"action", "", `on crossing a budget: "alert" (an alert, the default) or "gate" (also every further tool call of the session or run waits for an operator)`)
}

// budgetSpec is the [budget] table overridden by the flags set (prefix as
// addBudgetFlags), with the config's [prices] overrides; set is false when
// neither the table nor a flag sets anything. Errors wrap ErrInvalid and
// name the key or flag.
func (a *app) budgetSpec(fs *pflag.FlagSet, prefix string) (core.BudgetSpec, bool, error) {
	cfg, err := a.config()
	if err != nil {
		return core.BudgetSpec{}, false, err
	}
	b := cfg.Budget
	vals := map[string]float64{"session-cost": b.SessionCost, "session-tokens": float64(b.SessionTokens),
		"run-cost": b.RunCost, "run-tokens": float64(b.RunTokens), "hour-cost": b.HourCost, "hour-tokens": float64(b.HourTokens)}
	set := b != BudgetConfig{}
	action := b.Action
	for _, k := range budgetKeys {
		if !fs.Changed(prefix + k.name) {
			continue
		}
		set = true
		if k.cost {
			vals[k.name], _ = fs.GetFloat64(prefix + k.name)
		} else {
			n, _ := fs.GetInt64(prefix + k.name)
			vals[k.name] = float64(n)
		}
	}
	if fs.Changed(prefix + "action") {
		set = true
		action, _ = fs.GetString(prefix + "action")
	}
	for _, k := range budgetKeys {
		if v := vals[k.name]; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return core.BudgetSpec{}, false, core.Invalidf("budget %s %v: want 0 (no limit) or more", k.name, v)
		}
	}
	spec := core.BudgetSpec{
		Session: core.Limit{MicroUSD: core.MicroUSD(vals["session-cost"]), Tokens: int64(vals["session-tokens"])},
		Run:     core.Limit{MicroUSD: core.MicroUSD(vals["run-cost"]), Tokens: int64(vals["run-tokens"])},
		Hour:    core.Limit{MicroUSD: core.MicroUSD(vals["hour-cost"]), Tokens: int64(vals["hour-tokens"])},
		Action:  core.BudgetAction(action),
		Prices:  cfg.Prices,
	}
	if err := spec.Validate(); err != nil {
		return core.BudgetSpec{}, false, fmt.Errorf("budget action: %w", err)
	}
	return spec, set, nil
}

// publishBudget sets the registry's budgets from [budget] and the
// --budget-* flags of daemon and serve, when either sets one; it returns
// the line to log ("" when nothing was set).
func (a *app) publishBudget(cmd *cobra.Command, reg *core.Registry) (string, error) {
	spec, set, err := a.budgetSpec(cmd.Flags(), "budget-")
	if err != nil || !set {
		return "", err
	}
	res, err := reg.SetBudget(cmd.Context(), spec, core.OperatorActor())
	if err != nil {
		return "", fmt.Errorf("set budgets: %w", err)
	}
	if !res.Applied {
		return "budgets in force: " + spec.Describe(), nil
	}
	return "budgets set: " + spec.Describe(), nil
}

// budgetCommand is `clawpit budget`: show, set, raise.
func budgetCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "budget",
		Short: "Show the budgets in force (set, raise: change them)",
		Long: `Show the budgets in force: what one session, one sub-agent run, and every
agent together in an hour may spend, in US dollars or tokens, and what
crossing one does (alert, or gate: every further tool call of the session or
run waits for an operator's approval, whatever the gate regex, until the
budget is raised or the session ends). Also the sessions and runs whose
budget was raised, and what was spent in the last hour.

The budgets live in the registry, so every hook on every host applies the
same ones: 'clawpit budget set', or [budget] in config.toml and the
--budget-* flags of 'daemon' and 'serve', which set them when they start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			b, err := reg.Budgets(cmd.Context())
			if err != nil {
				return err
			}
			hour, _, err := reg.BudgetBreaches(cmd.Context(), "", "")
			if err != nil {
				return err
			}
			return a.printBudgets(b, hour)
		},
	}
	c.AddCommand(budgetSetCmd(a), budgetRaiseCmd(a))
	return c
}

func budgetSetCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "set",
		Short: "Set the budgets (the flags given; every other limit is none)",
		Long: `Set the registry's budgets to the flags given over [budget] in config.toml
(a limit neither sets is none), with config.toml's [prices] to cost them.
Journaled with your identity. A raised session or run keeps its raise.
'daemon' and 'serve' set them again from their config and flags when they
start.`,
		Example: `  clawpit budget set --session-cost 5 --hour-cost 20 --action gate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, _, err := a.budgetSpec(cmd.Flags(), "")
			if err != nil {
				return err
			}
			reg, err := a.registryCreate(cmd.Context())
			if err != nil {
				return err
			}
			res, err := reg.SetBudget(cmd.Context(), spec, core.OperatorActor())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(mutationJSON(res, "budget", budgetJSON(core.Budgets{Spec: spec})))
			}
			if !res.Applied {
				fmt.Fprintln(a.stdout, "not applied: "+res.Reason)
				return nil
			}
			fmt.Fprintln(a.stdout, "Budgets set: "+spec.Describe()+".")
			return nil
		},
	}
	addBudgetFlags(c.Flags(), "")
	return c
}

func budgetRaiseCmd(a *app) *cobra.Command {
	var (
		run    bool
		cost   float64
		tokens int64
	)
	c := &cobra.Command{
		Use:   "raise ID",
		Short: "Raise one session's (or, with --run, one run's) budget",
		Long: `Raise the budget of one session (or, with --run, one sub-agent run) to
--cost dollars and/or --tokens tokens, in place of the registry's limit of
that kind: a session over its budget goes on without its tool calls waiting
until it crosses the new one. Journaled with your identity.`,
		Example: `  clawpit budget raise 0a4c9f12 --cost 10`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cost < 0 || tokens < 0 || (cost == 0 && tokens == 0) || math.IsNaN(cost) || math.IsInf(cost, 0) {
				return usageError{fmt.Errorf("raise needs --cost or --tokens, positive")}
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			scope := core.UsageSession
			if run {
				scope = core.UsageRun
			}
			l := core.Limit{MicroUSD: core.MicroUSD(cost), Tokens: tokens}
			id, res, err := reg.RaiseBudget(cmd.Context(), scope, args[0], l, core.OperatorActor())
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(mutationJSON(res, "budget", orderedObject{{"scope", string(scope)}, {"id", id}, {"limit", limitJSON(l)}}))
			}
			if !res.Applied {
				fmt.Fprintln(a.stdout, "not applied: "+res.Reason)
				return nil
			}
			fmt.Fprintf(a.stdout, "Raised the budget of %s %s to %s.\n", scope, termtext.Line(id, 200), l)
			return nil
		},
	}
	c.Flags().BoolVar(&run, "run", false, "ID is a sub-agent run's, not a session's")
	c.Flags().Float64Var(&cost, "cost", 0, "the new limit in US dollars")
	c.Flags().Int64Var(&tokens, "tokens", 0, "the new limit in tokens")
	return c
}

// limitJSON is {"cost_usd": n|null, "tokens": n|null}: null is no limit.
func limitJSON(l core.Limit) orderedObject {
	var cost, tokens any
	if l.MicroUSD > 0 {
		cost = float64(l.MicroUSD) / 1e6
	}
	if l.Tokens > 0 {
		tokens = l.Tokens
	}
	return orderedObject{{"cost_usd", cost}, {"tokens", tokens}}
}

// budgetJSON is the budgets' report: {session, run, hour, action, set_by,
// set_at, raised: [{scope, id, cost_usd, tokens}]}.
func budgetJSON(b core.Budgets) orderedObject {
	action := b.Spec.Action
	if action == "" {
		action = core.BudgetAlert
	}
	raised := []orderedObject{}
	for _, k := range sortedKeys(b.Raised) {
		scope, id, _ := strings.Cut(k, ":")
		l := limitJSON(b.Raised[k])
		raised = append(raised, append(orderedObject{{"scope", scope}, {"id", id}}, l...))
	}
	var setAt any
	if b.SetAt != 0 {
		setAt = b.SetAt
	}
	return orderedObject{{"session", limitJSON(b.Spec.Session)}, {"run", limitJSON(b.Spec.Run)},
		{"hour", limitJSON(b.Spec.Hour)}, {"action", string(action)}, {"set_by", string(b.SetBy)},
		{"set_at", setAt}, {"raised", raised}}
}

// printBudgets prints `clawpit budget`: the budgets, who set them, the
// raised ones, and the hourly budget's breach if any.
func (a *app) printBudgets(b core.Budgets, hour []core.BudgetBreach) error {
	if a.jsonOut {
		o := budgetJSON(b)
		var over any
		if len(hour) > 0 {
			over = hour[0].Reason()
		}
		return a.printJSON(append(o, field{"hour_over", over}))
	}
	if b.Spec.IsZero() {
		fmt.Fprintln(a.stdout, "no budgets set (set them with `clawpit budget set` or [budget] in config.toml)")
		return nil
	}
	w := a.stdout
	fmt.Fprintf(w, "per session  %s\nper run      %s\nper hour     %s (every agent)\naction       %s\n",
		b.Spec.Session, b.Spec.Run, b.Spec.Hour, b.Spec.Action)
	if b.SetBy != "" {
		fmt.Fprintf(w, "set by       %s, %s\n", termtext.Line(string(b.SetBy), 200), b.SetAt)
	}
	for _, k := range sortedKeys(b.Raised) {
		fmt.Fprintf(w, "raised       %s: %s\n", termtext.Line(k, 200), b.Raised[k])
	}
	for _, h := range hour {
		fmt.Fprintln(w, "now          "+h.Reason())
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
