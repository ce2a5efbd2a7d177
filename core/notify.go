package core

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// notify stores n inside tx (README "Notifications"). Notifications are deduplicated by
// DedupKey: a duplicate is silently skipped (no error), so a rule that fires
// again — after a restart, or from a second sweeper — never re-notifies
// (docs/contract.md "Silent scheduled tasks"). The caller sets CreatedAt.
func notify(tx Tx, n *Notification) error {
	if n.DedupKey == "" {
		return fmt.Errorf("notification %s for %s has no dedup key", n.Kind, n.SubjectID)
	}
	if _, err := tx.InsertNotification(n); err != nil {
		return fmt.Errorf("insert notification %s: %w", n.DedupKey, err)
	}
	return nil
}

// ListNotifications returns the notifications matching f, oldest first.
func (r *Registry) ListNotifications(ctx context.Context, f NotificationFilter) ([]Notification, error) {
	var out []Notification
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListNotifications(f)
		return err
	})
	return out, err
}

// AckNotification marks notification id delivered now (README "Notifications" `--ack`,
// `--notify-cmd`); false when it was already delivered or does not exist.
// Acks are not journaled: they carry no actor and change no status.
func (r *Registry) AckNotification(ctx context.Context, id int64) (bool, error) {
	var ok bool
	err := r.store.Update(ctx, func(tx Tx) (err error) {
		ok, err = tx.MarkNotificationDelivered(id, r.now())
		return err
	})
	return ok, err
}

// ClaimNotification claims undelivered notification id for notifier by for
// lease (README "Notifications" `--notify-cmd`): one conditional update, so of two live
// notifiers only one runs the command. A claim whose lease has ended (its
// notifier died mid-delivery) can be taken over, so delivery stays at least
// once across crashes. false when the notification is delivered, absent or
// held by another live claim.
func (r *Registry) ClaimNotification(ctx context.Context, id int64, by string, lease time.Duration) (bool, error) {
	var ok bool
	err := r.store.Update(ctx, func(tx Tx) (err error) {
		now := r.now()
		ok, err = tx.ClaimNotification(id, by, now, now.Add(lease))
		return err
	})
	return ok, err
}

// ReleaseNotificationClaim drops by's claim on id (after a failed delivery,
// so another notifier may retry it at once).
func (r *Registry) ReleaseNotificationClaim(ctx context.Context, id int64, by string) error {
	return r.store.Update(ctx, func(tx Tx) error { return tx.ReleaseNotificationClaim(id, by) })
}

// Alert states as the journal records an acknowledgement (the console's
// Alerts pane shows the same words).
const (
	AlertUnread = "unread"
	AlertRead   = "read"
)

// ReadNotification marks notification id read (delivered) now on behalf of
// actor and journals it (entity notification, unread → read, the actor):
// the console's acknowledgement of one alert. A notification already read
// is refused with a reason (journaled, applied=false); an unknown id is a
// wrapped ErrNotFound.
func (r *Registry) ReadNotification(ctx context.Context, id int64, actor Actor) (Result, error) {
	var res Result
	err := r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		ok, err := tx.MarkNotificationDelivered(id, now)
		if err != nil {
			return err
		}
		sid := strconv.FormatInt(id, 10)
		if !ok {
			res, err = refuse(tx, now, EntityNotification, sid, AlertRead, AlertRead, actor, "alert "+sid+" is already read")
			return err
		}
		res = Result{Applied: true}
		return journal(tx, now, EntityNotification, sid, AlertUnread, AlertRead, actor, "acknowledged", true)
	})
	return res, err
}

// ReadAllNotifications marks every unread notification read now on behalf
// of actor, journaling each (as ReadNotification), in one transaction. It
// returns how many it marked (0: nothing was unread).
func (r *Registry) ReadAllNotifications(ctx context.Context, actor Actor) (int, error) {
	var n int
	err := r.store.Update(ctx, func(tx Tx) error {
		n = 0
		un, err := tx.ListNotifications(NotificationFilter{UndeliveredOnly: true})
		if err != nil {
			return err
		}
		now := r.now()
		var evs []Event
		for _, nt := range un {
			ok, err := tx.MarkNotificationDelivered(nt.ID, now)
			if err != nil {
				return err
			}
			if ok {
				n++
				evs = append(evs, Event{At: now, Entity: EntityNotification, EntityID: strconv.FormatInt(nt.ID, 10),
					From: AlertUnread, To: AlertRead, Actor: actor, Reason: "acknowledged (all)", Applied: true})
			}
		}
		if len(evs) == 0 {
			return nil
		}
		if err := tx.AppendEvents(evs); err != nil {
			return fmt.Errorf("journal alerts read: %w", err)
		}
		return nil
	})
	return n, err
}
