package core

import "strings"

// TaskStatus is the status of a task run (docs/contract.md "Entities and statuses").
type TaskStatus string

const (
	TaskQueued    TaskStatus = "queued"
	TaskRunning   TaskStatus = "running"
	TaskSucceeded TaskStatus = "succeeded"
	TaskFailed    TaskStatus = "failed"
	TaskTimedOut  TaskStatus = "timed_out"
	TaskCancelled TaskStatus = "cancelled"
	// TaskLost is inferred by maintenance (docs/contract.md "Lost work"); every other terminal status is authoritative.
	TaskLost TaskStatus = "lost"
)

// TaskStatuses lists every task status in display order.
var TaskStatuses = []TaskStatus{TaskQueued, TaskRunning, TaskSucceeded, TaskFailed, TaskTimedOut, TaskCancelled, TaskLost}

// ActiveTaskStatuses are the non-terminal statuses.
var ActiveTaskStatuses = []TaskStatus{TaskQueued, TaskRunning}

// Terminal reports whether s is one of the five terminal statuses.
func (s TaskStatus) Terminal() bool { return s != TaskQueued && s != TaskRunning }

// Active reports whether s is queued or running.
func (s TaskStatus) Active() bool { return s == TaskQueued || s == TaskRunning }

// FailedOrLost reports a task that ended badly: failed, timed out or lost
// (the console's attention bell and its failures count).
func (s TaskStatus) FailedOrLost() bool {
	return s == TaskFailed || s == TaskTimedOut || s == TaskLost
}

// Runtime is what runs a task (docs/contract.md "Entities and statuses").
type Runtime string

const (
	RuntimeSubagent Runtime = "subagent"
	RuntimeCLI      Runtime = "cli"
	RuntimeCron     Runtime = "cron"
	RuntimeACP      Runtime = "acp"
)

// Runtimes lists every runtime.
var Runtimes = []Runtime{RuntimeSubagent, RuntimeCLI, RuntimeCron, RuntimeACP}

// DeliveryStatus tells whether a task's result reached its owner session (docs/contract.md "Entities and statuses").
type DeliveryStatus string

const (
	DeliveryPending       DeliveryStatus = "pending"
	DeliveryDelivered     DeliveryStatus = "delivered"
	DeliverySessionQueued DeliveryStatus = "session_queued"
	DeliveryFailed        DeliveryStatus = "failed"
	DeliveryParentMissing DeliveryStatus = "parent_missing"
	DeliveryNotApplicable DeliveryStatus = "not_applicable"
)

// DeliveryStatuses lists every delivery status.
var DeliveryStatuses = []DeliveryStatus{DeliveryPending, DeliveryDelivered, DeliverySessionQueued, DeliveryFailed, DeliveryParentMissing, DeliveryNotApplicable}

// NotifyPolicy controls which notifications a task raises (docs/contract.md "Entities and statuses").
type NotifyPolicy string

const (
	NotifyDoneOnly     NotifyPolicy = "done_only"
	NotifyStateChanges NotifyPolicy = "state_changes"
	NotifySilent       NotifyPolicy = "silent"
)

// NotifyPolicies lists every notify policy.
var NotifyPolicies = []NotifyPolicy{NotifyDoneOnly, NotifyStateChanges, NotifySilent}

// SessionState is the lifecycle state of a session (docs/contract.md "Entities and statuses").
type SessionState string

const (
	SessionActive     SessionState = "active"
	SessionPassivated SessionState = "passivated"
	SessionClosed     SessionState = "closed"
)

// RunOutcome is how a subagent run ended (docs/contract.md "Entities and statuses").
type RunOutcome string

const (
	OutcomeOK      RunOutcome = "ok"
	OutcomeError   RunOutcome = "error"
	OutcomeTimeout RunOutcome = "timeout"
	OutcomeKilled  RunOutcome = "killed"
	OutcomeReset   RunOutcome = "reset"
	OutcomeDeleted RunOutcome = "deleted"
)

// RunOutcomes lists every outcome.
var RunOutcomes = []RunOutcome{OutcomeOK, OutcomeError, OutcomeTimeout, OutcomeKilled, OutcomeReset, OutcomeDeleted}

// ApprovalStatus is the state of an approval request (docs/contract.md "Entities and statuses").
type ApprovalStatus string

