package core

// Budgets (issue 27): limits on what one session, one sub-agent run, and
// every agent together in an hour spend, in tokens or in US dollars. A
// count that crosses one raises a budget_exceeded alert (once per crossing
// of one limit); with the action "gate", every further tool call of the
// session (or run) over its budget waits for an operator, whatever the
// agent's gate regex, until the operator raises the budget or the session
// ends. The budgets in force live in the registry (table budgets), so the
// hooks of every agent, on every host, read the same ones the daemon alerts
// on.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BudgetAction is what crossing a budget does.
type BudgetAction string

// Budget actions: alert only, or alert and gate every further tool call.
const (
	BudgetAlert BudgetAction = "alert"
	BudgetGate  BudgetAction = "gate"
)

// ParseBudgetAction parses "alert" or "gate". Errors wrap ErrInvalid.
func ParseBudgetAction(s string) (BudgetAction, error) {
	return parseEnum("budget action", s, []BudgetAction{BudgetAlert, BudgetGate})
}

// NotifyBudgetExceeded is the alert of a crossed budget; its subject is the
// session or run over it ("" for the hourly budget).
const NotifyBudgetExceeded NotificationKind = "budget_exceeded"

// EntityBudget is the journal's entity of budget changes; its ids are
// "registry", "session:<id>" and "run:<id>".
const EntityBudget = "budget"

// Limit is one budget: Tokens (the four counts summed, in tokens) and
// MicroUSD (cost, in millionths of a US dollar). 0 is no limit of that kind;
// a Limit with both is crossed by either.
type Limit struct {
	Tokens   int64 `json:"tokens,omitempty"`
	MicroUSD int64 `json:"micro_usd,omitempty"`
}

// IsZero reports whether l limits nothing.
func (l Limit) IsZero() bool { return l == Limit{} }

// over is l with every kind o sets replaced by o's (a raised limit).
func (l Limit) over(o Limit) Limit {
	if o.Tokens != 0 {
		l.Tokens = o.Tokens
	}
	if o.MicroUSD != 0 {
		l.MicroUSD = o.MicroUSD
	}
	return l
}

// String is "$5.00 or 2,000,000 tokens", "none" when l limits nothing.
func (l Limit) String() string {
	var parts []string
	if l.MicroUSD > 0 {
		parts = append(parts, USDText(l.MicroUSD))
	}
	if l.Tokens > 0 {
		parts = append(parts, TokensText(l.Tokens)+" tokens")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " or ")
}

// BudgetSpec is the registry's budgets: per session (its own calls and its
// sub-agents'), per sub-agent run, and per hour across every agent (the
// tokens counted in the last 60 minutes), the action on crossing, and the
// price overrides (config.toml [prices]) costs are computed with, so that
// every hook prices as the process that set the budget did.
type BudgetSpec struct {
	Session Limit        `json:"session"`
	Run     Limit        `json:"run"`
	Hour    Limit        `json:"hour"`
	Action  BudgetAction `json:"action"`
	Prices  Prices       `json:"prices,omitempty"`
}

// IsZero reports whether s sets no limit.
func (s BudgetSpec) IsZero() bool { return s.Session.IsZero() && s.Run.IsZero() && s.Hour.IsZero() }

// Validate checks s: no negative limit, a known action ("" is alert).
// Errors wrap ErrInvalid.
func (s *BudgetSpec) Validate() error {
	if s.Action == "" {
		s.Action = BudgetAlert
	}
	if _, err := ParseBudgetAction(string(s.Action)); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		l    Limit
	}{{"session", s.Session}, {"run", s.Run}, {"hour", s.Hour}} {
		if l.l.Tokens < 0 || l.l.MicroUSD < 0 {
			return Invalidf("budget per %s: a limit must not be negative", l.name)
		}
	}
	return nil
}

// BudgetRecord is one row of the budgets table: Key "" (the registry's
// BudgetSpec), "session:<id>" or "run:<id>" (one entity's raised Limit);
// Spec is its JSON.
type BudgetRecord struct {
	Key   string
	Spec  string
	SetBy Actor
	SetAt Timestamp
}

// Budgets is what the registry holds: the spec in force (zero when none was
// set) and the raised limits of single sessions and runs, by key
// ("session:<id>", "run:<id>").
type Budgets struct {
	Spec   BudgetSpec
	SetBy  Actor
	SetAt  Timestamp
	Raised map[string]Limit
}

