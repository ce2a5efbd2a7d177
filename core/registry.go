package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/redact"
)

// Registry is the use-case layer: every state change of sessions, tasks, runs,
// approvals and grants goes through it. It decides what the rules allow and
// asks the Store to apply it atomically, journaling each change (or refusal)
// in the same transaction.
type Registry struct {
	store Store
	clock Clock
	th    Thresholds
	jobs  JobController
	// match is how the ids given to its methods find their rows.
	match IDMatch
}

// IDMatch says how an id handed to the registry finds its row.
type IDMatch int

const (
	// MatchPrefix takes the id as given, else a unique prefix of at least
	// MinIDPrefixLen characters (docs/contract.md "Entities and statuses" IDs): what an operator types at
	// the CLI. The default of NewRegistry.
	MatchPrefix IDMatch = iota
	// MatchWhole takes the id as given, byte for byte, and nothing else:
	// ids a runtime sends (Claude Code hooks: session_id, agent_id;
	// `task track --id`), which must never land on another row whose id
	// they happen to begin (agent-7f3a is not agent-7f3a9c21).
	MatchWhole
)

// String is "prefix" or "whole".
func (m IDMatch) String() string {
	if m == MatchWhole {
		return "whole"
	}
	return "prefix"
}

// NewRegistry returns a Registry over s using clock c and thresholds th.
// It resolves ids by prefix (MatchPrefix); WholeIDs gives the view for ids
// that come from a runtime.
func NewRegistry(s Store, c Clock, th Thresholds) *Registry {
	return &Registry{store: s, clock: c, th: th}
}

// WholeIDs returns a view of r, sharing its store, clock, thresholds and
// job controller, whose methods match every id they are given whole
// (MatchWhole): the view for callers whose ids come from a runtime, such as
// the Claude Code hook adapter.
func (r *Registry) WholeIDs() *Registry {
	c := *r
	c.match = MatchWhole
	return &c
}

// IDMatch is how r's methods match the ids they are given.
func (r *Registry) IDMatch() IDMatch { return r.match }

// redactText applies the docs/contract.md "Background jobs: Live, redacted log" redaction to free text a runtime or an
// operator hands the registry (labels, task text, commands, rationales,
// summaries, errors, reasons), as one block so a PEM key spanning lines is
// caught too. Every such field goes through it before it is stored or
// journaled (bench/README.md: no secret reaches disk or screen unredacted). Ids,
// session keys, tool names and enums are not free text and are not passed.
// It returns s itself when nothing matches.
func (r *Registry) redactText(s string) string {
	if s == "" {
		return s
	}
	return redact.Default().Block(s)
}

// Store returns the underlying store.
func (r *Registry) Store() Store { return r.store }

// Clock returns the registry's clock.
func (r *Registry) Clock() Clock { return r.clock }

// Thresholds returns the maintenance thresholds.
func (r *Registry) Thresholds() Thresholds { return r.th }

// SetJobController installs the job supervisor used by task cancel (R3) and
// session passivate/close (J7). Without one, those rules only update rows.
func (r *Registry) SetJobController(j JobController) { r.jobs = j }

// JobController signals job processes; *supervisor.Jobs implements it.
type JobController interface {
	// CancelJob ends a job as cancelled (docs/contract.md "Background jobs: Ending": SIGTERM to its process
	// group, SIGKILL after 5 s). It is a no-op for a terminal job.
	CancelJob(ctx context.Context, id string, actor Actor) (*Job, Result, error)
	// ReapSession kills every pending or running job of session and marks it
	// reaped (docs/contract.md "Background jobs: Reaped"), waiting at most 5 s for the processes to exit.
	ReapSession(ctx context.Context, session string, actor Actor) (ReapReport, error)
}

// ReapReport says what a reap did (docs/contract.md "Background jobs: Reaped").
type ReapReport struct {
	Reaped   []Job `json:"reaped"`    // jobs marked reaped by this call
	TimedOut bool  `json:"timed_out"` // some process outlived the 5 s wait; the reap proceeded anyway
}

// Result reports whether a mutation was applied and, when not, why (docs/contract.md "Entities and statuses":
// a refused update is not an error; it is journaled as ignored).
type Result struct {
	Applied bool   `json:"applied"`
	Reason  string `json:"reason"`
}

// NewTask is the input of CreateTask (docs/contract.md "Commands: exit codes and JSON" `task create`).
type NewTask struct {
	ID            string // optional; NewTaskID (12 random base32 characters) when empty
	Runtime       Runtime
	RunID         string
	SourceID      string
	OwnerSession  string
	ChildSession  string
	ParentTaskID  string
	Kind          string
	Label         string
	Task          string
	NotifyPolicy  NotifyPolicy // default done_only
	ExpectsOutput *bool        // default: true for cron, false otherwise
}

// Finish is the input of FinishTask (docs/contract.md "Commands: exit codes and JSON" `task finish`, R4). Either Status
// is set, or Subtype (a Claude / Agent SDK result subtype) with IsError.
type Finish struct {
	Status  TaskStatus
	Subtype string
	IsError bool
	Error   string
	Text    string // result text, counted as one output when non-empty
}

