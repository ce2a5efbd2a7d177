package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Audit codes: OpenClaw's six (src/tasks/task-registry.audit.shared.ts
// TaskAuditCode) and clawpit's own.
const (
	CodeStaleQueued    = "stale_queued"
	CodeStaleRunning   = "stale_running"
	CodeLost           = "lost"
	CodeDeliveryFailed = "delivery_failed"
	CodeMissingCleanup = "missing_cleanup"
	CodeInconsistent   = "inconsistent_timestamps"
	// CodeRunEnded: an active subagent (or same-run cli) task whose
	// subagent run has endedAt — the seed-000 / #90444 shape OpenClaw's
	// maintenance leaves running while the child session exists.
	CodeRunEnded = "run_ended_task_active"
	// CodeRunEndBeforeStart: a subagent run record ending before it started.
	CodeRunEndBeforeStart = "run_end_before_start"
	// CodeApprovalPastExpiry: a pending approval past its expires_at_ms.
	CodeApprovalPastExpiry = "approval_pending_past_expiry"
)

// Severities, as OpenClaw names them.
const (
	SevError = "error"
	SevWarn  = "warn"
)

// Finding is one audit finding. Source is "openclaw" for what
// `openclaw tasks audit` reports and "clawpit" for what it misses.
type Finding struct {
	Code      string `json:"code"`
	Severity  string `json:"severity"` // error | warn
	Source    string `json:"source"`   // openclaw | clawpit
	Entity    string `json:"entity"`   // task | run | approval
	ID        string `json:"id"`
	Status    string `json:"status"`
	Runtime   string `json:"runtime,omitempty"`
	AgeMs     *int64 `json:"age_ms,omitempty"`
	Detail    string `json:"detail"`
	CreatedAt int64  `json:"created_at"` // epoch ms; the last sort key
}

// AuditSummary counts findings (task-registry.audit.shared.ts
// TaskAuditSummary, with clawpit's codes added to by_code).
type AuditSummary struct {
	Total    int            `json:"total"`
	Warnings int            `json:"warnings"`
	Errors   int            `json:"errors"`
	ByCode   map[string]int `json:"by_code"`
	// TaskFlows counts the task-flow findings apart, as OpenClaw's
	// summary.taskFlows does.
	TaskFlows FlowSummary `json:"task_flows"`
}

// FlowSummary counts task-flow findings (task-flow-registry.audit.ts
// createEmptyTaskFlowAuditSummary).
type FlowSummary struct {
	Total    int            `json:"total"`
	Warnings int            `json:"warnings"`
	Errors   int            `json:"errors"`
	ByCode   map[string]int `json:"by_code"`
}

// AuditReport is the audit: findings sorted like OpenClaw's
// (compareTaskAuditFindingSortKeys: errors first, older first, then
// created first) and their summary.
type AuditReport struct {
	Findings []Finding    `json:"findings"`
	Summary  AuditSummary `json:"summary"`
}

// Audit reports what `openclaw tasks audit` reports, over the tasks as
// OpenClaw 2026.9.6 inspects them (maintenance.ts
// reconcileInspectableTasks: an active or lost cron task maintenance would
// recover is audited with the status it would take, an active task it would
// mark lost is audited as lost) with the codes, severities and thresholds of
// task-registry.audit.ts, plus OpenClaw's task-flow findings
// (task-flow-registry.audit.ts, entity "flow") and the findings clawpit
// knows OpenClaw misses (CodeRunEnded, CodeRunEndBeforeStart,
// CodeApprovalPastExpiry; Source "clawpit"). With Options.AsStored it
// audits the rows as stored instead, as `openclaw tasks audit --json` does
// (no lost projection, no cron recovery). One read transaction; never
// writes.
func (d *DB) Audit(ctx context.Context, o Options) (*AuditReport, error) {
	var rep *AuditReport
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		// Active rows (idx_task_runs_status).
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		b := newBacking(d, tx)
		defer b.close()
		rep, err = d.auditTx(ctx, tx, o, active, b)
		return err
	})
	return rep, err
}

