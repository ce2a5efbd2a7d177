package view

import (
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestEveryStatusRanks: every status and run state clawpit records has a
// weight of its own place (none falls to the unknown -1), the orders name
// every status once, and an unknown one ranks below all.
func TestEveryStatusRanks(t *testing.T) {
	to := TaskUrgencyOrder()
	if !sameSet(to[:], core.TaskStatuses) {
		t.Errorf("task urgency order %v, statuses %v", to, core.TaskStatuses)
	}
	for _, s := range core.TaskStatuses {
		if w := TaskUrgency(s); w < 0 || to[len(to)-1-w] != s {
			t.Errorf("task %s weighs %d", s, w)
		}
	}
	jo := JobUrgencyOrder()
	if !sameSet(jo[:], core.JobStatuses) {
		t.Errorf("job urgency order %v, statuses %v", jo, core.JobStatuses)
	}
	for _, s := range core.JobStatuses {
		if w := JobUrgency(s); w < 0 || jo[len(jo)-1-w] != s {
			t.Errorf("job %s weighs %d", s, w)
		}
	}
	states := []string{RunWaiting, RunRunning, RunEnded}
	for _, o := range core.RunOutcomes {
		states = append(states, string(o))
	}
	for _, s := range states {
		if RunUrgency(s) < 0 {
			t.Errorf("run state %s has no weight", s)
		}
	}
	if TaskUrgency("nope") != -1 || JobUrgency("nope") != -1 || RunUrgency("nope") != -1 {
		t.Error("an unknown status does not rank last")
	}
	if RunUrgency(RunWaiting) <= RunUrgency(RunRunning) || RunUrgency(string(core.OutcomeError)) <= RunUrgency(string(core.OutcomeKilled)) ||
		RunUrgency(string(core.OutcomeKilled)) <= RunUrgency(string(core.OutcomeOK)) {
		t.Error("runs: waiting, running, error, other ends, ok is not the order")
	}
}

// TestRunState: the state a run shows.
func TestRunState(t *testing.T) {
	for _, c := range []struct {
		r    core.Run
		want string
	}{
		{core.Run{PendingApprovalWaits: 2}, RunWaiting},
		{core.Run{}, RunRunning},
		{core.Run{EndedAt: 5}, RunEnded},
		{core.Run{EndedAt: 5, Outcome: core.OutcomeTimeout, PendingApprovalWaits: 1}, "timeout"},
	} {
		if got := RunState(&c.r); got != c.want {
			t.Errorf("%+v: %s, want %s", c.r, got, c.want)
		}
	}
}

// TestSorts: every entity with a pane offers its sorts, urgency first, each
// name once and each key with a column; an unknown entity none.
func TestSorts(t *testing.T) {
	for _, e := range []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification} {
		names := SortNames(e)
		if len(names) < 3 || names[0] != "urgency" {
			t.Errorf("%s: sorts %v", e, names)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
			t.Errorf("%s: a sort name twice: %v", e, names)
		}
		for _, s := range Sorts(e) {
			for _, k := range s.Keys {
				if k.Name == "" || k.Column == "" {
					t.Errorf("%s %s: key %+v", e, s.Name, k)
				}
			}
		}
	}
	if Sorts("session") != nil || SortNames("session") != nil {
		t.Error("an entity without a pane has sorts")
	}
}

func sameSet[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// TestFields: every pane's fields have names of their own; the panes that
// show an agent (tasks, runs, approvals) search it, through the session
// (no SQL), and the others do not; SQLFields leaves out the agent and the
// columns asked.
func TestFields(t *testing.T) {
	agents := map[string]bool{core.EntityTask: true, core.EntityRun: true, core.EntityApproval: true,
		core.EntityJob: false, core.EntityNotification: false}
	for e, hasAgent := range agents {
		fs := Fields(e)
		seen := map[string]bool{}
		n := 0
		for _, f := range fs {
			if seen[f.Name] {
				t.Errorf("%s: field %q twice", e, f.Name)
			}
			seen[f.Name] = true
			if (f.SQL == "") != (f.Name == FieldAgent) {
				t.Errorf("%s: field %+v", e, f)
			}
			if f.SQL != "" {
				n++
			}
		}
		if seen[FieldAgent] != hasAgent {
			t.Errorf("%s: searches the agent %v, want %v", e, seen[FieldAgent], hasAgent)
		}
		if got := SQLFields(e); len(got) != n {
			t.Errorf("%s: SQLFields %v", e, got)
		}
	}
	if got := SQLFields(core.EntityTask, "status", "error"); slices.Contains(got, "status") || slices.Contains(got, "error") ||
		len(got) != len(SQLFields(core.EntityTask))-2 {
		t.Errorf("SQLFields without status and error: %v", got)
	}
	if Fields("session") != nil {
		t.Error("an entity without a pane has fields")
	}
}
