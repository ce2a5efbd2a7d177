package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/core"
)

// The scenarios. Each story is a small state machine driven by events: an
// agent is a sub-agent run with its mirrored `subagent` task and `cli` peer
// tasks; a chore is a standalone task (cli, cron, acp). The opening schedules
// one of every kind within the first seconds; the director keeps approvals
// pending, repeats the special scenarios every couple of minutes and adds a
// steady trickle of small work.

// agentKind is what happens to a sub-agent run.
type agentKind int

const (
	agentNormal   agentKind = iota // progresses, then completes ok (sometimes error)
	agentApproval                  // asks for an approval and waits; the operator (or the simulator) decides
	agentExpiring                  // asks for an approval that expires after 45 s (nobody decides it)
	agentKill                      // killed while its tasks run → the next sweep marks them lost (R1, R5)
	agentRace                      // killed, then completes ok after the sweep: lost → succeeded (R2)
	agentStall                     // 20 s inactivity budget, goes quiet → the watchdog times it out (R6)
	agentMaxTurns                  // its task ends with error_max_turns → task_failed (R4)
)

// Scenario timings (virtual time).
const (
	expiringAfter = 45 * time.Second // --expires-in of the expiring approval
	stallBudget   = 20 * time.Second // inactivity budget of the run that goes quiet
	maxActive     = 14               // live stories before the trickle pauses
	minPending    = 2                // pending approvals the director keeps for the operator
)

var runLabels = []string{
	"summarise PR #412", "triage flaky TestSweepRace", "refactor config loader", "research: SQLite WAL checkpoints",
	"write release notes v0.3", "bisect memory regression", "port tailer to nxadm/tail", "draft incident report",
	"update dependencies", "review migration 0002", "index the monorepo", "answer issue #88",
}

var progressNotes = []string{
	"reading files", "searching the codebase", "running tests", "editing internal/store/db.go",
	"thinking", "calling tool: grep", "calling tool: read_file", "summarising findings",
	"writing patch", "checking CI logs", "fetching docs", "comparing benchmarks",
}

var peerLabels = []string{"go test ./core/...", "rg -n busy_timeout", "golangci-lint run", "git log --oneline -20", "go vet ./...", "ls -la internal/"}

// approvalAsk is one tool call that needs a human.
type approvalAsk struct{ tool, command, rationale, cwd string }

var approvalAsks = []approvalAsk{
	{"Bash", "git push --force-with-lease origin feature/retry-queue", "push the rebased branch for review", "~/src/api"},
	{"Bash", "kubectl rollout restart deployment/api -n staging", "pick up the new config map", "~/src/infra"},
	{"Bash", "terraform apply -auto-approve", "apply the queue autoscaling change", "~/src/infra/envs/staging"},
	{"Bash", "npm publish --tag next", "publish the prerelease for QA", "~/src/web"},
	{"Write", "write /etc/nginx/sites-enabled/api.conf", "raise client_max_body_size to 20m", "/etc/nginx"},
	{"Bash", "docker compose down -v", "reset the local database volume", "~/src/api"},
	{"Bash", "gh pr merge 412 --squash", "the review is approved and CI is green", "~/src/api"},
	{"Bash", "rm -rf ./node_modules/.cache", "clear a corrupted build cache", "~/src/web"},
	{"WebFetch", "GET https://api.github.com/repos/clawpit/clawpit/releases", "check the latest release notes", ""},
	{"Bash", "psql -h db.internal -c 'VACUUM ANALYZE tasks'", "the planner picks a bad index", "~/src/api"},
}

var choreLabels = []string{
	"go test ./tailer/...", "search: busy_timeout semantics", "lint changed files", "grep TODO markers",
	"format the repo", "fetch pkg.go.dev/charm.land/bubbletea/v2", "count lines of code", "check go.mod updates",
}

var cronLabels = []string{"nightly: dependency audit", "hourly: cache warmup", "nightly: backup report", "daily digest"}

