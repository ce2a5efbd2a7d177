package sweep

import (
	"fmt"
	"path/filepath"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// Retention (docs/contract.md "Retention"), the seventh step of a sweep. Terminal tasks keep
// cleanup_after = ended_at + retention(status): 7 days, 24 hours for lost.
// Ended runs, decided approvals and delivered notifications: 7 days;
// terminal jobs: 24 hours, and pruning a job deletes its log directory first
// (a failed delete keeps the row for a later sweep). The sweep stamps a
// missing cleanup_after and prunes rows past it, with their journal.

// swRetentionEntities are the tables retention covers (docs/contract.md "Retention"), in the
// order they are stamped and pruned.
var swRetentionEntities = []string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityNotification, core.EntityJob}

// retention plans R8: stamp cleanup_after where it is missing (and prune at
// once when that stamp is already past), then prune rows past cleanup_after.
func (b *swPlanner) retention(tx core.Tx) error {
	now := b.p.Now
	for _, ent := range swRetentionEntities {
		rows, err := tx.SweepUnstamped(ent, b.limit)
		if err != nil {
			return fmt.Errorf("unstamped %s rows: %w", ent, err)
		}
		b.capped(len(rows))
		for _, r := range rows {
			keep := b.th.RetentionFor(ent, r.Status)
			cleanup := r.EndAt.Add(keep)
			dep := b.add(Action{Rule: RuleStamp, Entity: ent, ID: r.ID, From: "cleanup_after=none", To: "cleanup_after=" + cleanup.String(),
				Reason: fmt.Sprintf("%s, %s %s, kept %s", r.Status, endVerb(ent), r.EndAt, termtext.Duration(keep)), rev: r.Rev, at: cleanup})
			if cleanup <= now {
				rev := r.Rev
				if rev != 0 {
					rev++
				}
				b.pruned[ent+"/"+r.ID] = true
				b.add(Action{Rule: RulePrune, Entity: ent, ID: r.ID, From: r.Status, To: "pruned",
					Reason: "cleanup_after " + cleanup.String() + " passed", rev: rev, dep: dep, logPath: r.LogPath})
			}
		}
		due, err := tx.SweepDue(ent, now, b.limit)
		if err != nil {
			return fmt.Errorf("due %s rows: %w", ent, err)
		}
		b.capped(len(due))
		for _, r := range due {
			if b.pruned[ent+"/"+r.ID] {
				continue
			}
			b.pruned[ent+"/"+r.ID] = true
			b.add(Action{Rule: RulePrune, Entity: ent, ID: r.ID, From: r.Status, To: "pruned",
				Reason: "cleanup_after " + r.CleanupAfter.String() + " passed", rev: r.Rev, logPath: r.LogPath})
		}
		if ent == core.EntityTask {
			for _, a := range b.lostPrunes {
				b.add(a)
			}
		}
	}
	return nil
}

// stampRule is the R8 stamp in Apply and the report.
type stampRule struct{}

func (stampRule) count(c *Counts, _ *Action) { c.Stamped++ }

// apply stamps cleanup_after when the row is unchanged and still unstamped,
// and journals it (notifications keep no journal).
func (stampRule) apply(_ *Sweeper, b *applyTx, i int) (bool, error) {
	a := &b.acts[i]
	ok, err := b.tx.SweepStamp(a.Entity, a.ID, a.rev, a.at)
	if err != nil || !ok || a.Entity == core.EntityNotification {
		return ok, err
	}
	return true, core.Journal(b.tx, b.now, a.Entity, a.ID, a.From, a.To, core.ActorSweeper, "retention: "+a.Reason, true)
}

// pruneRule is the R8 prune in Apply and the report.
type pruneRule struct{}

func (pruneRule) count(c *Counts, _ *Action) { c.Pruned++ }

// apply deletes the rows of the run of planned prunes of one entity from
// acts[i] on (up to maxRun) that are unchanged and still due, in one
// statement. A row's journal goes with it: nothing is written about a
// prune. A prune whose prerequisite (its stamp, or its lost) did not apply
// is raced.
func (pruneRule) apply(_ *Sweeper, b *applyTx, i int) (bool, error) {
	ent := b.acts[i].Entity
	idx := b.run(i, func(a *Action) bool { return a.Rule == RulePrune && a.Entity == ent })
	var keys []core.RowKey
	var keyed []int // indexes into idx of keys
	for j, k := range idx {
		if a := &b.acts[k]; b.depApplied(a) {
			keys = append(keys, core.RowKey{ID: a.ID, Rev: a.rev})
			keyed = append(keyed, j)
		}
	}
	applied := make([]bool, len(idx))
	if len(keys) > 0 {
		ok, err := b.tx.SweepPrune(ent, keys, b.now)
		if err != nil {
			return false, err
		}
		for m, j := range keyed {
			applied[j] = ok[m]
		}
	}
	b.decide(idx, applied)
	return b.acts[i].Result == ActionApplied, nil
}

// removeJobLogs deletes the log of every job prune in acts before their
// transaction runs: a log that cannot be deleted keeps its row (the action
// fails, and a prune_failed finding says why). It returns findings with
// those appended.
func (s *Sweeper) removeJobLogs(acts []Action, findings []Finding) []Finding {
	for i := range acts {
		a := &acts[i]
		if a.Rule != RulePrune || a.Entity != core.EntityJob || a.logPath == "" || a.Result != ActionPlanned {
			continue
		}
		if err := s.removeJobLog(a.ID, a.logPath); err != nil {
			a.Result = ActionFailed
			findings = append(findings, Finding{Kind: FindingPruneFailed, Severity: SeverityError, Entity: core.EntityJob, ID: a.ID,
				Detail: "log directory not deleted, row kept: " + err.Error()})
		}
	}
	return findings
}

// removeJobLog deletes a pruned job's log: its directory <jobs>/<id>/ when
// the log lives in one named after the job, else just the log file.
func (s *Sweeper) removeJobLog(id, logPath string) error {
	dir := filepath.Dir(logPath)
	if filepath.Base(dir) == id {
		return s.removeAll(dir)
	}
	return s.removeAll(logPath)
}
