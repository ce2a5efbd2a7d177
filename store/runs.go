package store

import "github.com/clawpit/clawpit/core"

const runCols = `run_id, child_session, requester_session, label, started_at, last_progress_at,
 inactivity_budget_ms, pending_approval_waits, ended_at, outcome, ended_reason,
 suppress_announce_reason, cleanup_handled, error, cleanup_after, rev`

func scanRun(s rowScanner, r *core.Run) error {
	return s.Scan(&r.RunID, &r.ChildSession, &r.RequesterSession, &r.Label, &r.StartedAt, &r.LastProgressAt,
		&r.InactivityBudgetMs, &r.PendingApprovalWaits, nts{&r.EndedAt}, &r.Outcome, &r.EndedReason,
		&r.SuppressAnnounceReason, &r.CleanupHandled, &r.Error, nts{&r.CleanupAfter}, &r.Rev)
}

// runArgs are the values of every column but run_id and rev, in runCols order.
func runArgs(r *core.Run) []any {
	return []any{r.ChildSession, r.RequesterSession, r.Label, int64(r.StartedAt), int64(r.LastProgressAt),
		r.InactivityBudgetMs, r.PendingApprovalWaits, tsArg(r.EndedAt), string(r.Outcome), r.EndedReason,
		r.SuppressAnnounceReason, boolArg(r.CleanupHandled), r.Error, tsArg(r.CleanupAfter)}
}

// GetRun returns the run runID; wrapped core.ErrNotFound when unknown.
func (t *tx) GetRun(runID string) (*core.Run, error) {
	return getRow(t, core.EntityRun, runID, "SELECT "+runCols+" FROM runs WHERE run_id = ?", scanRun)
}

// InsertRun stores r with Rev 1; core.ErrConflict when the run id exists.
func (t *tx) InsertRun(r *core.Run) error {
	args := append([]any{r.RunID}, runArgs(r)...)
	_, err := t.insert(core.EntityRun, r.RunID,
		"INSERT INTO runs ("+runCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)", args...)
	if err != nil {
		return err
	}
	r.Rev = 1
	return nil
}

// UpdateRun writes every field of r when its row still has revision r.Rev,
// then bumps r.Rev; core.ErrConflict otherwise.
func (t *tx) UpdateRun(r *core.Run) error {
	args := append(runArgs(r), r.RunID, r.Rev)
	err := t.condUpdate(core.EntityRun, r.RunID, r.Rev,
		`UPDATE runs SET child_session = ?, requester_session = ?, label = ?, started_at = ?, last_progress_at = ?,
		 inactivity_budget_ms = ?, pending_approval_waits = ?, ended_at = ?, outcome = ?, ended_reason = ?,
		 suppress_announce_reason = ?, cleanup_handled = ?, error = ?, cleanup_after = ?, rev = rev + 1
		 WHERE run_id = ? AND rev = ?`, args...)
	if err != nil {
		return err
	}
	r.Rev++
	return nil
}

// ListRuns returns runs matching f, newest first (started_at DESC).
func (t *tx) ListRuns(f core.RunFilter) ([]core.Run, error) {
	var w where
	if f.RunningOnly {
		w.add("ended_at IS NULL")
	}
	if f.Session != "" {
		w.add("(child_session = ? OR requester_session = ?)", f.Session, f.Session)
	}
	q := "SELECT " + runCols + " FROM runs" + w.clause() + " ORDER BY started_at DESC, run_id DESC" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanRun)
}
