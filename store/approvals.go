package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/clawpit/clawpit/core"
)

const approvalCols = `id, session, run_id, task_id, tool, command, rationale, cwd, pattern, status, scope,
 reason, decided_by, requested_at, decided_at, expires_at, cleanup_after, tool_use_id, holds_wait,
 waiter_host, waiter_pid, waiter_start, waiter_ns, input_hash, suggestions, suggestion, rev`

func scanApproval(r rowScanner, a *core.Approval) error {
	return r.Scan(&a.ID, &a.Session, nstr{&a.RunID}, nstr{&a.TaskID}, &a.Tool, &a.Command, &a.Rationale, &a.Cwd,
		&a.Pattern, &a.Status, &a.Scope, &a.Reason, &a.DecidedBy, &a.RequestedAt, nts{&a.DecidedAt},
		nts{&a.ExpiresAt}, nts{&a.CleanupAfter}, nstr{&a.ToolUseID}, &a.HoldsWait,
		&a.Waiter.Host, &a.Waiter.PID, &a.Waiter.Start, &a.Waiter.NS, nstr{&a.InputHash}, rawJSON{&a.Suggestions}, &a.Suggestion, &a.Rev)
}

// approvalArgs are the values of every column but id and rev, in approvalCols order.
func approvalArgs(a *core.Approval) []any {
	return []any{a.Session, strArg(a.RunID), strArg(a.TaskID), a.Tool, a.Command, a.Rationale, a.Cwd,
		a.Pattern, string(a.Status), string(a.Scope), a.Reason, a.DecidedBy, int64(a.RequestedAt),
		tsArg(a.DecidedAt), tsArg(a.ExpiresAt), tsArg(a.CleanupAfter), strArg(a.ToolUseID), boolArg(a.HoldsWait),
		a.Waiter.Host, a.Waiter.PID, a.Waiter.Start, a.Waiter.NS, strArg(a.InputHash), string(a.Suggestions), a.Suggestion}
}

// GetApproval returns the approval id; wrapped core.ErrNotFound when unknown.
func (t *tx) GetApproval(id string) (*core.Approval, error) {
	return getRow(t, core.EntityApproval, id, "SELECT "+approvalCols+" FROM approvals WHERE id = ?", scanApproval)
}

// InsertApproval stores a with Rev 1; core.ErrConflict when the id exists.
func (t *tx) InsertApproval(a *core.Approval) error {
	args := append([]any{a.ID}, approvalArgs(a)...)
	_, err := t.insert(core.EntityApproval, a.ID,
		"INSERT INTO approvals ("+approvalCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)", args...)
	if err != nil {
		return err
	}
	a.Rev = 1
	return nil
}

// UpdateApproval writes every field of a when its row still has revision
// a.Rev, then bumps a.Rev; core.ErrConflict otherwise.
func (t *tx) UpdateApproval(a *core.Approval) error {
	args := append(approvalArgs(a), a.ID, a.Rev)
	err := t.condUpdate(core.EntityApproval, a.ID, a.Rev,
		`UPDATE approvals SET session = ?, run_id = ?, task_id = ?, tool = ?, command = ?, rationale = ?, cwd = ?,
		 pattern = ?, status = ?, scope = ?, reason = ?, decided_by = ?, requested_at = ?,
		 decided_at = ?, expires_at = ?, cleanup_after = ?, tool_use_id = ?, holds_wait = ?,
		 waiter_host = ?, waiter_pid = ?, waiter_start = ?, waiter_ns = ?, input_hash = ?, suggestions = ?,
		 suggestion = ?, rev = rev + 1
		 WHERE id = ? AND rev = ?`, args...)
	if err != nil {
		return err
	}
	a.Rev++
	return nil
}

// ListApprovals returns approvals matching f, newest first (requested_at DESC).
func (t *tx) ListApprovals(f core.ApprovalFilter) ([]core.Approval, error) {
	var w where
	in(&w, "status", f.Statuses)
	if f.Session != "" {
		w.add("session = ?", f.Session)
	}
	if f.RunID != "" {
		w.add("run_id = ?", f.RunID)
	}
	if f.ToolUseID != "" {
		w.add("tool_use_id = ?", f.ToolUseID)
	}
	q := "SELECT " + approvalCols + " FROM approvals" + w.clause() + " ORDER BY requested_at DESC, id DESC" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanApproval)
}

// rawJSON scans a TEXT column holding JSON into a json.RawMessage (a copy:
// a driver may reuse the bytes it returned); empty text and NULL read back
// empty.
type rawJSON struct{ p *json.RawMessage }

func (r rawJSON) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*r.p = nil
	case string:
		*r.p = json.RawMessage(x)
	case []byte:
		*r.p = slices.Clone(json.RawMessage(x))
	default:
		return fmt.Errorf("approval suggestions: cannot read %T as JSON text", v)
	}
	if len(*r.p) == 0 {
		*r.p = nil
	}
	return nil
}