// auditTx is Audit inside tx over the active tasks already read, with the
// sweep's backing lookups b (shared with a preview of the same snapshot).
func (d *DB) auditTx(ctx context.Context, tx *sql.Tx, o Options, active []Task, b *backing) (*AuditReport, error) {
	now, grace := o.now(), o.grace()
	var fs []Finding
	add := func(f Finding) { fs = append(fs, f) }
	cr := newCronRecovery(tx)
	defer cr.close()
	// reconcile is reconcileTaskRecordForOperatorInspection.
	reconcile := func(t *Task) error {
		if o.AsStored {
			return nil
		}
		if row, ok, err := cr.find(ctx, t); err != nil {
			return err
		} else if ok {
			projectRecovered(t, row, o)
			return nil
		}
		if b.shouldMarkLost(ctx, t, now, grace) {
			projectLost(t, now, b.lostError(ctx, t))
		}
		return nil
	}
	for i := range active {
		t := active[i]
		if err := reconcile(&t); err != nil {
			return nil, err
		}
		visitCodes(&t, now, add)
		if t.Active() {
			if f, ok, err := d.runEnded(ctx, b, &t, now); err != nil {
				return nil, err
			} else if ok {
				add(f)
			}
		}
	}
	// Rows as stored are normalized (Task.normalize), so a finished row's
	// only possible findings are lost, missing_cleanup and delivery_failed:
	// lost rows (idx_task_runs_status), rows without cleanup_after
	// (idx_task_runs_cleanup_after), then failed deliveries, which no index
	// serves (a streaming scan, constant memory; the console skips it).
	visit := func(t *Task) error {
		if err := reconcile(t); err != nil {
			return err
		}
		visitCodes(t, now, add)
		return nil
	}
	queries := []string{
		` WHERE status = 'lost'`,
		` WHERE cleanup_after IS NULL AND status NOT IN ('queued','running','lost')`,
	}
	if !o.skipScan {
		queries = append(queries, ` WHERE cleanup_after IS NOT NULL AND status NOT IN ('queued','running','lost')
			AND delivery_status = 'failed' AND notify_policy != 'silent'`)
	}
	for _, q := range queries {
		if err := eachTask(ctx, tx, taskSelect+q, nil, visit); err != nil {
			return nil, err
		}
	}
	flows, err := d.auditFlows(ctx, tx, now)
	if err != nil {
		return nil, err
	}
	if err := d.auditRunsApprovals(ctx, tx, now, add); err != nil {
		return nil, err
	}
	return newReport(fs, flows), nil
}

// newReport sorts the findings (tasks, flows and clawpit's together, as
// tasks-audit-system.ts compareSystemAuditFindings sorts OpenClaw's) and
// counts them.
func newReport(fs, flows []Finding) *AuditReport {
	rep := &AuditReport{Summary: AuditSummary{ByCode: map[string]int{
		CodeStaleQueued: 0, CodeStaleRunning: 0, CodeLost: 0, CodeDeliveryFailed: 0, CodeMissingCleanup: 0, CodeInconsistent: 0,
	}, TaskFlows: FlowSummary{ByCode: map[string]int{}}}}
	for _, c := range flowCodes {
		rep.Summary.TaskFlows.ByCode[c] = 0
	}
	for _, f := range fs {
		rep.Summary.Total++
		rep.Summary.ByCode[f.Code]++
		if f.Severity == SevError {
			rep.Summary.Errors++
		} else {
			rep.Summary.Warnings++
		}
	}
	for _, f := range flows {
		s := &rep.Summary.TaskFlows
		s.Total++
		s.ByCode[f.Code]++
		if f.Severity == SevError {
			s.Errors++
		} else {
			s.Warnings++
		}
	}
	rep.Findings = append(append(make([]Finding, 0, len(fs)+len(flows)), fs...), flows...)
	sortFindings(rep.Findings)
	return rep
}

// projectLost is maintenance.ts projectTaskLost: status lost, endedAt ??
// now, lastEventAt now, error ?? the lost error, cleanupAfter ?? endedAt +
// 24 h (resolveTaskCleanupAfter of a lost task).
func projectLost(t *Task, now int64, lostErr string) {
	t.Error = lostErr
	t.Status = "lost"
	if !t.EndedAt.Valid {
		t.EndedAt = sql.NullInt64{Int64: now, Valid: true}
	}
	t.LastEventAt = sql.NullInt64{Int64: now, Valid: true}
	if !t.CleanupAfter.Valid {
		t.CleanupAfter = sql.NullInt64{Int64: t.TerminalAt() + LostRetentionMs, Valid: true}
	}
}

