package store

import "github.com/clawpit/clawpit/core"

const grantCols = "id, tool, pattern, scope, session, created_by, created_at"

func scanGrant(r rowScanner, g *core.Grant) error {
	return r.Scan(&g.ID, &g.Tool, &g.Pattern, &g.Scope, &g.Session, &g.CreatedBy, &g.CreatedAt)
}

// InsertGrant stores g; core.ErrConflict when the id, or the same (tool,
// pattern, scope, session), exists.
func (t *tx) InsertGrant(g *core.Grant) error {
	_, err := t.insert(core.EntityGrant, g.ID,
		"INSERT INTO grants ("+grantCols+") VALUES (?, ?, ?, ?, ?, ?, ?)",
		g.ID, g.Tool, g.Pattern, string(g.Scope), g.Session, g.CreatedBy, int64(g.CreatedAt))
	return err
}

// GetGrant returns the grant id; wrapped core.ErrNotFound when unknown.
func (t *tx) GetGrant(id string) (*core.Grant, error) {
	return getRow(t, core.EntityGrant, id, "SELECT "+grantCols+" FROM grants WHERE id = ?", scanGrant)
}

// DeleteGrant removes the grant id; wrapped core.ErrNotFound when absent.
func (t *tx) DeleteGrant(id string) error {
	if err := t.checkWritable("delete grant"); err != nil {
		return err
	}
	return t.deleteRow(core.EntityGrant, id, "DELETE FROM grants WHERE id = ?", id)
}

// deleteRow runs the DELETE q of one row of entity id; wrapped
// core.ErrNotFound when it deleted nothing.
func (t *tx) deleteRow(entity, id, q string, args ...any) error {
	res, err := t.exec(q, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return notFound(entity, id)
	}
	return nil
}

// ListGrants returns every grant, newest first (created_at DESC).
func (t *tx) ListGrants() ([]core.Grant, error) {
	return queryAll(t, "SELECT "+grantCols+" FROM grants ORDER BY created_at DESC, id DESC", nil, scanGrant)
}

// FindGrant returns the oldest grant for tool and pattern that is scope
// always, or scope session for session; nil, nil when none matches.
func (t *tx) FindGrant(tool, pattern, session string) (*core.Grant, error) {
	return findRow(t, "SELECT "+grantCols+` FROM grants WHERE tool = ? AND pattern = ?
		 AND (scope = 'always' OR (scope = 'session' AND session = ? AND session <> ''))
		 ORDER BY created_at, id LIMIT 1`, []any{tool, pattern, session}, scanGrant)
}
