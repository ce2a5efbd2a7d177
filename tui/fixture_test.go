package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/themes"
	"github.com/clawpit/clawpit/tui/logview"
)

// t0 is the fixed "now" of every console test.
var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) core.Timestamp { return core.TS(t0.Add(-d)) }

func ptr[T any](v T) *T { return &v }

// testKeys is the console's default key map.
func testKeys() KeyMap { return DefaultKeyMap() }

// ---- fake source ------------------------------------------------------

type change struct {
	kind feed.Kind
	id   string
}

// fakeSource is an in-memory registry with a change log standing in for the
// event journal.
type fakeSource struct {
	mu        sync.Mutex
	version   int64
	tasks     []core.Task
	runs      []core.Run
	approvals []core.Approval
	jobs      []core.Job
	alerts    []core.Notification
	events    map[string][]core.Event
	log       []change // log[i] has event id i+1
	err       error    // returned by every call when set
	loads     int
	polls     int // DataVersion calls
}

func (s *fakeSource) Path() string { return "/home/op/.local/state/clawpit/registry.db" }

func (s *fakeSource) DataVersion(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls++
	return s.version, s.err
}

func (s *fakeSource) Load(_ context.Context, req feed.LoadRequest, sink feed.Sink) (feed.LoadResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if s.err != nil {
		return feed.LoadResult{}, s.err
	}
	res := feed.LoadResult{EventID: int64(len(s.log))}
	if req.Full || int(req.AfterEventID) > len(s.log) {
		res.Full = true
		for i := range s.tasks {
			sink.Task(&s.tasks[i])
		}
		for i := range s.runs {
			sink.Run(&s.runs[i])
		}
		for i := range s.approvals {
			sink.Approval(&s.approvals[i])
		}
		for i := range s.jobs {
			sink.Job(&s.jobs[i])
		}
		for i := range s.alerts {
			sink.Alert(&s.alerts[i])
		}
		return res, nil
	}
	seen := map[change]bool{}
	for _, c := range s.log[req.AfterEventID:] {
		if seen[c] {
			continue
		}
		seen[c] = true
		found := false
		switch c.kind {
		case feed.KindTask:
			if i := slices.IndexFunc(s.tasks, func(t core.Task) bool { return t.ID == c.id }); i >= 0 {
				sink.Task(&s.tasks[i])
				found = true
			}
		case feed.KindRun:
			if i := slices.IndexFunc(s.runs, func(r core.Run) bool { return r.RunID == c.id }); i >= 0 {
				sink.Run(&s.runs[i])
				found = true
			}
		case feed.KindApproval:
			if i := slices.IndexFunc(s.approvals, func(a core.Approval) bool { return a.ID == c.id }); i >= 0 {
				sink.Approval(&s.approvals[i])
				found = true
			}
		case feed.KindJob:
			if i := slices.IndexFunc(s.jobs, func(j core.Job) bool { return j.ID == c.id }); i >= 0 {
				sink.Job(&s.jobs[i])
				found = true
			}
		}
		if !found {
			sink.Gone(c.kind, c.id)
		}
	}
	for i := range s.alerts {
		if s.alerts[i].ID > req.AfterAlertID {
			sink.Alert(&s.alerts[i])
		}
	}
	res.Undelivered = []int64{}
	for _, n := range s.alerts {
		if n.DeliveredAt == 0 {
			res.Undelivered = append(res.Undelivered, n.ID)
		}
	}
	return res, nil
}