// BudgetBreach is one budget crossed.
type BudgetBreach struct {
	Scope string // "session", "run" or "hour"
	ID    string // the session's or run's id; "" for the hour
	Limit Limit  // the limit in force (a raised one included)
	// Tokens is what was spent (the four counts summed), CostMicroUSD its
	// cost at the spec's prices (models without a price count 0).
	Tokens       int64
	CostMicroUSD int64
	Action       BudgetAction
}

// costOver reports whether the breach is of the cost limit (else tokens).
func (b BudgetBreach) costOver() bool {
	return b.Limit.MicroUSD > 0 && b.CostMicroUSD >= b.Limit.MicroUSD
}

// Reason says the breach in words: "session over its budget of $5.00:
// $5.12 spent", "run over its budget of 200,000 tokens: 212,400 spent",
// "all agents over the hourly budget of $20.00: $21.30 in the last hour".
func (b BudgetBreach) Reason() string {
	limit, spent := TokensText(b.Limit.Tokens)+" tokens", TokensText(b.Tokens)
	if b.costOver() {
		limit, spent = USDText(b.Limit.MicroUSD), USDText(b.CostMicroUSD)
	}
	if b.Scope == "hour" {
		return "all agents over the hourly budget of " + limit + ": " + spent + " in the last hour"
	}
	return b.Scope + " over its budget of " + limit + ": " + spent + " spent"
}

// dedupKey is the alert's: one per crossing of one limit of one entity (a
// raised limit crossed again alerts again); the hour's once per clock hour.
func (b BudgetBreach) dedupKey(now Timestamp) string {
	kind, limit := "tokens", b.Limit.Tokens
	if b.costOver() {
		kind, limit = "cost", b.Limit.MicroUSD
	}
	id := b.ID
	if b.Scope == "hour" {
		id = strconv.FormatInt(int64(now)/int64(time.Hour/time.Millisecond), 10)
	}
	return fmt.Sprintf("budget:%s:%s:%s:%d", b.Scope, id, kind, limit)
}

// USDText is micro in dollars and cents, rounded: "$5.12".
func USDText(micro int64) string {
	cents := (micro + 5_000) / 10_000
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}

