package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// SweeperMaintenance adapts the core sweeper to the console's Maintenance.
func SweeperMaintenance(s *core.Sweeper) Maintenance { return sweeperMaint{s} }

type sweeperMaint struct{ s *core.Sweeper }

func (m sweeperMaint) Plan(ctx context.Context) (*Plan, error) {
	p, err := m.s.Plan(ctx)
	if err != nil {
		return nil, err
	}
	out := &Plan{Raw: p, Empty: len(p.Actions) == 0}
	var c core.SweepCounts
	for _, a := range p.Actions {
		countAction(&c, a)
		out.Lines = append(out.Lines, actionLine(a, ""))
	}
	for _, f := range p.Findings {
		if f.Severity == core.SeverityError {
			c.Errors++
		} else {
			c.Warnings++
		}
		out.Lines = append(out.Lines, findingLine(f))
	}
	if p.Truncated {
		out.Lines = append(out.Lines, "(more due rows than one sweep takes: the rest is left for the next sweep)")
	}
	if out.Empty {
		out.Summary = "Nothing to apply" + auditText(c)
	} else {
		out.Summary = fmt.Sprintf("%d %s planned: %s%s", len(p.Actions), plural(len(p.Actions), "action", "actions"),
			countsText(c, false), auditText(c))
	}
	return out, nil
}

func (m sweeperMaint) Apply(ctx context.Context, p *Plan) (SweepResult, error) {
	cp, ok := p.Raw.(*core.Plan)
	if !ok {
		return SweepResult{}, fmt.Errorf("not a sweeper plan: %T", p.Raw)
	}
	rep, err := m.s.Apply(ctx, cp)
	return resultOf(rep), err
}

func (m sweeperMaint) Sweep(ctx context.Context) (SweepResult, error) {
	rep, err := m.s.Sweep(ctx, false)
	return resultOf(rep), err
}

func (m sweeperMaint) Watchdog(ctx context.Context) (SweepResult, error) {
	rep, err := m.s.Watchdog(ctx)
	return resultOf(rep), err
}

// resultOf summarises a report for the header and the status line.
func resultOf(rep *core.SweepReport) SweepResult {
	if rep == nil {
		return SweepResult{}
	}
	r := SweepResult{Text: rep.Summary()}
	for _, a := range rep.Actions {
		r.Lines = append(r.Lines, actionLine(a, rep.Mode))
		if a.Result == core.ActionApplied {
			r.Wrote = true
		}
	}
	for _, f := range rep.Findings {
		r.Lines = append(r.Lines, findingLine(f))
	}
	r.Short = countsText(rep.Counts, true) + auditText(rep.Counts)
	return r
}

// countAction counts a planned action like the sweeper's report does.
func countAction(c *core.SweepCounts, a core.Action) {
	switch a.Rule {
	case core.RuleJobLiveness, core.RuleEarlyLost, core.RuleGraceLost:
		c.Lost++
	case core.RuleWatchdog:
		if a.Entity == core.EntityRun {
			c.TimedOut++
		}
	case core.RuleApprovalExpiry:
		c.Expired++
	case core.RuleSilentTask:
		c.Silent++
	case core.RuleStamp:
		c.Stamped++
	case core.RulePrune:
		c.Pruned++
	}
}

// countsText lists the non-zero counts: "3 lost · 12 pruned"; "nothing to do"
// when all are zero (raced counts only when asked).
func countsText(c core.SweepCounts, raced bool) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(c.Lost, "lost")
	add(c.TimedOut, "timed out")
	add(c.Expired, "expired")
	add(c.Silent, "silent")
	add(c.Stamped, "stamped")
	add(c.Pruned, "pruned")
	if raced {
		add(c.Raced, "raced")
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, " · ")
}

func auditText(c core.SweepCounts) string {
	if c.Errors == 0 && c.Warnings == 0 {
		return ""
	}
	return "; audit: " + plural2(c.Errors, "error", "errors") + " · " + plural2(c.Warnings, "warning", "warnings")
}

func actionLine(a core.Action, mode string) string {
	mark := ""
	switch a.Result {
	case core.ActionRaced:
		mark = " [raced]"
	case core.ActionFailed:
		mark = " [failed]"
	case core.ActionPlanned:
		if mode == core.ModeApplied {
			mark = " [not applied]"
		}
	}
	// The short id (as the panes show it) leaves room for the reason, which
	// is what the operator needs to judge the action.
	return oneLine(fmt.Sprintf("%s %s %s: %s → %s — %s%s", a.Rule, a.Entity, shortID(a.ID), a.From, a.To, a.Reason, mark))
}

func findingLine(f core.Finding) string {
	return oneLine(fmt.Sprintf("audit %s %s %s %s: %s", f.Severity, f.Kind, f.Entity, shortID(f.ID), f.Detail))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural2(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }
