package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/termtext"
)

// SweepCounts sums a sweep (SPEC §5 report). In a dry run the action counts
// are what the plan would do; once applied, what it did (raced actions are
// counted under Raced only).
type SweepCounts struct {
	Lost     int `json:"lost"`      // tasks (R5) and jobs (J8) marked lost
	TimedOut int `json:"timed_out"` // runs ended by the watchdog (R6); their mirrored tasks are listed as actions
	Expired  int `json:"expired"`   // approvals expired (R9)
	Silent   int `json:"silent"`    // task_silent notifications raised (R7)
	Stamped  int `json:"stamped"`   // cleanup_after stamped (R8)
	Pruned   int `json:"pruned"`    // rows deleted past cleanup_after (R8)
	Raced    int `json:"raced"`     // actions skipped because a runtime write landed first
	Errors   int `json:"errors"`    // audit findings of severity error (R10)
	Warnings int `json:"warnings"`  // audit findings of severity warning (R10)
}

// SweepReport is the result of a sweep or a watchdog pass. JSON (SPEC §5):
// {mode, started_at, duration_ms, counts{…}, actions[…], findings[…]} plus
// truncated, and step "watchdog" for a watchdog pass.
type SweepReport struct {
	Mode       string      `json:"mode"` // "applied" or "dry_run"
	Step       string      `json:"step,omitempty"`
	StartedAt  Timestamp   `json:"started_at"`
	DurationMs int64       `json:"duration_ms"`
	Counts     SweepCounts `json:"counts"`
	Actions    []Action    `json:"actions"`
	Findings   []Finding   `json:"findings"`
	Truncated  bool        `json:"truncated"`
}

// Report modes.
const (
	ModeApplied = "applied"
	ModeDryRun  = "dry_run"
)

func (s *Sweeper) dryReport(p *Plan) *SweepReport {
	acts := append([]Action(nil), p.Actions...)
	return s.report(p, ModeDryRun, acts, append([]Finding(nil), p.Findings...), p.planTime)
}

func (s *Sweeper) report(p *Plan, mode string, acts []Action, findings []Finding, took time.Duration) *SweepReport {
	if acts == nil {
		acts = []Action{}
	}
	if findings == nil {
		findings = []Finding{}
	}
	rep := &SweepReport{Mode: mode, StartedAt: p.Now, DurationMs: took.Milliseconds(),
		Actions: acts, Findings: findings, Truncated: p.Truncated}
	if p.watchdogOnly {
		rep.Step = "watchdog"
	}
	c := &rep.Counts
	want := ActionApplied
	if mode == ModeDryRun {
		want = ActionPlanned
	}
	for _, a := range acts {
		if a.Result == ActionRaced {
			c.Raced++
			continue
		}
		if a.Result != want {
			continue
		}
		switch a.Rule {
		case RuleJobLiveness, RuleEarlyLost, RuleGraceLost:
			c.Lost++
		case RuleWatchdog:
			if a.Entity == EntityRun {
				c.TimedOut++
			}
		case RuleApprovalExpiry:
			c.Expired++
		case RuleSilentTask:
			c.Silent++
		case RuleStamp:
			c.Stamped++
		case RulePrune:
			c.Pruned++
		}
	}
	for _, f := range findings {
		if f.Severity == SeverityError {
			c.Errors++
		} else {
			c.Warnings++
		}
	}
	return rep
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Summary is the first line of Text: "Sweep applied in 12 ms: 3 lost · 1 timed
// out · 0 expired · 1 silent · 4 stamped · 12 pruned · 0 raced; audit: 1 error
// · 2 warnings" ("Sweep dry run in …" for a dry run; "Watchdog applied in …:
// 1 timed out · 0 raced" for a watchdog pass).
func (r *SweepReport) Summary() string {
	mode := "applied"
	if r.Mode == ModeDryRun {
		mode = "dry run"
	}
	c := r.Counts
	if r.Step == "watchdog" {
		return fmt.Sprintf("Watchdog %s in %d ms: %d timed out · %d raced", mode, r.DurationMs, c.TimedOut, c.Raced)
	}
	return fmt.Sprintf("Sweep %s in %d ms: %d lost · %d timed out · %d expired · %d silent · %d stamped · %d pruned · %d raced; audit: %s · %s",
		mode, r.DurationMs, c.Lost, c.TimedOut, c.Expired, c.Silent, c.Stamped, c.Pruned, c.Raced,
		plural(c.Errors, "error", "errors"), plural(c.Warnings, "warning", "warnings"))
}

// maxReportLine caps one action or finding line of Text, in runes.
const maxReportLine = 2048

// Text is the report of SPEC §5: the summary line, then one line per action
// ("  <rule> <entity> <id>: <from> → <to> — <reason>", with " [raced]" or
// " [failed]" when it did not apply) and one per finding ("  audit <severity>
// <kind> <entity> <id>: <detail>"), each sanitised to one line of at most
// maxReportLine runes (termtext.Line). It ends with a newline.
func (r *SweepReport) Text() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	for _, a := range r.Actions {
		mark := ""
		switch a.Result {
		case ActionRaced:
			mark = " [raced]"
		case ActionFailed:
			mark = " [failed]"
		case ActionPlanned:
			if r.Mode == ModeApplied {
				mark = " [not applied]"
			}
		}
		// Ids, labels and reasons are untrusted: one inert, capped line each.
		b.WriteString(termtext.Line(fmt.Sprintf("  %s %s %s: %s → %s — %s%s", a.Rule, a.Entity, a.ID, a.From, a.To, a.Reason, mark), maxReportLine) + "\n")
	}
	for _, f := range r.Findings {
		b.WriteString(termtext.Line(fmt.Sprintf("  audit %s %s %s %s: %s", f.Severity, f.Kind, f.Entity, f.ID, f.Detail), maxReportLine) + "\n")
	}
	if r.Truncated {
		b.WriteString("  (more due rows than one sweep takes: the rest is left for the next sweep)\n")
	}
	return b.String()
}