// opening schedules one of every scenario in the first seconds, so a fresh
// console (and a short headless run) shows every pane populated.
func (s *Sim) opening() {
	at := func(d time.Duration, fn func(ctx context.Context)) { s.after(d, fn) }
	at(200*time.Millisecond, func(ctx context.Context) { s.chore(ctx, choreCLI) })
	at(500*time.Millisecond, func(ctx context.Context) { s.agent(ctx, agentApproval) })
	at(1*time.Second, func(ctx context.Context) { s.agent(ctx, agentNormal) })
	at(1500*time.Millisecond, func(ctx context.Context) { s.agent(ctx, agentApproval) })
	at(2*time.Second, func(ctx context.Context) { s.agent(ctx, agentExpiring) })
	at(2500*time.Millisecond, func(ctx context.Context) { s.chore(ctx, choreCLI) })
	at(3*time.Second, func(ctx context.Context) { s.chore(ctx, choreCronSilent) })
	at(4*time.Second, func(ctx context.Context) { s.agent(ctx, agentMaxTurns) })
	at(5*time.Second, func(ctx context.Context) { s.agent(ctx, agentKill) })
	at(6*time.Second, func(ctx context.Context) { s.agent(ctx, agentStall) })
	at(7*time.Second, func(ctx context.Context) { s.chore(ctx, choreCron) })
	at(8*time.Second, func(ctx context.Context) { s.agent(ctx, agentRace) })
	at(10*time.Second, func(ctx context.Context) { s.chore(ctx, choreOrphan) })
	at(12*time.Second, s.trickle)
	at(5*time.Second, s.direct)
	// The special scenarios come back every couple of minutes.
	for _, k := range []agentKind{agentKill, agentRace, agentStall, agentMaxTurns, agentExpiring} {
		k := k
		var again func(ctx context.Context)
		again = func(ctx context.Context) {
			s.agent(ctx, k)
			s.after(s.between(120*time.Second, 200*time.Second), again)
		}
		at(s.between(100*time.Second, 160*time.Second), again)
	}
	var silent func(ctx context.Context)
	silent = func(ctx context.Context) {
		s.chore(ctx, choreCronSilent)
		s.after(s.between(120*time.Second, 180*time.Second), silent)
	}
	at(s.between(120*time.Second, 180*time.Second), silent)
}

// direct is the director, every 5 s: keeps at least minPending approvals
// pending (not counting the expiring one) and the helper jobs alive.
func (s *Sim) direct(ctx context.Context) {
	defer s.after(5*time.Second, s.direct)
	if s.jobs != nil {
		s.keepJobsAlive(ctx)
	}
	pending, err := s.pendingApprovals(ctx, "")
	if err != nil {
		s.fail("list approvals", err)
		return
	}
	for n := pending + s.asking; n < minPending && s.active < maxActive+4; n++ {
		s.agent(ctx, agentApproval)
	}
}

// pendingApprovals counts pending approvals other than except and the
// expiring ones (those are left to the sweeper).
func (s *Sim) pendingApprovals(ctx context.Context, except string) (int, error) {
	list, err := s.reg.ListApprovals(ctx, core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalPending}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range list {
		if a.ID != except && !s.expiring[a.ID] {
			n++
		}
	}
	return n, nil
}

// trickle adds small work every few seconds while fewer than maxActive
// stories run: mostly standalone tasks, sometimes a sub-agent run.
func (s *Sim) trickle(ctx context.Context) {
	defer s.after(s.between(4*time.Second, 9*time.Second), s.trickle)
	if s.active >= maxActive {
		return
	}
	switch r := s.rng.Float64(); {
	case r < 0.35:
		s.agent(ctx, agentNormal)
	case r < 0.75:
		s.chore(ctx, choreCLI)
	case r < 0.9:
		s.chore(ctx, choreCron)
	default:
		s.chore(ctx, choreACP)
	}
}

// ---- agents -------------------------------------------------------------

type agent struct {
	s       *Sim
	kind    agentKind
	runID   string
	label   string
	owner   string
	sub     string   // the subagent task
	peers   []string // cli peer tasks (source_id = run id)
	began   time.Time
	life    time.Duration // when it completes
	at      time.Duration // when it asks (approval kinds), is killed (kill, race) or goes quiet (stall)
	ask     approvalAsk
	appr    string    // the pending approval
	asked   time.Time // when it asked
	decide  time.Duration
	waited  bool // asked already (ask once)
	outcome core.RunOutcome
	errText string
	ticks   int
}

func (a *agent) elapsed() time.Duration { return a.s.vnow.Sub(a.began) }

