package core

import "context"

// Store is the persistence the registry needs; package store implements it on
// SQLite and on PostgreSQL (README "Many hosts: PostgreSQL"). core decides what is allowed; the Store
// applies it atomically.
type Store interface {
	// Update runs fn in one write transaction (SQLite BEGIN IMMEDIATE;
	// PostgreSQL: REPEATABLE READ, with no registry-wide lock). An error from
	// fn rolls everything back. fn may run more than once: PostgreSQL
	// retries it, a bounded number of times, after a serialization failure,
	// so fn keeps no state across runs but by assignment. Locked (or still
	// conflicting) past the busy timeout: ErrBusy. A PostgreSQL server out
	// of reach: ErrUnavailable.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction over one consistent snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// DataVersion returns SQLite's PRAGMA data_version as seen by a dedicated
	// connection: it changes whenever another connection commits, so callers
	// poll it cheaply to learn that something changed (README "The console" live data).
	// On PostgreSQL it counts the change notifications (LISTEN/NOTIFY) heard
	// on a dedicated connection, in every process and on every host; while
	// that connection is lost it returns an error wrapping ErrUnavailable.
	DataVersion(ctx context.Context) (int64, error)
	// Path is the database file path, or the PostgreSQL URL without its
	// password.
	Path() string
	Close() error
}

// ChangeWaiter is implemented by a Store that is told of writes rather than
// polled (PostgreSQL's LISTEN/NOTIFY): ChangedAfter(v) returns a channel
// closed once DataVersion has moved past v, or nil when this handle is not
// told (SQLite, PostgreSQL polling): the caller then polls DataVersion.
// WaitApproval wakes on it, so a decision made on another host reaches a
// waiting hook within milliseconds of its commit, not at the next poll.
type ChangeWaiter interface {
	ChangedAfter(since int64) <-chan struct{}
}

