package openclaw

import (
	"database/sql"
	"encoding/json"
	"strings"
)

// Task is one task_runs row. Nullable epoch-ms columns are sql.NullInt64
// because OpenClaw's rules tell "absent" from any number (`??`, typeof).
type Task struct {
	TaskID          string
	Runtime         string // subagent | acp | cli | cron
	TaskKind        string
	SourceID        string
	RequesterKey    string
	OwnerKey        string
	ScopeKind       string
	ChildSessionKey string
	ParentTaskID    string
	AgentID         string
	RunID           string
	Label           string
	Task            string
	Status          string // queued | running | succeeded | failed | timed_out | cancelled | lost
	DeliveryStatus  string
	NotifyPolicy    string
	CreatedAt       int64
	StartedAt       sql.NullInt64
	EndedAt         sql.NullInt64
	LastEventAt     sql.NullInt64
	CleanupAfter    sql.NullInt64
	LastToolName    string
	Error           string
	ProgressSummary string
	TerminalSummary string
	TerminalOutcome string
	ParentFlowID    string
	// Detail is detail_json as far as OpenClaw's rules read it.
	Detail TaskDetail
}

// TaskDetail is what the rules read from detail_json: its kind
// ("task_backing_instance", "cron-run", …), a subagent backing instance
// (task-registry.store.kernel.ts readTaskBackingInstance: runtime
// "subagent" and a positive safe-integer generation) and the cron store
// partition (cronTaskRecordStoreKey).
type TaskDetail struct {
	Kind            string
	BackingSubagent bool
	StoreKey        string
	HasStoreKey     bool
}

// parseDetail reads detail_json; anything but a JSON object is no detail.
func parseDetail(js sql.NullString) TaskDetail {
	var d TaskDetail
	if !js.Valid || js.String == "" {
		return d
	}
	var m struct {
		Kind, Runtime, Generation, StoreKey any
	}
	if json.Unmarshal([]byte(js.String), &m) != nil {
		return d // not an object
	}
	d.Kind, _ = m.Kind.(string)
	d.StoreKey, d.HasStoreKey = m.StoreKey.(string)
	if d.Kind == "task_backing_instance" && m.Runtime == "subagent" {
		g, ok := m.Generation.(float64)
		d.BackingSubagent = ok && g > 0 && g == float64(int64(g)) && g <= 1<<53-1
	}
	return d
}

// Terminal reports a terminal status, lost included (task-registry.types.ts
// isTerminalTaskStatus).
func (t *Task) Terminal() bool { return !t.Active() }

// normalize is OpenClaw's normalizeTaskTimestamps
// (task-registry.store.kernel.ts), applied to every row it loads before any
// rule runs: createdAt is the earliest of the four times, startedAt is not
// before it, a terminal task's endedAt is endedAt ?? lastEventAt ??
// createdAt and not before startedAt ?? createdAt, and lastEventAt is not
// before endedAt ?? startedAt ?? createdAt.
func (t *Task) normalize() {
	created := t.CreatedAt
	for _, c := range []sql.NullInt64{t.StartedAt, t.LastEventAt, t.EndedAt} {
		if c.Valid && c.Int64 < created {
			created = c.Int64
		}
	}
	started := t.StartedAt
	if started.Valid {
		started.Int64 = max(started.Int64, created)
	}
	ended := t.EndedAt
	if t.Terminal() && !ended.Valid {
		// The original createdAt, as OpenClaw writes it.
		ended = sql.NullInt64{Int64: t.CreatedAt, Valid: true}
		if t.LastEventAt.Valid {
			ended.Int64 = t.LastEventAt.Int64
		}
	}
	if ended.Valid {
		floor := created
		if started.Valid {
			floor = started.Int64
		}
		ended.Int64 = max(ended.Int64, floor)
	}
	last := t.LastEventAt
	if last.Valid {
		floor := created
		if ended.Valid {
			floor = ended.Int64
		} else if started.Valid {
			floor = started.Int64
		}
		last.Int64 = max(last.Int64, floor)
	}
	t.CreatedAt, t.StartedAt, t.EndedAt, t.LastEventAt = created, started, ended, last
}

const taskSelect = `SELECT task_id, runtime, coalesce(task_kind,''), coalesce(source_id,''),
 coalesce(requester_session_key,''), owner_key, scope_kind, coalesce(child_session_key,''),
 coalesce(parent_task_id,''), coalesce(agent_id,''), coalesce(run_id,''), coalesce(label,''), task,
 status, delivery_status, notify_policy, created_at, started_at, ended_at, last_event_at, cleanup_after,
 coalesce(last_tool_name,''), coalesce(error,''), coalesce(progress_summary,''), coalesce(terminal_summary,''), coalesce(terminal_outcome,''),
 coalesce(parent_flow_id,''), detail_json
 FROM task_runs`

// scanTask reads one row and normalizes its times as OpenClaw does on
// load (Task.normalize): every rule sees the row as OpenClaw sees it.
func scanTask(r interface{ Scan(...any) error }, t *Task) error {
	var detail sql.NullString
	if err := r.Scan(&t.TaskID, &t.Runtime, &t.TaskKind, &t.SourceID, &t.RequesterKey, &t.OwnerKey, &t.ScopeKind,
		&t.ChildSessionKey, &t.ParentTaskID, &t.AgentID, &t.RunID, &t.Label, &t.Task, &t.Status,
		&t.DeliveryStatus, &t.NotifyPolicy, &t.CreatedAt, &t.StartedAt, &t.EndedAt, &t.LastEventAt,
		&t.CleanupAfter, &t.LastToolName, &t.Error, &t.ProgressSummary, &t.TerminalSummary, &t.TerminalOutcome,
		&t.ParentFlowID, &detail); err != nil {
		return err
	}
	t.Detail = parseDetail(detail)
	t.normalize()
	return nil
}