// agent starts one sub-agent run of kind: the run, its subagent task
// (started at once) and zero to two cli peer tasks (started on the first
// tick), then ticks every 2–4 s.
func (s *Sim) agent(ctx context.Context, kind agentKind) {
	s.runN++
	a := &agent{
		s: s, kind: kind, label: pick(s, runLabels), began: s.vnow,
		runID:   fmt.Sprintf("run-%03d-%04x", s.runN, s.rng.Uint32()&0xffff),
		life:    s.between(20*time.Second, 60*time.Second),
		outcome: core.OutcomeOK,
	}
	a.owner = SessionMain
	if s.chance(0.4) {
		a.owner = SessionResearch
	}
	if kind == agentNormal && s.chance(0.1) {
		a.outcome, a.errText = core.OutcomeError, "tool call failed: exit status 1 (go test ./...)"
	}
	budget := time.Duration(0)
	switch kind {
	case agentApproval:
		a.at = s.between(1*time.Second, 4*time.Second)
		a.decide = s.between(40*time.Second, 90*time.Second)
		a.ask = pick(s, approvalAsks)
		a.life += a.at
		s.asking++
	case agentExpiring:
		a.at = s.between(500*time.Millisecond, 2*time.Second)
		a.ask = approvalAsk{"Bash", "aws s3 rm s3://demo-artifacts/tmp --recursive", "free space in the artifacts bucket (expires in 45s)", "~/src/infra"}
		a.life += a.at
	case agentKill:
		a.at = s.between(10*time.Second, 15*time.Second)
	case agentRace:
		a.at = s.between(6*time.Second, 10*time.Second)
	case agentStall:
		a.at = s.between(5*time.Second, 8*time.Second)
		budget = stallBudget
		a.label = "watch CI for the flaky job"
	case agentMaxTurns:
		a.life = s.between(6*time.Second, 10*time.Second)
		a.label = "migrate all handlers to the new router"
	}
	child := a.owner + ":sub:" + a.runID
	if _, err := s.reg.RegisterRun(ctx, core.NewRun{
		RunID: a.runID, ChildSession: child, RequesterSession: a.owner, Label: a.label, InactivityBudget: budget,
	}, core.ActorRuntime); err != nil {
		s.fail("register run", err)
		if kind == agentApproval {
			s.asking--
		}
		return
	}
	t, err := s.reg.CreateTask(ctx, core.NewTask{
		Runtime: core.RuntimeSubagent, RunID: a.runID, OwnerSession: a.owner, ChildSession: child,
		Kind: "subagent", Label: a.label, Task: a.label + " (sub-agent " + a.runID + ")",
	}, core.ActorRuntime)
	if err != nil {
		s.fail("create subagent task", err)
		if kind == agentApproval {
			s.asking--
		}
		return
	}
	a.sub = t.ID
	s.act(ctx, "start task", func() (core.Result, error) {
		_, r, err := s.reg.StartTask(ctx, a.sub, "spawned", core.ActorRuntime)
		return r, err
	})
	npeers := s.rng.IntN(3)
	if kind == agentKill || kind == agentRace {
		npeers = 1 + s.rng.IntN(2)
	}
	for i := 0; i < npeers; i++ {
		p, err := s.reg.CreateTask(ctx, core.NewTask{
			Runtime: core.RuntimeCLI, SourceID: a.runID, OwnerSession: a.owner, Kind: "tool",
			Label: pick(s, peerLabels), Task: "tool call of " + a.runID,
		}, core.ActorRuntime)
		if err != nil {
			s.fail("create peer task", err)
			continue
		}
		a.peers = append(a.peers, p.ID)
	}
	s.count(func(st *Stats) { st.Runs++; st.Tasks += 1 + len(a.peers) })
	s.active++
	what := map[agentKind]string{
		agentNormal: "", agentApproval: " (will ask for approval)", agentExpiring: " (its approval will expire)",
		agentKill: " (will be killed)", agentRace: " (kill will race a late completion)",
		agentStall: fmt.Sprintf(" (%s budget, will go quiet)", stallBudget), agentMaxTurns: " (will hit max turns)",
	}[kind]
	tasks := "1 task"
	if n := 1 + len(a.peers); n != 1 {
		tasks = fmt.Sprintf("%d tasks", n)
	}
	s.logf("run %s registered by %s: %q, %s%s", a.runID, a.owner, a.label, tasks, what)
	s.after(s.between(1*time.Second, 2*time.Second), a.tick)
}

