package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// ConsoleWindow is how many finished rows per table the console loads
// (newest first, through an index); active tasks, running runs and pending
// approvals are always loaded whole.
const ConsoleWindow = 5000

// Source is the console's read-only view of OpenClaw's registry
// (feed.Source): Tasks from task_runs, Runs from subagent_runs, Approvals
// from operator_approvals (pending first), Alerts from the audit. Every
// Load is a full load of one snapshot: active rows plus the newest Window
// finished rows per table.
type Source struct {
	Opts   Options // thresholds; Now fixes the clock (tests), zero: the system clock
	Window int     // 0: ConsoleWindow

	mu       sync.Mutex
	d        *DB
	retired  []*DB
	findings []Finding // the last load's alerts, by notification id - 1
}

// NewSource returns a console source over d. The source owns d from then
// on (it reopens it when OpenClaw starts writing to a database it read as
// immutable).
func NewSource(d *DB) *Source { return &Source{d: d} }

// Path names the registry.
func (s *Source) Path() string { return s.db().Path }

func (s *Source) db() *DB { s.mu.Lock(); defer s.mu.Unlock(); return s.d }

// Close releases the database (and any handle a reopen retired).
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.retired {
		r.Close()
	}
	s.retired = nil
	return s.d.Close()
}

// DataVersion changes when OpenClaw commits (DB.Version). It first
// reopens the database when its read mode no longer fits (DB.NeedsReopen);
// the old handle stays open for reads in flight and is closed by Close.
func (s *Source) DataVersion(ctx context.Context) (int64, error) {
	d := s.db()
	if d.NeedsReopen() {
		nd, err := OpenFile(ctx, d.Path, d.StateDir)
		if err != nil {
			return 0, err
		}
		s.mu.Lock()
		s.retired = append(s.retired, s.d)
		s.d = nd
		s.mu.Unlock()
		d = nd
	}
	return d.Version(ctx)
}

func (s *Source) window() int {
	if s.Window > 0 {
		return s.Window
	}
	return ConsoleWindow
}

// Load sends every row of the window to sink (always a full load).
func (s *Source) Load(ctx context.Context, _ feed.LoadRequest, sink feed.Sink) (feed.LoadResult, error) {
	d := s.db()
	res := feed.LoadResult{Full: true}
	n := s.window()
	var rep *AuditReport
	var at core.Timestamp
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		// Active tasks (idx_task_runs_status), then the newest finished ones.
		active, err := queryTasks(ctx, tx, taskSelect+` WHERE status IN ('queued','running') ORDER BY created_at, task_id`)
		if err != nil {
			return err
		}
		for i := range active {
			sink.Task(coreTask(&active[i]))
		}
		fin, err := newestFinished(ctx, tx, n)
		if err != nil {
			return err
		}
		for i := range fin {
			sink.Task(coreTask(&fin[i]))
		}
		if d.hasRuns {
			rows, err := tx.QueryContext(ctx, runSelect+` ORDER BY rowid DESC LIMIT ?`, n)
			if err != nil {
				return fmt.Errorf("openclaw subagent_runs: %w", err)
			}
			for rows.Next() {
				var r Run
				if err := scanRun(rows, &r); err != nil {
					rows.Close()
					return fmt.Errorf("openclaw subagent_runs: %w", err)
				}
				sink.Run(coreRun(&r))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		if d.hasApprovals {
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{approvalSelect + ` WHERE status = 'pending' ORDER BY expires_at_ms`, nil},
				{approvalSelect + ` WHERE resolved_at_ms IS NOT NULL AND status != 'pending' ORDER BY resolved_at_ms DESC LIMIT ?`, []any{n}},
			} {
				rows, err := tx.QueryContext(ctx, q.sql, q.args...)
				if err != nil {
					return fmt.Errorf("openclaw operator_approvals: %w", err)
				}
				for rows.Next() {
					var a Approval
					if err := scanApproval(rows, &a); err != nil {
						rows.Close()
						return fmt.Errorf("openclaw operator_approvals: %w", err)
					}
					sink.Approval(coreApproval(&a))
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
			}
		}
		// Alerts: the audit over the same snapshot and active rows,
		// without its one unindexed scan.
		o := s.Opts
		if o.Now.IsZero() {
			o.Now = timeNow()
		}
		o.skipScan = true
		at = core.Timestamp(o.Now.UnixMilli())
		b := newBacking(d, tx)
		defer b.close()
		rep, err = d.auditTx(ctx, tx, o, active, b)
		return err
	})
	if err != nil {
		return res, err
	}
	now := at
	// The console lists alerts newest id first: the most severe finding
	// (OpenClaw's order) gets the highest id.
	for i, f := range rep.Findings {
		sink.Alert(&core.Notification{ID: int64(len(rep.Findings) - i), Kind: core.NotificationKind(f.Code), SubjectID: f.ID,
			Text: f.Severity + ": " + f.Entity + " " + f.ID + ": " + f.Detail, CreatedAt: now})
	}
	s.mu.Lock()
	s.findings = rep.Findings
	s.mu.Unlock()
	return res, nil
}

