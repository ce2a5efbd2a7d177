package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Activity is the input of RecordActivity: a runtime saying "this session (and
// this run) is still working", e.g. after each tool call (Claude Code hooks:
// PostToolUse, Stop).
type Activity struct {
	Session string // required: the runtime's session key
	Label   string // label given to the session when this call creates it
	RunID   string // optional: a run whose progress this also is (docs/contract.md "The inactivity watchdog pauses for approvals" re-arm)
	Why     string // what happened, for the journal ("PostToolUse Bash")
	Agent   string // the agent, recorded on a session this call creates ("codex")
}

// RecordActivity records activity in one write transaction. The session's
// last_activity_at becomes now (its state is kept); a session not seen before
// is opened active with Label, so a runtime that started before its hooks
// were installed still shows up. A closed session is refused ("session
// closed": closed stays closed). When RunID names a running run, its
// last_progress_at becomes now, re-arming its inactivity watchdog (docs/contract.md "The inactivity watchdog pauses for approvals");
// an unknown run is ignored and an ended one refused ("run already ended").
// Each change is journaled with reason "activity: <Why>". The Result is the
// session's. Errors: ErrInvalid for an empty session.
func (r *Registry) RecordActivity(ctx context.Context, a Activity, actor Actor) (Result, error) {
	if a.Session == "" {
		return Result{}, Invalidf("activity needs a session")
	}
	a.Label = r.redactText(a.Label)
	why := "activity"
	if w := strings.TrimSpace(r.redactText(a.Why)); w != "" {
		why += ": " + w
	}
	var res Result
	err := r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		s, err := tx.GetSession(a.Session)
		switch {
		case errors.Is(err, ErrNotFound):
			s = &Session{ID: a.Session, Label: a.Label, State: SessionActive, CreatedAt: now, LastActivityAt: now, Agent: a.Agent}
			if err := tx.InsertSession(s); err != nil {
				return wrapWrite("session", s.ID, err)
			}
			res = applied("")
			if err := journal(tx, now, EntitySession, s.ID, "", string(SessionActive), actor, "opened by "+why, true); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("session %s: %w", a.Session, err)
		case s.State == SessionClosed:
			if res, err = refuse(tx, now, EntitySession, s.ID, string(s.State), string(s.State), actor, "session closed"); err != nil {
				return err
			}
		default:
			s.LastActivityAt = now
			if err := tx.UpdateSession(s); err != nil {
				return wrapWrite("session", s.ID, err)
			}
			res = applied("")
			if err := journal(tx, now, EntitySession, s.ID, string(s.State), string(s.State), actor, why, true); err != nil {
				return err
			}
		}
		if a.RunID == "" {
			return nil
		}
		run, err := tx.GetRun(a.RunID)
		if errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return fmt.Errorf("run %s: %w", a.RunID, err)
		}
		if !run.Running() {
			_, err := refuse(tx, now, EntityRun, run.RunID, runState(run), runState(run), actor,
				"run already ended ("+string(run.Outcome)+")")
			return err
		}
		run.LastProgressAt = now
		if err := tx.UpdateRun(run); err != nil {
			return wrapWrite("run", run.RunID, err)
		}
		return journal(tx, now, EntityRun, run.RunID, runRunning, runRunning, actor, "progress ("+why+")", true)
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// NewNotification is the input of RaiseNotification.
type NewNotification struct {
	Session   string
	Kind      NotificationKind
	SubjectID string // the entity it is about (an approval id for a runtime notice), may be empty
	Text      string
	DedupKey  string // empty: a fresh unique key "<kind>:<random>"
}

// RaiseNotification stores a notification a runtime raised itself (README "Notifications";
// Claude Code hooks: Notification) so it shows in the console's Alerts pane
// and in `clawpit notifications`. The text is redacted (docs/contract.md "Background jobs: Live, redacted log"). It returns
// the notification and false when one with the same DedupKey already exists
// (then nothing is stored). Errors: ErrInvalid for an unknown kind or empty
// text.
func (r *Registry) RaiseNotification(ctx context.Context, nn NewNotification) (*Notification, bool, error) {
	if _, err := parseEnum("notification kind", string(nn.Kind), NotificationKinds); err != nil {
		return nil, false, err
	}
	text := strings.TrimSpace(r.redactText(nn.Text))
	if text == "" {
		return nil, false, Invalidf("notification needs a text")
	}
	key := nn.DedupKey
	if key == "" {
		key = string(nn.Kind) + ":" + NewShortID()
	}
	n := &Notification{Session: nn.Session, Kind: nn.Kind, SubjectID: nn.SubjectID, Text: text, DedupKey: key}
	var inserted bool
	err := r.store.Update(ctx, func(tx Tx) error {
		n.CreatedAt = r.now()
		var err error
		if inserted, err = tx.InsertNotification(n); err != nil {
			return fmt.Errorf("insert notification %s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return n, inserted, nil
}

// NotificationKinds lists every notification kind (docs/contract.md "Entities and statuses").
var NotificationKinds = []NotificationKind{NotifyJobFinished, NotifyJobLost, NotifyTaskFailed,
	NotifyTaskSilent, NotifyRunTimedOut, NotifyApprovalExpired, NotifyRuntimeNotice}