// act runs one registry mutation and logs a failure (a refused transition is
// normal — the operator may have cancelled the task — and is not logged).
func (s *Sim) act(ctx context.Context, what string, fn func() (core.Result, error)) core.Result {
	r, err := fn()
	s.fail(what, err)
	return r
}

// done ends the story.
func (a *agent) done() { a.s.active-- }

// tick is one step of an agent's life.
func (a *agent) tick(ctx context.Context) {
	s := a.s
	a.ticks++
	run, _, err := s.reg.GetRun(ctx, a.runID)
	if err != nil {
		s.fail("get run", err)
		a.done()
		return
	}
	if !run.Running() {
		if a.appr != "" && s.expiring[a.appr] {
			delete(s.expiring, a.appr)
		}
		s.logf("run %s ended elsewhere: %s (%s)", a.runID, run.Outcome, run.EndedReason)
		a.done()
		return
	}
	next := s.between(2*time.Second, 4*time.Second)
	if a.appr != "" {
		if !a.waitApproval(ctx) {
			return
		}
	}
	el := a.elapsed()
	switch a.kind {
	case agentApproval, agentExpiring:
		if !a.waited && el >= a.at {
			a.request(ctx)
			if a.appr != "" {
				s.after(s.between(1500*time.Millisecond, 2500*time.Millisecond), a.tick)
				return
			}
		}
	case agentKill:
		if el >= a.at {
			s.act(ctx, "kill run", func() (core.Result, error) {
				_, r, err := s.reg.KillRun(ctx, a.runID, "parent session cancelled the sub-agent", core.ActorRuntime)
				return r, err
			})
			s.logf("run %s killed while its %d tasks run; the next sweep marks them lost", a.runID, 1+len(a.peers))
			a.done()
			return
		}
	case agentRace:
		if el >= a.at {
			s.act(ctx, "kill run", func() (core.Result, error) {
				_, r, err := s.reg.KillRun(ctx, a.runID, "superseded by a newer run", core.ActorRuntime)
				return r, err
			})
			s.logf("run %s killed; its result will still arrive late", a.runID)
			killed := s.vnow
			s.after(time.Second, func(ctx context.Context) { a.lateCompletion(ctx, killed) })
			return
		}
	case agentStall:
		if el >= a.at {
			s.logf("run %s went quiet; the watchdog ends it after %s without progress", a.runID, stallBudget)
			s.after(5*time.Second, a.watchStall)
			return
		}
	}
	a.progress(ctx)
	if el >= a.life {
		a.finish(ctx)
		return
	}
	s.after(next, a.tick)
}

// demoModels are the models the demo's sub-agents bill to (the SPENT
// column, the header's 24 h total, `clawpit usage`).
var demoModels = []string{"claude-sonnet-5", "claude-haiku-4-5", "claude-opus-5"}

// spendTokens records what one step of a sub-agent spent, as Claude Code's
// transcript would give it: a few hundred to a few thousand fresh input
// and output tokens, and tens of thousands read from the prompt cache, on
// the run and on its owner session (a sub-agent's usage counts in both).
func (a *agent) spendTokens(ctx context.Context) {
	s := a.s
	r := s.spend
	model := demoModels[0]
	if n := len(a.runID); n > 0 { // one model per run, fixed by its id
		model = demoModels[int(a.runID[n-1])%len(demoModels)]
	}
	t := core.Tokens{Input: 200 + r.Int64N(1800), Output: 100 + r.Int64N(1400),
		CacheWrite: r.Int64N(3000), CacheRead: 5000 + r.Int64N(35000)}
	at := core.TS(s.clock.Now())
	s.fail("record usage", s.reg.AddUsage(ctx, []core.UsageRow{
		{Scope: core.UsageRun, ID: a.runID, Model: model, Tokens: t, CountedAt: at},
		{Scope: core.UsageSession, ID: a.owner, Model: model, Tokens: t, CountedAt: at},
	}))
}

