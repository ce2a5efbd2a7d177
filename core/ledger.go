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