// TokensText is n with thousands separators: "2,000,000".
func TokensText(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// spent sums rows: tokens (the four counts) and their cost at prices, in
// micro-USD (a model without a price adds its tokens, not a cost).
func spent(rows []UsageRow, prices Prices) (tokens, micro int64) {
	var usd float64
	for _, r := range rows {
		tokens += r.Tokens.Total()
		if p, ok := prices.Lookup(r.Model); ok {
			usd += p.Cost(r.Tokens)
		}
	}
	return tokens, MicroUSD(usd)
}

// crossed reports whether tokens or micro reach l (a limit reached is
// crossed: a budget of $5 is over at $5.00).
func crossed(l Limit, tokens, micro int64) bool {
	return (l.Tokens > 0 && tokens >= l.Tokens) || (l.MicroUSD > 0 && micro >= l.MicroUSD)
}

// BudgetUsage is what CheckBudgets weighs: the session's rows, the run's
// (nil for a call outside a sub-agent) and every agent's of the last hour.
type BudgetUsage struct {
	Session, Run, Hour []UsageRow
}

// CheckBudgets returns the budgets of b that u crosses, in the order
// session, run, hour: sessionID's (its raised limit, if any, in place of
// the spec's), runID's ("" checks no run), and the hour's. Costs are at
// DefaultPrices overridden by the spec's Prices.
func CheckBudgets(b Budgets, sessionID, runID string, u BudgetUsage) []BudgetBreach {
	if b.Spec.IsZero() {
		return nil
	}
	prices := DefaultPrices().With(b.Spec.Prices)
	var out []BudgetBreach
	check := func(scope, id string, l Limit, rows []UsageRow) {
		if l.IsZero() {
			return
		}
		tok, micro := spent(rows, prices)
		if crossed(l, tok, micro) {
			out = append(out, BudgetBreach{Scope: scope, ID: id, Limit: l, Tokens: tok, CostMicroUSD: micro, Action: b.Spec.Action})
		}
	}
	if sessionID != "" {
		check("session", sessionID, b.Spec.Session.over(b.Raised["session:"+sessionID]), u.Session)
	}
	if runID != "" {
		check("run", runID, b.Spec.Run.over(b.Raised["run:"+runID]), u.Run)
	}
	check("hour", "", b.Spec.Hour, u.Hour)
	return out
}

// budgetsTx reads the budgets table.
func budgetsTx(tx Tx) (Budgets, error) {
	recs, err := tx.ListBudgets()
	if err != nil {
		return Budgets{}, fmt.Errorf("budgets: %w", err)
	}
	var b Budgets
	for _, rec := range recs {
		if rec.Key == "" {
			if err := json.Unmarshal([]byte(rec.Spec), &b.Spec); err != nil {
				return Budgets{}, fmt.Errorf("budget spec: %w", err)
			}
			b.SetBy, b.SetAt = rec.SetBy, rec.SetAt
			continue
		}
		var l Limit
		if err := json.Unmarshal([]byte(rec.Spec), &l); err != nil {
			return Budgets{}, fmt.Errorf("budget %s: %w", rec.Key, err)
		}
		if b.Raised == nil {
			b.Raised = map[string]Limit{}
		}
		b.Raised[rec.Key] = l
	}
	return b, nil
}

// budgetUsageTx reads what CheckBudgets weighs for sessionID and runID at
// now: the session's and run's totals (token_usage) and every session's and
// tracked task's counts of the last hour (usage_counts; a run's tokens are
// in its session's already).
func budgetUsageTx(tx Tx, b Budgets, sessionID, runID string, now Timestamp) (BudgetUsage, error) {
	var u BudgetUsage
	var err error
	if sessionID != "" && !b.Spec.Session.IsZero() {
		if u.Session, err = tx.ListUsage(UsageFilter{Scope: UsageSession, IDs: []string{sessionID}}); err != nil {
			return u, err
		}
	}
	if runID != "" && !b.Spec.Run.IsZero() {
		if u.Run, err = tx.ListUsage(UsageFilter{Scope: UsageRun, IDs: []string{runID}}); err != nil {
			return u, err
		}
	}
	if !b.Spec.Hour.IsZero() {
		since := now.Add(-time.Hour)
		for _, scope := range []UsageScope{UsageSession, UsageTask} {
			rows, err := tx.SumUsage(UsageFilter{Scope: scope, Since: since})
			if err != nil {
				return u, err
			}
			u.Hour = append(u.Hour, rows...)
		}
	}
	return u, nil
}

// Budgets returns the budgets in force.
func (r *Registry) Budgets(ctx context.Context) (Budgets, error) {
	var b Budgets
	err := r.store.View(ctx, func(tx Tx) (err error) {
		b, err = budgetsTx(tx)
		return err
	})
	return b, err
}

// BudgetBreaches returns the budgets that sessionID (and runID, when a
// sub-agent's call) has crossed, and the budgets in force: the gated hook
// asks it before each tool call (with the action "gate", a breach makes the
// call wait for an operator). Errors: the store's.
func (r *Registry) BudgetBreaches(ctx context.Context, sessionID, runID string) ([]BudgetBreach, Budgets, error) {
	var out []BudgetBreach
	var b Budgets
	err := r.store.View(ctx, func(tx Tx) error {
		var err error
		if b, err = budgetsTx(tx); err != nil || b.Spec.IsZero() {
			return err
		}
		u, err := budgetUsageTx(tx, b, sessionID, runID, r.now())
		if err != nil {
			return fmt.Errorf("budget usage: %w", err)
		}
		out = CheckBudgets(b, sessionID, runID, u)
		return nil
	})
	return out, b, err
}

// budgetAlerts raises, in tx, one budget_exceeded alert for each budget the
// counts just added made sessionID (and runID) cross; an alert of the same
// crossing raised before is not raised again (dedup key).
func (r *Registry) budgetAlerts(tx Tx, sessionID, runID string) error {
	b, err := budgetsTx(tx)
	if err != nil || b.Spec.IsZero() {
		return err
	}
	now := r.now()
	u, err := budgetUsageTx(tx, b, sessionID, runID, now)
	if err != nil {
		return fmt.Errorf("budget usage: %w", err)
	}
	for _, br := range CheckBudgets(b, sessionID, runID, u) {
		text := br.Reason()
		if br.Action == BudgetGate {
			text += "; its tool calls now wait for an operator's approval until the budget is raised"
			if br.Scope == "hour" {
				text = br.Reason() + "; every agent's tool calls now wait for an operator's approval until the budget is raised"
			}
		}
		session := sessionID
		if br.Scope == "hour" {
			session = ""
		}
		n := &Notification{Session: session, Kind: NotifyBudgetExceeded, SubjectID: br.ID, CreatedAt: now,
			Text: text, DedupKey: br.dedupKey(now)}
		if _, err := tx.InsertNotification(n); err != nil {
			return fmt.Errorf("budget alert: %w", err)
		}
	}
	return nil
}

// SetBudget replaces the registry's budgets with spec (validated; the
// raised limits of single sessions and runs stay), journaled as entity
// budget "registry" with the operator (actor) and the new limits. An equal
// spec changes nothing (Applied false). Errors: ErrInvalid from Validate;
// the store's.
func (r *Registry) SetBudget(ctx context.Context, spec BudgetSpec, actor Actor) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return Result{}, fmt.Errorf("budget spec: %w", err)
	}
	var res Result
	err = r.store.Update(ctx, func(tx Tx) error {
		res = Result{}
		old, found, err := tx.GetBudget("")
		if err != nil {
			return err
		}
		if found && old.Spec == string(body) {
			res.Reason = "the budgets in force are these already"
			return nil
		}
		now := r.now()
		if err := tx.PutBudget(BudgetRecord{Key: "", Spec: string(body), SetBy: actor, SetAt: now}); err != nil {
			return fmt.Errorf("set budget: %w", err)
		}
		res.Applied = true
		return journal(tx, now, EntityBudget, "registry", "", spec.Describe(), actor, "budgets set", true)
	})
	return res, err
}