func (s *fakeSource) Detail(_ context.Context, kind feed.Kind, id string) (*feed.Detail, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &feed.Detail{Kind: kind, ID: id}
	var v any
	entity := kind.String()
	switch kind {
	case feed.KindTask:
		if i := slices.IndexFunc(s.tasks, func(t core.Task) bool { return t.ID == id }); i >= 0 {
			v = &s.tasks[i]
		}
	case feed.KindRun:
		if i := slices.IndexFunc(s.runs, func(r core.Run) bool { return r.RunID == id }); i >= 0 {
			v = &s.runs[i]
		}
	case feed.KindApproval:
		if i := slices.IndexFunc(s.approvals, func(a core.Approval) bool { return a.ID == id }); i >= 0 {
			v = &s.approvals[i]
		}
	case feed.KindJob:
		if i := slices.IndexFunc(s.jobs, func(j core.Job) bool { return j.ID == id }); i >= 0 {
			v = &s.jobs[i]
			d.Job = &s.jobs[i]
		}
	case feed.KindAlert:
		n, _ := strconv.ParseInt(id, 10, 64)
		if i := slices.IndexFunc(s.alerts, func(a core.Notification) bool { return a.ID == n }); i >= 0 {
			v = &s.alerts[i]
			entity, id = feed.SubjectEntity(s.alerts[i].Kind), s.alerts[i].SubjectID
		}
	}
	if v == nil {
		return nil, core.NotFoundf("no %s with id %q", kind, id)
	}
	d.Fields = feed.Fields(v)
	d.Events = s.events[entity+"/"+id]
	return d, nil
}

// mutate changes the registry like another process would: fn edits, then
// the version moves and the change log records what changed.
func (s *fakeSource) mutate(fn func(s *fakeSource) []change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fn(s)...)
	s.version++
}