// progress reports activity on the run and its tasks.
func (a *agent) progress(ctx context.Context) {
	s := a.s
	note := pick(s, progressNotes)
	a.spendTokens(ctx)
	s.act(ctx, "progress run", func() (core.Result, error) {
		_, r, err := s.reg.ProgressRun(ctx, a.runID, core.ActorRuntime)
		return r, err
	})
	s.act(ctx, "progress task", func() (core.Result, error) {
		_, r, err := s.reg.ProgressTask(ctx, a.sub, note, core.ActorRuntime)
		return r, err
	})
	if s.chance(0.5) {
		s.act(ctx, "task output", func() (core.Result, error) {
			_, r, err := s.reg.AddTaskOutput(ctx, a.sub, 1, core.ActorRuntime)
			return r, err
		})
	}
	for i, p := range a.peers {
		if a.ticks == 1 || (a.ticks == 2 && i > 0) {
			s.act(ctx, "start peer", func() (core.Result, error) {
				_, r, err := s.reg.StartTask(ctx, p, "running", core.ActorRuntime)
				return r, err
			})
			continue
		}
		if s.chance(0.6) {
			s.act(ctx, "progress peer", func() (core.Result, error) {
				_, r, err := s.reg.ProgressTask(ctx, p, "output "+fmt.Sprint(a.ticks), core.ActorRuntime)
				return r, err
			})
		}
	}
}

// finish completes the run: error_max_turns for that kind, else the planned
// outcome applied to every mirrored task (R2).
func (a *agent) finish(ctx context.Context) {
	s := a.s
	defer a.done()
	if a.kind == agentMaxTurns {
		s.act(ctx, "finish task", func() (core.Result, error) {
			_, r, err := s.reg.FinishTask(ctx, a.sub, core.Finish{Subtype: "error_max_turns", Error: "25 turns used"}, core.ActorRuntime)
			return r, err
		})
		s.act(ctx, "complete run", func() (core.Result, error) {
			_, _, r, err := s.reg.CompleteRun(ctx, a.runID, core.OutcomeError, "max turns reached (25)", core.ActorRuntime)
			return r, err
		})
		s.logf("run %s: task ended with error_max_turns (task_failed alert)", a.runID)
		return
	}
	for _, p := range a.peers {
		s.act(ctx, "peer output", func() (core.Result, error) {
			_, r, err := s.reg.AddTaskOutput(ctx, p, 1, core.ActorRuntime)
			return r, err
		})
	}
	s.act(ctx, "complete run", func() (core.Result, error) {
		_, _, r, err := s.reg.CompleteRun(ctx, a.runID, a.outcome, a.errText, core.ActorRuntime)
		return r, err
	})
	s.logf("run %s completed %s", a.runID, a.outcome)
}

// request asks for the agent's approval, bound to its run and task (the run's
// watchdog pauses, R6).
func (a *agent) request(ctx context.Context) {
	s := a.s
	a.waited = true
	if a.kind == agentApproval {
		s.asking--
	}
	na := core.NewApproval{
		Session: a.owner, RunID: a.runID, TaskID: a.sub, Tool: a.ask.tool, Command: a.ask.command,
		Rationale: a.ask.rationale, Cwd: a.ask.cwd,
	}
	if a.kind == agentExpiring {
		na.ExpiresIn = expiringAfter
	}
	ap, err := s.reg.RequestApproval(ctx, na, core.ActorRuntime)
	if err != nil {
		s.fail("request approval", err)
		return
	}
	s.count(func(st *Stats) { st.Approvals++ })
	s.act(ctx, "progress task", func() (core.Result, error) {
		_, r, err := s.reg.ProgressTask(ctx, a.sub, "waiting for approval: "+a.ask.command, core.ActorRuntime)
		return r, err
	})
	if ap.Status != core.ApprovalPending {
		s.logf("run %s: %s %q approved at once (%s)", a.runID, ap.Tool, ap.Command, ap.DecidedBy)
		return
	}
	a.appr, a.asked = ap.ID, s.vnow
	if a.kind == agentExpiring {
		s.expiring[ap.ID] = true
		s.logf("run %s asks approval %s: %s %q — expires in %s", a.runID, ap.ID, ap.Tool, ap.Command, expiringAfter)
	} else {
		s.logf("run %s asks approval %s: %s %q", a.runID, ap.ID, ap.Tool, ap.Command)
	}
}

