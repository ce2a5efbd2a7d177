package sweep

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// Counts sums a sweep (docs/contract.md "Maintenance" report). In a dry run the action counts
// are what the plan would do; once applied, what it did (raced actions are
// counted under Raced only).
type Counts struct {
	Lost     int `json:"lost"`      // tasks (R5) and jobs (J8) marked lost
	TimedOut int `json:"timed_out"` // runs ended by the watchdog (R6); their mirrored tasks are listed as actions
	Expired  int `json:"expired"`   // approvals expired (R9)
	// Withdrawn counts pending approvals cancelled because the hook waiting
	// for them on this host exited (approvalwaiter.go).
	Withdrawn int `json:"withdrawn"`
	Silent    int `json:"silent"`   // task_silent notifications raised (R7)
	Stamped   int `json:"stamped"`  // cleanup_after stamped (R8)
	Pruned    int `json:"pruned"`   // rows deleted past cleanup_after (R8)
	Raced     int `json:"raced"`    // actions skipped because a runtime write landed first
	Errors    int `json:"errors"`   // audit findings of severity error (R10)
	Warnings  int `json:"warnings"` // audit findings of severity warning (R10)
}

// Report is the result of a sweep or a watchdog pass. JSON (docs/contract.md "Maintenance"):
// {mode, started_at, duration_ms, counts{…}, actions[…], findings[…]} plus
// truncated, and step "watchdog" for a watchdog pass.
type Report struct {
	Mode       string         `json:"mode"` // "applied" or "dry_run"
	Step       string         `json:"step,omitempty"`
	StartedAt  core.Timestamp `json:"started_at"`
	DurationMs int64          `json:"duration_ms"`
	Counts     Counts         `json:"counts"`
	Actions    []Action       `json:"actions"`
	Findings   []Finding      `json:"findings"`
	Truncated  bool           `json:"truncated"`
}

// Report modes.
const (
	ModeApplied = "applied"
	ModeDryRun  = "dry_run"
)

// DryRun is the report of p as a dry run: what applying it would do,
// counted as the applied report counts (docs/contract.md "Maintenance"). The console shows it
// before the operator applies a plan.
func (p *Plan) DryRun() *Report {
	acts := append([]Action(nil), p.Actions...)
	return report(p, ModeDryRun, acts, append([]Finding(nil), p.Findings...), p.planTime)
}

