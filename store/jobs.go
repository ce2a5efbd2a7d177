package store

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/clawpit/clawpit/core"
)

const jobCols = `id, session, command, cwd, rationale, status, exit_code, timeout_s, pid, pgid,
 supervisor_pid, supervisor_start, created_at, started_at, completed_at, log_path, capture_error,
 surfaced_at, cleanup_after, host, containment, cgroup, rev`

func scanJob(r rowScanner, j *core.Job) error {
	var cmd string
	var exit sql.NullInt64
	if err := r.Scan(&j.ID, &j.Session, &cmd, &j.Cwd, &j.Rationale, &j.Status, &exit, &j.TimeoutS, &j.PID, &j.PGID,
		&j.SupervisorPID, &j.SupervisorStart, &j.CreatedAt, nts{&j.StartedAt}, nts{&j.CompletedAt}, &j.LogPath,
		&j.CaptureError, nts{&j.SurfacedAt}, nts{&j.CleanupAfter}, &j.Host, &j.Containment, &j.Cgroup, &j.Rev); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(cmd), &j.Command); err != nil {
		return fmt.Errorf("job %s: command column is not a JSON array: %w", j.ID, err)
	}
	if exit.Valid {
		c := int(exit.Int64)
		j.ExitCode = &c
	}
	return nil
}

// jobArgs are the values of every column but id and rev, in jobCols order.
// Command is stored as a JSON array; a nil ExitCode as NULL.
func jobArgs(j *core.Job) ([]any, error) {
	argv := j.Command
	if argv == nil {
		argv = []string{}
	}
	cmd, err := json.Marshal(argv)
	if err != nil {
		return nil, fmt.Errorf("job %s: encode command: %w", j.ID, err)
	}
	var exit any
	if j.ExitCode != nil {
		exit = int64(*j.ExitCode)
	}
	return []any{j.Session, string(cmd), j.Cwd, j.Rationale, string(j.Status), exit, j.TimeoutS, j.PID, j.PGID,
		j.SupervisorPID, j.SupervisorStart, int64(j.CreatedAt), tsArg(j.StartedAt), tsArg(j.CompletedAt), j.LogPath,
		j.CaptureError, tsArg(j.SurfacedAt), tsArg(j.CleanupAfter), j.Host, j.Containment, j.Cgroup}, nil
}

// GetJob returns the job id; wrapped core.ErrNotFound when unknown.
func (t *tx) GetJob(id string) (*core.Job, error) {
	return getRow(t, core.EntityJob, id, "SELECT "+jobCols+" FROM jobs WHERE id = ?", scanJob)
}

// InsertJob stores j with Rev 1; core.ErrConflict when the id exists.
func (t *tx) InsertJob(j *core.Job) error {
	a, err := jobArgs(j)
	if err != nil {
		return err
	}
	args := append([]any{j.ID}, a...)
	if _, err := t.insert(core.EntityJob, j.ID,
		"INSERT INTO jobs ("+jobCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)", args...); err != nil {
		return err
	}
	j.Rev = 1
	return nil
}

// UpdateJob writes every field of j when its row still has revision j.Rev,
// then bumps j.Rev; core.ErrConflict otherwise.
func (t *tx) UpdateJob(j *core.Job) error {
	a, err := jobArgs(j)
	if err != nil {
		return err
	}
	args := append(a, j.ID, j.Rev)
	if err := t.condUpdate(core.EntityJob, j.ID, j.Rev,
		`UPDATE jobs SET session = ?, command = ?, cwd = ?, rationale = ?, status = ?, exit_code = ?, timeout_s = ?,
		 pid = ?, pgid = ?, supervisor_pid = ?, supervisor_start = ?, created_at = ?, started_at = ?,
		 completed_at = ?, log_path = ?, capture_error = ?, surfaced_at = ?, cleanup_after = ?, host = ?, containment = ?, cgroup = ?,
		 rev = rev + 1
		 WHERE id = ? AND rev = ?`, args...); err != nil {
		return err
	}
	j.Rev++
	return nil
}

// ListJobs returns jobs matching f, newest first (created_at DESC).
func (t *tx) ListJobs(f core.JobFilter) ([]core.Job, error) {
	var w where
	in(&w, "status", f.Statuses)
	if f.Session != "" {
		w.add("session = ?", f.Session)
	}
	q := "SELECT " + jobCols + " FROM jobs" + w.clause() + " ORDER BY created_at DESC, id DESC" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanJob)
}