// newestFinished is the n finished tasks that ended last, read through
// idx_task_runs_runtime_ended: the runtimes by a skip-scan of the index, the
// n-th newest ended_at from the index alone, then the rows at or after it
// per runtime; finished rows with no ended_at (newest created first) fill
// up to n.
func newestFinished(ctx context.Context, tx *sql.Tx, n int) ([]Task, error) {
	rows, err := tx.QueryContext(ctx, `WITH RECURSIVE r(x) AS (
		SELECT (SELECT min(runtime) FROM task_runs)
		UNION ALL SELECT (SELECT min(runtime) FROM task_runs WHERE runtime > r.x) FROM r WHERE r.x IS NOT NULL)
		SELECT x FROM r WHERE x IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("openclaw task_runs runtimes: %w", err)
	}
	var runtimes []string
	for rows.Next() {
		var rt string
		if err := rows.Scan(&rt); err != nil {
			rows.Close()
			return nil, err
		}
		runtimes = append(runtimes, rt)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The cutoff: the n-th newest ended_at over all runtimes, from the
	// index alone (no row is read), counting past the active rows that
	// carry an ended_at (inconsistent, but they exist); then only rows at or
	// after it.
	var k int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM task_runs WHERE status IN ('queued','running') AND ended_at IS NOT NULL`).Scan(&k); err != nil {
		return nil, fmt.Errorf("openclaw task_runs: %w", err)
	}
	m := n + k
	var ends []int64
	for _, rt := range runtimes {
		r, err := tx.QueryContext(ctx, `SELECT ended_at FROM task_runs WHERE runtime = ? AND ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT ?`, rt, m)
		if err != nil {
			return nil, fmt.Errorf("openclaw task_runs: %w", err)
		}
		for r.Next() {
			var e int64
			if err := r.Scan(&e); err != nil {
				r.Close()
				return nil, err
			}
			ends = append(ends, e)
		}
		r.Close()
		if err := r.Err(); err != nil {
			return nil, err
		}
	}
	var out []Task
	if len(ends) > 0 {
		sort.Slice(ends, func(i, j int) bool { return ends[i] > ends[j] })
		cutoff := ends[min(m, len(ends))-1]
		for _, rt := range runtimes {
			ts, err := queryTasks(ctx, tx, taskSelect+` WHERE runtime = ? AND ended_at >= ? AND status NOT IN ('queued','running') ORDER BY ended_at DESC`, rt, cutoff)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].EndedAt.Int64 > out[j].EndedAt.Int64 })
	if len(out) > n {
		out = out[:n]
	}
	if len(out) < n {
		ts, err := queryTasks(ctx, tx, taskSelect+` WHERE ended_at IS NULL AND status NOT IN ('queued','running') ORDER BY created_at DESC LIMIT ?`, n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func coreTask(t *Task) *core.Task {
	summary := t.ProgressSummary
	if !t.Active() && t.TerminalSummary != "" {
		summary = t.TerminalSummary
	}
	label := t.Label
	if label == "" {
		label = t.Task
	}
	return &core.Task{ID: t.TaskID, Runtime: core.Runtime(t.Runtime), Kind: t.TaskKind, Status: core.TaskStatus(t.Status),
		DeliveryStatus: core.DeliveryStatus(t.DeliveryStatus), NotifyPolicy: core.NotifyPolicy(t.NotifyPolicy),
		RunID: t.RunID, SourceID: t.SourceID, OwnerSession: t.OwnerKey, ChildSession: t.ChildSessionKey,
		ParentTaskID: t.ParentTaskID, Label: label, Task: t.Task, Error: t.Error, ProgressSummary: summary,
		CreatedAt: core.Timestamp(t.CreatedAt), StartedAt: core.Timestamp(t.StartedAt.Int64),
		LastEventAt: core.Timestamp(t.LastEventAt.Int64), EndedAt: core.Timestamp(t.EndedAt.Int64),
		CleanupAfter: core.Timestamp(t.CleanupAfter.Int64)}
}

func coreRun(r *Run) *core.Run {
	rec := r.Record
	started := rec.StartedAt
	if started == 0 {
		started = r.CreatedAt
	}
	label := rec.Label
	if label == "" {
		label = rec.Task
	}
	out := &core.Run{RunID: r.RunID, ChildSession: r.ChildSessionKey, RequesterSession: r.RequesterKey, Label: label,
		StartedAt: core.Timestamp(started), EndedAt: core.Timestamp(rec.EndedAt), EndedReason: rec.EndedReason,
		SuppressAnnounceReason: rec.SuppressAnnounceReason, CleanupHandled: rec.CleanupHandled}
	if rec.Outcome != nil {
		out.Outcome = core.RunOutcome(rec.Outcome.Status)
		out.Error = rec.Outcome.Error
	}
	return out
}

func coreApproval(a *Approval) *core.Approval {
	st := a.Status
	if st == "allowed" {
		st = string(core.ApprovalApproved)
	}
	return &core.Approval{ID: a.ID, Session: a.SessionKey, RunID: a.RunID, Tool: a.ToolName, Command: a.Command,
		Status: core.ApprovalStatus(st), Reason: a.TerminalReason, DecidedBy: a.Decision,
		RequestedAt: core.Timestamp(a.CreatedAt), DecidedAt: core.Timestamp(a.ResolvedAt.Int64),
		ExpiresAt: core.Timestamp(a.ExpiresAt)}
}

// Detail reads one row with every column.
func (s *Source) Detail(ctx context.Context, kind feed.Kind, id string) (*feed.Detail, error) {
	d := s.db()
	det := &feed.Detail{Kind: kind, ID: id}
	var table, key string
	switch kind {
	case feed.KindTask:
		table, key = "task_runs", "task_id"
	case feed.KindRun:
		table, key = "subagent_runs", "run_id"
	case feed.KindApproval:
		table, key = "operator_approvals", "approval_id"
	case feed.KindAlert:
		n, err := strconv.Atoi(id)
		s.mu.Lock()
		fs := s.findings
		s.mu.Unlock()
		if err != nil || n < 1 || n > len(fs) {
			return nil, core.NotFoundf("no alert %s", id)
		}
		det.Fields = feed.Fields(&fs[len(fs)-n])
		return det, nil
	default:
		return nil, core.NotFoundf("OpenClaw has no %v rows", kind)
	}
	if d.cols[table] == nil {
		return nil, core.NotFoundf("OpenClaw's registry has no %s table", table)
	}
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT * FROM "+table+" WHERE "+key+" = ?", id)
		if err != nil {
			return fmt.Errorf("openclaw %s: %w", table, err)
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return core.NotFoundf("no %s row %s in OpenClaw's registry", table, id)
		}
		names, _ := rows.Columns()
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("openclaw %s: %w", table, err)
		}
		for i, n := range names {
			det.Fields = append(det.Fields, field(n, vals[i]))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return det, nil
}

// field renders one column; epoch-ms columns carry TS for the relative age.
func field(name string, v any) feed.Field {
	f := feed.Field{Name: name}
	switch x := v.(type) {
	case nil:
		f.Value = "null"
	case int64:
		f.Value = strconv.FormatInt(x, 10)
		if isTimeColumn(name) && x > 0 {
			f.TS = core.Timestamp(x)
			f.Value = f.TS.String()
		}
	case []byte:
		f.Value = string(x)
	default:
		f.Value = fmt.Sprint(x)
	}
	return f
}

func isTimeColumn(n string) bool {
	if strings.HasSuffix(n, "_ms") {
		return !strings.Contains(n, "duration") && !strings.Contains(n, "timeout")
	}
	switch n {
	case "created_at", "started_at", "ended_at", "last_event_at", "cleanup_after", "updated_at":
		return true
	}
	return false
}
