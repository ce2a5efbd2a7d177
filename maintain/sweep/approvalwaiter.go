package sweep

import (
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// Approval waiters, the step after approval expiry in a sweep: a pending
// approval whose waiter (Approval.Waiter: the gated hook that answers its
// runtime, Claude Code hooks: PreToolUse) is a process on this host that has
// exited is cancelled, releasing its run's approval wait (docs/contract.md "The inactivity watchdog pauses for approvals"). A hook
// stopped by a signal withdraws its approval itself; one killed outright
// (SIGKILL, the OOM killer) cannot, and without this rule its approval would
// stay pending until it expires, for an operator to approve a tool call no
// one will run. Other hosts' waiters are theirs to judge (their pids mean
// nothing here), as with job liveness.

// waiterScope is whose waiters this sweep judges and how: those on its host
// (the jobs front end's, else HostName) in its boot and pid namespace. ok
// is false where that cannot be told (see WaiterLiveness).
func (s *Sweeper) waiterScope() (wl core.WaiterLiveness, host, ns string, ok bool) {
	wl, ok = s.jobs.(core.WaiterLiveness)
	if !ok {
		return nil, "", "", false
	}
	ns, ok = wl.Namespace()
	if !ok {
		return nil, "", "", false
	}
	if ho, hok := s.jobs.(hostOwner); hok && ho.Host() != "" {
		return wl, ho.Host(), ns, true
	}
	return wl, core.HostName(), ns, true
}

// waiters plans the rule. An approval already due for expiry is left to
// the expiry step; a waiter in another namespace (a container sharing the
// host's name, the host before a reboot) to its expiry.
func (b *swPlanner) waiters(tx core.Tx) error {
	wl, host, ns, ok := b.s.waiterScope()
	if !ok {
		return nil
	}
	aps, err := tx.SweepWaitedApprovals(host, b.limit)
	if err != nil {
		return err
	}
	b.capped(len(aps))
	for _, a := range aps {
		if a.Waiter.NS != ns || a.ExpiresAt != 0 && b.p.Now >= a.ExpiresAt || !wl.WaiterGone(a.Waiter) {
			continue
		}
		b.add(Action{Rule: RuleApprovalWaiter, Entity: core.EntityApproval, ID: a.ID, From: string(a.Status), To: string(core.ApprovalCancelled),
			Reason: waiterGoneReason(a.Waiter), rev: a.Rev})
	}
	return nil
}

// waiterGoneReason is the recorded reason of a withdrawn approval.
func waiterGoneReason(w core.Waiter) string {
	return fmt.Sprintf("the hook waiting for it is gone (process %d on %s exited before a decision)", w.PID, w.Host)
}

// waiterRule is the rule in Apply and the report.
type waiterRule struct{}

func (waiterRule) count(c *Counts, _ *Action) { c.Withdrawn++ }

// apply cancels the approval when it is unchanged since the plan, still
// pending and not yet due for expiry (expiry then takes it). The waiter is
// not looked at again: an exited process does not come back.
func (waiterRule) apply(s *Sweeper, b *applyTx, i int) (bool, error) {
	ap, err := b.pendingAsPlanned(i)
	if ap == nil || ap.ExpiresAt != 0 && b.now >= ap.ExpiresAt {
		return false, err
	}
	err = s.reg.CancelApprovalTx(b.tx, ap, core.ActorSweeper, b.acts[i].Reason, b.now)
	return err == nil, err
}
