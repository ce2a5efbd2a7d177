package core

import "encoding/json"

// Session is the agent conversation that owns work (docs/contract.md "Entities and statuses").
type Session struct {
	ID             string       `json:"id"`
	Label          string       `json:"label"`
	State          SessionState `json:"state"`
	CreatedAt      Timestamp    `json:"created_at"`
	LastActivityAt Timestamp    `json:"last_activity_at"`
	PassivatedAt   Timestamp    `json:"passivated_at"`
	// Agent is the agent the session came from: "claude", "codex",
	// "gemini", or "" when its runtime did not say.
	Agent string `json:"agent"`
	Rev   int64  `json:"-"` // optimistic-concurrency revision, bumped by every update
}

// Task is one task run (docs/contract.md "Entities and statuses"). Generated ids are NewTaskID strings (12
// random base32 characters); a runtime may supply its own.
type Task struct {
	ID              string         `json:"id"`
	Runtime         Runtime        `json:"runtime"`
	Kind            string         `json:"kind"`
	Status          TaskStatus     `json:"status"`
	DeliveryStatus  DeliveryStatus `json:"delivery_status"`
	NotifyPolicy    NotifyPolicy   `json:"notify_policy"`
	RunID           string         `json:"run_id"`
	SourceID        string         `json:"source_id"`
	OwnerSession    string         `json:"owner_session"`
	ChildSession    string         `json:"child_session"`
	ParentTaskID    string         `json:"parent_task_id"`
	Label           string         `json:"label"`
	Task            string         `json:"task"`
	Error           string         `json:"error"`
	ResultSubtype   string         `json:"result_subtype"`
	ProgressSummary string         `json:"progress_summary"`
	ExpectsOutput   bool           `json:"expects_output"`
	OutputCount     int64          `json:"output_count"`
	CreatedAt       Timestamp      `json:"created_at"`
	StartedAt       Timestamp      `json:"started_at"`
	LastEventAt     Timestamp      `json:"last_event_at"`
	EndedAt         Timestamp      `json:"ended_at"`
	CleanupAfter    Timestamp      `json:"cleanup_after"`
	// Agent is the agent of the task's owner session (sessions.agent:
	// "claude", "codex", "gemini", "" when unknown), as the console's reads
	// (WindowTx.Window) join it in; other reads leave it "". Not part of the
	// task's JSON: it belongs to the session.
	Agent string `json:"-"`
	// Spent is what the task's tokens cost (its own, tracked, and its
	// run's), as the console's reads fill it in; other reads leave it zero.
	// Not part of the task's JSON (`task show` has "usage").
	Spent UsageSummary `json:"-"`
	Rev   int64        `json:"-"`
}

// LastActivity is last_event_at ?? started_at ?? created_at (docs/contract.md "Lost work").
func (t *Task) LastActivity() Timestamp {
	return Coalesce(t.LastEventAt, t.StartedAt, t.CreatedAt)
}

// Session returns the session that backs the task: child_session, else
// owner_session (docs/contract.md "Lost work").
func (t *Task) BackingSession() string {
	if t.ChildSession != "" {
		return t.ChildSession
	}
	return t.OwnerSession
}

// Run is a subagent run (docs/contract.md "Entities and statuses"). It is running until EndedAt is set.
type Run struct {
	RunID                  string     `json:"run_id"`
	ChildSession           string     `json:"child_session"`
	RequesterSession       string     `json:"requester_session"`
	Label                  string     `json:"label"`
	StartedAt              Timestamp  `json:"started_at"`
	LastProgressAt         Timestamp  `json:"last_progress_at"`
	InactivityBudgetMs     int64      `json:"inactivity_budget_ms"`
	PendingApprovalWaits   int64      `json:"pending_approval_waits"`
	EndedAt                Timestamp  `json:"ended_at"`
	Outcome                RunOutcome `json:"outcome"`
	EndedReason            string     `json:"ended_reason"`
	SuppressAnnounceReason string     `json:"suppress_announce_reason"`
	CleanupHandled         bool       `json:"cleanup_handled"`
	Error                  string     `json:"error"`
	CleanupAfter           Timestamp  `json:"cleanup_after"`
	// Agent is the agent of the run's requester session (sessions.agent),
	// as the console's reads (WindowTx.Window) join it in; other reads
	// leave it "". Not part of the run's JSON.
	Agent string `json:"-"`
	// Spent is what the run's tokens cost, as the console's reads fill it
	// in; other reads leave it zero. Not part of the run's JSON.
	Spent UsageSummary `json:"-"`
	Rev   int64        `json:"-"`
}

