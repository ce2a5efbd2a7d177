package core

// The registry's write primitives for use cases that live outside core: the
// job supervisor (package supervisor) writes its job rows in a Store
// transaction of its own, between process steps core knows nothing of.
// Each is the very function core's own use cases call, so a row written from
// outside is journaled, refused, resolved and deduplicated exactly as one
// written inside. The transition rules stay in core (CanTransitionJob): a
// caller asks them before it writes.

// Journal appends one event row in tx: entity's row id went from from to to
// (equal for a note on the row), by actor, for reason; applied false records
// a refusal or an anomaly. at is the event's time (ms). Errors: the Store's,
// wrapped with the entity and id.
func Journal(tx Tx, at Timestamp, entity, id, from, to string, actor Actor, reason string, applied bool) error {
	return journal(tx, at, entity, id, from, to, actor, reason, applied)
}

// Refuse journals a refused change (Journal with applied false) and returns
// the Result reported to its caller: not applied, with reason.
func Refuse(tx Tx, at Timestamp, entity, id, from, to string, actor Actor, reason string) (Result, error) {
	return refuse(tx, at, entity, id, from, to, actor, reason)
}

// Applied is the Result of a change that took effect, with note ("" for
// none) as its reason.
func Applied(note string) Result { return applied(note) }

// ResolveID turns id into the full id of entity's row as m says
// (Registry.IDMatch): MatchWhole returns id itself, MatchPrefix an exact id
// or a unique prefix of at least 4 characters. Errors: ErrInvalid for an
// empty id; with MatchPrefix also ErrNotFound, *AmbiguousError and
// ErrInvalid for a short prefix, wrapped with the entity and id.
func ResolveID(tx Tx, entity, id string, m IDMatch) (string, error) {
	return resolve(tx, entity, id, m)
}

// WrapWrite names the row a failed write was about ("write job <id>: …");
// nil for a nil err.
func WrapWrite(what, id string, err error) error { return wrapWrite(what, id, err) }

// Notify stores n in tx, deduplicated by n.DedupKey (a duplicate is skipped
// without error, so a rule that fires again never notifies twice). The
// caller sets n.CreatedAt. Errors: an empty DedupKey; the Store's, wrapped.
func Notify(tx Tx, n *Notification) error { return notify(tx, n) }

// The registry operations the maintenance rules (package maintain/sweep)
// apply inside their own write transaction: each is the function the
// registry's own use case runs, so a change made by a sweep is checked,
// journaled and notified exactly as one asked for by a runtime or an
// operator.

// ExpireApprovalTx is ExpireApproval for an approval already read in tx: a
// pending approval past its expires_at becomes expired (actor sweeper),
// releases its wait and raises its approval_expired notification. Refused
// (journaled, Result.Applied false): not pending, no expiry, not yet due
// at now (ms). Errors: the Store's, wrapped.
func (r *Registry) ExpireApprovalTx(tx Tx, a *Approval, now Timestamp) (Result, error) {
	return r.expireApproval(tx, a, now)
}

// CancelApprovalTx decides a pending approval read in tx as cancelled by
// actor, for reason, at now (ms): decided_at, decided_by, cleanup_after,
// the journal row and the release of the wait it holds, as every decision
// of the registry. The caller checks it is still pending. Errors: the
// Store's, wrapped.
func (r *Registry) CancelApprovalTx(tx Tx, a *Approval, actor Actor, reason string, now Timestamp) error {
	return r.resolveApproval(tx, a, approvalDecision{to: ApprovalCancelled, reason: reason, decidedBy: string(actor)}, actor, now, nil)
}

// SetTaskStatusTx moves a task read in tx to status to through the
// transition rule (CanTransitionTask), by actor, for reason, at now (ms):
// a refusal is journaled and returned as Result.Applied false; an allowed
// terminal change stamps ended_at and cleanup_after (docs/contract.md
// "Retention"). edit (may be nil) changes more fields, only when the
// transition is allowed. t is updated in place. Errors: the Store's,
// wrapped.
func (r *Registry) SetTaskStatusTx(tx Tx, t *Task, to TaskStatus, reason string, edit func(*Task), actor Actor, now Timestamp) (Result, error) {
	return r.setTaskStatus(tx, t, taskChange{to: to, reason: reason, edit: edit}, actor, now)
}

// TaskName is how notification texts name a task: its label, else its id,
// shown exactly (termtext.Exact) so a control in it can neither hide the
// text around it nor start a line of its own.
func TaskName(t *Task) string { return taskName(t) }
