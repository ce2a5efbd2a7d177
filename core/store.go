package core

import "context"

// Store is the persistence the registry needs; package store implements it on
// SQLite. core decides what is allowed; the Store applies it atomically.
type Store interface {
	// Update runs fn in one write transaction (SQLite BEGIN IMMEDIATE). An error
	// from fn rolls everything back. Locked past the busy timeout: ErrBusy.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction over one consistent snapshot.
	View(ctx context.Context, fn func(Tx) error) error
	// DataVersion returns SQLite's PRAGMA data_version as seen by a dedicated
	// connection: it changes whenever another connection commits, so callers
	// poll it cheaply to learn that something changed (SPEC §9 live data).
	DataVersion(ctx context.Context) (int64, error)
	// Path is the database file path.
	Path() string
	Close() error
}

// Tx is one transaction's view of the registry. Every Update* method is a
// conditional update: it applies only when the row's revision still equals
// the Rev the caller read (WHERE id=? AND rev=?), bumps Rev on success, and
// returns ErrConflict when the row changed underneath (or vanished). Get*
// methods return ErrNotFound for an unknown exact id.
type Tx interface {
	// ResolveID turns an exact id or a unique prefix of at least 4 characters
	// into the full id of entity (EntitySession, EntityTask, EntityRun,
	// EntityApproval, EntityGrant, EntityJob). Errors: ErrNotFound (wrapped, the
	// message names entity and prefix), *AmbiguousError, ErrInvalid for a
	// non-exact prefix shorter than 4 characters.
	ResolveID(entity, prefix string) (string, error)

	GetSession(id string) (*Session, error)
	InsertSession(s *Session) error // ErrConflict when the id exists
	UpdateSession(s *Session) error
	ListSessions(f SessionFilter) ([]Session, error)

	GetTask(id string) (*Task, error)
	InsertTask(t *Task) error // ErrConflict when the id exists
	UpdateTask(t *Task) error
	ListTasks(f TaskFilter) ([]Task, error)
	// MirroredTasks returns the task rows mirroring a run (SPEC §3): run_id =
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
	// Events returns the journal of one entity, oldest first.
	Events(entity, id string) ([]Event, error)
	// EventsSince returns journal rows with id > afterID, oldest first, at most
	// limit (0 = no limit). The console uses it to reload only what changed.
	EventsSince(afterID int64, limit int) ([]Event, error)
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