// NewRun is the input of RegisterRun (docs/contract.md "Commands: exit codes and JSON" `run register`).
type NewRun struct {
	RunID            string
	ChildSession     string
	RequesterSession string
	Label            string
	InactivityBudget time.Duration // default 60 s
}

// NewApproval is the input of RequestApproval (docs/contract.md "Commands: exit codes and JSON" `approval request`).
type NewApproval struct {
	Session   string
	RunID     string
	TaskID    string
	Tool      string
	Command   string
	Rationale string
	Cwd       string
	ExpiresIn time.Duration // 0 = never expires
	// ToolUseID is the runtime's id of the tool call (Claude Code hooks:
	// PreToolUse tool_use_id). A second request with the same id, Session,
	// Tool and InputHash is the same call: it returns the first approval,
	// whatever its status, instead of a new one. The same id with anything
	// else different is another call, asked anew.
	ToolUseID string
	// InputHash is CanonicalInputHash of the call's input (Claude Code
	// hooks: PreToolUse tool_input). Empty: the approval never answers a
	// repeated call.
	InputHash string
	// Waiter is the process that will wait for the decision and answer the
	// runtime (supervisor.ThisProcess for a hook that waits itself); zero when none.
	Waiter Waiter
	// Suggestions are the agent's suggested permission updates (Claude
	// Code hooks: PermissionRequest permission_suggestions), recorded as
	// CheckSuggestions returns them; ones it refuses are not recorded (the
	// approval can still be approved once or denied).
	Suggestions json.RawMessage
	// OverBudget, when set, is why the call waits though it would not
	// otherwise (BudgetBreach.Reason: "session over its budget of $5.00:
	// $5.12 spent"): it heads the rationale, and no grant approves the
	// call (a budget gates every call until the operator raises it).
	OverBudget string
}

// now is the registry clock's current time as a Timestamp (ms).
func (r *Registry) now() Timestamp { return TS(r.clock.Now()) }

// journal appends one event row in tx (docs/contract.md "Entities and statuses" event journal). Applied=false
// rows record refusals and anomalies with their reason.
func journal(tx Tx, at Timestamp, entity, id, from, to string, actor Actor, reason string, applied bool) error {
	err := tx.AppendEvent(Event{
		At: at, Entity: entity, EntityID: id, From: from, To: to,
		Actor: actor, Reason: reason, Applied: applied,
	})
	if err != nil {
		return fmt.Errorf("journal %s %s: %w", entity, id, err)
	}
	return nil
}

// refuse journals a refused change (applied=false, docs/contract.md "Entities and statuses") and returns the
// Result reported to the caller.
func refuse(tx Tx, at Timestamp, entity, id, from, to string, actor Actor, reason string) (Result, error) {
	if err := journal(tx, at, entity, id, from, to, actor, reason, false); err != nil {
		return Result{}, err
	}
	return Result{Applied: false, Reason: reason}, nil
}

// applied is the Result of a change that took effect.
func applied(note string) Result { return Result{Applied: true, Reason: note} }

// resolve turns id into the full id of entity as m says: MatchWhole returns
// id itself (the caller's Get then finds that row or none), MatchPrefix an
// exact id or a unique prefix (≥ 4 characters). Errors: ErrInvalid for an
// empty id; with MatchPrefix also ErrNotFound, *AmbiguousError and
// ErrInvalid for a short prefix (docs/contract.md "Entities and statuses" IDs).
func resolve(tx Tx, entity, prefix string, m IDMatch) (string, error) {
	if prefix == "" {
		return "", Invalidf("empty %s id", entity)
	}
	if m == MatchWhole {
		return prefix, nil
	}
	id, err := tx.ResolveID(entity, prefix)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", entity, prefix, err)
	}
	return id, nil
}

// lookup reads the row id names, as resolve then get would: the row whose
// id is exactly id in one read (hooks, the console and scripts pass whole
// ids, and every hook event is a write: a fleet's registry saves a
// statement on each), else the one row id is a prefix of. Errors are
// resolve's, and get's wrapped as "<entity> <id>: …".
func lookup[T any](tx Tx, entity, id string, m IDMatch, get func(string) (*T, error)) (*T, error) {
	if id != "" {
		row, err := get(id)
		if err == nil {
			return row, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%s %q: %w", entity, id, err)
		}
	}
	full, err := resolve(tx, entity, id, m)
	if err != nil {
		return nil, err
	}
	row, err := get(full)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", entity, full, err)
	}
	return row, nil
}

// wrapWrite names the row a failed write was about. ErrConflict cannot
// normally happen inside Update (BEGIN IMMEDIATE serialises writers) but is
// passed up wrapped, never hidden.
func wrapWrite(what, id string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("write %s %s: %w", what, id, err)
}

// plural is "1 <one>" or "<n> <many>", for counts in texts.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
