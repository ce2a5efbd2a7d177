package core

import "slices"

// Expiry is a fact of time (docs/contract.md "Approvals expire"): an approval past its expires_at is
// expired whether or not a sweep has recorded it yet. The writers that
// wait for one (WaitApproval) record the expiry themselves; the reads
// (Registry.GetApproval, Registry.ListApprovals) show it expired without
// writing, and the record follows at the next sweep, waiter or decision
// attempt (a decision on it expires it on the spot).

// Overdue reports whether a is pending with an expires_at at or before now:
// expired in fact, not yet in the registry.
func (a *Approval) Overdue(now Timestamp) bool {
	return a.Status == ApprovalPending && a.ExpiresAt != 0 && now >= a.ExpiresAt
}

// AsOf returns a as a reader sees it at now: an overdue approval (Overdue)
// reads expired, decided at its expires_at with the reason the sweeper
// would record ("expired at <expires_at>") and no decider. Its HoldsWait
// is left as stored: the run's wait is released when the expiry is
// recorded. Any other approval is returned as it is.
func (a Approval) AsOf(now Timestamp) Approval {
	if !a.Overdue(now) {
		return a
	}
	a.Status, a.DecidedAt, a.Reason = ApprovalExpired, a.ExpiresAt, "expired at "+a.ExpiresAt.String()
	return a
}

// overdueQuery is the store filter that answers f once overdue approvals
// read expired: a filter on expired also reads pending rows (some may be
// overdue), and a filter on either status reads without a limit, which
// asOfFilter applies after the statuses are known.
func overdueQuery(f ApprovalFilter) ApprovalFilter {
	pend, exp := slices.Contains(f.Statuses, ApprovalPending), slices.Contains(f.Statuses, ApprovalExpired)
	if !pend && !exp {
		return f
	}
	if exp && !pend {
		f.Statuses = append(slices.Clone(f.Statuses), ApprovalPending)
	}
	f.Limit = 0
	return f
}

// asOfFilter turns aps, read with overdueQuery(f), into the answer to f at
// now: each approval as of now (AsOf), kept when its status is one f asks
// for, at most f.Limit of them (newest first, as read).
func asOfFilter(aps []Approval, f ApprovalFilter, now Timestamp) []Approval {
	out := aps[:0]
	for _, a := range aps {
		a = a.AsOf(now)
		if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, a.Status) {
			continue
		}
		out = append(out, a)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}
