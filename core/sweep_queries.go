package core

// Row shapes of the maintenance queries of Tx (docs/contract.md "Maintenance").

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
// (docs/contract.md "Lost work"). Zero values mean absent.
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

// LostMark is one task Tx.SweepMarkLost marks lost.
type LostMark struct {
	ID           string
	Rev          int64 // the revision it was checked at
	Reason       string
	EndedAt      Timestamp
	CleanupAfter Timestamp
}

// RowKey names one row of a conditional write: its id and the revision it
// was planned against.
type RowKey struct {
	ID  string
	Rev int64
}
