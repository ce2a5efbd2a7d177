package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// recordSink keeps the tasks and runs a load passes on.
type recordSink struct {
	tasks map[string]core.Task
	runs  map[string]core.Run
}

func (s *recordSink) Task(t *core.Task)        { s.tasks[t.ID] = *t }
func (s *recordSink) Run(r *core.Run)          { s.runs[r.RunID] = *r }
func (s *recordSink) Approval(*core.Approval)  {}
func (s *recordSink) Job(*core.Job)            {}
func (s *recordSink) Alert(*core.Notification) {}
func (s *recordSink) Gone(feed.Kind, string)   {}

// TestSpentFromTheStore: a load and a window carry what each task and run
// spent (a sub-agent task its run's tokens, a tracked task its own), priced
// at the prices given over the defaults; the detail view lists it per model.
func TestSpentFromTheStore(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	r.src = feed.NewPricedStoreSource(r.db, core.Prices{"house-model": {Input: 10}})
	must2[*core.Session, core.Result](t)(r.reg.OpenSession(ctx, "s1", "", core.ActorRuntime))
	_ = must[*core.Run](t)(r.reg.RegisterRun(ctx, core.NewRun{RunID: "r1", ChildSession: "s1:r1", RequesterSession: "s1"}, core.ActorRuntime))
	sub := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeSubagent, RunID: "r1", OwnerSession: "s1"}, core.ActorRuntime))
	tracked := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "s1"}, core.ActorRuntime))
	idle := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "s1"}, core.ActorRuntime))
	now := core.TS(r.clk.Now())
	check(t, r.reg.AddUsage(ctx, []core.UsageRow{
		{Scope: core.UsageRun, ID: "r1", Model: "claude-sonnet-4-5", Tokens: core.Tokens{Input: 1_000_000, Output: 10_000}, CountedAt: now}, // $3.15
		{Scope: core.UsageTask, ID: tracked.ID, Model: "house-model", Tokens: core.Tokens{Input: 100_000}, CountedAt: now},                  // $1.00
		{Scope: core.UsageTask, ID: tracked.ID, Model: "mystery", Tokens: core.Tokens{Input: 5}, CountedAt: now},
	}))
	got := &recordSink{tasks: map[string]core.Task{}, runs: map[string]core.Run{}}
	if _, err := r.src.Load(ctx, feed.LoadRequest{Full: true}, got); err != nil {
		t.Fatal(err)
	}
	cell := func(s core.UsageSummary) string { return feed.SpentText(s) }
	for what, pair := range map[string][2]string{
		"run":          {cell(got.runs["r1"].Spent), "$3.15"},
		"its task":     {cell(got.tasks[sub.ID].Spent), "$3.15"},
		"tracked task": {cell(got.tasks[tracked.ID].Spent), "$1.00+"},
		"idle task":    {cell(got.tasks[idle.ID].Spent), "-"},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: SPENT %q, want %q", what, pair[0], pair[1])
		}
	}
	win := &recordSink{tasks: map[string]core.Task{}, runs: map[string]core.Run{}}
	if _, err := r.src.(feed.WindowSource).Window(ctx, feed.WindowRequest{Kind: feed.KindRun, After: 10}, win); err != nil {
		t.Fatal(err)
	}
	if c := cell(win.runs["r1"].Spent); c != "$3.15" {
		t.Errorf("window: run SPENT %q, want $3.15", c)
	}
	d, err := r.src.Detail(ctx, feed.KindTask, tracked.ID)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range d.Fields {
		if strings.HasPrefix(f.Name, "usage ") || f.Name == "spent" {
			lines = append(lines, f.Name+": "+f.Value)
		}
	}
	want := []string{
		"usage house-model: in 100,000 · out 0 · cache write 0 · cache read 0 · $1.0000",
		"usage mystery: in 5 · out 0 · cache write 0 · cache read 0 · no price",
		"spent: $1.00+ (100,005 tokens)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("detail:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestHeaderSpent24h: the header says what every agent spent in the last
// 24 h (each count at its time) where every other count fits beside it,
// and nothing of it where they do not.
func TestHeaderSpent24h(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	must2[*core.Session, core.Result](t)(r.reg.OpenSession(ctx, "s1", "", core.ActorRuntime))
	old := core.TS(r.clk.Now().Add(-25 * time.Hour))
	check(t, r.reg.AddUsage(ctx, []core.UsageRow{
		{Scope: core.UsageSession, ID: "s1", Model: "claude-sonnet-4-5", Tokens: core.Tokens{Input: 9_000_000}, CountedAt: old}, // before the day
		{Scope: core.UsageSession, ID: "s1", Model: "claude-sonnet-4-5", Tokens: core.Tokens{Input: 1_000_000, Output: 10_000}, CountedAt: core.TS(r.clk.Now())},
	}))
	hs := realHarness(t, r, false)
	hs.send(teaSize(200, 40))
	if first := strings.SplitN(hs.screen(), "\n", 2)[0]; !strings.Contains(first, "spent 24h $3.15") {
		t.Fatalf("header at 200 columns: %q, want spent 24h $3.15", first)
	}
	hs.send(teaSize(100, 40))
	if first := strings.SplitN(hs.screen(), "\n", 2)[0]; strings.Contains(first, "spent") {
		t.Fatalf("header at 100 columns: %q, want no spend", first)
	}
}