// waitApproval handles the agent's pending approval; it returns true when the
// agent may go on this tick (approved), false when it rescheduled or ended.
func (a *agent) waitApproval(ctx context.Context) bool {
	s := a.s
	ap, _, err := s.reg.GetApproval(ctx, a.appr)
	if err != nil {
		s.fail("get approval", err)
		a.done()
		return false
	}
	switch ap.Status {
	case core.ApprovalPending:
		if a.kind != agentExpiring && s.vnow.Sub(a.asked) >= a.decide {
			others, err := s.pendingApprovals(ctx, ap.ID)
			if err == nil && others >= 1 {
				if s.chance(0.8) {
					s.act(ctx, "approve", func() (core.Result, error) {
						_, _, r, err := s.reg.ApproveApproval(ctx, ap.ID, core.ScopeOnce, s.op)
						return r, err
					})
				} else {
					s.act(ctx, "deny", func() (core.Result, error) {
						_, r, err := s.reg.DenyApproval(ctx, ap.ID, "not on a Friday", s.op)
						return r, err
					})
				}
				s.after(200*time.Millisecond, a.tick)
				return false
			}
		}
		s.after(s.between(1500*time.Millisecond, 2500*time.Millisecond), a.tick)
		return false
	case core.ApprovalApproved:
		s.logf("run %s: approval %s approved by %s; carrying on", a.runID, ap.ID, ap.DecidedBy)
		a.appr = ""
		a.life = a.elapsed() + s.between(8*time.Second, 20*time.Second)
		return true
	case core.ApprovalDenied:
		s.act(ctx, "complete run", func() (core.Result, error) {
			_, _, r, err := s.reg.CompleteRun(ctx, a.runID, core.OutcomeError, "tool call denied: "+ap.Command, core.ActorRuntime)
			return r, err
		})
		s.logf("run %s: approval %s denied by %s; run failed", a.runID, ap.ID, ap.DecidedBy)
	case core.ApprovalExpired:
		delete(s.expiring, ap.ID)
		s.act(ctx, "complete run", func() (core.Result, error) {
			_, _, r, err := s.reg.CompleteRun(ctx, a.runID, core.OutcomeError, "approval expired: nobody answered in "+expiringAfter.String(), core.ActorRuntime)
			return r, err
		})
		s.logf("run %s: approval %s expired (approval_expired alert); run failed", a.runID, ap.ID)
	default:
		s.logf("run %s: approval %s %s", a.runID, ap.ID, ap.Status)
	}
	a.done()
	return false
}

// lateCompletion waits until the sweeper has marked the killed run's task
// lost (at most 60 s), then reports the run's completion anyway: R2 upgrades
// lost → succeeded.
func (a *agent) lateCompletion(ctx context.Context, killed time.Time) {
	s := a.s
	t, _, err := s.reg.GetTask(ctx, a.sub)
	if err != nil {
		s.fail("get task", err)
		a.done()
		return
	}
	if t.Status.Active() && s.vnow.Sub(killed) < 60*time.Second {
		s.after(time.Second, func(ctx context.Context) { a.lateCompletion(ctx, killed) })
		return
	}
	from := t.Status
	_, tasks, _, err := s.reg.CompleteRun(ctx, a.runID, core.OutcomeOK, "", core.ActorRuntime)
	s.fail("late complete run", err)
	if err == nil {
		to := from
		for _, x := range tasks {
			if x.ID == a.sub {
				to = x.Status
			}
		}
		s.logf("run %s: late completion (ok) after the kill: task %s → %s", a.runID, from, to)
	}
	a.done()
}

// watchStall logs when the watchdog has ended the quiet run.
func (a *agent) watchStall(ctx context.Context) {
	s := a.s
	run, _, err := s.reg.GetRun(ctx, a.runID)
	if err != nil {
		s.fail("get run", err)
		a.done()
		return
	}
	if run.Running() && s.vnow.Sub(a.began) < 10*time.Minute {
		s.after(5*time.Second, a.watchStall)
		return
	}
	s.logf("run %s ended %s (%s)", a.runID, run.Outcome, run.EndedReason)
	a.done()
}

// ---- chores (standalone tasks) ------------------------------------------

type choreKind int

const (
	choreCLI        choreKind = iota // cli task: queued, runs, mostly succeeds
	choreCron                        // scheduled task with output
	choreCronSilent                  // scheduled task that succeeds with no output → task_silent (R7)
	choreACP                         // acp task in its own session
	choreOrphan                      // acp task whose backing session never existed, goes quiet → lost after the grace window (R5)
)