// retainedLost is task-registry.audit.ts retainedLostCleanupAfter: a lost
// task with cleanupAfter whose effective cleanup time
// (task-retention.ts resolveEffectiveTaskCleanupAfter: min(cleanupAfter,
// terminal time + 24 h)) is still ahead.
func retainedLost(t *Task, now int64) bool {
	if t.Status != "lost" || !t.CleanupAfter.Valid {
		return false
	}
	eff := min(t.CleanupAfter.Int64, t.TerminalAt()+LostRetentionMs)
	return eff > now
}

// visitCodes is task-registry.audit.ts visitTaskAuditCodes and
// describeTaskAuditCode.
func visitCodes(t *Task, now int64, add func(Finding)) {
	age := max(0, now-t.ReferenceAt())
	f := func(code, sev, detail string, withAge bool) {
		x := Finding{Code: code, Severity: sev, Source: "openclaw", Entity: "task", ID: t.TaskID, Status: t.Status,
			Runtime: t.Runtime, Detail: detail, CreatedAt: t.CreatedAt}
		if withAge {
			a := age
			x.AgeMs = &a
		}
		add(x)
	}
	if t.Status == "queued" && age >= StaleQueuedMs {
		f(CodeStaleQueued, SevWarn, "queued task has not advanced recently", true)
	}
	if t.Status == "running" && age >= StaleRunningMs {
		detail := "running task appears stuck"
		// task-retained-yield-guidance.ts isRetainedYieldOwner: OpenClaw
		// replaces the detail with its guidance for a yield owner.
		if !t.EndedAt.Valid && t.LastToolName == "sessions_yield" {
			detail = "last tool started was sessions_yield: a retained yield owner is not proof of a live worker; review its owner, pending inputs and descendants before cancelling"
		}
		f(CodeStaleRunning, SevError, detail, true)
	}
	if t.Status == "lost" {
		sev, detail := SevError, "task lost its backing session"
		if retainedLost(t, now) {
			sev, detail = SevWarn, "task lost its backing session and is retained until cleanupAfter"
		}
		if e := strings.TrimSpace(t.Error); e != "" {
			detail = e
		}
		f(CodeLost, sev, detail, true)
	}
	if t.DeliveryStatus == "failed" && t.NotifyPolicy != "silent" {
		f(CodeDeliveryFailed, SevWarn, "terminal update delivery failed", true)
	}
	if !t.Active() && t.Status != "lost" && !t.CleanupAfter.Valid {
		f(CodeMissingCleanup, SevWarn, "terminal task is missing cleanupAfter", true)
	}
	// findTimestampInconsistency (JavaScript truthiness: 0 is absent). On
	// a normalized row only the third can hold; a projection can break the
	// first two.
	started := t.StartedAt.Valid && t.StartedAt.Int64 != 0
	ended := t.EndedAt.Valid && t.EndedAt.Int64 != 0
	switch {
	case started && t.StartedAt.Int64 < t.CreatedAt:
		f(CodeInconsistent, SevWarn, "startedAt is earlier than createdAt", false)
	case ended && started && t.EndedAt.Int64 < t.StartedAt.Int64:
		f(CodeInconsistent, SevWarn, "endedAt is earlier than startedAt", false)
	case t.Active() && ended:
		f(CodeInconsistent, SevWarn, t.Status+" task should not already have endedAt", false)
	}
}

