package feed

import "github.com/clawpit/clawpit/core"

// Kind is the entity a row or a detail view is about: one of the console's
// five panes.
type Kind uint8

// The five kinds, in the console's tab order.
const (
	KindTask Kind = iota
	KindRun
	KindApproval
	KindJob
	KindAlert
	// NumKinds is the number of kinds: arrays indexed by Kind have this
	// length.
	NumKinds
)

// String is the kind's word as the console writes it ("task", "run",
// "approval", "job", "alert"; "?" for a value out of range).
func (k Kind) String() string {
	switch k {
	case KindTask:
		return "task"
	case KindRun:
		return "run"
	case KindApproval:
		return "approval"
	case KindJob:
		return "job"
	case KindAlert:
		return "alert"
	}
	return "?"
}

// Entity is the journal entity of the kind (core.EntityTask, …,
// core.EntityNotification for alerts); "" for a value out of range.
func (k Kind) Entity() string {
	if k >= NumKinds {
		return ""
	}
	return [...]string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification}[k]
}

// kindOfEntity is the kind of a journal entity (tasks for one unknown).
func kindOfEntity(entity string) Kind {
	switch entity {
	case core.EntityRun:
		return KindRun
	case core.EntityApproval:
		return KindApproval
	case core.EntityJob:
		return KindJob
	case core.EntityNotification:
		return KindAlert
	}
	return KindTask
}

// SubjectEntity is the journal entity a notification of kind k is about
// (a job, a task, a run or an approval), "" for a kind with no subject: a
// notification has no journal of its own, and its detail shows its
// subject's.
func SubjectEntity(k core.NotificationKind) string {
	switch k {
	case core.NotifyJobFinished, core.NotifyJobLost:
		return core.EntityJob
	case core.NotifyTaskFailed, core.NotifyTaskSilent:
		return core.EntityTask
	case core.NotifyRunTimedOut:
		return core.EntityRun
	case core.NotifyApprovalExpired, core.NotifyRuntimeNotice:
		return core.EntityApproval // a runtime notice's subject, when set, is the approval it asks about
	}
	return ""
}
