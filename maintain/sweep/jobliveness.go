package sweep

import (
	"context"
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// Job liveness (docs/contract.md "Background jobs: Lost"), the first step of a sweep: a pending or running
// background job whose supervisor is gone is marked lost. The jobs front end
// (*supervisor.Jobs) finds such jobs and marks them — a conditional update plus a
// signal to any process group left behind — so this rule plans from its
// answer and applies through it, outside the sweep's batched transactions.

// jobLostReasoner is the optional part of a JobLiveness that explains why a
// job counts as lost (*supervisor.Jobs has it); the plan shows the reason.
type jobLostReasoner interface {
	JobLostReason(job *core.Job, now core.Timestamp) string
}

// jobLiveness plans J8. A job it marks lost no longer backs its task in the
// later rules (overlay lostJobs).
func (b *swPlanner) jobLiveness(ctx context.Context) error {
	if b.s.jobs == nil {
		return nil
	}
	lost, err := b.s.jobs.LostJobs(ctx)
	if err != nil {
		return err
	}
	for i := range lost {
		j := lost[i]
		reason := "supervisor is gone"
		if jr, ok := b.s.jobs.(jobLostReasoner); ok {
			if why := jr.JobLostReason(&j, b.p.Now); why != "" {
				reason = why
			}
		}
		b.lostJobs[j.ID] = true
		b.add(Action{Rule: RuleJobLiveness, Entity: core.EntityJob, ID: j.ID, From: string(j.Status), To: string(core.JobLost),
			Reason: reason, rev: j.Rev, job: &j})
	}
	return nil
}

// applyJobLost applies one J8 action through JobLiveness, in its own
// transaction: applied, raced, or (on an error before anything was
// written) left planned.
func (s *Sweeper) applyJobLost(ctx context.Context, a *Action) error {
	a.Result = ActionRaced
	if s.jobs == nil || a.job == nil {
		return nil
	}
	ok, err := s.jobs.MarkJobLost(ctx, *a.job, a.Reason)
	if ok {
		a.Result = ActionApplied
	}
	if err != nil {
		if !ok {
			a.Result = ActionPlanned
		}
		return fmt.Errorf("job_liveness job %s: %w", a.ID, err)
	}
	return nil
}

// jobLivenessRule is J8 as the report sees it: a job marked lost counts as
// lost. Apply never calls its apply (see applyJobLost).
type jobLivenessRule struct{}

func (jobLivenessRule) apply(_ *Sweeper, b *applyTx, i int) (bool, error) {
	return false, fmt.Errorf("job liveness %s is applied outside a batch", b.acts[i].ID)
}

func (jobLivenessRule) count(c *Counts, _ *Action) { c.Lost++ }