// fixture is the fixed registry of the golden tests.
func fixture() *fakeSource {
	s := &fakeSource{version: 1, events: map[string][]core.Event{}}
	s.tasks = []core.Task{
		{ID: "0193a0b1-0001-7000-8000-000000000001", Runtime: core.RuntimeSubagent, Kind: "research", Status: core.TaskRunning,
			DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, RunID: "run-7f3a", OwnerSession: "sess-main", Agent: "claude",
			ChildSession: "sess-sub-1", Label: "summarise the incident reports", Task: "Read shared/seeds and summarise",
			CreatedAt: at(14 * time.Minute), StartedAt: at(13 * time.Minute), LastEventAt: at(12 * time.Second),
			Spent: core.UsageSummary{Tokens: 1_234_567, CostMicroUSD: 4_210_000}},
		{ID: "0193a0b1-0002-7000-8000-000000000002", Runtime: core.RuntimeCron, Kind: "nightly", Status: core.TaskQueued,
			DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyStateChanges, Label: "nightly backup check",
			ExpectsOutput: true, CreatedAt: at(3 * time.Minute)},
		{ID: "0193a0b1-0003-7000-8000-000000000003", Runtime: core.RuntimeSubagent, Status: core.TaskLost,
			DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, RunID: "run-51c0", OwnerSession: "sess-main", Agent: "claude",
			Label: "refactor the parser", Error: "subagent run ended (killed)",
			CreatedAt: at(2 * time.Hour), StartedAt: at(2 * time.Hour), EndedAt: at(90 * time.Minute)},
		{ID: "0193a0b1-0004-7000-8000-000000000004", Runtime: core.RuntimeCLI, Status: core.TaskFailed,
			DeliveryStatus: core.DeliveryDelivered, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "sess-main", Agent: "claude",
			Label: "run the test suite", Error: "Task did not complete: error_max_turns", ResultSubtype: "error_max_turns",
			CreatedAt: at(5 * time.Hour), StartedAt: at(5 * time.Hour), EndedAt: at(4 * time.Hour)},
		{ID: "0193a0b1-0005-7000-8000-000000000005", Runtime: core.RuntimeACP, Status: core.TaskSucceeded,
			DeliveryStatus: core.DeliveryDelivered, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "sess-old", Agent: "codex",
			Kind: "lint", OutputCount: 3, CreatedAt: at(3 * 24 * time.Hour), StartedAt: at(3 * 24 * time.Hour),
			EndedAt: at(3*24*time.Hour - time.Minute)},
		{ID: "0193a0b1-0006-7000-8000-000000000006", Runtime: core.RuntimeCron, Status: core.TaskTimedOut,
			DeliveryStatus: core.DeliveryFailed, NotifyPolicy: core.NotifySilent,
			Label: "weekly report \x1b]0;pwned\x07\x1b[31mred\x1b[0m", Error: "no activity for 60s",
			CreatedAt: at(26 * time.Hour), StartedAt: at(26 * time.Hour), EndedAt: at(25 * time.Hour)},
		{ID: "0193a0b1-0007-7000-8000-000000000007", Runtime: core.RuntimeSubagent, Status: core.TaskCancelled,
			DeliveryStatus: core.DeliveryNotApplicable, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: "sess-main", Agent: "claude",
			Label: "draft the changelog", Error: core.DefaultCancelError,
			CreatedAt: at(40 * time.Minute), StartedAt: at(39 * time.Minute), EndedAt: at(30 * time.Minute)},
	}
	s.runs = []core.Run{
		{RunID: "run-7f3a", ChildSession: "sess-sub-1", RequesterSession: "sess-main", Agent: "claude", Label: "researcher",
			StartedAt: at(13 * time.Minute), LastProgressAt: at(12 * time.Second), InactivityBudgetMs: 60000,
			Spent: core.UsageSummary{Tokens: 1_234_567, CostMicroUSD: 4_210_000}},
		{RunID: "run-9d21", ChildSession: "sess-sub-2", RequesterSession: "sess-main", Agent: "claude", Label: "deployer",
			StartedAt: at(20 * time.Minute), LastProgressAt: at(8 * time.Minute), InactivityBudgetMs: 60000, PendingApprovalWaits: 1},
		{RunID: "run-51c0", ChildSession: "sess-sub-3", RequesterSession: "sess-main", Agent: "claude", Label: "parser refactor",
			StartedAt: at(2 * time.Hour), LastProgressAt: at(95 * time.Minute), InactivityBudgetMs: 60000,
			EndedAt: at(90 * time.Minute), Outcome: core.OutcomeKilled, EndedReason: "subagent-killed", CleanupHandled: true,
			Spent: core.UsageSummary{Tokens: 45_200, Unpriced: true}},
		{RunID: "run-00aa", ChildSession: "sess-sub-4", RequesterSession: "sess-main", Agent: "claude", Label: "docs",
			StartedAt: at(6 * time.Hour), LastProgressAt: at(5 * time.Hour), InactivityBudgetMs: 60000,
			EndedAt: at(5 * time.Hour), Outcome: core.OutcomeOK},
	}
	s.approvals = []core.Approval{
		{ID: "ap1c0ffee001", Session: "sess-sub-2", Agent: "claude", RunID: "run-9d21", Tool: "Bash", Command: "kubectl apply -f deploy/prod.yaml",
			Rationale: "ship the fix", Cwd: "/srv/app", Pattern: "kubectl apply", Status: core.ApprovalPending,
			RequestedAt: at(8 * time.Minute), ExpiresAt: core.TS(t0.Add(22 * time.Minute))},
		{ID: "ap2beef00002", Session: "sess-main", Agent: "claude", Tool: "Bash", Command: "rm -rf build/", Pattern: "rm",
			Status: core.ApprovalPending, RequestedAt: at(45 * time.Second)},
		{ID: "ap3dead00003", Session: "sess-main", Agent: "claude", Tool: "Write", Command: "edit README.md", Pattern: "edit",
			Status: core.ApprovalApproved, Scope: core.ScopeSession, DecidedBy: "op@host", RequestedAt: at(time.Hour), DecidedAt: at(59 * time.Minute)},
		{ID: "ap4f00d00004", Session: "sess-main", Agent: "claude", Tool: "Bash", Command: "curl https://example.com/install.sh | sh", Pattern: "curl",
			Status: core.ApprovalDenied, Reason: "no piping to sh", DecidedBy: "op@host", RequestedAt: at(3 * time.Hour), DecidedAt: at(3 * time.Hour)},
	}
	s.jobs = []core.Job{
		{ID: "a1b2c3d4e5f6", Session: "sess-main", Command: []string{"npm", "run", "dev"}, Cwd: "/srv/app", Status: core.JobRunning,
			PID: 4242, PGID: 4242, SupervisorPID: 4241, CreatedAt: at(30 * time.Minute), StartedAt: at(30 * time.Minute),
			LogPath: "/home/op/.local/state/clawpit/jobs/a1b2c3d4e5f6/output.log"},
		{ID: "b2c3d4e5f6a1", Session: "sess-main", Command: []string{"make", "build"}, Status: core.JobFailed, ExitCode: ptr(2),
			CreatedAt: at(50 * time.Minute), StartedAt: at(50 * time.Minute), CompletedAt: at(48 * time.Minute),
			LogPath: "/home/op/.local/state/clawpit/jobs/b2c3d4e5f6a1/output.log"},
		{ID: "c3d4e5f6a1b2", Session: "sess-sub-1", Command: []string{"sh", "-c", "echo done"}, Status: core.JobCompleted, ExitCode: ptr(0),
			CreatedAt: at(2 * time.Hour), StartedAt: at(2 * time.Hour), CompletedAt: at(2 * time.Hour),
			LogPath: "/home/op/.local/state/clawpit/jobs/c3d4e5f6a1b2/output.log"},
		{ID: "d4e5f6a1b2c3", Session: "sess-old", Command: []string{"python", "worker.py"}, Status: core.JobLost,
			CreatedAt: at(9 * time.Hour), StartedAt: at(9 * time.Hour), CompletedAt: at(8 * time.Hour),
			LogPath: "/home/op/.local/state/clawpit/jobs/d4e5f6a1b2c3/output.log"},
	}
	s.alerts = []core.Notification{
		{ID: 1, Session: "sess-main", Kind: core.NotifyTaskFailed, SubjectID: "0193a0b1-0004-7000-8000-000000000004",
			Text: "Task run the test suite did not complete: error_max_turns", DedupKey: "task_failed:4",
			CreatedAt: at(4 * time.Hour), DeliveredAt: at(4 * time.Hour)},
		{ID: 2, Session: "sess-main", Kind: core.NotifyJobFinished, SubjectID: "b2c3d4e5f6a1",
			Text: "[Background job b2c3d4e5f6a1 failed with exit code 2] make build", DedupKey: "job_finished:b2",
			CreatedAt: at(48 * time.Minute)},
		{ID: 3, Session: "sess-old", Kind: core.NotifyJobLost, SubjectID: "d4e5f6a1b2c3",
			Text: "[Background job d4e5f6a1b2c3 was lost] python worker.py", DedupKey: "job_lost:d4",
			CreatedAt: at(8 * time.Hour)},
	}
	s.events["task/0193a0b1-0001-7000-8000-000000000001"] = []core.Event{
		{ID: 1, At: at(14 * time.Minute), Entity: "task", EntityID: "0193a0b1-0001-7000-8000-000000000001", To: "queued", Actor: core.ActorRuntime, Reason: "created", Applied: true},
		{ID: 2, At: at(13 * time.Minute), Entity: "task", EntityID: "0193a0b1-0001-7000-8000-000000000001", From: "queued", To: "running", Actor: core.ActorRuntime, Reason: "start", Applied: true},
		{ID: 3, At: at(12 * time.Second), Entity: "task", EntityID: "0193a0b1-0001-7000-8000-000000000001", From: "running", To: "lost", Actor: "op@host", Reason: "only maintenance may mark a task lost", Applied: false},
	}
	return s
}

