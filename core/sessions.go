package core

import (
	"context"
	"errors"
	"fmt"
)

// OpenSession creates session id (state active) or re-activates a passivated
// one, updating its label when a non-empty different one is given (docs/contract.md "Entities and statuses",
// `session open`). The id is the runtime's session key, taken exactly (no
// prefix matching). Refused: an active session with nothing to change
// ("already active") and a closed session ("session closed": closed stays
// closed). The label is sanitised to one line and redacted (docs/contract.md "Background jobs: Live, redacted log", README "The console").
// Errors: ErrInvalid for an empty or unprintable id (termtext.ValidID: ≤ 128
// bytes, no control, bidi or space character) or a label over 1 KiB.
func (r *Registry) OpenSession(ctx context.Context, id, label string, actor Actor) (*Session, Result, error) {
	return r.openSession(ctx, id, label, "", actor, false)
}

// OpenAgentSession is OpenSession (reopen false) or ReopenSession (true)
// for a session a hook adapter reports, recording the agent it came from
// ("claude", "codex", "gemini"): set when the session is created, or on a
// known session that has none yet (one an earlier event opened); an agent
// once recorded is kept.
func (r *Registry) OpenAgentSession(ctx context.Context, id, label, agent string, reopen bool, actor Actor) (*Session, Result, error) {
	agent, err := cleanLabel("agent", agent)
	if err != nil {
		return nil, Result{}, err
	}
	return r.openSession(ctx, id, label, agent, actor, reopen)
}

// ReopenSession is OpenSession for a runtime that continues a conversation
// it had ended (Claude Code hooks: SessionStart with source "resume" after
// SessionEnd): a closed session becomes active again, journaled "re-opened
// after close". That holds for a session an operator closed too: resuming is
// the user's own choice to go on, and the journal keeps who closed it and
// when. Its jobs stay reaped and its cancelled approvals cancelled; new work
// is recorded as in any active session. Errors as OpenSession.
func (r *Registry) ReopenSession(ctx context.Context, id, label string, actor Actor) (*Session, Result, error) {
	return r.openSession(ctx, id, label, "", actor, true)
}