// Tx is one transaction's view of the registry. Every Update* method is a
// conditional update: it applies only when the row's revision still equals
// the Rev the caller read (WHERE id=? AND rev=?), bumps Rev on success, and
// returns ErrConflict when the row changed underneath (or vanished). Get*
// methods return ErrNotFound for an unknown exact id.
type Tx interface {
	// The console's window queries (window_queries.go).
	WindowTx

	// ResolveID turns an exact id or a unique prefix of at least 4 characters
	// into the full id of entity (EntitySession, EntityTask, EntityRun,
	// EntityApproval, EntityGrant, EntityJob). Errors: ErrNotFound (wrapped, the
	// message names entity and prefix), *AmbiguousError, ErrInvalid for a
	// non-exact prefix shorter than 4 characters.
	ResolveID(entity, prefix string) (string, error)
	// IDNeighbours returns, for each of ids (of entity, as ResolveID), the
	// ids just before and just after it among entity's rows in byte order
	// ("" at either end), in one read: with them the console shows each id
	// by its shortest prefix no other row shares. Errors: ErrInvalid for an
	// unknown entity.
	IDNeighbours(entity string, ids []string) ([][2]string, error)

	GetSession(id string) (*Session, error)
	InsertSession(s *Session) error // ErrConflict when the id exists
	UpdateSession(s *Session) error
	ListSessions(f SessionFilter) ([]Session, error)

	GetTask(id string) (*Task, error)
	InsertTask(t *Task) error // ErrConflict when the id exists
	UpdateTask(t *Task) error
	ListTasks(f TaskFilter) ([]Task, error)
	// MirroredTasks returns the task rows mirroring a run (docs/contract.md "Entities and statuses"): run_id =
	// runID (any runtime), and cli rows whose source_id = runID.
	MirroredTasks(runID string) ([]Task, error)

	GetRun(runID string) (*Run, error)
	InsertRun(r *Run) error // ErrConflict when the id exists
	UpdateRun(r *Run) error
	ListRuns(f RunFilter) ([]Run, error)

	GetApproval(id string) (*Approval, error)
	InsertApproval(a *Approval) error
	UpdateApproval(a *Approval) error
	ListApprovals(f ApprovalFilter) ([]Approval, error)

	InsertGrant(g *Grant) error
	GetGrant(id string) (*Grant, error)
	DeleteGrant(id string) error // ErrNotFound when absent
	ListGrants() ([]Grant, error)
	// FindGrant returns the oldest grant matching tool and pattern that is
	// either scope always or scope session for session; nil, nil when none.
	FindGrant(tool, pattern, session string) (*Grant, error)

	GetJob(id string) (*Job, error)
	InsertJob(j *Job) error
	UpdateJob(j *Job) error
	ListJobs(f JobFilter) ([]Job, error)

	// InsertNotification stores n and sets n.ID; it returns false (and no
	// error) when a notification with the same DedupKey already exists.
	InsertNotification(n *Notification) (bool, error)
	ListNotifications(f NotificationFilter) ([]Notification, error)
	// MarkNotificationDelivered sets delivered_at where it is still NULL;
	// false when it was already delivered.
	MarkNotificationDelivered(id int64, at Timestamp) (bool, error)
	// ClaimNotification claims an undelivered notification for notifier by
	// until the lease ends; false when it is delivered, absent, or claimed
	// by another notifier whose lease has not ended at now.
	ClaimNotification(id int64, by string, now, until Timestamp) (bool, error)
	// ReleaseNotificationClaim drops by's claim on id, if it still holds it.
	ReleaseNotificationClaim(id int64, by string) error

	// AppendEvent writes one journal row (sets nothing on e).
	AppendEvent(e Event) error
	// AppendEvents writes journal rows in order, many per statement.
	AppendEvents(es []Event) error
	// Events returns the journal of one entity, oldest first.
	Events(entity, id string) ([]Event, error)
	// EventsSince returns journal rows with id > afterID, oldest first, at most
	// limit (0 = no limit). The console uses it to reload only what changed.
	EventsSince(afterID int64, limit int) ([]Event, error)

	// The console's bulk reads (README "The console").

	// MaxEventID returns the id of the newest journal row, 0 when the journal
	// is empty: the console's starting point for EventsSince after a full load.
	MaxEventID() (int64, error)
	// EachTask calls fn for every task, newest first, without building the
	// whole result in memory. The *Task passed to fn is reused between
	// calls: fn must copy what it keeps. fn must not use the transaction:
	// on PostgreSQL the scan holds its connection. An error from fn stops
	// the scan and is returned.
	EachTask(fn func(*Task) error) error
	// CountRows returns the row count of every table the console shows.
	CountRows() (TableCounts, error)

	// The maintenance sweeper's queries and conditional writes (docs/contract.md "Maintenance").
	//
	// Every read goes through an index whose size follows the active or due
	// rows, never the history (docs/contract.md "Maintenance", bench/README.md P1). limit > 0 caps the rows
	// returned; 0 means no cap. Write methods return false (and no error)
	// when the row no longer matches the condition it was planned under —
	// the caller counts it raced.

	// SweepOverdueRuns returns running runs whose watchdog is armed
	// (pending_approval_waits = 0) and whose last_progress_at +
	// inactivity_budget_ms < now (docs/contract.md "The inactivity watchdog pauses for approvals"), oldest progress first.
	SweepOverdueRuns(now Timestamp, limit int) ([]Run, error)

	// SweepActiveTasks returns the queued or running tasks a sweep may act on
	// or report, with what backs them (docs/contract.md "Lost work", docs/contract.md "Audit"), by last activity, oldest
	// first: a superset the sweeper re-checks row by row. It walks the active
	// set inside SQLite and returns only candidates, so a large, healthy
	// active set costs one index walk and no rows (see ActiveTaskFilter).
	SweepActiveTasks(f ActiveTaskFilter) ([]ActiveTaskRow, error)
	// SweepActiveTasksByID is SweepActiveTasks for the given task ids, with
	// no candidate filter: the rows of ids that exist and are still active,
	// in no particular order (missing or finished ones are left out). Apply
	// re-checks a batch of planned losts against it inside the write
	// transaction, one query for the batch.
	SweepActiveTasksByID(ids []string) ([]ActiveTaskRow, error)
	// SweepMarkLost marks tasks lost (docs/contract.md "Lost work"), each only when its revision
	// is still Rev and it is still queued or running: status lost, error =
	// Reason, ended_at and cleanup_after as given, rev bumped. It returns,
	// in the order of marks, whether each was marked (false: raced). Only
	// these columns change, so a write touches only the indexes over them
	// (UpdateTask rewrites every index of the row), and a batch of marks is
	// one statement. The caller checks the transition rule and journals.
	SweepMarkLost(marks []LostMark) ([]bool, error)
	// SweepDropLost deletes tasks a sweep finds lost and already past their
	// retention (docs/contract.md "Lost work" then R8 in one write), each only when its revision
	// is still Rev and it is still queued or running, together with their
	// event journal. It returns, in the order of keys, whether each was
	// deleted (false: raced). Marking such a row lost first would rewrite
	// its indexes and journal a transition the prune deletes at once.
	SweepDropLost(keys []RowKey) ([]bool, error)

	// SweepExpiredApprovals returns pending approvals with expires_at <= now
	// (docs/contract.md "Approvals expire"), soonest expiry first.
	SweepExpiredApprovals(now Timestamp, limit int) ([]Approval, error)

	// SweepWaitedApprovals returns pending approvals whose waiter (Approval
	// Waiter) is a process on host, by id. Its cost grows with the pending
	// approvals only.
	SweepWaitedApprovals(host string, limit int) ([]Approval, error)

	// SweepSilentTasks returns tasks with expects_output, output_count 0,
	// status succeeded or failed and ended_at >= endedSince, that have no
	// "task_silent:<id>" notification yet (docs/contract.md "Silent scheduled tasks").
	SweepSilentTasks(endedSince Timestamp, limit int) ([]Task, error)

	// SweepUnstamped returns finished rows of entity (EntityTask, EntityRun,
	// EntityApproval, EntityNotification, EntityJob) without cleanup_after
	// whose end time (ended_at, decided_at, delivered_at, completed_at) is
	// known, so cleanup_after can be stamped (docs/contract.md "Retention").
	SweepUnstamped(entity string, limit int) ([]RetentionRow, error)
	// SweepMissingEnd returns finished rows of entity without cleanup_after
	// and without an end time: retention cannot be computed (audit
	// missing_cleanup, docs/contract.md "Audit"). Runs and notifications have none by
	// definition and return nil.
	SweepMissingEnd(entity string, limit int) ([]RetentionRow, error)
	// SweepDue returns finished rows of entity whose cleanup_after <= now
	// (docs/contract.md "Retention" prune), oldest cleanup first.
	SweepDue(entity string, now Timestamp, limit int) ([]RetentionRow, error)

	// SweepDeliveryFailed returns tasks with delivery_status failed (docs/contract.md "Audit").
	SweepDeliveryFailed(limit int) ([]RetentionRow, error)
	// SweepInconsistent returns rows of entity (EntityTask, EntityRun,
	// EntityApproval, EntityJob) whose timestamps contradict each other:
	// started before created, ended before started or created, active with
	// an end time (docs/contract.md "Audit" inconsistent_timestamps).
	SweepInconsistent(entity string, limit int) ([]TimesRow, error)

	// SweepLastNotificationID returns the largest notification id, 0 when
	// there is none (a cursor for following new notifications).
	SweepLastNotificationID() (int64, error)

	// SweepStamp sets cleanup_after on one finished row of entity when its
	// revision is still rev and cleanup_after is still unset (notifications
	// have no revision: rev is ignored). False when it raced.
	SweepStamp(entity, id string, rev int64, cleanupAfter Timestamp) (bool, error)
	// SweepPrune deletes rows of entity, each only when its revision is
	// still Rev (notifications have none: Rev is ignored) and its
	// cleanup_after <= now, together with their event journal (docs/contract.md "Retention"),
	// many rows per statement. It returns, in the order of keys, whether
	// each was deleted (false: raced).
	SweepPrune(entity string, keys []RowKey, now Timestamp) ([]bool, error)

	// Usage (issue 27): tokens per session, run and task, per model.

	// AddUsage adds each row's tokens and reported cost to its (scope, id,
	// model) row, creating it when absent, and sets its counted_at.
	AddUsage(rows []UsageRow) error
	// ListUsage returns the rows f selects, by scope, id and model.
	ListUsage(f UsageFilter) ([]UsageRow, error)
	// SumUsage returns per scope, id and model the sum of the counts
	// (each AddUsage row, with its time) f selects: f.Since selects the
	// tokens counted since then, not the rows last counted since then.
	SumUsage(f UsageFilter) ([]UsageRow, error)
	// GetBudget returns the budget row of key ("" the registry's,
	// "session:<id>", "run:<id>"); found false when there is none.
	GetBudget(key string) (b BudgetRecord, found bool, err error)
	// ListBudgets returns every budget row, by key.
	ListBudgets() ([]BudgetRecord, error)
	// PutBudget stores b, replacing the row of its key.
	PutBudget(b BudgetRecord) error
	// GetUsageSource returns how far the transcript at path has been
	// read; nil, nil when it never was.
	GetUsageSource(path string) (*UsageSource, error)
	// PutUsageSource stores s, replacing the row of its path.
	PutUsageSource(s *UsageSource) error

	// Hosts (README "Many hosts: PostgreSQL"): many hosts may share one registry.

	// TouchHost records that host's sweep confirmed its own jobs'
	// supervisors at at (insert or update of its hosts row).
	TouchHost(host string, at Timestamp) error
	// SweepHosts returns, for every host with pending or running jobs, how
	// many and when its sweep last confirmed them (0: never). It reads the
	// active-jobs index only. Jobs with no host ("", recorded before hosts)
	// are left out.
	SweepHosts() ([]HostRow, error)
}

