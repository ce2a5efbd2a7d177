package openclaw

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

type collect struct {
	tasks     map[string]core.Task
	runs      map[string]core.Run
	approvals map[string]core.Approval
	alerts    []core.Notification
}

func (c *collect) Task(t *core.Task)              { c.tasks[t.ID] = *t }
func (c *collect) Run(r *core.Run)                { c.runs[r.RunID] = *r }
func (c *collect) Approval(a *core.Approval)      { c.approvals[a.ID] = *a }
func (c *collect) Job(*core.Job)                  {}
func (c *collect) Alert(n *core.Notification)     { c.alerts = append(c.alerts, *n) }
func (c *collect) Gone(kind feed.Kind, id string) {}

func TestSourceMapsOpenClawRows(t *testing.T) {
	ctx := context.Background()
	src := NewSource(openShapesKeep(t))
	src.Opts.Now = fixtureNow
	c := &collect{tasks: map[string]core.Task{}, runs: map[string]core.Run{}, approvals: map[string]core.Approval{}}
	res, err := src.Load(ctx, feed.LoadRequest{}, c)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || len(c.tasks) != 25 || len(c.runs) != 3 || len(c.approvals) != 3 || len(c.alerts) == 0 {
		t.Fatalf("loaded %d tasks %d runs %d approvals %d alerts (full %v)", len(c.tasks), len(c.runs), len(c.approvals), len(c.alerts), res.Full)
	}
	tk := c.tasks["t-running-backed-stale"]
	if tk.Runtime != "subagent" || tk.Status != core.TaskRunning || tk.ChildSession != "agent:main:subagent:live" ||
		tk.OwnerSession != "agent:main:main" || tk.ProgressSummary != "step 3 of 5" || tk.RunID != "r-live" {
		t.Errorf("task %+v", tk)
	}
	r := c.runs["r-killed"]
	if r.EndedAt == 0 || r.Outcome != "killed" || r.EndedReason != "subagent-killed" || !r.CleanupHandled || r.SuppressAnnounceReason != "killed" {
		t.Errorf("run %+v", r)
	}
	if c.runs["r-live"].EndedAt != 0 {
		t.Errorf("running run shown ended: %+v", c.runs["r-live"])
	}
	a := c.approvals["a-overdue"]
	if a.Status != core.ApprovalPending || a.Command != "git push --force" || a.ExpiresAt == 0 || a.Tool != "exec" {
		t.Errorf("approval %+v", a)
	}
	if c.approvals["a-allowed"].Status != core.ApprovalApproved {
		t.Errorf("allowed maps to %q", c.approvals["a-allowed"].Status)
	}
	// The console lists alerts newest id first: the highest id is the most
	// severe finding, OpenClaw's first.
	top := c.alerts[0]
	for _, n := range c.alerts {
		if n.ID > top.ID {
			top = n
		}
		if n.DeliveredAt != 0 {
			t.Fatalf("alert %d delivered", n.ID)
		}
	}
	if top.ID != int64(len(c.alerts)) || !strings.HasPrefix(top.Text, "error: task t-lost-due") {
		t.Errorf("top alert %d %q", top.ID, top.Text)
	}
	ad, err := src.Detail(ctx, feed.KindAlert, strconv.FormatInt(top.ID, 10))
	if err != nil || ad.Fields[0].Value != "lost" {
		t.Errorf("alert detail %+v %v", ad, err)
	}
	// Detail shows every column of the row.
	det, err := src.Detail(ctx, feed.KindTask, "t-90444-cli")
	if err != nil {
		t.Fatal(err)
	}
	if len(det.Fields) != len(src.db().cols["task_runs"]) {
		t.Errorf("detail has %d fields, task_runs %d columns", len(det.Fields), len(src.db().cols["task_runs"]))
	}
	seen := map[string]string{}
	for _, f := range det.Fields {
		seen[f.Name] = f.Value
	}
	if seen["source_id"] != "r-killed" || seen["execution_owner_pid"] != "null" || seen["created_at"] == "" {
		t.Errorf("detail fields %v", seen)
	}
	if _, err := src.Detail(ctx, feed.KindJob, "x"); err == nil {
		t.Error("OpenClaw has no jobs, yet a job detail was found")
	}
	if _, err := src.Detail(ctx, feed.KindTask, "nope"); err == nil {
		t.Error("missing task found")
	}
}

func openShapesKeep(t *testing.T) *DB {
	t.Helper()
	dir, _ := shapesDB(t, true)
	d, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// The window: the console loads every active task and only the newest
// Window finished ones.
func TestSourceWindow(t *testing.T) {
	ctx := context.Background()
	src := NewSource(openShapesKeep(t))
	src.Window = 2
	c := &collect{tasks: map[string]core.Task{}, runs: map[string]core.Run{}, approvals: map[string]core.Approval{}}
	if _, err := src.Load(ctx, feed.LoadRequest{}, c); err != nil {
		t.Fatal(err)
	}
	active, finished := 0, 0
	for _, tk := range c.tasks {
		if tk.Status == core.TaskQueued || tk.Status == core.TaskRunning {
			active++
		} else {
			finished++
		}
	}
	if active != 13 || finished != 2 {
		t.Fatalf("window 2: %d active, %d finished", active, finished)
	}
	if _, ok := c.tasks["t-active-ended"]; !ok {
		t.Error("an active task is missing")
	}
}