// ---- fake actions ------------------------------------------------------

type call struct {
	op, id, arg string
	actor       core.Actor
}

type fakeActions struct {
	mu    sync.Mutex
	calls []call
	res   core.Result
	err   error
}

func (f *fakeActions) record(c call) (core.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	return f.res, f.err
}

func (f *fakeActions) ApproveApproval(_ context.Context, id string, scope core.Scope, actor core.Actor) (*core.Approval, *core.Grant, core.Result, error) {
	res, err := f.record(call{"approve", id, string(scope), actor})
	var g *core.Grant
	if scope != core.ScopeOnce && res.Applied {
		g = &core.Grant{ID: "g0000000abcd", Tool: "Bash", Pattern: "rm", Scope: scope}
	}
	return &core.Approval{ID: id}, g, res, err
}

func (f *fakeActions) ApproveWithSuggestion(_ context.Context, id string, n int, actor core.Actor) (*core.Approval, core.Result, error) {
	res, err := f.record(call{"approve", id, "suggestion " + strconv.Itoa(n), actor})
	return &core.Approval{ID: id, Suggestion: n}, res, err
}

func (f *fakeActions) DenyApproval(_ context.Context, id, reason string, actor core.Actor) (*core.Approval, core.Result, error) {
	res, err := f.record(call{"deny", id, reason, actor})
	return &core.Approval{ID: id}, res, err
}

