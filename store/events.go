package store

import "github.com/clawpit/clawpit/core"

const eventCols = "id, at, entity, entity_id, from_state, to_state, actor, reason, applied"

func scanEvent(r rowScanner, e *core.Event) error {
	return r.Scan(&e.ID, &e.At, &e.Entity, &e.EntityID, &e.From, &e.To, &e.Actor, &e.Reason, &e.Applied)
}

// AppendEvent writes one journal row (docs/contract.md "Entities and statuses"); e.ID is ignored (the row gets
// the next id).
func (t *tx) AppendEvent(e core.Event) error {
	if err := t.checkWritable("append event"); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO events (at, entity, entity_id, from_state, to_state, actor, reason, applied)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		int64(e.At), e.Entity, e.EntityID, e.From, e.To, string(e.Actor), e.Reason, boolArg(e.Applied))
	return err
}

// AppendEvents writes journal rows in order, up to maxRowsPerWrite per
// INSERT.
func (t *tx) AppendEvents(es []core.Event) error {
	if err := t.checkWritable("append events"); err != nil {
		return err
	}
	for len(es) > 0 {
		n := min(len(es), maxRowsPerWrite)
		args := make([]any, 0, 8*n)
		for _, e := range es[:n] {
			args = append(args, int64(e.At), e.Entity, e.EntityID, e.From, e.To, string(e.Actor), e.Reason, boolArg(e.Applied))
		}
		if _, err := t.exec("INSERT INTO events (at, entity, entity_id, from_state, to_state, actor, reason, applied) VALUES "+rowsOf(n, 8), args...); err != nil {
			return err
		}
		es = es[n:]
	}
	return nil
}

// Events returns the journal of one entity, oldest first.
func (t *tx) Events(entity, id string) ([]core.Event, error) {
	return queryAll(t, "SELECT "+eventCols+" FROM events WHERE entity = ? AND entity_id = ? ORDER BY id",
		[]any{entity, id}, scanEvent)
}

// EventsSince returns journal rows with id > afterID, oldest first, at most
// limit rows (0 = no limit).
func (t *tx) EventsSince(afterID int64, limit int) ([]core.Event, error) {
	return queryAll(t, "SELECT "+eventCols+" FROM events WHERE id > ? ORDER BY id"+limitClause(limit),
		[]any{afterID}, scanEvent)
}
