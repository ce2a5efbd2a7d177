package feed

import (
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestJournalNews: what the journal of a delta tells the attention bell
// about windowed panes.
func TestJournalNews(t *testing.T) {
	ev := func(entity, id, from, to string, applied bool) core.Event {
		return core.Event{Entity: entity, EntityID: id, From: from, To: to, Applied: applied}
	}
	both := [NumKinds]bool{KindTask: true, KindApproval: true}
	for _, tc := range []struct {
		name            string
		evs             []core.Event
		windowed        [NumKinds]bool
		pending, failed int
	}{
		{"new pending", []core.Event{ev("approval", "a1", "", "pending", true)}, both, 1, 0},
		{"decided in the same delta", []core.Event{ev("approval", "a1", "", "pending", true), ev("approval", "a1", "pending", "approved", true)}, both, 0, 0},
		{"already pending, refused", []core.Event{ev("approval", "a1", "pending", "pending", false)}, both, 0, 0},
		{"task fails", []core.Event{ev("task", "t1", "running", "failed", true)}, both, 0, 1},
		{"created and lost", []core.Event{ev("task", "t1", "", "running", true), ev("task", "t1", "running", "lost", true)}, both, 0, 1},
		{"lost, then succeeded", []core.Event{ev("task", "t1", "lost", "succeeded", true)}, both, 0, 0},
		{"failed twice over", []core.Event{ev("task", "t1", "failed", "failed", true)}, both, 0, 0},
		{"two tasks, one approval", []core.Event{ev("task", "t1", "running", "timed_out", true), ev("task", "t2", "queued", "lost", true),
			ev("approval", "a1", "", "pending", true)}, both, 1, 2},
		{"panes holding their tables", []core.Event{ev("task", "t1", "running", "failed", true), ev("approval", "a1", "", "pending", true)}, [NumKinds]bool{}, 0, 0},
		{"a run", []core.Event{ev("run", "r1", "", "running", true)}, [NumKinds]bool{KindRun: true}, 0, 0},
	} {
		if p, f := journalNews(tc.evs, tc.windowed); p != tc.pending || f != tc.failed {
			t.Errorf("%s: %d pending %d failed, want %d %d", tc.name, p, f, tc.pending, tc.failed)
		}
	}
}

// TestFields: every JSON field of an entity struct in declaration order,
// a timestamp with its TS, an absent value as "null", a command as one
// quoted line, json:"-" fields left out.
func TestFields(t *testing.T) {
	created := core.Timestamp(1_700_000_000_000)
	code := 3
	j := &core.Job{ID: "abc", Command: []string{"echo", "hi there"}, ExitCode: &code, CreatedAt: created}
	got := map[string]Field{}
	for _, f := range Fields(j) {
		got[f.Name] = f
	}
	if got["command"].Value != "echo 'hi there'" || got["exit_code"].Value != "3" ||
		got["started_at"].Value != "null" || got["created_at"].TS != created {
		t.Fatalf("fields %+v", got)
	}
	if _, ok := got["Rev"]; ok {
		t.Fatal("Rev (json:\"-\") listed")
	}
}

// TestFieldsSuggestions: the detail view shows an approval's suggestions as
// the JSON text recorded (not its bytes' numbers), "null" when none.
func TestFieldsSuggestions(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`[{"type":"setMode","mode":"acceptEdits"}]`, `[{"type":"setMode","mode":"acceptEdits"}]`},
		{"", "null"},
	} {
		var got string
		for _, f := range Fields(&core.Approval{Suggestions: []byte(tc.raw)}) {
			if f.Name == "suggestions" {
				got = f.Value
			}
		}
		if got != tc.want {
			t.Errorf("suggestions %q shown as %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// TestSpentText: the SPENT cell for costs, unpriced tokens and nothing.
func TestSpentText(t *testing.T) {
	for s, want := range map[core.UsageSummary]string{
		{}:                                    "-",
		{Tokens: 10, CostMicroUSD: 1}:         "<$0.01",
		{Tokens: 10, CostMicroUSD: 5_120_000}: "$5.12",
		{Tokens: 1_234_567, Unpriced: true}:   "1.2M tok",
		{Tokens: 950, Unpriced: true}:         "950 tok",
		{Tokens: 45_000, Unpriced: true}:      "45k tok",
	} {
		if got := SpentText(s); got != want {
			t.Errorf("SpentText(%+v) = %q, want %q", s, got, want)
		}
	}
}
