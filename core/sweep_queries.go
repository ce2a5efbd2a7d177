package core

// SweepTx is the maintenance side of a transaction: the indexed queries and
// conditional writes the sweeper needs beyond Tx (SPEC §5). The Tx handed out
// by Store.View and Store.Update implements it too (package store, on the
// same transaction type); the sweeper type-asserts it.
//
// Every read goes through an index whose size follows the active or due rows,
// never the history (SPEC §5, P1). limit > 0 caps the rows returned; 0 means
// no cap. Write methods return false (and no error) when the row no longer
// matches the condition it was planned under — the caller counts it raced.
type SweepTx interface {
	// SweepOverdueRuns returns running runs whose watchdog is armed
	// (pending_approval_waits = 0) and whose last_progress_at +
	// inactivity_budget_ms < now (SPEC R6), oldest progress first.
	SweepOverdueRuns(now Timestamp, limit int) ([]Run, error)

	// SweepActiveTasks returns the queued or running tasks a sweep may act on
	// or report, with what backs them (SPEC R5, R10), by last activity, oldest
	// first: a superset the sweeper re-checks row by row. It walks the active
	// set inside SQLite and returns only candidates, so a large, healthy
	// active set costs one index walk and no rows (see ActiveTaskFilter).
	SweepActiveTasks(f ActiveTaskFilter) ([]ActiveTaskRow, error)
	// SweepActiveTask is SweepActiveTasks for one task id; nil, nil when the
	// task is missing or no longer active. Apply re-checks a planned lost
	// against it inside the write transaction.
	SweepActiveTask(id string) (*ActiveTaskRow, error)

	// SweepExpiredApprovals returns pending approvals with expires_at <= now
	// (SPEC R9), soonest expiry first.
	SweepExpiredApprovals(now Timestamp, limit int) ([]Approval, error)

	// SweepSilentTasks returns tasks with expects_output, output_count 0,
	// status succeeded or failed and ended_at >= endedSince, that have no
	// "task_silent:<id>" notification yet (SPEC R7).
	SweepSilentTasks(endedSince Timestamp, limit int) ([]Task, error)

	// SweepUnstamped returns finished rows of entity (EntityTask, EntityRun,
	// EntityApproval, EntityNotification, EntityJob) without cleanup_after
	// whose end time (ended_at, decided_at, delivered_at, completed_at) is
	// known, so cleanup_after can be stamped (SPEC R8).
	SweepUnstamped(entity string, limit int) ([]RetentionRow, error)
	// SweepMissingEnd returns finished rows of entity without cleanup_after
	// and without an end time: retention cannot be computed (audit
	// missing_cleanup, SPEC R10). Runs and notifications have none by
	// definition and return nil.
	SweepMissingEnd(entity string, limit int) ([]RetentionRow, error)
	// SweepDue returns finished rows of entity whose cleanup_after <= now
	// (SPEC R8 prune), oldest cleanup first.
	SweepDue(entity string, now Timestamp, limit int) ([]RetentionRow, error)

	// SweepDeliveryFailed returns tasks with delivery_status failed (SPEC R10).
	SweepDeliveryFailed(limit int) ([]RetentionRow, error)
	// SweepInconsistent returns rows of entity (EntityTask, EntityRun,
	// EntityApproval, EntityJob) whose timestamps contradict each other:
	// started before created, ended before started or created, active with
	// an end time (SPEC R10 inconsistent_timestamps).
	SweepInconsistent(entity string, limit int) ([]TimesRow, error)

	// SweepLastNotificationID returns the largest notification id, 0 when
	// there is none (a cursor for following new notifications).
	SweepLastNotificationID() (int64, error)

	// SweepStamp sets cleanup_after on one finished row of entity when its
	// revision is still rev and cleanup_after is still unset (notifications
	// have no revision: rev is ignored). False when it raced.
	SweepStamp(entity, id string, rev int64, cleanupAfter Timestamp) (bool, error)
	// SweepPrune deletes one row of entity when its revision is still rev and
	// cleanup_after <= now, together with its event journal (SPEC R8). False
	// when it raced.
	SweepPrune(entity, id string, rev int64, now Timestamp) (bool, error)
}

// ActiveTaskFilter selects the active-task candidates of one sweep. A row is
// returned when any of these holds:
//   - its run (run_id) or, for a cli row, its source run (source_id) has
//     ended (early lost, R5);
//   - activity_at < IdleBefore and nothing backs it: no running run by
//     run_id or cli source_id, no pending or running job by source_id, no
//     active session (child_session, else owner_session) (grace lost, R5);
//   - it is queued with activity_at <= QueuedBefore (stale_queued, R10);
//   - it is running with started_at ?? created_at <= RunningBefore and no
//     running run or pending/running job backs it (stale_running, R10).
type ActiveTaskFilter struct {
	IdleBefore    Timestamp
	QueuedBefore  Timestamp
	RunningBefore Timestamp
}

// ActiveTaskRow is an active task with what backs it, as the sweeper reads it
// (SPEC R5). Zero values mean absent.
type ActiveTaskRow struct {
	ID           string
	Runtime      Runtime
	Status       TaskStatus
	RunID        string
	SourceID     string
	OwnerSession string
	ChildSession string
	CreatedAt    Timestamp
	StartedAt    Timestamp
	EndedAt      Timestamp
	ActivityAt   Timestamp // last_event_at ?? started_at ?? created_at
	Rev          int64

	Run       RunBacking   // the run whose id = run_id
	SourceRun RunBacking   // cli rows: the run whose id = source_id
	JobStatus JobStatus    // the job whose id = source_id; "" when none
	Session   SessionState // child_session else owner_session; "" when missing
}

// RunBacking is the state of a run that backs a task.
type RunBacking struct {
	Exists  bool
	EndedAt Timestamp
	Outcome RunOutcome
}

// Running reports whether the run is registered and has not ended.
func (b RunBacking) Running() bool { return b.Exists && b.EndedAt == 0 }

// RetentionRow is the part of a row the retention and audit steps need.
type RetentionRow struct {
	ID           string
	Status       string    // status (tasks, approvals, jobs), outcome (runs), kind (notifications)
	EndAt        Timestamp // ended_at, decided_at, delivered_at or completed_at
	CleanupAfter Timestamp
	Rev          int64  // 0 for notifications
	LogPath      string // jobs only
	Session      string // delivery_failed: the task's owner session
	Label        string // delivery_failed: the task's label
}

// TimesRow is a row's lifecycle timestamps, for inconsistent_timestamps.
// Created is created_at (requested_at for approvals; runs have none); Ended is
// ended_at, decided_at or completed_at.
type TimesRow struct {
	ID      string
	Status  string // status (tasks, approvals, jobs), outcome (runs)
	Created Timestamp
	Started Timestamp
	Ended   Timestamp
}
