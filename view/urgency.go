package view

import "github.com/clawpit/clawpit/core"

// Urgency weights: the larger, the nearer the top of a pane in its urgency
// order. A status clawpit does not record (an outside registry's, as
// OpenClaw's could hold) weighs -1, below every known one; the registry
// never stores one, so migration 0007's CASE (ELSE 0) never sees it.

// TaskUrgencyOrder is the tasks' statuses, most urgent first: what runs or
// will run, then what went wrong, then what ended well. A fresh array.
func TaskUrgencyOrder() [7]core.TaskStatus {
	return [...]core.TaskStatus{core.TaskRunning, core.TaskQueued, core.TaskLost, core.TaskFailed,
		core.TaskTimedOut, core.TaskCancelled, core.TaskSucceeded}
}

// JobUrgencyOrder is the jobs' statuses, most urgent first. A fresh array.
func JobUrgencyOrder() [8]core.JobStatus {
	return [...]core.JobStatus{core.JobRunning, core.JobPending, core.JobLost, core.JobFailed,
		core.JobTimedOut, core.JobCancelled, core.JobReaped, core.JobCompleted}
}

// TaskUrgency is s's weight: 6 (running) down to 0 (succeeded), -1 for an
// unknown status (migration 0007's tasks.win_urgency).
func TaskUrgency(s core.TaskStatus) int {
	o := TaskUrgencyOrder()
	return weight(o[:], s)
}

// JobUrgency is s's weight: 7 (running) down to 0 (completed), -1 for an
// unknown status (migration 0007's jobs.win_urgency).
func JobUrgency(s core.JobStatus) int {
	o := JobUrgencyOrder()
	return weight(o[:], s)
}

// Run states the console shows besides the outcomes (RunState).
const (
	RunWaiting = "waiting" // running, with an approval pending
	RunRunning = "running"
	RunEnded   = "ended" // ended with no outcome recorded
)

// RunState is the state a run shows in its STATE column and is searched
// by: waiting (running with approvals pending), running, else its outcome
// ("ended" when none was recorded).
func RunState(r *core.Run) string {
	switch {
	case r.Running() && r.PendingApprovalWaits > 0:
		return RunWaiting
	case r.Running():
		return RunRunning
	case r.Outcome == "":
		return RunEnded
	}
	return string(r.Outcome)
}

// RunUrgency is a run state's weight (RunState): 4 waiting, 3 running, 2
// error or timeout, 1 the other ends (killed, reset, deleted, ended), 0 ok,
// -1 an unknown outcome (migration 0007's runs.win_urgency).
func RunUrgency(state string) int {
	switch state {
	case RunWaiting:
		return 4
	case RunRunning:
		return 3
	case string(core.OutcomeError), string(core.OutcomeTimeout):
		return 2
	case string(core.OutcomeKilled), string(core.OutcomeReset), string(core.OutcomeDeleted), RunEnded:
		return 1
	case string(core.OutcomeOK):
		return 0
	}
	return -1
}

// ApprovalUrgency is 1 for a pending approval, else 0 (migration 0007's
// approvals.win_pending).
func ApprovalUrgency(s core.ApprovalStatus) int { return b2i(s == core.ApprovalPending) }

// AlertUrgency is 1 for a notification not yet delivered (delivered = 0),
// else 0 (migration 0007's notifications.win_unread).
func AlertUrgency(delivered core.Timestamp) int { return b2i(delivered == 0) }

// TaskUrgencies maps every task status to its weight (TaskUrgency): the
// store's filter plans rank status classes by it. A fresh map.
func TaskUrgencies() map[string]int {
	o := TaskUrgencyOrder()
	m := make(map[string]int, len(o))
	for _, s := range o {
		m[string(s)] = TaskUrgency(s)
	}
	return m
}

func weight[T comparable](order []T, s T) int {
	for i, x := range order {
		if x == s {
			return len(order) - 1 - i
		}
	}
	return -1
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
