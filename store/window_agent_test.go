package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// agentSink keeps each row's id and agent.
type agentSink struct{ agent map[string]string }

func (s *agentSink) Task(t *core.Task)         { s.agent[t.ID] = t.Agent }
func (s *agentSink) Run(r *core.Run)           { s.agent[r.RunID] = r.Agent }
func (s *agentSink) Approval(a *core.Approval) { s.agent[a.ID] = a.Agent }
func (s *agentSink) Job(*core.Job)             {}
func (s *agentSink) Alert(*core.Notification)  {}

// agentFixture records sessions of three agents and none, and tasks, runs
// and approvals in them: 300 tasks of Claude Code's, 7 of Codex's (one
// labelled "claude docs"), 2 of Gemini CLI's, 5 of a session with no
// agent, 3 of a session never recorded. No id or session names an agent. want maps each row id to its session's agent.
func agentFixture(t *testing.T) (*DB, map[string]string) {
	t.Helper()
	db := openTest(t)
	want := map[string]string{}
	sessions := []struct {
		id, agent string
		n         int
	}{{"s-1", "claude", 300}, {"s-2", "codex", 7}, {"s-3", "gemini", 2}, {"s-4", "", 5}, {"s-5", "", 3}}
	update(t, db, func(tx core.Tx) error {
		for _, s := range sessions {
			if s.id != "s-5" { // s-5: never recorded
				if err := tx.InsertSession(&core.Session{ID: s.id, State: core.SessionActive, CreatedAt: 1, Agent: s.agent}); err != nil {
					return err
				}
			}
			for i := range s.n {
				label := "work"
				if s.agent == "codex" && i == 0 {
					label = "claude docs"
				}
				k := &core.Task{ID: fmt.Sprintf("t-%s-%03d", s.id, i), Runtime: core.RuntimeCLI, Status: core.TaskRunning,
					DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly, OwnerSession: s.id,
					Label: label, CreatedAt: core.Timestamp(1000 + i), LastEventAt: core.Timestamp(2000 + i)}
				if err := tx.InsertTask(k); err != nil {
					return err
				}
				want[k.ID] = s.agent
				if i >= 4 {
					continue // fewer runs and approvals
				}
				run := &core.Run{RunID: fmt.Sprintf("r-%s-%d", s.id, i), ChildSession: "sub-" + s.id, RequesterSession: s.id,
					Label: "sub", StartedAt: core.Timestamp(1000 + i), LastProgressAt: 1100, InactivityBudgetMs: 60000}
				if err := tx.InsertRun(run); err != nil {
					return err
				}
				want[run.RunID] = s.agent
				ap := &core.Approval{ID: fmt.Sprintf("a-%s-%d", s.id, i), Session: s.id, Tool: "Bash", Command: "make",
					Status: core.ApprovalPending, RequestedAt: core.Timestamp(1000 + i)}
				if err := tx.InsertApproval(ap); err != nil {
					return err
				}
				want[ap.ID] = s.agent
			}
		}
		return nil
	})
	return db, want
}

// TestWindowAgent: a window's rows carry their session's agent (tasks:
// the owner's, runs: the requester's, approvals: the session's; "" for a
// session with none or never recorded), and the filter matches an agent's
// name, any part of it, any ASCII case, in every sort, forwards and
// backwards, counted alike, whichever arm the caps make it read (the
// owner-session index, or the order's index with the session test).
func TestWindowAgent(t *testing.T) { eachStore(t, testWindowAgent) }

