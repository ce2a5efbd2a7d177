package sweep

import (
	"errors"

	"github.com/clawpit/clawpit/core"
)

// Approval expiry (docs/contract.md "Approvals expire"), the fifth step of a sweep: a pending approval
// past its expires_at becomes expired, which releases its run's approval
// wait (R6) and raises one approval_expired notification.

// expiry plans R9.
func (b *swPlanner) expiry(tx core.Tx) error {
	exp, err := tx.SweepExpiredApprovals(b.p.Now, b.limit)
	if err != nil {
		return err
	}
	b.capped(len(exp))
	for _, a := range exp {
		b.add(Action{Rule: RuleApprovalExpiry, Entity: core.EntityApproval, ID: a.ID, From: string(a.Status), To: string(core.ApprovalExpired),
			Reason: "expires_at " + a.ExpiresAt.String() + " passed", rev: a.Rev})
	}
	return nil
}

// expiryRule is R9 in Apply and the report.
type expiryRule struct{}

func (expiryRule) count(c *Counts, _ *Action) { c.Expired++ }

// apply expires a pending approval through the registry's rule when it is
// unchanged since the plan and still past its expiry.
func (expiryRule) apply(s *Sweeper, b *applyTx, i int) (bool, error) {
	ap, err := b.pendingAsPlanned(i)
	if ap == nil || ap.ExpiresAt == 0 || b.now < ap.ExpiresAt {
		return false, err
	}
	res, err := s.reg.ExpireApprovalTx(b.tx, ap, b.now)
	return res.Applied, err
}

// pendingAsPlanned is the approval of acts[i] when it is still pending and
// unchanged since the plan (same revision); nil when it raced: gone,
// decided or changed.
func (b *applyTx) pendingAsPlanned(i int) (*core.Approval, error) {
	a := &b.acts[i]
	ap, err := b.tx.GetApproval(a.ID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if ap.Rev != a.rev || ap.Status != core.ApprovalPending {
		return nil, nil
	}
	return ap, nil
}