// Active reports queued or running (OpenClaw: task-registry.maintenance.ts
// isActiveTask).
func (t *Task) Active() bool { return t.Status == "queued" || t.Status == "running" }

// ReferenceAt is lastEventAt ?? startedAt ?? createdAt (epoch ms), the
// activity time every OpenClaw rule measures from (maintenance.ts
// hasLostGraceExpired, audit.ts taskReferenceAt).
func (t *Task) ReferenceAt() int64 {
	switch {
	case t.LastEventAt.Valid:
		return t.LastEventAt.Int64
	case t.StartedAt.Valid:
		return t.StartedAt.Int64
	}
	return t.CreatedAt
}

// TerminalAt is endedAt ?? lastEventAt ?? createdAt (epoch ms)
// (maintenance.ts resolveCleanupAfter, shouldPruneTerminalTask).
func (t *Task) TerminalAt() int64 {
	switch {
	case t.EndedAt.Valid:
		return t.EndedAt.Int64
	case t.LastEventAt.Valid:
		return t.LastEventAt.Int64
	}
	return t.CreatedAt
}

// Run is one subagent_runs row with the run record of its payload_json.
type Run struct {
	RunID            string
	ChildSessionKey  string
	ControllerKey    string
	RequesterKey     string
	CreatedAt        int64
	Payload          string
	Record           RunRecord
	PayloadMalformed bool
}

// RunRecord is the part of OpenClaw's SubagentRunRecord (payload_json)
// clawpit reads.
type RunRecord struct {
	Task                   string      `json:"task"`
	Label                  string      `json:"label"`
	CreatedAt              int64       `json:"createdAt"`
	StartedAt              int64       `json:"startedAt"`
	EndedAt                int64       `json:"endedAt"`
	Outcome                *RunOutcome `json:"outcome"`
	EndedReason            string      `json:"endedReason"`
	CleanupHandled         bool        `json:"cleanupHandled"`
	SuppressAnnounceReason string      `json:"suppressAnnounceReason"`
}

// RunOutcome is the record's outcome: status ok | error | timeout | killed.
type RunOutcome struct {
	Status string `json:"status"`
	Error  string `json:"error"`
}

// Ended reports whether the run record has endedAt.
func (r *Run) Ended() bool { return r.Record.EndedAt > 0 }

// OutcomeStatus is the outcome's status, "" when none.
func (r *Run) OutcomeStatus() string {
	if r.Record.Outcome == nil {
		return ""
	}
	return r.Record.Outcome.Status
}

const runSelect = `SELECT run_id, child_session_key, coalesce(controller_session_key,''), requester_session_key, created_at, payload_json FROM subagent_runs`

func scanRun(r interface{ Scan(...any) error }, x *Run) error {
	if err := r.Scan(&x.RunID, &x.ChildSessionKey, &x.ControllerKey, &x.RequesterKey, &x.CreatedAt, &x.Payload); err != nil {
		return err
	}
	x.Record = RunRecord{}
	x.PayloadMalformed = json.Unmarshal([]byte(x.Payload), &x.Record) != nil
	return nil
}

// Approval is one operator_approvals row.
type Approval struct {
	ID              string
	Kind            string // exec | plugin | system-agent
	Status          string // pending | allowed | denied | expired | cancelled
	Presentation    string
	AgentID         string
	SessionKey      string
	RunID           string
	ToolName        string
	CreatedAt       int64
	ExpiresAt       int64
	UpdatedAt       int64
	Decision        string
	TerminalReason  string
	ResolvedAt      sql.NullInt64
	Command         string // from presentation_json
	PresentationBad bool
}

const approvalSelect = `SELECT approval_id, kind, status, presentation_json, coalesce(source_agent_id,''),
 coalesce(source_session_key,''), coalesce(source_run_id,''), coalesce(source_tool_name,''), created_at_ms,
 expires_at_ms, updated_at_ms, coalesce(decision,''), coalesce(terminal_reason,''), resolved_at_ms
 FROM operator_approvals`

func scanApproval(r interface{ Scan(...any) error }, a *Approval) error {
	if err := r.Scan(&a.ID, &a.Kind, &a.Status, &a.Presentation, &a.AgentID, &a.SessionKey, &a.RunID,
		&a.ToolName, &a.CreatedAt, &a.ExpiresAt, &a.UpdatedAt, &a.Decision, &a.TerminalReason, &a.ResolvedAt); err != nil {
		return err
	}
	a.Command, a.PresentationBad = presentationCommand(a.Presentation)
	return nil
}

// presentationCommand is the command an approval asks about: the first of
// commandText, command (string or argv), commandPreview, title found in
// presentation_json (at the top level or under "request").
func presentationCommand(js string) (string, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(js), &m) != nil {
		return "", true
	}
	for _, obj := range []map[string]any{m, asMap(m["request"])} {
		if obj == nil {
			continue
		}
		for _, k := range []string{"commandText", "command", "commandPreview", "title"} {
			switch v := obj[k].(type) {
			case string:
				if v != "" {
					return v, false
				}
			case []any:
				parts := make([]string, 0, len(v))
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				if len(parts) > 0 {
					return strings.Join(parts, " "), false
				}
			}
		}
	}
	return "", false
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
