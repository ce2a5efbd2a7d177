package core_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// row is a usage row of model with input and output tokens.
func row(model string, in, out int64) core.UsageRow {
	return core.UsageRow{Model: model, Tokens: core.Tokens{Input: in, Output: out}}
}

// TestCheckBudgets: every budget rule on the rows given. Claude Sonnet 4 is
// $3 in and $15 out per million tokens, so 1M input tokens cost $3.00.
func TestCheckBudgets(t *testing.T) {
	const son = "claude-sonnet-4-5"
	usd := func(d float64) int64 { return core.MicroUSD(d) }
	gate := func(s core.BudgetSpec) core.Budgets { s.Action = core.BudgetGate; return core.Budgets{Spec: s} }
	tests := []struct {
		name    string
		b       core.Budgets
		run     string
		u       core.BudgetUsage
		reasons []string
	}{
		{name: "no budget set", b: core.Budgets{},
			u: core.BudgetUsage{Session: []core.UsageRow{row(son, 1e9, 0)}}},
		{name: "session under its cost", b: gate(core.BudgetSpec{Session: core.Limit{MicroUSD: usd(5)}}),
			u: core.BudgetUsage{Session: []core.UsageRow{row(son, 1_000_000, 0)}}},
		{name: "session at its cost is over", b: gate(core.BudgetSpec{Session: core.Limit{MicroUSD: usd(3)}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 1_000_000, 0)}},
			reasons: []string{"session over its budget of $3.00: $3.00 spent"}},
		{name: "session over its cost, models summed", b: gate(core.BudgetSpec{Session: core.Limit{MicroUSD: usd(5)}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 1_000_000, 100_000), row("claude-haiku-4-5", 1_000_000, 24_000)}},
			reasons: []string{"session over its budget of $5.00: $5.62 spent"}},
		{name: "session over its tokens", b: gate(core.BudgetSpec{Session: core.Limit{Tokens: 200_000}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 200_000, 12_400)}},
			reasons: []string{"session over its budget of 200,000 tokens: 212,400 spent"}},
		{name: "a model without a price counts tokens, not cost",
			b:       gate(core.BudgetSpec{Session: core.Limit{MicroUSD: usd(1), Tokens: 1000}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row("llama-local", 1e9, 0)}},
			reasons: []string{"session over its budget of 1,000 tokens: 1,000,000,000 spent"}},
		{name: "price overrides of the spec apply",
			b: gate(core.BudgetSpec{Session: core.Limit{MicroUSD: usd(1)},
				Prices: core.Prices{"llama-local": {Input: 2}}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row("llama-local", 1_000_000, 0)}},
			reasons: []string{"session over its budget of $1.00: $2.00 spent"}},
		{name: "a raised limit replaces the spec's for that session",
			b: core.Budgets{Spec: core.BudgetSpec{Session: core.Limit{MicroUSD: usd(3)}, Action: core.BudgetGate},
				Raised: map[string]core.Limit{"session:s1": {MicroUSD: usd(10)}}},
			u: core.BudgetUsage{Session: []core.UsageRow{row(son, 2_000_000, 0)}}},
		{name: "a raised limit of another session does not",
			b: core.Budgets{Spec: core.BudgetSpec{Session: core.Limit{MicroUSD: usd(3)}, Action: core.BudgetGate},
				Raised: map[string]core.Limit{"session:s2": {MicroUSD: usd(10)}}},
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 2_000_000, 0)}},
			reasons: []string{"session over its budget of $3.00: $6.00 spent"}},
		{name: "a raised cost keeps the spec's token limit",
			b: core.Budgets{Spec: core.BudgetSpec{Session: core.Limit{MicroUSD: usd(3), Tokens: 100}, Action: core.BudgetGate},
				Raised: map[string]core.Limit{"session:s1": {MicroUSD: usd(10)}}},
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 2_000_000, 0)}},
			reasons: []string{"session over its budget of 100 tokens: 2,000,000 spent"}},
		{name: "run over its budget, session not", run: "r1",
			b:       gate(core.BudgetSpec{Session: core.Limit{Tokens: 1_000_000}, Run: core.Limit{Tokens: 1000}}),
			u:       core.BudgetUsage{Session: []core.UsageRow{row(son, 5000, 0)}, Run: []core.UsageRow{row(son, 1500, 0)}},
			reasons: []string{"run over its budget of 1,000 tokens: 1,500 spent"}},
		{name: "a run's budget is not checked for a call outside it",
			b: gate(core.BudgetSpec{Run: core.Limit{Tokens: 1000}}),
			u: core.BudgetUsage{Run: []core.UsageRow{row(son, 1500, 0)}}},
		{name: "the hour across all agents", b: gate(core.BudgetSpec{Hour: core.Limit{MicroUSD: usd(20)}}),
			u:       core.BudgetUsage{Hour: []core.UsageRow{row(son, 5_000_000, 0), row(son, 2_000_000, 0)}},
			reasons: []string{"all agents over the hourly budget of $20.00: $21.00 in the last hour"}},
		{name: "every budget crossed, in order", run: "r1",
			b: gate(core.BudgetSpec{Session: core.Limit{Tokens: 10}, Run: core.Limit{Tokens: 10}, Hour: core.Limit{Tokens: 10}}),
			u: core.BudgetUsage{Session: []core.UsageRow{row(son, 11, 0)}, Run: []core.UsageRow{row(son, 12, 0)},
				Hour: []core.UsageRow{row(son, 13, 0)}},
			reasons: []string{"session over its budget of 10 tokens: 11 spent", "run over its budget of 10 tokens: 12 spent",
				"all agents over the hourly budget of 10 tokens: 13 in the last hour"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := core.CheckBudgets(tc.b, "s1", tc.run, tc.u)
			var reasons []string
			for _, b := range got {
				reasons = append(reasons, b.Reason())
			}
			if strings.Join(reasons, "\n") != strings.Join(tc.reasons, "\n") {
				t.Fatalf("breaches:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(tc.reasons, "\n"))
			}
		})
	}
}