func testWindowAgent(t *testing.T) {
	db, want := agentFixture(t)
	ctx := context.Background()
	for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval} {
		got := &agentSink{agent: map[string]string{}}
		err := db.View(ctx, func(tx core.Tx) error {
			_, err := tx.Window(core.WindowQuery{Entity: entity, After: 1000}, got)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for id, a := range got.agent {
			if a != want[id] {
				t.Errorf("%s %s: agent %q, want %q", entity, id, a, want[id])
			}
		}
	}
	wantIDs := func(prefix string, match func(id, agent string) bool) []string {
		var out []string
		for id, a := range want {
			if strings.HasPrefix(id, prefix) && match(id, a) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		q     string
		match func(id, agent string) bool
	}{
		{"codex", func(id, a string) bool { return a == "codex" }},
		{"ODE", func(id, a string) bool { return a == "codex" }},
		{"gemini", func(id, a string) bool { return a == "gemini" }},
		// The name, and a Codex task whose label holds it.
		{"claude", func(id, a string) bool { return a == "claude" || id == "t-s-2-000" }},
		// Every agent's, and "make", "work"; not a run of a session with
		// no agent ("r-s-4-0", "sub", "sub-s-4").
		{"e", func(id, a string) bool { return a != "" || !strings.HasPrefix(id, "r-") }},
		{"nobody", func(id, a string) bool { return false }},
	}
	prefixes := map[string]string{core.EntityTask: "t-", core.EntityRun: "r-", core.EntityApproval: "a-"}
	for _, caps := range []filterCaps{{}, {index: 3}} {
		db.filterCap = caps
		for _, tc := range cases {
			for _, entity := range []string{core.EntityTask, core.EntityRun, core.EntityApproval} {
				w, _ := winTableOf(entity)
				exp := wantIDs(prefixes[entity], tc.match)
				for _, s := range w.sorts {
					fwd, back := pages(t, db, entity, s, tc.q)
					slices.Sort(fwd)
					slices.Sort(back)
					if !slices.Equal(fwd, exp) || !slices.Equal(back, exp) {
						t.Errorf("caps %+v: %s filter %q by %s: forward %v backward %v, want %v", caps, entity, tc.q, s.name, fwd, back, exp)
					}
				}
				var n int64
				err := db.View(ctx, func(tx core.Tx) error {
					var err error
					n, _, err = tx.CountWindow(core.WindowQuery{Entity: entity, Filter: tc.q}, 10_000)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if n != int64(len(exp)) {
					t.Errorf("caps %+v: %s filter %q counts %d, want %d", caps, entity, tc.q, n, len(exp))
				}
			}
		}
	}
}

// TestTaskFilterAgentPlan: an agent's arm reads sessions_agent and the
// tasks of its sessions through tasks_owner_session, or (more rows than the
// index cap) the order's index testing each row's session: never a full
// scan of tasks or sessions.
func TestTaskFilterAgentPlan(t *testing.T) {
	db, _ := agentFixture(t)
	w, _ := winTableOf(core.EntityTask)
	for _, caps := range []filterCaps{{}, {index: 3}} {
		db.filterCap = caps
		for _, s := range w.sorts {
			err := db.View(context.Background(), func(ctx core.Tx) error {
				p, err := ctx.(*tx).planFilter(taskFilter, s, "codex", false, nil)
				if err != nil {
					return err
				}
				var arm *class
				for i := range p.classes {
					if p.classes[i].arm == taskAgentArm {
						arm = &p.classes[i]
					}
				}
				if arm == nil || arm.value != "codex" || arm.n != min(7, caps.index+1) && caps.index > 0 || caps.index == 0 && arm.n != 7 {
					t.Fatalf("caps %+v by %s: agent arm %+v", caps, s.name, arm)
				}
				sq, args := w.selectFiltered(p, p.text, s, nil, false, true, 51, nil)
				plan := explain(t, db, sq, args)
				if !strings.Contains(plan, "sessions_agent") {
					t.Errorf("caps %+v by %s: no sessions_agent in\n%s", caps, s.name, plan)
				}
				if caps.index == 0 && !strings.Contains(plan, "tasks_owner_session") {
					t.Errorf("by %s: no tasks_owner_session in\n%s", s.name, plan)
				}
				for _, line := range strings.Split(plan, "\n") {
					l := strings.TrimLeft(line, " |-`")
					if (l == "SCAN tasks" || l == "SCAN sessions" || strings.HasPrefix(l, "SCAN tasks ") || strings.HasPrefix(l, "SCAN sessions ")) &&
						!strings.Contains(l, "USING") {
						t.Errorf("caps %+v by %s: full scan in\n%s", caps, s.name, plan)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