func (f *fakeActions) CancelTask(_ context.Context, id, reason string, actor core.Actor) (*core.Task, core.Result, error) {
	res, err := f.record(call{"cancel_task", id, reason, actor})
	return &core.Task{ID: id}, res, err
}

func (f *fakeActions) KillRun(_ context.Context, id, reason string, actor core.Actor) (*core.Run, core.Result, error) {
	res, err := f.record(call{"kill", id, reason, actor})
	return &core.Run{RunID: id}, res, err
}

func (f *fakeActions) ReadNotification(_ context.Context, id int64, actor core.Actor) (core.Result, error) {
	return f.record(call{"read", strconv.FormatInt(id, 10), "", actor})
}

func (f *fakeActions) ReadAllNotifications(_ context.Context, actor core.Actor) (int, error) {
	_, err := f.record(call{"read_all", "", "", actor})
	return 2, err
}

func (f *fakeActions) CancelJob(_ context.Context, id string, actor core.Actor) (*core.Job, core.Result, error) {
	res, err := f.record(call{"cancel_job", id, "", actor})
	return &core.Job{ID: id}, res, err
}

func (f *fakeActions) ReapSession(_ context.Context, session string, actor core.Actor) (core.ReapReport, error) {
	_, err := f.record(call{"reap", session, "", actor})
	return core.ReapReport{Reaped: []core.Job{{ID: "a1b2c3d4e5f6"}, {ID: "b2c3d4e5f6a1"}}}, err
}

func (f *fakeActions) last() call {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return call{}
	}
	return f.calls[len(f.calls)-1]
}

type fakeMaint struct {
	plan      *Plan
	applied   int
	sweeps    int
	watchdogs int
	onApply   func() // the apply's writes, when set
}

func (f *fakeMaint) Plan(context.Context) (*Plan, error) { return f.plan, nil }
func (f *fakeMaint) Apply(context.Context, *Plan) (SweepResult, error) {
	f.applied++
	if f.onApply != nil {
		f.onApply()
	}
	return SweepResult{Short: "1 lost · 2 stamped", Wrote: true}, nil
}
func (f *fakeMaint) Sweep(context.Context) (SweepResult, error) {
	f.sweeps++
	return SweepResult{Short: "nothing to do"}, nil
}
func (f *fakeMaint) Watchdog(context.Context) (SweepResult, error) {
	f.watchdogs++
	return SweepResult{}, nil
}

func testPlan() *Plan {
	// Built from a core report so the goldens show the real lines.
	rep := &sweep.Report{Mode: sweep.ModeDryRun, Actions: []sweep.Action{
		{Rule: "early_lost", Entity: "task", ID: "0193a0b1-0002-7000-8000-000000000002", From: "queued", To: "lost",
			Reason: "backing session missing for 2m (grace 60s)", Result: sweep.ActionPlanned},
		{Rule: "retention_stamp", Entity: "task", ID: "0193a0b1-0005-7000-8000-000000000005", To: "2026-11-26T09:59:00.000Z", Reason: "cleanup_after", Result: sweep.ActionPlanned},
		{Rule: "retention_stamp", Entity: "run", ID: "run-00aa", To: "2026-11-29T05:00:00.000Z", Reason: "cleanup_after", Result: sweep.ActionPlanned},
	}, Findings: []sweep.Finding{
		{Kind: "stale_queued", Severity: sweep.SeverityWarning, Entity: "task", ID: "0193a0b1-0002-7000-8000-000000000002", Detail: "queued for 3m"},
	}}
	return &Plan{Summary: "3 actions planned: 1 lost · 2 stamped; audit: 0 errors · 1 warning", Lines: reportLines(rep)}
}

