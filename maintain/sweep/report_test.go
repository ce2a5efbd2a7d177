package sweep_test

import (
	"reflect"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
)

// TestSweepReportLines: the report's lines keep docs/contract.md "Maintenance"'s format, and short
// ids are cut to the shortest prefix that still tells the rows apart (three
// tasks created in the same millisecond share their first 13 characters).
func TestSweepReportLines(t *testing.T) {
	act := func(id string) sweep.Action {
		return sweep.Action{Rule: sweep.RuleEarlyLost, Entity: core.EntityTask, ID: id, From: "running", To: "lost",
			Reason: "subagent run ended (killed)", Result: sweep.ActionApplied}
	}
	rep := &sweep.Report{Mode: sweep.ModeApplied, Actions: []sweep.Action{
		act("01a209ad-9e23-7000-8000-00000000000a"),
		act("01a209ad-9e23-7000-8000-00000000000b"),
		act("01a209ad-9e23-7abc-8000-00000000000c"),
		{Rule: sweep.RulePrune, Entity: core.EntityTask, ID: "01a209ad-9e23-7000-8000-00000000000a", From: "lost", To: "pruned",
			Reason: "cleanup_after passed", Result: sweep.ActionRaced},
		{Rule: sweep.RuleStamp, Entity: core.EntityRun, ID: "run-1", From: "cleanup_after=none", To: "cleanup_after=x",
			Reason: "ok", Result: sweep.ActionPlanned},
	}, Findings: []sweep.Finding{{Kind: sweep.FindingStaleQueued, Severity: sweep.SeverityWarning, Entity: core.EntityTask,
		ID: "ff00aa11-0000", Detail: "queued for 11m"}}, Truncated: true}
	for _, tc := range []struct {
		minID int
		want  []string
	}{
		{0, []string{
			"early_lost task 01a209ad-9e23-7000-8000-00000000000a: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7000-8000-00000000000b: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7abc-8000-00000000000c: running → lost — subagent run ended (killed)",
			"retention_prune task 01a209ad-9e23-7000-8000-00000000000a: lost → pruned — cleanup_after passed [raced]",
			"retention_stamp run run-1: cleanup_after=none → cleanup_after=x — ok [not applied]",
			"audit warning stale_queued task ff00aa11-0000: queued for 11m",
			"(more due rows than one sweep takes: the rest is left for the next sweep)",
		}},
		{13, []string{
			"early_lost task 01a209ad-9e23-7000-8000-00000000000a: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7000-8000-00000000000b: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7a: running → lost — subagent run ended (killed)",
			"retention_prune task 01a209ad-9e23-7000-8000-00000000000a: lost → pruned — cleanup_after passed [raced]",
			"retention_stamp run run-1: cleanup_after=none → cleanup_after=x — ok [not applied]",
			"audit warning stale_queued task ff00aa11-0000: queued for 11m",
			"(more due rows than one sweep takes: the rest is left for the next sweep)",
		}},
		{4, []string{
			"early_lost task 01a209ad-9e23-7000-8000-00000000000a: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7000-8000-00000000000b: running → lost — subagent run ended (killed)",
			"early_lost task 01a209ad-9e23-7a: running → lost — subagent run ended (killed)",
			"retention_prune task 01a209ad-9e23-7000-8000-00000000000a: lost → pruned — cleanup_after passed [raced]",
			"retention_stamp run run-: cleanup_after=none → cleanup_after=x — ok [not applied]",
			"audit warning stale_queued task ff00: queued for 11m",
			"(more due rows than one sweep takes: the rest is left for the next sweep)",
		}},
	} {
		if got := rep.Lines(tc.minID); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Lines(%d):\n got %q\nwant %q", tc.minID, got, tc.want)
		}
	}
	// Text is the summary, then the full-id lines indented by two spaces.
	want := rep.Summary() + "\n"
	for _, l := range rep.Lines(0) {
		want += "  " + l + "\n"
	}
	if got := rep.Text(); got != want {
		t.Errorf("Text:\n%s\nwant:\n%s", got, want)
	}
}