func (r *Registry) openSession(ctx context.Context, id, label, agent string, actor Actor, reopen bool) (*Session, Result, error) {
	if id == "" {
		return nil, Result{}, Invalidf("session id is required")
	}
	if err := checkIDs("session id", id); err != nil {
		return nil, Result{}, err
	}
	label, err := cleanLabel("label", label)
	if err != nil {
		return nil, Result{}, err
	}
	label = r.redactText(label)
	var (
		out *Session
		res Result
	)
	err = r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		s, err := tx.GetSession(id)
		if errors.Is(err, ErrNotFound) {
			s = &Session{ID: id, Label: label, State: SessionActive, CreatedAt: now, LastActivityAt: now, Agent: agent}
			if err := tx.InsertSession(s); err != nil {
				return wrapWrite("session", id, err)
			}
			out, res = s, applied("")
			return journal(tx, now, EntitySession, id, "", string(SessionActive), actor, "opened", true)
		} else if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		out = s
		from := string(s.State)
		relabel := label != "" && label != s.Label
		setAgent := agent != "" && s.Agent == ""
		why := "re-opened"
		switch {
		case s.State == SessionClosed && !reopen:
			res, err = refuse(tx, now, EntitySession, id, from, string(SessionActive), actor, "session closed")
			return err
		case s.State == SessionClosed:
			why = "re-opened after close"
		case s.State == SessionActive && !relabel && !setAgent:
			res, err = refuse(tx, now, EntitySession, id, from, from, actor, "already active")
			return err
		}
		if relabel {
			why = joinReason(why, "label "+label)
			s.Label = label
		}
		if setAgent {
			why = joinReason(why, "agent "+agent)
			s.Agent = agent
		}
		s.State = SessionActive
		s.LastActivityAt = now
		if err := tx.UpdateSession(s); err != nil {
			return wrapWrite("session", id, err)
		}
		res = applied("")
		return journal(tx, now, EntitySession, id, from, string(SessionActive), actor, why, true)
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// sessionOp runs fn on the resolved session inside one write transaction.
func (r *Registry) sessionOp(ctx context.Context, id string, fn func(tx Tx, s *Session, now Timestamp) (Result, error)) (*Session, Result, error) {
	var (
		out *Session
		res Result
	)
	err := r.store.Update(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntitySession, id, r.match)
		if err != nil {
			return err
		}
		s, err := tx.GetSession(full)
		if err != nil {
			return fmt.Errorf("session %s: %w", full, err)
		}
		if res, err = fn(tx, s, r.now()); err != nil {
			return err
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// setSessionState moves s to state inside tx and journals it.
func setSessionState(tx Tx, s *Session, to SessionState, actor Actor, reason string, now Timestamp) error {
	from := s.State
	s.State = to
	s.LastActivityAt = now
	if to == SessionPassivated {
		s.PassivatedAt = now
	}
	if err := tx.UpdateSession(s); err != nil {
		return wrapWrite("session", s.ID, err)
	}
	return journal(tx, now, EntitySession, s.ID, string(from), string(to), actor, reason, true)
}

// reap asks the job supervisor to reap session's jobs (docs/contract.md "Background jobs: Reaped"), after the
// session's own transaction committed. Without a JobController it does nothing.
func (r *Registry) reap(ctx context.Context, session string, actor Actor) (ReapReport, error) {
	if r.jobs == nil {
		return ReapReport{}, nil
	}
	rep, err := r.jobs.ReapSession(ctx, session, actor)
	if err != nil {
		return rep, fmt.Errorf("reap jobs of session %s: %w", session, err)
	}
	return rep, nil
}

// PassivateSession moves an active session to passivated (passivated_at =
// now) and then reaps its pending and running jobs (docs/contract.md "Background jobs: Reaped") through the
// JobController — also when the session was already passivated, since reaping
// is idempotent. Pending approvals are left alone (R9 cancels them on close
// only). Refused: "already passivated", "session closed".
func (r *Registry) PassivateSession(ctx context.Context, id string, actor Actor) (*Session, ReapReport, Result, error) {
	s, res, err := r.sessionOp(ctx, id, func(tx Tx, s *Session, now Timestamp) (Result, error) {
		switch s.State {
		case SessionPassivated:
			return refuse(tx, now, EntitySession, s.ID, string(s.State), string(SessionPassivated), actor, "already passivated")
		case SessionClosed:
			return refuse(tx, now, EntitySession, s.ID, string(s.State), string(SessionPassivated), actor, "session closed")
		}
		return applied(""), setSessionState(tx, s, SessionPassivated, actor, "passivated", now)
	})
	if err != nil {
		return nil, ReapReport{}, Result{}, err
	}
	if s.State == SessionClosed {
		return s, ReapReport{}, res, nil
	}
	rep, err := r.reap(ctx, s.ID, actor)
	return s, rep, res, err
}

// ResumeSession re-activates a passivated session and returns the jobs its
// passivation reaped (completed at or after passivated_at) that were not yet
// surfaced, setting their surfaced_at in the
// same transaction so the next resume lists none (docs/contract.md "Background jobs: Reaped"). An already active
// session is refused ("already active") but still surfaces its reaped jobs; a
// closed one is refused ("session closed") and surfaces nothing.
func (r *Registry) ResumeSession(ctx context.Context, id string, actor Actor) (*Session, []Job, Result, error) {
	var surfaced []Job
	s, res, err := r.sessionOp(ctx, id, func(tx Tx, s *Session, now Timestamp) (Result, error) {
		surfaced = nil
		// Only jobs the passivation reaped are surfaced: reaped at or after
		// the session was (last) passivated. Jobs an operator reaped earlier
		// (`job reap`, the console's r) were seen when it happened.
		passivatedAt := s.PassivatedAt
		var res Result
		switch s.State {
		case SessionClosed:
			return refuse(tx, now, EntitySession, s.ID, string(s.State), string(SessionActive), actor, "session closed")
		case SessionActive:
			var err error
			if res, err = refuse(tx, now, EntitySession, s.ID, string(s.State), string(SessionActive), actor, "already active"); err != nil {
				return Result{}, err
			}
		default:
			if err := setSessionState(tx, s, SessionActive, actor, "resumed", now); err != nil {
				return Result{}, err
			}
			res = applied("")
		}
		reaped, err := tx.ListJobs(JobFilter{Statuses: []JobStatus{JobReaped}, Session: s.ID})
		if err != nil {
			return Result{}, fmt.Errorf("reaped jobs of session %s: %w", s.ID, err)
		}
		for i := range reaped {
			j := &reaped[i]
			if j.SurfacedAt != 0 || passivatedAt == 0 || j.CompletedAt < passivatedAt {
				continue
			}
			j.SurfacedAt = now
			if err := tx.UpdateJob(j); err != nil {
				return Result{}, wrapWrite("job", j.ID, err)
			}
			if err := journal(tx, now, EntityJob, j.ID, string(j.Status), string(j.Status), actor, "surfaced by session resume", true); err != nil {
				return Result{}, err
			}
			surfaced = append(surfaced, *j)
		}
		return res, nil
	})
	if err != nil {
		return nil, nil, Result{}, err
	}
	return s, surfaced, res, nil
}

// CloseSession closes an active or passivated session for good (only the
// runtime re-opens it, when it resumes the conversation: ReopenSession), cancels its
// pending approvals (docs/contract.md "Approvals expire", each releasing its R6 wait) in the same
// transaction, and then reaps its jobs (J7) through the JobController. A
// closed session is refused ("already closed") and nothing else happens.
func (r *Registry) CloseSession(ctx context.Context, id string, actor Actor) (*Session, ReapReport, Result, error) {
	s, res, err := r.sessionOp(ctx, id, func(tx Tx, s *Session, now Timestamp) (Result, error) {
		if s.State == SessionClosed {
			return refuse(tx, now, EntitySession, s.ID, string(s.State), string(SessionClosed), actor, "already closed")
		}
		if err := setSessionState(tx, s, SessionClosed, actor, "closed", now); err != nil {
			return Result{}, err
		}
		n, err := r.cancelApprovals(tx, ApprovalFilter{Session: s.ID}, "session "+s.ID+" closed", actor, now)
		if err != nil {
			return Result{}, err
		}
		if n > 0 {
			return applied(plural(n, "pending approval", "pending approvals") + " cancelled"), nil
		}
		return applied(""), nil
	})
	if err != nil {
		return nil, ReapReport{}, Result{}, err
	}
	if !res.Applied {
		return s, ReapReport{}, res, nil
	}
	rep, err := r.reap(ctx, s.ID, actor)
	return s, rep, res, err
}

// GetSession returns a session by id or unique prefix with its journal.
func (r *Registry) GetSession(ctx context.Context, id string) (*Session, []Event, error) {
	var (
		s   *Session
		evs []Event
	)
	err := r.store.View(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntitySession, id, r.match)
		if err != nil {
			return err
		}
		if s, err = tx.GetSession(full); err != nil {
			return fmt.Errorf("session %s: %w", full, err)
		}
		evs, err = tx.Events(EntitySession, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return s, evs, nil
}

// ListSessions returns the sessions matching f.
func (r *Registry) ListSessions(ctx context.Context, f SessionFilter) ([]Session, error) {
	var out []Session
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListSessions(f)
		return err
	})
	return out, err
}
