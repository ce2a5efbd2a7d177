package tui

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/maintain/sweep"
)

// SweeperMaintenance adapts the core sweeper to the console's Maintenance.
func SweeperMaintenance(s *sweep.Sweeper) Maintenance { return sweeperMaint{s} }

type sweeperMaint struct{ s *sweep.Sweeper }

func (m sweeperMaint) Plan(ctx context.Context) (*Plan, error) {
	p, err := m.s.Plan(ctx)
	if err != nil {
		return nil, err
	}
	rep := p.DryRun()
	out := &Plan{Raw: p, Empty: len(p.Actions) == 0, Lines: reportLines(rep)}
	c := rep.Counts
	if out.Empty {
		out.Summary = "Nothing to apply" + auditText(c)
	} else {
		out.Summary = fmt.Sprintf("%d %s planned: %s%s", len(p.Actions), plural(len(p.Actions), "action", "actions"),
			countsText(c, false), auditText(c))
	}
	return out, nil
}

func (m sweeperMaint) Apply(ctx context.Context, p *Plan) (SweepResult, error) {
	cp, ok := p.Raw.(*sweep.Plan)
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
func resultOf(rep *sweep.Report) SweepResult {
	if rep == nil {
		return SweepResult{}
	}
	r := SweepResult{Text: rep.Summary(), Lines: reportLines(rep)}
	for _, a := range rep.Actions {
		if a.Result == sweep.ActionApplied {
			r.Wrote = true
		}
	}
	r.Short = countsText(rep.Counts, true) + auditText(rep.Counts)
	return r
}

// reportLines are the sweeper's own report lines, one line each, with ids
// cut to the shortest prefix that tells the lines' rows apart (at least as
// long as the panes' short ids).
func reportLines(rep *sweep.Report) []string {
	lines := rep.Lines(minPrefix)
	for i, l := range lines {
		lines[i] = oneLine(l)
	}
	return lines
}

// countsText lists the non-zero counts: "3 lost · 12 pruned"; "nothing to do"
// when all are zero (raced counts only when asked).
func countsText(c sweep.Counts, raced bool) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(c.Lost, "lost")
	add(c.TimedOut, "timed out")
	add(c.Expired, "expired")
	add(c.Withdrawn, "withdrawn")
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

func auditText(c sweep.Counts) string {
	if c.Errors == 0 && c.Warnings == 0 {
		return ""
	}
	return "; audit: " + plural2(c.Errors, "error", "errors") + " · " + plural2(c.Warnings, "warning", "warnings")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural2(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }
