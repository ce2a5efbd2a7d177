package store

import (
	"database/sql"
	"errors"

	"github.com/clawpit/clawpit/core"
)

const notificationCols = "id, session, kind, subject_id, text, dedup_key, created_at, delivered_at, cleanup_after"

func scanNotification(r rowScanner, n *core.Notification) error {
	return r.Scan(&n.ID, &n.Session, &n.Kind, &n.SubjectID, &n.Text, &n.DedupKey, &n.CreatedAt,
		nts{&n.DeliveredAt}, nts{&n.CleanupAfter})
}

// InsertNotification stores n and sets n.ID; it returns false, no error and
// leaves n.ID unchanged when a notification with n.DedupKey already exists
// (INSERT … ON CONFLICT(dedup_key) DO NOTHING).
func (t *tx) InsertNotification(n *core.Notification) (bool, error) {
	if n.DedupKey == "" {
		return false, core.Invalidf("notification %s %s: empty dedup key", n.Kind, n.SubjectID)
	}
	if t.db.dialect == dialectPostgres {
		return t.insertNotificationPG(n)
	}
	res, err := t.insert(core.EntityNotification, n.DedupKey,
		`INSERT INTO notifications (session, kind, subject_id, text, dedup_key, created_at, delivered_at, cleanup_after)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(dedup_key) DO NOTHING`,
		n.Session, string(n.Kind), n.SubjectID, n.Text, n.DedupKey, int64(n.CreatedAt),
		tsArg(n.DeliveredAt), tsArg(n.CleanupAfter))
	if err != nil {
		return false, err
	}
	c, err := res.RowsAffected()
	if err != nil {
		return false, mapErr(err)
	}
	if c == 0 {
		return false, nil
	}
	id, err := res.LastInsertId()
	if err != nil {
		return false, mapErr(err)
	}
	n.ID = id
	return true, nil
}

// ListNotifications returns notifications matching f, oldest first (id ASC).
func (t *tx) ListNotifications(f core.NotificationFilter) ([]core.Notification, error) {
	var w where
	if f.UndeliveredOnly {
		w.add("delivered_at IS NULL")
	}
	if f.Session != "" {
		w.add("session = ?", f.Session)
	}
	if f.AfterID > 0 {
		w.add("id > ?", f.AfterID)
	}
	q := "SELECT " + notificationCols + " FROM notifications" + w.clause() + " ORDER BY id" + limitClause(f.Limit)
	return queryAll(t, q, w.args, scanNotification)
}

// MarkNotificationDelivered sets delivered_at = at where it is still NULL. It
// returns false when the notification was already delivered (idempotent) and
// a wrapped core.ErrNotFound when no notification has that id.
func (t *tx) MarkNotificationDelivered(id int64, at core.Timestamp) (bool, error) {
	if err := t.checkWritable("mark notification delivered"); err != nil {
		return false, err
	}
	res, err := t.exec("UPDATE notifications SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL", int64(at), id)
	if err != nil {
		return false, err
	}
	c, err := res.RowsAffected()
	if err != nil {
		return false, mapErr(err)
	}
	if c > 0 {
		return true, nil
	}
	var one int
	err = t.queryRow("SELECT 1 FROM notifications WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, core.NotFoundf("no notification with id %d", id)
	}
	if err != nil {
		return false, mapErr(err)
	}
	return false, nil
}

// ClaimNotification claims undelivered notification id for by until the
// lease ends (unix ms) with one conditional UPDATE: it succeeds when nobody
// holds a live claim (none, an expired one at now, or by's own). It returns
// false when the notification is delivered, claimed by another live
// notifier, or absent.
func (t *tx) ClaimNotification(id int64, by string, now, until core.Timestamp) (bool, error) {
	if err := t.checkWritable("claim notification"); err != nil {
		return false, err
	}
	res, err := t.exec(`UPDATE notifications SET claimed_by = ?, claim_until = ?
		 WHERE id = ? AND delivered_at IS NULL AND (claim_until IS NULL OR claim_until <= ? OR claimed_by = ?)`,
		by, int64(until), id, int64(now), by)
	if err != nil {
		return false, err
	}
	c, err := res.RowsAffected()
	if err != nil {
		return false, mapErr(err)
	}
	return c > 0, nil
}

// ReleaseNotificationClaim drops by's claim on id, if it still holds it.
func (t *tx) ReleaseNotificationClaim(id int64, by string) error {
	if err := t.checkWritable("release notification claim"); err != nil {
		return err
	}
	_, err := t.exec("UPDATE notifications SET claimed_by = '', claim_until = NULL WHERE id = ? AND claimed_by = ?", id, by)
	return err
}

// insertNotificationPG is InsertNotification on PostgreSQL, whose driver has
// no last-insert id: RETURNING id, and no row back when dedup_key exists.
func (t *tx) insertNotificationPG(n *core.Notification) (bool, error) {
	if err := t.checkWritable("insert " + core.EntityNotification); err != nil {
		return false, err
	}
	t.wrote = true
	var id int64
	err := t.queryRow(`INSERT INTO notifications (session, kind, subject_id, text, dedup_key, created_at, delivered_at, cleanup_after)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(dedup_key) DO NOTHING RETURNING id`,
		n.Session, string(n.Kind), n.SubjectID, n.Text, n.DedupKey, int64(n.CreatedAt),
		tsArg(n.DeliveredAt), tsArg(n.CleanupAfter)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, constraintErr(core.EntityNotification, n.DedupKey, err)
	}
	n.ID = id
	return true, nil
}