// Running reports whether the run has not ended.
func (r *Run) Running() bool { return r.EndedAt == 0 }

// DefaultInactivityBudgetMs is the watchdog budget when none is given (docs/contract.md "Entities and statuses"): 60 s.
const DefaultInactivityBudgetMs = 60_000

// Approval is a tool call waiting for (or given) a human decision (docs/contract.md "Entities and statuses").
type Approval struct {
	ID           string         `json:"id"`
	Session      string         `json:"session"`
	RunID        string         `json:"run_id"`
	TaskID       string         `json:"task_id"`
	Tool         string         `json:"tool"`
	Command      string         `json:"command"`
	Rationale    string         `json:"rationale"`
	Cwd          string         `json:"cwd"`
	Pattern      string         `json:"pattern"`
	Status       ApprovalStatus `json:"status"`
	Scope        Scope          `json:"scope"`
	Reason       string         `json:"reason"`
	DecidedBy    string         `json:"decided_by"`
	RequestedAt  Timestamp      `json:"requested_at"`
	DecidedAt    Timestamp      `json:"decided_at"`
	ExpiresAt    Timestamp      `json:"expires_at"`
	CleanupAfter Timestamp      `json:"cleanup_after"`
	// ToolUseID is the runtime's id of the gated tool call (Claude Code hooks:
	// PreToolUse tool_use_id); empty for approvals requested through the
	// CLI. One tool call (tool_use_id, session, tool, input hash) has one
	// approval; another call reusing the id gets its own.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// InputHash is CanonicalInputHash of the gated call's input (Claude
	// Code hooks: PreToolUse tool_input): with Session, Tool and ToolUseID
	// it names the one tool call this approval answers. Empty for approvals
	// requested through the CLI or recorded before it existed; those never
	// answer a repeated tool call.
	InputHash string `json:"input_hash,omitempty"`
	// HoldsWait is true while the approval counts in its run's
	// pending_approval_waits (docs/contract.md "The inactivity watchdog pauses for approvals"): set with the increment, cleared with
	// the decrement.
	HoldsWait bool `json:"holds_wait"`
	// Waiter is the process waiting to answer the runtime (Claude Code
	// hooks: the gated PreToolUse hook); zero when none registered (an
	// approval requested through the CLI). A sweep on its host withdraws
	// the approval once that process is gone.
	Waiter Waiter `json:"waiter"`
	// Suggestions are the agent's suggested permission updates, offered as
	// approval scopes (Claude Code hooks: PermissionRequest
	// permission_suggestions): a JSON array of objects exactly as the agent
	// sent it (CheckSuggestions), empty when none.
	Suggestions json.RawMessage `json:"suggestions,omitempty"`
	// Suggestion is the suggestion the operator approved with, 1-based (the
	// hook answers allow with it as updatedPermissions); 0: none.
	Suggestion int `json:"suggestion,omitempty"`
	// Agent is the agent of the approval's session (sessions.agent), as the
	// console's reads (WindowTx.Window) join it in; other reads leave it
	// "". Not part of the approval's JSON.
	Agent string `json:"-"`
	Rev   int64  `json:"-"`
}

// Waiter names one process on one host: the host (HostName), the pid, its
// start time in clock ticks since boot (/proc/<pid>/stat field 22), so a pid
// the kernel reused for another process is not taken for it, and NS, the
// boot and pid namespace the pid belongs to ("<boot_id> pid:[<inode>]"): a
// sweep judges only waiters of its own boot and pid namespace (a container
// sharing the host's name has other pids).
type Waiter struct {
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Start int64  `json:"start,omitempty"`
	NS    string `json:"ns,omitempty"`
}

