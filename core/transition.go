package core

// Actor names who makes a change, for the event journal (docs/contract.md "Entities and statuses"): "runtime",
// "sweeper", "watchdog", "supervisor", or an operator identity ("$USER@host").
type Actor string

const (
	ActorRuntime    Actor = "runtime"
	ActorSweeper    Actor = "sweeper"
	ActorWatchdog   Actor = "watchdog"
	ActorSupervisor Actor = "supervisor"
)

// IsMaintenance reports whether the actor is the maintenance sweeper, the only
// actor allowed to infer `lost` (docs/contract.md "Entities and statuses" transition table).
func (a Actor) IsMaintenance() bool { return a == ActorSweeper }

// CanTransitionTask is the task transition rule of docs/contract.md "Entities and statuses", the single place it
// is decided. It returns whether from → to is allowed for actor and, when it is
// not, the reason recorded in the journal as an `ignored` event.
//
// The rule: active statuses move freely among themselves and to any
// authoritative terminal status; only maintenance infers `lost` from an active
// status; `succeeded` is never downgraded; failed/timed_out/cancelled are final;
// `lost` yields to a later authoritative terminal report (inferred yields to
// authoritative) but never returns to an active status. from == to is a no-op
// and reported as not applied with reason "already <status>".
func CanTransitionTask(from, to TaskStatus, actor Actor) (bool, string) {
	if from == to {
		return false, "already " + string(from)
	}
	switch from {
	case TaskQueued, TaskRunning:
		if to == TaskLost && !actor.IsMaintenance() {
			return false, "only maintenance may mark a task lost"
		}
		return true, ""
	case TaskSucceeded:
		return false, "succeeded is final: no downgrade to " + string(to)
	case TaskFailed, TaskTimedOut, TaskCancelled:
		return false, string(from) + " is final (authoritative terminal status)"
	case TaskLost:
		switch to {
		case TaskSucceeded, TaskFailed, TaskTimedOut, TaskCancelled:
			return true, ""
		default:
			return false, "lost may only be replaced by an authoritative terminal status, not " + string(to)
		}
	}
	return false, "unknown status " + string(from)
}