// ---- harness ------------------------------------------------------------

type harness struct {
	m    *Model
	src  *fakeSource
	act  *fakeActions
	mt   *fakeMaint
	clk  *core.FakeClock
	opts Options
}

type hopt func(*Options)

func withTheme(name string) hopt {
	return func(o *Options) { o.Theme, _ = themes.Get(name) }
}

func readOnly(o *Options) { o.ReadOnly = true; o.Actions = nil; o.Jobs = nil }

// newHarness builds a console over the fixture at w×h, loaded, with ticks
// off: the test drives every message itself.
func newHarness(t testing.TB, w, h int, opts ...hopt) *harness {
	hs := &harness{src: fixture(), act: &fakeActions{res: core.Result{Applied: true}}, mt: &fakeMaint{plan: testPlan()},
		clk: core.NewFakeClock(t0)}
	o := Options{Source: hs.src, Actions: hs.act, Jobs: hs.act, Maintenance: hs.mt, Keys: testKeys(),
		Operator: "op@host", Clock: hs.clk, SweepInterval: time.Minute, WatchdogInterval: 5 * time.Second,
		LogView: func(ctx *Context, t Target) LogComponent { return &fakeLog{ctx: ctx, t: t} }}
	o.Theme, _ = themes.Get("dark")
	for _, f := range opts {
		f(&o)
	}
	hs.opts = o
	hs.m = New(o)
	hs.m.ticks = false
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	return hs
}

// send delivers msg and runs every Cmd it returns, synchronously.
func (hs *harness) send(msg tea.Msg) {
	_, cmd := hs.m.Update(msg)
	hs.run(cmd)
}

func (hs *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil, tea.QuitMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			hs.run(c)
		}
	default:
		hs.send(msg)
	}
}

// keys sends key presses: names like "enter", "esc", "tab", or text.
func (hs *harness) keys(ks ...string) {
	for _, k := range ks {
		hs.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic(fmt.Sprintf("keyMsg(%q)", k))
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

func (hs *harness) typeText(s string) {
	for _, r := range s {
		hs.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// screen is the rendered screen without escape sequences.
func (hs *harness) screen() string { return stripANSI(hs.m.render()) }

// fakeLog stands in for tui/logview in tests (no files, no goroutines).
type fakeLog struct {
	ctx    *Context
	t      Target
	w, h   int
	ended  bool
	closed bool
}

func (f *fakeLog) Init() tea.Cmd { return nil }
func (f *fakeLog) Update(msg tea.Msg) (LogComponent, tea.Cmd) {
	if _, ok := msg.(logview.JobEndedMsg); ok {
		f.ended = true
	}
	return f, nil
}
func (f *fakeLog) View() string {
	s := "log of job " + f.t.ID + " (" + f.t.LogPath + ")"
	out := fit(s, f.w)
	for i := 1; i < f.h; i++ {
		out += "\n"
	}
	return out
}
func (f *fakeLog) SetSize(w, h int)          { f.w, f.h = w, h }
func (f *fakeLog) Close()                    { f.closed = true }
func (f *fakeLog) Editing() bool             { return false }
func (f *fakeLog) ShortHelp() []key.Binding  { return nil }
func (f *fakeLog) FullHelp() [][]key.Binding { return nil }

var errBusy = fmt.Errorf("%w: locked", core.ErrBusy)
var _ = errors.Is

func stripANSI(s string) string { return ansi.Strip(s) }

func lipglossWidth(s string) int { return ansi.StringWidth(s) }

func teaSize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