// TestBudgetSpecValidate: a negative limit and an unknown action are bad
// input; no action is alert.
func TestBudgetSpecValidate(t *testing.T) {
	s := core.BudgetSpec{Session: core.Limit{Tokens: 1}}
	if err := s.Validate(); err != nil || s.Action != core.BudgetAlert {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []core.BudgetSpec{{Run: core.Limit{MicroUSD: -1}}, {Action: "stop"}} {
		if err := bad.Validate(); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
}

// TestBudgetAlertOncePerCrossing: the count that crosses a session's budget
// raises one alert, saying why; counts past it raise no more; a raised
// budget crossed again raises another; the gate holds until the raise.
func TestBudgetAlertOncePerCrossing(t *testing.T) {
	f := registrytest.New(t)
	const m = "claude-sonnet-4-5" // $3 per million input tokens
	f.Session("s1")
	_, err := f.Reg.SetBudget(f.Ctx, core.BudgetSpec{Session: core.Limit{MicroUSD: 5_000_000}, Action: core.BudgetGate}, "op@host")
	f.Must(err)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ref := core.TranscriptRef{Path: path, Session: "s1"}
	count := func(id string, in int64) {
		t.Helper()
		writeFile(t, path, asst(id, m, in, 0, 0, 0, false), true)
		_, err := f.Reg.RecordTranscriptUsage(f.Ctx, ref)
		f.Must(err)
		f.Clock.Advance(time.Second)
	}
	breaches := func() []core.BudgetBreach {
		t.Helper()
		br, _, err := f.Reg.BudgetBreaches(f.Ctx, "s1", "")
		f.Must(err)
		return br
	}
	count("m1", 1_000_000) // $3.00
	if n := f.Notifications(core.NotifyBudgetExceeded); len(n) != 0 || len(breaches()) != 0 {
		t.Fatalf("under budget: alerts %+v", n)
	}
	count("m2", 706_667) // $5.12
	alerts := f.Notifications(core.NotifyBudgetExceeded)
	if len(alerts) != 1 || alerts[0].Session != "s1" || alerts[0].SubjectID != "s1" ||
		!strings.HasPrefix(alerts[0].Text, "session over its budget of $5.00: $5.12 spent; its tool calls now wait") {
		t.Fatalf("alerts %+v", alerts)
	}
	if br := breaches(); len(br) != 1 || br[0].Reason() != "session over its budget of $5.00: $5.12 spent" {
		t.Fatalf("breaches %+v", br)
	}
	count("m3", 100_000)
	if n := f.Notifications(core.NotifyBudgetExceeded); len(n) != 1 {
		t.Fatalf("a count past the crossing alerted again: %+v", n)
	}
	// The operator raises it: no breach, until $10 is crossed.
	_, res, err := f.Reg.RaiseBudget(f.Ctx, core.UsageSession, "s1", core.Limit{MicroUSD: 10_000_000}, "op@host")
	f.Must(err)
	if !res.Applied || len(breaches()) != 0 {
		t.Fatalf("raise: %+v, breaches %+v", res, breaches())
	}
	count("m4", 2_000_000) // $11.42
	alerts = f.Notifications(core.NotifyBudgetExceeded)
	if len(alerts) != 2 ||
		!containsText(alerts, "session over its budget of $10.00: $11.42 spent") {
		t.Fatalf("alerts after the raise: %+v", alerts)
	}
	// Another session is not over.
	if br, _, err := f.Reg.BudgetBreaches(f.Ctx, "s2", ""); err != nil || len(br) != 0 {
		t.Fatalf("s2: %+v %v", br, err)
	}
}

func containsText(ns []core.Notification, s string) bool {
	for _, n := range ns {
		if strings.Contains(n.Text, s) {
			return true
		}
	}
	return false
}

// TestHourlyBudgetWindow: the hourly budget sums the tokens counted in the
// last 60 minutes across sessions and tracked tasks; an hour later they no
// longer count.
func TestHourlyBudgetWindow(t *testing.T) {
	f := registrytest.New(t)
	_, err := f.Reg.SetBudget(f.Ctx, core.BudgetSpec{Hour: core.Limit{Tokens: 1000}}, "op@host")
	f.Must(err)
	add := func(scope core.UsageScope, id string, in int64) {
		t.Helper()
		f.Must(f.Reg.AddUsage(f.Ctx, []core.UsageRow{{Scope: scope, ID: id, Model: "m", Tokens: core.Tokens{Input: in}, CountedAt: f.Now()}}))
	}
	add(core.UsageSession, "a", 600)
	f.Clock.Advance(30 * time.Minute)
	add(core.UsageTask, "t1", 500) // 1,100 in the last hour
	br, _, err := f.Reg.BudgetBreaches(f.Ctx, "b", "")
	f.Must(err)
	if len(br) != 1 || br[0].Reason() != "all agents over the hourly budget of 1,000 tokens: 1,100 in the last hour" {
		t.Fatalf("breaches %+v", br)
	}
	if a := f.Notifications(core.NotifyBudgetExceeded); len(a) != 1 || a[0].Session != "" {
		t.Fatalf("alerts %+v", a)
	}
	f.Clock.Advance(31 * time.Minute) // the first count is over an hour old
	if br, _, err = f.Reg.BudgetBreaches(f.Ctx, "b", ""); err != nil || len(br) != 0 {
		t.Fatalf("an hour later: %+v %v", br, err)
	}
}

// TestOverBudgetCallIgnoresGrants: a call over a gating budget waits
// though a grant would approve it, and its rationale says why.
func TestOverBudgetCallIgnoresGrants(t *testing.T) {
	f := registrytest.New(t)
	f.Session("s1")
	a := f.Request("s1", "", "git status")
	_, _, _, err := f.Reg.ApproveApproval(f.Ctx, a.ID, core.ScopeSession, "op@host")
	f.Must(err)
	if again := f.Request("s1", "", "git status"); again.Status != core.ApprovalApproved {
		t.Fatalf("the grant did not approve: %+v", again)
	}
	got, err := f.Reg.RequestApproval(f.Ctx, core.NewApproval{Session: "s1", Tool: "Bash", Command: "git status",
		Rationale: "check", OverBudget: "session over its budget of $5.00: $5.12 spent"}, core.ActorRuntime)
	f.Must(err)
	if got.Status != core.ApprovalPending || got.Rationale != "over budget: session over its budget of $5.00: $5.12 spent — check" {
		t.Fatalf("over budget: %+v", got)
	}
}

// TestSumUsageSince: a window sums the tokens counted within it, not every
// token of a row last counted within it; no window is the running total.
func TestSumUsageSince(t *testing.T) {
	f := registrytest.New(t)
	add := func(in int64) {
		t.Helper()
		f.Must(f.Reg.AddUsage(f.Ctx, []core.UsageRow{{Scope: core.UsageSession, ID: "s1", Model: "m", Tokens: core.Tokens{Input: in}, CountedAt: f.Now()}}))
	}
	add(100)
	f.Clock.Advance(2 * time.Hour)
	add(50)
	since := core.TS(f.Clock.Now().Add(-time.Hour))
	rows, err := f.Reg.SumUsage(f.Ctx, core.UsageFilter{Scope: core.UsageSession, Since: since})
	f.Must(err)
	if len(rows) != 1 || rows[0].Tokens.Input != 50 || rows[0].CountedAt != f.Now() {
		t.Fatalf("the last hour: %+v, want 50 input tokens", rows)
	}
	all, err := f.Reg.ListUsage(f.Ctx, core.UsageFilter{Scope: core.UsageSession})
	f.Must(err)
	if len(all) != 1 || all[0].Tokens.Input != 150 {
		t.Fatalf("the total: %+v, want 150", all)
	}
	if rows, err = f.Reg.SumUsage(f.Ctx, core.UsageFilter{Since: core.TS(f.Clock.Now().Add(time.Minute))}); err != nil || len(rows) != 0 {
		t.Fatalf("a window with no count: %+v %v", rows, err)
	}
}