const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalApproved  ApprovalStatus = "approved"
	ApprovalDenied    ApprovalStatus = "denied"
	ApprovalExpired   ApprovalStatus = "expired"
	ApprovalCancelled ApprovalStatus = "cancelled"
)

// ApprovalStatuses lists every approval status.
var ApprovalStatuses = []ApprovalStatus{ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalCancelled}

// Scope is how far an approval reaches (docs/contract.md "Entities and statuses"): this request only, the rest of
// the session (a session grant), or always (a global grant).
type Scope string

const (
	ScopeOnce    Scope = "once"
	ScopeSession Scope = "session"
	ScopeAlways  Scope = "always"
)

// Scopes lists every approval scope.
var Scopes = []Scope{ScopeOnce, ScopeSession, ScopeAlways}

// JobStatus is the state of a background job (docs/contract.md "Entities and statuses", docs/contract.md "Background jobs").
type JobStatus string

const (
	JobPending   JobStatus = "pending"
	JobRunning   JobStatus = "running"
	JobCompleted JobStatus = "completed"
	JobFailed    JobStatus = "failed"
	JobCancelled JobStatus = "cancelled"
	JobTimedOut  JobStatus = "timed_out"
	JobReaped    JobStatus = "reaped"
	JobLost      JobStatus = "lost"
)

// JobStatuses lists every job status.
var JobStatuses = []JobStatus{JobPending, JobRunning, JobCompleted, JobFailed, JobCancelled, JobTimedOut, JobReaped, JobLost}

// Active reports whether the job is pending or running.
func (s JobStatus) Active() bool { return s == JobPending || s == JobRunning }

// NotificationKind names what a notification is about (docs/contract.md "Entities and statuses").
type NotificationKind string

const (
	NotifyJobFinished     NotificationKind = "job_finished"
	NotifyJobLost         NotificationKind = "job_lost"
	NotifyTaskFailed      NotificationKind = "task_failed"
	NotifyTaskSilent      NotificationKind = "task_silent"
	NotifyRunTimedOut     NotificationKind = "run_timed_out"
	NotifyApprovalExpired NotificationKind = "approval_expired"
	// NotifyRuntimeNotice is a notification the runtime itself raised (Claude
	// Code hooks: Notification); its subject is the session's pending approval
	// when it asks for a permission clawpit is already gating.
	NotifyRuntimeNotice NotificationKind = "runtime_notice"
)

// parseEnum matches s against the allowed values and returns an ErrInvalid error
// naming the bad value and the allowed ones.
func parseEnum[T ~string](what, s string, allowed []T) (T, error) {
	for _, a := range allowed {
		if string(a) == s {
			return a, nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	var zero T
	return zero, Invalidf("unknown %s %q (want one of: %s)", what, s, strings.Join(names, ", "))
}

// ParseTaskStatus parses a task status; errors wrap ErrInvalid.
func ParseTaskStatus(s string) (TaskStatus, error) { return parseEnum("task status", s, TaskStatuses) }

// ParseRuntime parses a runtime; errors wrap ErrInvalid.
func ParseRuntime(s string) (Runtime, error) { return parseEnum("runtime", s, Runtimes) }

// ParseDeliveryStatus parses a delivery status; errors wrap ErrInvalid.
func ParseDeliveryStatus(s string) (DeliveryStatus, error) {
	return parseEnum("delivery status", s, DeliveryStatuses)
}

// ParseNotifyPolicy parses a notify policy; errors wrap ErrInvalid.
func ParseNotifyPolicy(s string) (NotifyPolicy, error) {
	return parseEnum("notify policy", s, NotifyPolicies)
}

// ParseRunOutcome parses a run outcome; errors wrap ErrInvalid.
func ParseRunOutcome(s string) (RunOutcome, error) { return parseEnum("outcome", s, RunOutcomes) }

// ParseApprovalStatus parses an approval status; errors wrap ErrInvalid.
func ParseApprovalStatus(s string) (ApprovalStatus, error) {
	return parseEnum("approval status", s, ApprovalStatuses)
}

// ParseScope parses an approval scope; errors wrap ErrInvalid.
func ParseScope(s string) (Scope, error) { return parseEnum("scope", s, Scopes) }

// ParseJobStatus parses a job status; errors wrap ErrInvalid.
func ParseJobStatus(s string) (JobStatus, error) { return parseEnum("job status", s, JobStatuses) }
