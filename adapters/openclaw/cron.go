package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// CronHistoryKeep is cron-history-retention.ts CRON_HISTORY_KEEP_PER_JOB:
// the finished rows kept per cron job (run records and other rows counted
// apart); older ones are pruned whatever their cleanup_after.
const CronHistoryKeep = 2000

// cronRecovery is maintenance.ts resolveDurableCronTaskRecovery: an active
// cron task, or a lost one whose error says "backing session missing", takes
// the status of the first row of its job (ordered by created_at, task_id)
// that is the task itself or has the task's run id, when that row finished
// (succeeded, failed, timed_out, cancelled). The CLI is never
// cron-authoritative, so no job counts as running.
type cronRecovery struct {
	tx   *sql.Tx
	stmt *sql.Stmt
}

func newCronRecovery(tx *sql.Tx) *cronRecovery { return &cronRecovery{tx: tx} }

func (c *cronRecovery) close() {
	if c.stmt != nil {
		c.stmt.Close()
	}
}

// find returns the finished row t recovers from.
func (c *cronRecovery) find(ctx context.Context, t *Task) (*Task, bool, error) {
	if t.Runtime != "cron" {
		return nil, false, nil
	}
	recoverableLost := t.Status == "lost" && strings.Contains(strings.ToLower(strings.TrimSpace(t.Error)), "backing session missing")
	if !t.Active() && !recoverableLost {
		return nil, false, nil
	}
	job := strings.TrimSpace(t.SourceID)
	if job == "" {
		return nil, false, nil
	}
	if c.stmt == nil {
		st, err := c.tx.PrepareContext(ctx, taskSelect+` WHERE runtime = 'cron' AND source_id = ?
			AND (task_id = ? OR (? != '' AND run_id = ?)) ORDER BY created_at, task_id LIMIT 1`)
		if err != nil {
			return nil, false, fmt.Errorf("openclaw task_runs: %w", err)
		}
		c.stmt = st
	}
	var row Task
	err := scanTask(c.stmt.QueryRowContext(ctx, job, t.TaskID, strings.TrimSpace(t.RunID), t.RunID), &row)
	if err == sql.ErrNoRows {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("openclaw task_runs: %w", err)
	}
	switch row.Status {
	case "succeeded", "failed", "timed_out", "cancelled":
		return &row, true, nil
	}
	return nil, false, nil
}

// projectRecovered is maintenance.ts projectTaskRecovered: the task as the
// audit sees it once recovered from row.
func projectRecovered(t *Task, row *Task, o Options) {
	ended := row.TerminalAt() // resolveCronTaskRecordTimestamp
	t.Status = row.Status
	t.EndedAt = sql.NullInt64{Int64: ended, Valid: true}
	t.LastEventAt = row.LastEventAt
	if !t.LastEventAt.Valid {
		t.LastEventAt = t.EndedAt
	}
	t.Error = row.Error
	if !t.CleanupAfter.Valid {
		t.CleanupAfter = sql.NullInt64{Int64: resolveCleanup(t, o), Valid: true}
	}
}

// cronOverflow is cron-history-retention.ts collectCronHistoryOverflowTaskIds:
// per cron job (source_id) and store partition (detail storeKey), the
// finished non-lost rows beyond the newest CronHistoryKeep, counting
// cron-run records (detail kind "cron-run") and other rows apart, newest by
// endedAt ?? lastEventAt ?? createdAt, then createdAt, then task id. Only
// jobs with more than CronHistoryKeep rows in all are read
// (idx_task_runs_runtime_source_ended).
func cronOverflow(ctx context.Context, tx *sql.Tx) (map[string]*Task, error) {
	rows, err := tx.QueryContext(ctx, `SELECT source_id FROM task_runs WHERE runtime = 'cron' AND source_id IS NOT NULL AND source_id != ''
		GROUP BY source_id HAVING count(*) > ?`, CronHistoryKeep)
	if err != nil {
		return nil, fmt.Errorf("openclaw task_runs: %w", err)
	}
	var jobs []string
	for rows.Next() {
		var j string
		if err := rows.Scan(&j); err != nil {
			rows.Close()
			return nil, fmt.Errorf("openclaw task_runs: %w", err)
		}
		jobs = append(jobs, j)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("openclaw task_runs: %w", err)
	}
	out := map[string]*Task{}
	for _, job := range jobs {
		ts, err := cronRows(ctx, tx, job)
		if err != nil {
			return nil, err
		}
		type part struct {
			store   string
			hasKey  bool
			history bool
		}
		parts := map[part][]*Task{}
		for i := range ts {
			t := &ts[i]
			k := part{t.Detail.StoreKey, t.Detail.HasStoreKey, t.Detail.Kind == "cron-run"}
			parts[k] = append(parts[k], t)
		}
		for _, p := range parts {
			sort.Slice(p, func(i, j int) bool {
				a, b := p[i], p[j]
				if a.TerminalAt() != b.TerminalAt() {
					return a.TerminalAt() > b.TerminalAt()
				}
				if a.CreatedAt != b.CreatedAt {
					return a.CreatedAt > b.CreatedAt
				}
				return a.TaskID > b.TaskID
			})
			for _, t := range p[min(len(p), CronHistoryKeep):] {
				out[t.TaskID] = t
			}
		}
	}
	return out, nil
}

// cronRows reads a job's finished non-lost rows with only what the history
// cap looks at, through (runtime, source_id): SQLite would otherwise pick
// (runtime, status) and read every cron row for each job.
func cronRows(ctx context.Context, tx *sql.Tx, job string) ([]Task, error) {
	rows, err := tx.QueryContext(ctx, `SELECT task_id, status, created_at, started_at, ended_at, last_event_at, detail_json
		FROM task_runs INDEXED BY idx_task_runs_runtime_source_ended
		WHERE runtime = 'cron' AND source_id = ? AND status NOT IN ('queued','running','lost')`, job)
	if err != nil {
		return nil, fmt.Errorf("openclaw task_runs: %w", err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t := Task{Runtime: "cron", SourceID: job}
		var detail sql.NullString
		if err := rows.Scan(&t.TaskID, &t.Status, &t.CreatedAt, &t.StartedAt, &t.EndedAt, &t.LastEventAt, &detail); err != nil {
			return nil, fmt.Errorf("openclaw task_runs: %w", err)
		}
		t.Detail = parseDetail(detail)
		t.normalize()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("openclaw task_runs: %w", err)
	}
	return out, nil
}