// report sums acts and findings into a report; each action is counted by
// its rule (sweepRule.count).
func report(p *Plan, mode string, acts []Action, findings []Finding, took time.Duration) *Report {
	if acts == nil {
		acts = []Action{}
	}
	if findings == nil {
		findings = []Finding{}
	}
	rep := &Report{Mode: mode, StartedAt: p.Now, DurationMs: took.Milliseconds(),
		Actions: acts, Findings: findings, Truncated: p.Truncated}
	if p.watchdogOnly {
		rep.Step = "watchdog"
	}
	c := &rep.Counts
	want := ActionApplied
	if mode == ModeDryRun {
		want = ActionPlanned
	}
	for i := range acts {
		a := &acts[i]
		if a.Result == ActionRaced {
			c.Raced++
			continue
		}
		if r := ruleOf(a.Rule); r != nil && a.Result == want {
			r.count(c, a)
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
// out · 0 expired (· 2 withdrawn, when any) · 1 silent · 4 stamped · 12 pruned · 0 raced; audit: 1 error
// · 2 warnings" ("Sweep dry run in …" for a dry run; "Watchdog applied in …:
// 1 timed out · 0 raced" for a watchdog pass).
func (r *Report) Summary() string {
	mode := "applied"
	if r.Mode == ModeDryRun {
		mode = "dry run"
	}
	c := r.Counts
	if r.Step == "watchdog" {
		return fmt.Sprintf("Watchdog %s in %d ms: %d timed out · %d raced", mode, r.DurationMs, c.TimedOut, c.Raced)
	}
	// Withdrawn approvals are rare: named only when there are some.
	withdrawn := ""
	if c.Withdrawn > 0 {
		withdrawn = fmt.Sprintf(" · %d withdrawn", c.Withdrawn)
	}
	return fmt.Sprintf("Sweep %s in %d ms: %d lost · %d timed out · %d expired%s · %d silent · %d stamped · %d pruned · %d raced; audit: %s · %s",
		mode, r.DurationMs, c.Lost, c.TimedOut, c.Expired, withdrawn, c.Silent, c.Stamped, c.Pruned, c.Raced,
		plural(c.Errors, "error", "errors"), plural(c.Warnings, "warning", "warnings"))
}

// maxReportLine caps one action or finding line of Text, in runes.
const maxReportLine = 2048

// Text is the report of docs/contract.md "Maintenance": the summary line, then one line per action
// ("  <rule> <entity> <id>: <from> → <to> — <reason>", with " [raced]" or
// " [failed]" when it did not apply) and one per finding ("  audit <severity>
// <kind> <entity> <id>: <detail>"), each sanitised to one line of at most
// maxReportLine runes (termtext.Line). It ends with a newline.
func (r *Report) Text() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	for _, l := range r.Lines(0) {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// truncatedNote ends the lines of a report whose plan hit MaxPerRule.
const truncatedNote = "(more due rows than one sweep takes: the rest is left for the next sweep)"

// Lines are the report's action and finding lines as Text prints them,
// without the indentation, then the note of a truncated plan. With minID >
// 0 each id is cut to the shortest prefix that tells it apart from every
// other id in the lines, but at least minID characters (the console's short
// ids); 0 keeps full ids.
func (r *Report) Lines(minID int) []string {
	var ids []string
	for _, a := range r.Actions {
		ids = append(ids, a.ID)
	}
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	short := uniquePrefixes(ids, minID)
	out := make([]string, 0, len(r.Actions)+len(r.Findings)+1)
	for _, a := range r.Actions {
		out = append(out, a.Line(short(a.ID), r.Mode))
	}
	for _, f := range r.Findings {
		out = append(out, f.Line(short(f.ID)))
	}
	if r.Truncated {
		out = append(out, truncatedNote)
	}
	return out
}

// Line is the action's report line: "<rule> <entity> <id>: <from> → <to> —
// <reason>", marked " [raced]", " [failed]", or, when mode is ModeApplied
// and it stayed planned, " [not applied]". id is the id as shown.
func (a Action) Line(id, mode string) string {
	mark := ""
	switch a.Result {
	case ActionRaced:
		mark = " [raced]"
	case ActionFailed:
		mark = " [failed]"
	case ActionPlanned:
		if mode == ModeApplied {
			mark = " [not applied]"
		}
	}
	// Ids, labels and reasons are untrusted: one inert, capped line.
	return termtext.Line(fmt.Sprintf("%s %s %s: %s → %s — %s%s", a.Rule, a.Entity, id, a.From, a.To, a.Reason, mark), maxReportLine)
}

// Line is the finding's report line: "audit <severity> <kind> <entity> <id>:
// <detail>". id is the id as shown.
func (f Finding) Line(id string) string {
	return termtext.Line(fmt.Sprintf("audit %s %s %s %s: %s", f.Severity, f.Kind, f.Entity, id, f.Detail), maxReportLine)
}

// uniquePrefixes returns a function that cuts an id of ids to its shortest
// prefix of at least min characters that no other distinct id in ids starts
// with (the whole id when it is a prefix of another). min <= 0: ids are
// kept whole.
func uniquePrefixes(ids []string, min int) func(string) string {
	if min <= 0 {
		return func(id string) string { return id }
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	sorted = slices.Compact(sorted)
	n := make(map[string]int, len(sorted))
	for i, id := range sorted {
		need := min
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(sorted) {
				need = max(need, commonPrefix(id, sorted[j])+1)
			}
		}
		n[id] = need
	}
	return func(id string) string {
		k := n[id]
		for k < len(id) && !utf8.RuneStart(id[k]) {
			k++ // never cut a character in two
		}
		if k < len(id) {
			return id[:k]
		}
		return id
	}
}

// commonPrefix is the length of the longest common prefix of a and b, in bytes.
func commonPrefix(a, b string) int {
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	return k
}
