package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/termtext"
)

// DefaultApprovalPoll is how often WaitApproval checks for a change when
// given no interval: 100 ms, so a decision is noticed well within 300 ms
// while an idle waiter costs a fraction of a percent of a core.
const DefaultApprovalPoll = 100 * time.Millisecond

// RequestApproval records a tool call that needs a human decision (docs/contract.md "Entities and statuses"
// Approval, `approval request`). Command, rationale and cwd are redacted
// (docs/contract.md "Background jobs: Live, redacted log") before anything else; the pattern is VerbChain of the redacted
// command. When a grant matches tool, pattern and session (Tx.FindGrant) the
// approval is approved at once with decided_by "grant:<id>" and the grant's
// scope, and no wait is counted. Otherwise it is pending, and when bound to a running run it
// pauses that run's watchdog: pending_approval_waits + 1 (docs/contract.md "The inactivity watchdog pauses for approvals"). Never
// approved by a grant: an empty pattern, or a command with shell control
// syntax (; & | ` $( < > newline) — a grant for "git status" must not
// approve "git status; rm -rf ~". ExpiresIn > 0 sets expires_at (R9). A
// request whose ToolUseID was seen before returns that first approval as it
// is now (journaled applied=false), so a repeated tool call is answered from
// the recorded decision. Errors: ErrInvalid for a missing session, tool or command, or a negative
// ExpiresIn.
func (r *Registry) RequestApproval(ctx context.Context, na NewApproval, actor Actor) (*Approval, error) {
	if err := checkNewApproval(na); err != nil {
		return nil, err
	}
	// Redact first (docs/contract.md "Background jobs: Live, redacted log", bench/README.md): the pattern, and so any grant made from
	// this approval, is computed from the redacted command, so no secret can
	// land in a pattern or a grant. The verb chain stops at the first flag,
	// path or URL, so an ordinary command's pattern is unchanged. Shell
	// control is judged on the original: a redacted value may have hidden a
	// ';' (token=x;rm …), and refusing a grant is the safe side.
	grantable := !hasShellControl(na.Command)
	na.Command = r.redactText(na.Command)
	na.Rationale = r.redactText(na.Rationale)
	if na.OverBudget != "" {
		na.Rationale = strings.TrimSuffix("over budget: "+na.OverBudget+" — "+na.Rationale, " — ")
		grantable = false
	}
	na.Cwd = r.redactText(na.Cwd)
	pattern := VerbChain(na.Command)
	suggestions, _ := CheckSuggestions(na.Suggestions) // refused ones are not offered
	var out *Approval
	err := r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		replay, other, err := r.replayedCall(tx, na, actor, now)
		if err != nil || replay != nil {
			out = replay
			return err
		}
		a := &Approval{
			ID: NewShortID(), Session: na.Session, RunID: na.RunID, TaskID: na.TaskID,
			Tool: na.Tool, Command: na.Command, Rationale: na.Rationale, Cwd: na.Cwd,
			Pattern: pattern, Status: ApprovalPending, RequestedAt: now, ToolUseID: na.ToolUseID,
			InputHash: na.InputHash, Waiter: na.Waiter, Suggestions: suggestions,
		}
		if na.ExpiresIn > 0 {
			a.ExpiresAt = now.Add(na.ExpiresIn)
		}
		var g *Grant
		if pattern != "" && grantable {
			var err error
			if g, err = tx.FindGrant(na.Tool, pattern, na.Session); err != nil {
				return fmt.Errorf("find grant for %s %q: %w", na.Tool, pattern, err)
			}
		}
		var run *Run
		if g != nil {
			r.decideByGrant(a, g, now)
		} else if run, err = waitingRun(tx, a); err != nil {
			return err
		}
		if err := tx.InsertApproval(a); err != nil {
			return wrapWrite("approval", a.ID, err)
		}
		out = a
		if g != nil {
			return journal(tx, now, EntityApproval, a.ID, "", string(ApprovalApproved), actor, "requested; "+a.Reason, true)
		}
		why := "requested"
		if na.OverBudget != "" {
			why += " (over budget: " + na.OverBudget + ")"
		}
		if other != "" {
			why += "; tool_use_id " + na.ToolUseID + " was asked before for another call (approval " + other +
				"), whose answer does not carry over"
		}
		if err := journal(tx, now, EntityApproval, a.ID, "", string(ApprovalPending), actor, why, true); err != nil {
			return err
		}
		if run == nil {
			return nil
		}
		return r.holdApprovalWait(tx, run, a, actor, now)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkNewApproval refuses a request an operator could not decide on: no
// session, tool or command, a negative expiry, or a session id with
// characters ids may not hold. Errors: ErrInvalid naming the field.
func checkNewApproval(na NewApproval) error {
	switch {
	case na.Session == "":
		return Invalidf("approval request needs a session")
	case strings.TrimSpace(na.Tool) == "":
		return Invalidf("approval request needs a tool")
	case strings.TrimSpace(na.Command) == "":
		return Invalidf("approval request needs a non-empty command")
	case na.ExpiresIn < 0:
		return Invalidf("approval expiry %s is negative", na.ExpiresIn)
	}
	return checkIDs("session id", na.Session)
}

// decideByGrant approves a at once, as grant g decided: its scope, who
// decided ("grant:<id>"), when, and why.
func (r *Registry) decideByGrant(a *Approval, g *Grant, now Timestamp) {
	a.Status = ApprovalApproved
	a.Scope = g.Scope
	a.DecidedBy = "grant:" + g.ID
	a.DecidedAt = now
	a.Reason = fmt.Sprintf("matched %s grant %s (%s %q)", g.Scope, g.ID, g.Tool, g.Pattern)
	a.CleanupAfter = now.Add(r.th.Retention)
}

// waitingRun is the run a pending approval pauses (docs/contract.md: a
// pending approval bound to a running run holds one wait), with
// a.HoldsWait set; nil when a names no run, a run not in the registry, or
// one that holds no wait for it.
func waitingRun(tx Tx, a *Approval) (*Run, error) {
	if a.RunID == "" {
		return nil, nil
	}
	got, err := tx.GetRun(a.RunID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil // bound to a run we do not know: nothing to pause
	case err != nil:
		return nil, fmt.Errorf("run %s: %w", a.RunID, err)
	case holdsWait(a, got):
		a.HoldsWait = true
		return got, nil
	}
	return nil, nil
}

// replayedCall finds the approval of the tool call na repeats: the same
// ToolUseID, Session, Tool and a non-empty InputHash equal to na's (Claude
// Code sends a call again when a session resumes). It returns that approval
// as it is now, after recording na's Waiter on it while pending and
// journaling the repeat; or nil and, when the ToolUseID was used before for
// another call, the id of the newest such approval (for the new request's
// journal). Approvals recorded without an input hash never match.
func (r *Registry) replayedCall(tx Tx, na NewApproval, actor Actor, now Timestamp) (*Approval, string, error) {
	if na.ToolUseID == "" {
		return nil, "", nil
	}
	prev, err := tx.ListApprovals(ApprovalFilter{ToolUseID: na.ToolUseID})
	if err != nil {
		return nil, "", fmt.Errorf("approval for tool_use_id %s: %w", na.ToolUseID, err)
	}
	var out *Approval
	for i := range prev {
		p := &prev[i]
		if na.InputHash != "" && p.InputHash == na.InputHash && p.Session == na.Session && p.Tool == na.Tool {
			out = p
			break
		}
	}
	if out == nil {
		if len(prev) > 0 {
			return nil, prev[0].ID, nil
		}
		return nil, "", nil
	}
	if out.Status == ApprovalPending && na.Waiter != (Waiter{}) && out.Waiter != na.Waiter {
		// The new asker waits now (the first may have been killed): a
		// sweep must judge this one, not withdraw the approval for the
		// first one's death.
		out.Waiter = na.Waiter
		if err := tx.UpdateApproval(out); err != nil {
			return nil, "", fmt.Errorf("approval %s: record its new waiter: %w", out.ID, err)
		}
	}
	return out, "", journal(tx, now, EntityApproval, out.ID, string(out.Status), string(out.Status), actor,
		"tool_use_id "+na.ToolUseID+" requested again; answered from this approval", false)
}

// holdsWait reports whether approval a, requested now, takes a wait on run
// (docs/contract.md "The inactivity watchdog pauses for approvals"): the run is registered no later than the request and has not
// ended. It decides only at request time; the approval's HoldsWait column
// then records the answer, so a resolution releases exactly the waits taken
// (even when the run ended in the same millisecond as the request).
func holdsWait(a *Approval, run *Run) bool {
	return a.RunID == run.RunID && run.StartedAt <= a.RequestedAt &&
		(run.Running() || a.RequestedAt < run.EndedAt)
}

// holdApprovalWait is the R6 increment: one more approval wait pauses the
// run's inactivity watchdog.
func (r *Registry) holdApprovalWait(tx Tx, run *Run, a *Approval, actor Actor, now Timestamp) error {
	from := run.PendingApprovalWaits
	run.PendingApprovalWaits, _ = SatAdd(from, 1)
	if err := tx.UpdateRun(run); err != nil {
		return wrapWrite("run", run.RunID, err)
	}
	return journal(tx, now, EntityRun, run.RunID, waits(from), waits(run.PendingApprovalWaits), actor,
		"approval "+a.ID+" pending: watchdog paused", true)
}

// releaseApprovalWait is the R6 decrement, the one place every resolution
// (approve, deny, expire, cancel) releases the wait its approval holds. When
// the last wait is released from a running run, last_progress_at = now
// (re-armed). A decrement at 0 is refused and journaled as an anomaly
// (applied=false, "approval wait counter underflow …") — never clamped.
func (r *Registry) releaseApprovalWait(tx Tx, run *Run, a *Approval, actor Actor, now Timestamp) error {
	from := run.PendingApprovalWaits
	if from <= 0 {
		return journal(tx, now, EntityRun, run.RunID, waits(from), waits(from-1), actor,
			fmt.Sprintf("approval wait counter underflow: approval %s %s with pending_approval_waits already %d; decrement refused", a.ID, a.Status, from), false)
	}
	run.PendingApprovalWaits--
	reason := "approval " + a.ID + " " + string(a.Status)
	if run.PendingApprovalWaits == 0 && run.Running() {
		run.LastProgressAt = now
		reason += ": last wait resolved, watchdog re-armed"
	}
	if err := tx.UpdateRun(run); err != nil {
		return wrapWrite("run", run.RunID, err)
	}
	return journal(tx, now, EntityRun, run.RunID, waits(from), waits(run.PendingApprovalWaits), actor, reason, true)
}

func waits(n int64) string { return fmt.Sprintf("pending_approval_waits=%d", n) }

// approvalDecision is how a pending approval is resolved.
type approvalDecision struct {
	to        ApprovalStatus
	scope     Scope
	reason    string
	decidedBy string
}

// resolveApproval decides a pending approval inside tx: status, scope,
// reason, decided_at = now, decided_by, cleanup_after = decided_at + retention
// (docs/contract.md "Retention"), the journal row, and the R6 release of the wait it holds. run, when
// non-nil, is the approval's run already read by the caller (KillRun), updated
// in place; otherwise the run is read here.
func (r *Registry) resolveApproval(tx Tx, a *Approval, d approvalDecision, actor Actor, now Timestamp, run *Run) error {
	from := a.Status
	held := a.HoldsWait
	a.HoldsWait = false
	a.Status = d.to
	a.Scope = d.scope
	a.Reason = d.reason
	a.DecidedAt = now
	a.DecidedBy = d.decidedBy
	a.CleanupAfter = now.Add(r.th.Retention)
	if err := tx.UpdateApproval(a); err != nil {
		return wrapWrite("approval", a.ID, err)
	}
	if err := journal(tx, now, EntityApproval, a.ID, string(from), string(d.to), actor, d.reason, true); err != nil {
		return err
	}
	if !held || a.RunID == "" {
		return nil
	}
	if run == nil {
		got, err := tx.GetRun(a.RunID)
		if errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return fmt.Errorf("run %s: %w", a.RunID, err)
		}
		run = got
	}
	return r.releaseApprovalWait(tx, run, a, actor, now)
}