// Describe is spec in words: "session $5.00, run 200,000 tokens, hour
// none; action gate".
func (s BudgetSpec) Describe() string {
	action := s.Action
	if action == "" {
		action = BudgetAlert
	}
	return fmt.Sprintf("session %s, run %s, hour %s; action %s", s.Session, s.Run, s.Hour, action)
}

// RaiseBudget sets the limit of one session (scope UsageSession) or run
// (UsageRun) to l, in place of the registry's for the kinds l sets: the
// operator's way to let a session over its budget go on without gating
// every call. id is matched as the registry's ids are (a unique prefix of
// 4 or more characters, or whole). Journaled as entity budget
// "<scope>:<id>". Errors: ErrInvalid for another scope, a zero or negative
// limit; ErrNotFound for an unknown session or run; the store's.
func (r *Registry) RaiseBudget(ctx context.Context, scope UsageScope, id string, l Limit, actor Actor) (string, Result, error) {
	if l.IsZero() || l.Tokens < 0 || l.MicroUSD < 0 {
		return "", Result{}, Invalidf("a raised budget needs a positive cost or token limit")
	}
	var res Result
	var whole string
	err := r.store.Update(ctx, func(tx Tx) error {
		res, whole = Result{}, ""
		var err error
		switch scope {
		case UsageSession:
			whole, err = resolve(tx, EntitySession, id, r.match)
		case UsageRun:
			whole, err = resolve(tx, EntityRun, id, r.match)
		default:
			return Invalidf("a budget is raised for a session or a run, not %q", scope)
		}
		if err != nil {
			return err
		}
		key := string(scope) + ":" + whole
		old, found, err := tx.GetBudget(key)
		if err != nil {
			return err
		}
		var prev Limit
		if found {
			if err := json.Unmarshal([]byte(old.Spec), &prev); err != nil {
				return fmt.Errorf("budget %s: %w", key, err)
			}
		}
		next := prev.over(l)
		if found && next == prev {
			res.Reason = "its budget is " + next.String() + " already"
			return nil
		}
		body, err := json.Marshal(next)
		if err != nil {
			return err
		}
		now := r.now()
		if err := tx.PutBudget(BudgetRecord{Key: key, Spec: string(body), SetBy: actor, SetAt: now}); err != nil {
			return fmt.Errorf("raise budget: %w", err)
		}
		res.Applied = true
		from := ""
		if found {
			from = prev.String()
		}
		return journal(tx, now, EntityBudget, key, from, next.String(), actor, "budget raised", true)
	})
	if err != nil {
		return "", Result{}, err
	}
	return whole, res, nil
}
