package sweep

import (
	"errors"
	"fmt"

	"github.com/clawpit/clawpit/core"
)

// Silent scheduled tasks (docs/contract.md "Silent scheduled tasks"), the sixth step of a sweep: a task that
// expects output and ended succeeded or failed within the silent window
// with no output raises one task_silent notification. The dedup key
// "task_silent:<id>" makes it durable: a restart never re-notifies.

// silentText is the task_silent notification text (docs/contract.md "Silent scheduled tasks").
func silentText(t *core.Task) string {
	return fmt.Sprintf("Scheduled task %s produced no output and was marked %s", core.TaskName(t), t.Status)
}

// silent plans R7.
func (b *swPlanner) silent(tx core.Tx) error {
	ts, err := tx.SweepSilentTasks(b.p.Now.Add(-b.th.SilentWindow), b.limit)
	if err != nil {
		return err
	}
	b.capped(len(ts))
	for i := range ts {
		t := &ts[i]
		b.add(Action{Rule: RuleSilentTask, Entity: core.EntityTask, ID: t.ID, From: string(t.Status), To: string(t.Status),
			Reason: silentText(t), rev: t.Rev})
	}
	return nil
}

// silentRule is R7 in Apply and the report.
type silentRule struct{}

func (silentRule) count(c *Counts, _ *Action) { c.Silent++ }

// apply raises the task_silent notification if the task still qualifies
// and nobody raised it first.
func (silentRule) apply(_ *Sweeper, b *applyTx, i int) (bool, error) {
	a := &b.acts[i]
	t, err := b.tx.GetTask(a.ID)
	if errors.Is(err, core.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !t.ExpectsOutput || t.OutputCount != 0 || (t.Status != core.TaskSucceeded && t.Status != core.TaskFailed) {
		return false, nil
	}
	text := silentText(t)
	ok, err := b.tx.InsertNotification(&core.Notification{
		Session: t.OwnerSession, Kind: core.NotifyTaskSilent, SubjectID: t.ID, Text: text,
		DedupKey: "task_silent:" + t.ID, CreatedAt: b.now,
	})
	if err != nil || !ok {
		return false, err
	}
	st := string(t.Status)
	return true, core.Journal(b.tx, b.now, core.EntityTask, t.ID, st, st, core.ActorSweeper, "task_silent notification: "+text, true)
}