// HostRow is one host with active jobs (Tx.SweepHosts).
type HostRow struct {
	Host       string
	ActiveJobs int
	SweptAt    Timestamp // 0 when the host never swept
}

// TableCounts are the row counts of the tables the console shows. The
// console compares them with what it holds after replaying the journal: rows
// pruned by another process leave no journal (docs/contract.md "Retention" prunes the journal
// with the row), so a mismatch means "reload everything".
type TableCounts struct {
	Tasks, Runs, Approvals, Jobs, Notifications int64
}

// SessionFilter selects sessions; zero fields match everything.
type SessionFilter struct {
	States []SessionState
	Limit  int
}

// TaskFilter selects tasks; zero fields match everything. Results are newest
// first (created_at DESC).
type TaskFilter struct {
	Statuses []TaskStatus
	Runtime  Runtime
	Session  string // owner_session or child_session
	RunID    string
	Limit    int
}

// RunFilter selects runs, newest first.
type RunFilter struct {
	RunningOnly bool
	Session     string // child or requester session
	Limit       int
}

// ApprovalFilter selects approvals, newest first.
type ApprovalFilter struct {
	Statuses  []ApprovalStatus
	Session   string
	RunID     string
	ToolUseID string // exact runtime tool-call id (Claude Code tool_use_id)
	Limit     int
}

// JobFilter selects jobs, newest first.
type JobFilter struct {
	Statuses []JobStatus
	Session  string
	Limit    int
}

// NotificationFilter selects notifications, oldest first.
type NotificationFilter struct {
	UndeliveredOnly bool
	Session         string
	AfterID         int64
	Limit           int
}