type chore struct {
	s     *Sim
	kind  choreKind
	id    string
	label string
	began time.Time
	life  time.Duration
	ticks int
	fail  bool
}

// chore starts one standalone task of kind.
func (s *Sim) chore(ctx context.Context, kind choreKind) {
	c := &chore{s: s, kind: kind, began: s.vnow, life: s.between(6*time.Second, 30*time.Second)}
	nt := core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: SessionMain, Kind: "tool"}
	switch kind {
	case choreCLI:
		c.label = pick(s, choreLabels)
		c.fail = s.chance(0.08)
		if s.chance(0.3) {
			nt.OwnerSession = SessionResearch
		}
	case choreCron:
		c.label = pick(s, cronLabels)
		nt.Runtime, nt.OwnerSession, nt.Kind = core.RuntimeCron, SessionNightly, "cron"
	case choreCronSilent:
		c.label = "nightly: export metrics to S3"
		c.life = s.between(3*time.Second, 5*time.Second)
		nt.Runtime, nt.OwnerSession, nt.Kind = core.RuntimeCron, SessionNightly, "cron"
	case choreACP:
		c.label = "acp: code review in editor"
		nt.Runtime, nt.Kind, nt.ChildSession = core.RuntimeACP, "acp", SessionResearch
	case choreOrphan:
		c.label = "acp: refactor in a closed editor window"
		nt.Runtime, nt.Kind, nt.OwnerSession, nt.ChildSession = core.RuntimeACP, "acp", "", "editor:window-7"
	}
	nt.Label, nt.Task = c.label, c.label
	t, err := s.reg.CreateTask(ctx, nt, core.ActorRuntime)
	if err != nil {
		s.fail("create task", err)
		return
	}
	c.id = t.ID
	s.count(func(st *Stats) { st.Tasks++ })
	s.active++
	switch kind {
	case choreCronSilent:
		s.logf("cron task %q queued (it will finish with no output)", c.label)
	case choreOrphan:
		s.logf("acp task %q queued for a session that does not exist (lost after the grace window)", c.label)
	}
	s.after(s.between(500*time.Millisecond, 4*time.Second), c.tick)
}

func (c *chore) tick(ctx context.Context) {
	s := c.s
	c.ticks++
	if c.ticks == 1 {
		r := s.act(ctx, "start task", func() (core.Result, error) {
			_, r, err := s.reg.StartTask(ctx, c.id, "started", core.ActorRuntime)
			return r, err
		})
		if !r.Applied {
			s.active-- // cancelled by the operator before it started
			return
		}
		s.after(s.between(2*time.Second, 5*time.Second), c.tick)
		return
	}
	if c.kind == choreOrphan && c.ticks > 3 {
		s.logf("acp task %q went quiet", c.label)
		s.active--
		return
	}
	r := s.act(ctx, "progress task", func() (core.Result, error) {
		_, r, err := s.reg.ProgressTask(ctx, c.id, pick(s, progressNotes), core.ActorRuntime)
		return r, err
	})
	if !r.Applied { // ended elsewhere (cancelled by the operator)
		s.active--
		return
	}
	if c.kind != choreCronSilent && s.chance(0.7) {
		s.act(ctx, "task output", func() (core.Result, error) {
			_, r, err := s.reg.AddTaskOutput(ctx, c.id, 1, core.ActorRuntime)
			return r, err
		})
	}
	if s.vnow.Sub(c.began) < c.life || c.kind == choreOrphan {
		s.after(s.between(2*time.Second, 5*time.Second), c.tick)
		return
	}
	f := core.Finish{Status: core.TaskSucceeded, Text: "done"}
	switch {
	case c.kind == choreCronSilent:
		f = core.Finish{Status: core.TaskSucceeded}
	case c.fail:
		f = core.Finish{Status: core.TaskFailed, Error: "exit status 1: 3 tests failed"}
	}
	s.act(ctx, "finish task", func() (core.Result, error) {
		_, r, err := s.reg.FinishTask(ctx, c.id, f, core.ActorRuntime)
		return r, err
	})
	if c.kind == choreCronSilent {
		s.logf("cron task %q succeeded with no output; the next sweep raises task_silent", c.label)
	}
	s.active--
}
