package store

import "github.com/clawpit/clawpit/core"

const sessionCols = "id, label, state, created_at, last_activity_at, passivated_at, rev, agent"

func scanSession(r rowScanner, s *core.Session) error {
	return r.Scan(&s.ID, &s.Label, &s.State, &s.CreatedAt, nts{&s.LastActivityAt}, nts{&s.PassivatedAt}, &s.Rev, &s.Agent)
}

// GetSession returns the session id; wrapped core.ErrNotFound when unknown.
func (t *tx) GetSession(id string) (*core.Session, error) {
	return getRow(t, core.EntitySession, id, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", scanSession)
}

// InsertSession stores s with Rev 1; core.ErrConflict when the id exists.
func (t *tx) InsertSession(s *core.Session) error {
	_, err := t.insert(core.EntitySession, s.ID,
		"INSERT INTO sessions ("+sessionCols+") VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
		s.ID, s.Label, string(s.State), int64(s.CreatedAt), tsArg(s.LastActivityAt), tsArg(s.PassivatedAt), s.Agent)
	if err != nil {
		return err
	}
	s.Rev = 1
	return nil
}

// UpdateSession writes every mutable field of s when its row still has
// revision s.Rev, then bumps s.Rev; core.ErrConflict otherwise.
func (t *tx) UpdateSession(s *core.Session) error {
	err := t.condUpdate(core.EntitySession, s.ID, s.Rev,
		`UPDATE sessions SET label = ?, state = ?, created_at = ?, last_activity_at = ?, passivated_at = ?,
		 agent = ?, rev = rev + 1 WHERE id = ? AND rev = ?`,
		s.Label, string(s.State), int64(s.CreatedAt), tsArg(s.LastActivityAt), tsArg(s.PassivatedAt), s.Agent, s.ID, s.Rev)
	if err != nil {
		return err
	}
	s.Rev++
	return nil
}

// ListSessions returns sessions matching f, newest first (created_at DESC).
func (t *tx) ListSessions(f core.SessionFilter) ([]core.Session, error) {
	var w where
	in(&w, "state", f.States)
	q := "SELECT " + sessionCols + " FROM sessions" + w.clause() + " ORDER BY created_at DESC, id DESC" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanSession)
}