// approvalOp runs fn on the resolved approval inside one write transaction.
func (r *Registry) approvalOp(ctx context.Context, id string, fn func(tx Tx, a *Approval, now Timestamp) (Result, error)) (*Approval, Result, error) {
	var (
		out *Approval
		res Result
	)
	err := r.store.Update(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntityApproval, id, r.match)
		if err != nil {
			return err
		}
		a, err := tx.GetApproval(full)
		if err != nil {
			return fmt.Errorf("approval %s: %w", full, err)
		}
		if res, err = fn(tx, a, r.now()); err != nil {
			return err
		}
		out = a
		return nil
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// decidable refuses a decision on an approval that is no longer pending
// ("already <status>") or that is past its expires_at, which it expires on the
// spot (docs/contract.md "Approvals expire") so a late click never approves an expired request. ok is
// true when the decision may proceed.
func (r *Registry) decidable(tx Tx, a *Approval, to ApprovalStatus, actor Actor, now Timestamp) (bool, Result, error) {
	if a.Status != ApprovalPending {
		res, err := refuse(tx, now, EntityApproval, a.ID, string(a.Status), string(to), actor, "already "+string(a.Status))
		return false, res, err
	}
	if a.ExpiresAt != 0 && now >= a.ExpiresAt {
		if _, err := r.expireApproval(tx, a, now); err != nil {
			return false, Result{}, err
		}
		res, err := refuse(tx, now, EntityApproval, a.ID, string(ApprovalExpired), string(to), actor,
			"already expired (expires_at "+a.ExpiresAt.String()+")")
		return false, res, err
	}
	return true, Result{}, nil
}

// ApproveApproval approves a pending approval with scope (default once) by
// actor, releasing its R6 wait. Scope session or always also remembers a
// Grant for its tool and pattern (session grants only for the approval's
// session; created_by actor) unless an identical grant exists, which is then
// returned; scope once returns a nil Grant. A non-pending approval is refused
// ("already <status>"); one past expires_at is expired instead (docs/contract.md "Approvals expire").
// Errors: ErrInvalid for an unknown scope.
func (r *Registry) ApproveApproval(ctx context.Context, id string, scope Scope, actor Actor) (*Approval, *Grant, Result, error) {
	if scope == "" {
		scope = ScopeOnce
	}
	scope, err := ParseScope(string(scope))
	if err != nil {
		return nil, nil, Result{}, err
	}
	var g *Grant
	a, res, err := r.approvalOp(ctx, id, func(tx Tx, a *Approval, now Timestamp) (Result, error) {
		g = nil
		if ok, res, err := r.decidable(tx, a, ApprovalApproved, actor, now); !ok {
			return res, err
		}
		reason := "approved (" + string(scope) + ")"
		if scope != ScopeOnce {
			var err error
			if g, err = r.ensureGrant(tx, a, scope, actor, now); err != nil {
				return Result{}, err
			}
			reason += "; grant " + g.ID
		}
		return applied(""), r.resolveApproval(tx, a, approvalDecision{to: ApprovalApproved, scope: scope, reason: reason, decidedBy: string(actor)}, actor, now, nil)
	})
	if err != nil {
		return nil, nil, Result{}, err
	}
	return a, g, res, nil
}

// ensureGrant returns the grant remembering a's tool and pattern with scope,
// creating and journaling it unless an identical one exists (docs/contract.md "Entities and statuses" Grant).
func (r *Registry) ensureGrant(tx Tx, a *Approval, scope Scope, actor Actor, now Timestamp) (*Grant, error) {
	session := ""
	if scope == ScopeSession {
		session = a.Session
	}
	all, err := tx.ListGrants()
	if err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	for i := range all {
		g := &all[i]
		if g.Tool == a.Tool && g.Pattern == a.Pattern && g.Scope == scope && g.Session == session {
			return g, nil
		}
	}
	g := &Grant{ID: NewShortID(), Tool: a.Tool, Pattern: a.Pattern, Scope: scope, Session: session,
		CreatedBy: string(actor), CreatedAt: now}
	if err := tx.InsertGrant(g); err != nil {
		return nil, wrapWrite("grant", g.ID, err)
	}
	where := "everywhere"
	if session != "" {
		where = "in session " + session
	}
	return g, journal(tx, now, EntityGrant, g.ID, "", string(scope), actor,
		fmt.Sprintf("%s %q approved %s (from approval %s)", g.Tool, g.Pattern, where, a.ID), true)
}

// DenyApproval denies a pending approval with reason (redacted, docs/contract.md "Background jobs: Live, redacted log"),
// releasing its R6 wait.
// A non-pending approval is refused ("already <status>"); one past
// expires_at is expired instead (docs/contract.md "Approvals expire").
func (r *Registry) DenyApproval(ctx context.Context, id, reason string, actor Actor) (*Approval, Result, error) {
	return r.closeApproval(ctx, id, ApprovalDenied, reason, "denied", actor)
}

// closeApproval ends a decidable approval in status to with reason
// (redacted; fallback when empty), releasing its R6 wait.
func (r *Registry) closeApproval(ctx context.Context, id string, to ApprovalStatus, reason, fallback string, actor Actor) (*Approval, Result, error) {
	return r.approvalOp(ctx, id, func(tx Tx, a *Approval, now Timestamp) (Result, error) {
		if ok, res, err := r.decidable(tx, a, to, actor, now); !ok {
			return res, err
		}
		why := r.redactText(reason)
		if why == "" {
			why = fallback
		}
		return applied(""), r.resolveApproval(tx, a, approvalDecision{to: to, reason: why, decidedBy: string(actor)}, actor, now, nil)
	})
}

// WithdrawApproval cancels a pending approval whose requester stopped
// waiting for it (Claude Code hooks: a PreToolUse hook stopped by a signal,
// when Claude Code interrupts or times out the tool call), releasing its R6
// wait, so an operator never decides a tool call no one will run. reason
// (redacted, docs/contract.md "Background jobs: Live, redacted log") says why. A non-pending approval is refused
// ("already <status>"); one past expires_at is expired instead (docs/contract.md "Approvals expire").
func (r *Registry) WithdrawApproval(ctx context.Context, id, reason string, actor Actor) (*Approval, Result, error) {
	return r.closeApproval(ctx, id, ApprovalCancelled, reason, "withdrawn by its requester", actor)
}

// ExpireApproval is the sweeper API of docs/contract.md "Approvals expire": a pending approval past its
// expires_at becomes expired (actor sweeper), releases its R6 wait, and
// raises one approval_expired notification for its session (dedup key
// "approval_expired:<id>"). Refused: not pending ("already <status>"), no
// expiry, or not yet due.
func (r *Registry) ExpireApproval(ctx context.Context, id string) (*Approval, Result, error) {
	return r.approvalOp(ctx, id, func(tx Tx, a *Approval, now Timestamp) (Result, error) {
		return r.expireApproval(tx, a, now)
	})
}

func (r *Registry) expireApproval(tx Tx, a *Approval, now Timestamp) (Result, error) {
	from, to := string(a.Status), string(ApprovalExpired)
	switch {
	case a.Status != ApprovalPending:
		return refuse(tx, now, EntityApproval, a.ID, from, to, ActorSweeper, "already "+from)
	case a.ExpiresAt == 0:
		return refuse(tx, now, EntityApproval, a.ID, from, to, ActorSweeper, "approval has no expiry")
	case now < a.ExpiresAt:
		return refuse(tx, now, EntityApproval, a.ID, from, to, ActorSweeper, "not yet expired (expires_at "+a.ExpiresAt.String()+")")
	}
	if err := r.resolveApproval(tx, a, approvalDecision{to: ApprovalExpired, reason: "expired at " + a.ExpiresAt.String(), decidedBy: string(ActorSweeper)}, ActorSweeper, now, nil); err != nil {
		return Result{}, err
	}
	return applied(""), notify(tx, &Notification{
		Session: a.Session, Kind: NotifyApprovalExpired, SubjectID: a.ID,
		Text:     fmt.Sprintf("Approval %s expired without a decision: %s %s", a.ID, termtext.Exact(a.Tool, 0), termtext.Exact(a.Command, 0)),
		DedupKey: "approval_expired:" + a.ID, CreatedAt: now,
	})
}

// cancelApprovals cancels every pending approval matching f inside tx (docs/contract.md "Approvals expire": session close, run kill), each releasing its R6 wait. It returns how
// many it cancelled.
func (r *Registry) cancelApprovals(tx Tx, f ApprovalFilter, reason string, actor Actor, now Timestamp) (int, error) {
	reason = r.redactText(reason)
	f.Statuses = []ApprovalStatus{ApprovalPending}
	pending, err := tx.ListApprovals(f)
	if err != nil {
		return 0, fmt.Errorf("pending approvals: %w", err)
	}
	for i := range pending {
		if err := r.resolveApproval(tx, &pending[i], approvalDecision{to: ApprovalCancelled, reason: reason, decidedBy: string(actor)}, actor, now, nil); err != nil {
			return 0, err
		}
	}
	return len(pending), nil
}

// WaitApproval waits until the approval is no longer pending and returns it;
// it returns ctx.Err() when ctx ends first. When its expires_at passes (by
// the registry clock) it expires the approval itself, through the same
// conditional update as a sweep (ExpireApproval: only a still-pending,
// due approval), so a waiter ends at the expiry whether or not a sweeper
// runs; a decision that won the race is returned as it is. Every poll (default 100 ms) it
// reads only the store's DataVersion (SQLite PRAGMA data_version: one tiny
// query that changes when any other connection commits) and re-reads the
// approval only when that changed, or at least every 2 s as a safety net; so
// a waiter notices a decision within about one poll and an idle waiter costs
// well under 1% CPU (bench/hooks measures both). On a store that is told of
// writes (ChangeWaiter: PostgreSQL with a working LISTEN) it also wakes on
// the change notification (at most every approvalWakeGap), so a decision
// committed on any host is read within milliseconds whatever poll is. Reads run in View transactions, so
// waiting never holds the write lock.
func (r *Registry) WaitApproval(ctx context.Context, id string, poll time.Duration) (*Approval, error) {
	if poll <= 0 {
		poll = DefaultApprovalPoll
	}
	t := time.NewTimer(0)
	defer t.Stop()
	full := id
	var (
		seen     int64
		read     bool
		lastRead time.Time
		expires  Timestamp // the approval's expires_at when last read
		changed  <-chan struct{}
	)
	cw, _ := r.store.(ChangeWaiter)
	// next arms the wait for the next round: the poll timer and, when the
	// store is told of writes, the change after version v.
	next := func(v int64, verr error) {
		t.Reset(r.waitStep(poll, expires))
		changed = nil
		if cw != nil && verr == nil {
			changed = cw.ChangedAfter(v)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		case <-changed:
			// Every write on every host notifies: on a busy registry read
			// the approval at most every approvalWakeGap, not per write.
			if wait := approvalWakeGap - time.Since(lastRead); read && wait > 0 {
				changed = nil
				t.Reset(wait)
				continue
			}
		}
		v, verr := r.store.DataVersion(ctx)
		due := expires != 0 && r.now() >= expires
		if read && !due && verr == nil && v == seen && time.Since(lastRead) < approvalWaitReread {
			next(v, verr)
			continue
		}
		var a *Approval
		err := r.store.View(ctx, func(tx Tx) error {
			var err error
			if full, err = resolve(tx, EntityApproval, full, r.match); err != nil {
				return err
			}
			a, err = tx.GetApproval(full)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if a.Status != ApprovalPending {
			return a, nil
		}
		if a.Overdue(r.now()) {
			got, _, err := r.ExpireApproval(ctx, full)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, err
			}
			if got.Status != ApprovalPending {
				return got, nil
			}
		}
		expires = a.ExpiresAt
		seen, read, lastRead = v, verr == nil, time.Now()
		next(v, verr)
	}
}

// waitStep is WaitApproval's next sleep: poll, or less when expires (0:
// none) comes sooner by the registry clock, so the waiter expires the
// approval at its expiry, not up to a poll later.
func (r *Registry) waitStep(poll time.Duration, expires Timestamp) time.Duration {
	if expires == 0 {
		return poll
	}
	return max(0, min(poll, expires.Sub(r.now())))
}

// approvalWaitReread bounds how long WaitApproval trusts an unchanged
// DataVersion before reading the approval anyway.
const approvalWaitReread = 2 * time.Second

// approvalWakeGap is the least time between two reads of the approval that
// change notifications trigger (ChangeWaiter): a decision is still read
// within milliseconds on a quiet registry, and a waiter on a busy one reads
// at most ten times a second, as with the default poll.
const approvalWakeGap = 100 * time.Millisecond

// GetApproval returns an approval by id or unique prefix with its journal,
// as of the registry clock's now (Approval.AsOf: an overdue approval reads
// expired; its journal has the expiry once it is recorded).
func (r *Registry) GetApproval(ctx context.Context, id string) (*Approval, []Event, error) {
	var (
		a   *Approval
		evs []Event
	)
	err := r.store.View(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntityApproval, id, r.match)
		if err != nil {
			return err
		}
		if a, err = tx.GetApproval(full); err != nil {
			return fmt.Errorf("approval %s: %w", full, err)
		}
		evs, err = tx.Events(EntityApproval, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	*a = a.AsOf(r.now())
	return a, evs, nil
}

// ListApprovals returns the approvals matching f, newest first, as of the
// registry clock's now: an overdue approval reads expired (Approval.AsOf),
// so it matches a filter on expired and not one on pending.
func (r *Registry) ListApprovals(ctx context.Context, f ApprovalFilter) ([]Approval, error) {
	var out []Approval
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListApprovals(overdueQuery(f))
		return err
	})
	if err != nil {
		return nil, err
	}
	return asOfFilter(out, f, r.now()), nil
}

// ListGrants returns every grant.
func (r *Registry) ListGrants(ctx context.Context) ([]Grant, error) {
	var out []Grant
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListGrants()
		return err
	})
	return out, err
}

// RevokeGrant deletes a grant (by id or unique prefix) and journals it; later
// requests are no longer approved by it. Returns the deleted grant.
func (r *Registry) RevokeGrant(ctx context.Context, id string, actor Actor) (*Grant, error) {
	var out *Grant
	err := r.store.Update(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntityGrant, id, r.match)
		if err != nil {
			return err
		}
		g, err := tx.GetGrant(full)
		if err != nil {
			return fmt.Errorf("grant %s: %w", full, err)
		}
		if err := tx.DeleteGrant(full); err != nil {
			return wrapWrite("grant", full, err)
		}
		out = g
		return journal(tx, r.now(), EntityGrant, full, string(g.Scope), "revoked", actor,
			fmt.Sprintf("revoked %s %q", g.Tool, g.Pattern), true)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