// runEnded finds the subagent run an active task mirrors (subagent: its
// run_id; cli: run_id or source_id, the same-run peer of #90444) and reports
// it when the run record has endedAt.
func (d *DB) runEnded(ctx context.Context, b *backing, t *Task, now int64) (Finding, bool, error) {
	if !d.hasRuns || (t.Runtime != "subagent" && t.Runtime != "cli") {
		return Finding{}, false, nil
	}
	ids := []string{t.RunID}
	if t.Runtime == "cli" && t.SourceID != t.RunID {
		ids = append(ids, t.SourceID)
	}
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			continue
		}
		st, err := b.stmt(ctx, &b.run, runSelect+` WHERE run_id = ?`)
		if err != nil {
			return Finding{}, false, err
		}
		var r Run
		err = scanRun(st.QueryRowContext(ctx, id), &r)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return Finding{}, false, fmt.Errorf("openclaw subagent_runs: %w", err)
		}
		if !r.Ended() {
			continue
		}
		age := max(0, now-r.Record.EndedAt)
		out := r.OutcomeStatus()
		if out == "" {
			out = "no outcome"
		}
		return Finding{Code: CodeRunEnded, Severity: SevError, Source: "clawpit", Entity: "task", ID: t.TaskID,
			Status: t.Status, Runtime: t.Runtime, AgeMs: &age, CreatedAt: t.CreatedAt,
			Detail: fmt.Sprintf("subagent run %s ended %s ago (%s) but the task is still %s; OpenClaw's maintenance does not clear it while the child session exists",
				r.RunID, time.Duration(age*int64(time.Millisecond)).Round(time.Second), out, t.Status)}, true, nil
	}
	return Finding{}, false, nil
}

func (d *DB) auditRunsApprovals(ctx context.Context, tx *sql.Tx, now int64, add func(Finding)) error {
	if err := d.auditRuns(ctx, tx, add); err != nil {
		return err
	}
	return d.auditApprovals(ctx, tx, now, add)
}

// auditRuns reports subagent run records ending before they started.
func (d *DB) auditRuns(ctx context.Context, tx *sql.Tx, add func(Finding)) error {
	if !d.hasRuns {
		return nil
	}
	rows, err := tx.QueryContext(ctx, runSelect+` WHERE json_valid(payload_json)
		AND json_extract(payload_json,'$.endedAt') > 0 AND json_extract(payload_json,'$.startedAt') > 0
		AND json_extract(payload_json,'$.endedAt') < json_extract(payload_json,'$.startedAt')`)
	if err != nil {
		return fmt.Errorf("openclaw subagent_runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Run
		if err := scanRun(rows, &r); err != nil {
			return fmt.Errorf("openclaw subagent_runs: %w", err)
		}
		add(Finding{Code: CodeRunEndBeforeStart, Severity: SevWarn, Source: "clawpit", Entity: "run", ID: r.RunID,
			Status: "ended", CreatedAt: r.CreatedAt,
			Detail: fmt.Sprintf("run endedAt %s is earlier than startedAt %s", msText(r.Record.EndedAt), msText(r.Record.StartedAt))})
	}
	return rows.Err()
}

// auditApprovals reports approvals still pending past expires_at_ms
// (idx_operator_approvals_status_expiry).
func (d *DB) auditApprovals(ctx context.Context, tx *sql.Tx, now int64, add func(Finding)) error {
	if !d.hasApprovals {
		return nil
	}
	rows, err := tx.QueryContext(ctx, approvalSelect+` WHERE status = 'pending' AND expires_at_ms < ? ORDER BY expires_at_ms`, now)
	if err != nil {
		return fmt.Errorf("openclaw operator_approvals: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a Approval
		if err := scanApproval(rows, &a); err != nil {
			return fmt.Errorf("openclaw operator_approvals: %w", err)
		}
		age := now - a.ExpiresAt
		what := a.Command
		if what == "" {
			what = a.Kind + " approval"
		}
		add(Finding{Code: CodeApprovalPastExpiry, Severity: SevWarn, Source: "clawpit", Entity: "approval", ID: a.ID,
			Status: a.Status, AgeMs: &age, CreatedAt: a.CreatedAt,
			Detail: fmt.Sprintf("still pending %s after it expired: %s", time.Duration(age*int64(time.Millisecond)).Round(time.Second), what)})
	}
	return rows.Err()
}

// sortFindings is task-registry.audit.shared.ts
// compareTaskAuditFindingSortKeys (ties kept in read order), then id for a
// stable golden output.
func sortFindings(fs []Finding) {
	rank := func(s string) int {
		if s == SevError {
			return 0
		}
		return 1
	}
	ageOf := func(f Finding) int64 {
		if f.AgeMs == nil {
			return -1
		}
		return *f.AgeMs
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if rank(a.Severity) != rank(b.Severity) {
			return rank(a.Severity) < rank(b.Severity)
		}
		if ageOf(a) != ageOf(b) {
			return ageOf(a) > ageOf(b)
		}
		if a.CreatedAt != b.CreatedAt {
			return a.CreatedAt < b.CreatedAt
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Code < b.Code
	})
}