// Grant is a remembered approval (docs/contract.md "Entities and statuses"): a request whose tool and verb chain
// match is approved at once with decided_by "grant:<id>". Session is set only
// for ScopeSession grants.
type Grant struct {
	ID        string    `json:"id"`
	Tool      string    `json:"tool"`
	Pattern   string    `json:"pattern"`
	Scope     Scope     `json:"scope"`
	Session   string    `json:"session"`
	CreatedBy string    `json:"created_by"`
	CreatedAt Timestamp `json:"created_at"`
}

// Job is a background job run as a detached process (docs/contract.md "Entities and statuses", docs/contract.md "Background jobs"). IDs are 12
// lowercase hex characters.
type Job struct {
	ID              string    `json:"id"`
	Session         string    `json:"session"`
	Command         []string  `json:"command"` // argv
	Cwd             string    `json:"cwd"`
	Rationale       string    `json:"rationale"`
	Status          JobStatus `json:"status"`
	ExitCode        *int      `json:"exit_code"`
	TimeoutS        int64     `json:"timeout_s"` // 0 = no kill timer
	PID             int       `json:"pid"`
	PGID            int       `json:"pgid"`
	SupervisorPID   int       `json:"supervisor_pid"`
	SupervisorStart int64     `json:"supervisor_start"` // process start time (clock ticks since boot, /proc/<pid>/stat field 22) to tell a reused pid
	CreatedAt       Timestamp `json:"created_at"`
	StartedAt       Timestamp `json:"started_at"`
	CompletedAt     Timestamp `json:"completed_at"`
	LogPath         string    `json:"log_path"`
	CaptureError    string    `json:"capture_error"`
	SurfacedAt      Timestamp `json:"surfaced_at"`
	CleanupAfter    Timestamp `json:"cleanup_after"`
	// Host is the machine the job's supervisor runs on (HostName: the
	// hostname, or CLAWPIT_HOST); "" for jobs recorded before hosts were
	// (the single host that wrote them). README "Many hosts: PostgreSQL".
	Host string `json:"host"`
	// Containment is how the job's process tree is held on this machine:
	// ContainCgroup, ContainSubreaper or ContainGroup; "" before the command
	// starts.
	Containment string `json:"containment"`
	// Cgroup is the job's cgroup v2 directory when Containment is
	// ContainCgroup, else "".
	Cgroup string `json:"cgroup"`
	Rev    int64  `json:"-"`
}

// Notification tells a session (and the operator) about something that needs
// attention (docs/contract.md "Entities and statuses", README "Notifications"). DedupKey is unique: inserting a duplicate is a no-op.
type Notification struct {
	ID           int64            `json:"id"`
	Session      string           `json:"session"`
	Kind         NotificationKind `json:"kind"`
	SubjectID    string           `json:"subject_id"`
	Text         string           `json:"text"`
	DedupKey     string           `json:"dedup_key"`
	CreatedAt    Timestamp        `json:"created_at"`
	DeliveredAt  Timestamp        `json:"delivered_at"`
	CleanupAfter Timestamp        `json:"cleanup_after"`
}

// Entity names used in the event journal.
const (
	EntitySession      = "session"
	EntityTask         = "task"
	EntityRun          = "run"
	EntityApproval     = "approval"
	EntityGrant        = "grant"
	EntityJob          = "job"
	EntityNotification = "notification"
)

// Event is one row of the event journal (docs/contract.md "Entities and statuses"): every change appends one, in
// the same transaction as the change. A refused change is journaled with
// Applied=false and its reason.
type Event struct {
	ID       int64     `json:"id"`
	At       Timestamp `json:"at"`
	Entity   string    `json:"entity"`
	EntityID string    `json:"entity_id"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Actor    Actor     `json:"actor"`
	Reason   string    `json:"reason"`
	Applied  bool      `json:"applied"`
}
