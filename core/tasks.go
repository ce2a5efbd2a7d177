package core

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/termtext"
)

// DefaultCancelError is the error a cancelled task carries when the operator
// gives no reason (docs/contract.md "Cancel always ends the task").
const DefaultCancelError = "Cancelled by operator."

// CreateTask records a new task run (docs/contract.md "Entities and statuses", docs/contract.md "Commands: exit codes and JSON" `task create`). Defaults:
// a generated id (NewTaskID) whose 8-character prefix no other task shares;
// status queued; delivery_status pending with an owner session,
// not_applicable without one; notify_policy done_only; expects_output true for
// cron, false otherwise. Kind, label and task text are redacted (docs/contract.md "Background jobs: Live, redacted log").
// The label is sanitised to one line first (README "The console"). Errors: ErrInvalid for
// a missing or unknown runtime, an unknown notify policy, an unprintable id
// (task, run, source, session, parent: termtext.ValidID), a label over 1 KiB,
// or an id that already exists.
func (r *Registry) CreateTask(ctx context.Context, nt NewTask, actor Actor) (*Task, error) {
	if nt.Runtime == "" {
		return nil, Invalidf("task runtime is required (want one of: subagent, cli, cron, acp)")
	}
	rt, err := ParseRuntime(string(nt.Runtime))
	if err != nil {
		return nil, err
	}
	policy := NotifyDoneOnly
	if nt.NotifyPolicy != "" {
		if policy, err = ParseNotifyPolicy(string(nt.NotifyPolicy)); err != nil {
			return nil, err
		}
	}
	id, generated := nt.ID, nt.ID == ""
	if !generated && strings.TrimSpace(id) != id {
		return nil, Invalidf("task id %q has surrounding whitespace", id)
	}
	if err := checkIDs("task id", nt.ID, "run id", nt.RunID, "source id", nt.SourceID, "owner session", nt.OwnerSession,
		"child session", nt.ChildSession, "parent task id", nt.ParentTaskID); err != nil {
		return nil, err
	}
	if nt.Label, err = cleanLabel("task label", nt.Label); err != nil {
		return nil, err
	}
	expects := rt == RuntimeCron
	if nt.ExpectsOutput != nil {
		expects = *nt.ExpectsOutput
	}
	nt.Kind, nt.Label, nt.Task = r.redactText(nt.Kind), r.redactText(nt.Label), r.redactText(nt.Task)
	delivery := DeliveryNotApplicable
	if nt.OwnerSession != "" {
		delivery = DeliveryPending
	}
	var out *Task
	err = r.store.Update(ctx, func(tx Tx) error {
		now := r.now()
		if generated {
			var err error
			if id, err = newUniqueTaskID(tx, NewTaskID); err != nil {
				return err
			}
		} else if _, err := tx.GetTask(id); err == nil {
			return Invalidf("task id %q already exists", id)
		} else if !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("check task id %s: %w", id, err)
		}
		t := &Task{
			ID: id, Runtime: rt, Kind: nt.Kind, Status: TaskQueued,
			DeliveryStatus: delivery, NotifyPolicy: policy,
			RunID: nt.RunID, SourceID: nt.SourceID,
			OwnerSession: nt.OwnerSession, ChildSession: nt.ChildSession,
			ParentTaskID: nt.ParentTaskID, Label: nt.Label, Task: nt.Task,
			ExpectsOutput: expects, CreatedAt: now,
		}
		if err := tx.InsertTask(t); err != nil {
			if errors.Is(err, ErrConflict) {
				return Invalidf("task id %q already exists", id)
			}
			return wrapWrite("task", id, err)
		}
		out = t
		return journal(tx, now, EntityTask, id, "", string(TaskQueued), actor, "created (runtime "+string(rt)+")", true)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// uniqueTaskPrefix is how many leading characters of a generated task id no
// other task shares when it is created (docs/contract.md "Entities and statuses": an 8-character prefix
// resolves uniquely).
const uniqueTaskPrefix = 8

// newUniqueTaskID returns an id from gen (NewTaskID) whose uniqueTaskPrefix-character prefix
// matches no task in tx (a range scan on the primary key), drawing again on a
// clash: with 60 random bits a second draw is needed about once per million
// tasks created in a registry of a million, a third practically never.
func newUniqueTaskID(tx Tx, gen func() string) (string, error) {
	const attempts = 16
	for range attempts {
		id := gen()
		_, err := tx.ResolveID(EntityTask, id[:uniqueTaskPrefix])
		switch {
		case errors.Is(err, ErrNotFound):
			return id, nil
		case err == nil, errors.Is(err, ErrAmbiguous):
			continue // the prefix is taken: draw again
		default:
			return "", fmt.Errorf("check task id %s: %w", id, err)
		}
	}
	return "", fmt.Errorf("no free task id after %d draws", attempts)
}

// taskChange is one status change of a task, applied by setTaskStatus.
type taskChange struct {
	to     TaskStatus
	reason string      // journal reason (why the change was asked for)
	edit   func(*Task) // extra field edits, applied only when the transition is allowed
}

// setTaskStatus applies one task status change through the transition rule
// (docs/contract.md "Entities and statuses", CanTransitionTask) inside tx: a refusal is journaled with
// applied=false and returned as Result{Applied:false}. An allowed terminal
// transition stamps ended_at (if unset) and cleanup_after = ended_at +
// retention(status) (docs/contract.md "Retention"); an upgrade from lost (inferred) to an
// authoritative status clears the lost-derived error before edit runs and
// says so in the journal (docs/contract.md "Late completion wins"). t is updated in place.
func (r *Registry) setTaskStatus(tx Tx, t *Task, c taskChange, actor Actor, now Timestamp) (Result, error) {
	from := t.Status
	if ok, why := CanTransitionTask(from, c.to, actor); !ok {
		return refuse(tx, now, EntityTask, t.ID, string(from), string(c.to), actor, why)
	}
	reason := c.reason
	if from == TaskLost {
		t.Error = ""
		reason = joinReason(reason, "authoritative "+string(c.to)+" replaces inferred lost; lost-derived error cleared, cleanup_after recomputed")
	}
	t.Status = c.to
	if c.to == TaskRunning && t.StartedAt == 0 {
		t.StartedAt = now
	}
	if c.edit != nil {
		c.edit(t)
	}
	if c.to.Terminal() {
		if t.EndedAt == 0 {
			t.EndedAt = now
		}
		t.CleanupAfter = t.EndedAt.Add(r.th.TaskRetention(c.to))
	}
	if err := tx.UpdateTask(t); err != nil {
		return Result{}, wrapWrite("task", t.ID, err)
	}
	if err := journal(tx, now, EntityTask, t.ID, string(from), string(c.to), actor, reason, true); err != nil {
		return Result{}, err
	}
	return applied(""), nil
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// taskOp runs fn on the resolved task inside one write transaction and returns
// the task as it stands after fn.
func (r *Registry) taskOp(ctx context.Context, id string, fn func(tx Tx, t *Task, now Timestamp) (Result, error)) (*Task, Result, error) {
	var (
		out *Task
		res Result
	)
	err := r.store.Update(ctx, func(tx Tx) error {
		t, err := lookup(tx, EntityTask, id, r.match, tx.GetTask)
		if err != nil {
			return err
		}
		if res, err = fn(tx, t, r.now()); err != nil {
			return err
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// StartTask moves a task queued → running (docs/contract.md "Entities and statuses"), stamping started_at and
// last_event_at and recording summary (redacted, docs/contract.md "Background jobs: Live, redacted log") as its progress
// summary when given. Any other starting status is refused by the transition
// rule.
func (r *Registry) StartTask(ctx context.Context, id, summary string, actor Actor) (*Task, Result, error) {
	summary = r.redactText(summary)
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		return r.setTaskStatus(tx, t, taskChange{
			to: TaskRunning, reason: joinReason("started", summary),
			edit: func(t *Task) {
				t.LastEventAt = now
				if summary != "" {
					t.ProgressSummary = summary
				}
			},
		}, actor, now)
	})
}

// ProgressTask records that an active task is alive: last_event_at = now and
// the progress summary (redacted, docs/contract.md "Background jobs: Live, redacted log") when given (docs/contract.md "Lost work" last
// activity). A terminal task is refused ("task already <status>"); progress
// does not change the status.
func (r *Registry) ProgressTask(ctx context.Context, id, summary string, actor Actor) (*Task, Result, error) {
	summary = r.redactText(summary)
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		st := string(t.Status)
		if !t.Status.Active() {
			return refuse(tx, now, EntityTask, t.ID, st, st, actor, "progress refused: task already "+st)
		}
		t.LastEventAt = now
		if summary != "" {
			t.ProgressSummary = summary
		}
		if err := tx.UpdateTask(t); err != nil {
			return Result{}, wrapWrite("task", t.ID, err)
		}
		return applied(""), journal(tx, now, EntityTask, t.ID, st, st, actor, joinReason("progress", summary), true)
	})
}

// AddTaskOutput adds n (≥ 1) to a task's output_count (docs/contract.md "Result subtypes": each non-empty
// assistant text block counts one output; R7 silent tasks). Output is counted
// in any status, because a late text block is still output. The count
// saturates at MaxCount (SatAdd): it never wraps negative, and the journal
// says "at its maximum" when it stopped there. Errors: ErrInvalid for n < 1.
func (r *Registry) AddTaskOutput(ctx context.Context, id string, n int64, actor Actor) (*Task, Result, error) {
	if n < 1 {
		return nil, Result{}, Invalidf("output count %d must be at least 1", n)
	}
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		var full bool
		t.OutputCount, full = SatAdd(t.OutputCount, n)
		if t.Status.Active() {
			t.LastEventAt = now
		}
		if err := tx.UpdateTask(t); err != nil {
			return Result{}, wrapWrite("task", t.ID, err)
		}
		st := string(t.Status)
		why := fmt.Sprintf("output +%d (output_count %d)", n, t.OutputCount)
		if full {
			why = fmt.Sprintf("output +%d (output_count %d, at its maximum)", n, t.OutputCount)
		}
		return applied(""), journal(tx, now, EntityTask, t.ID, st, st, actor, why, true)
	})
}

// finishPlan is what a Finish asks for, decided before touching the store.
type finishPlan struct {
	to      TaskStatus
	subtype string // result_subtype to record ("" for a plain status)
	errText string
	why     string // "<subtype or reason>" of the task_failed notification
}

// planFinish maps a Finish to a status (docs/contract.md "Result subtypes"):
//   - Status given: that status (succeeded, failed, timed_out or cancelled),
//     error = Finish.Error;
//   - Subtype "success" and !IsError → succeeded;
//   - any "error_*" subtype → failed, result_subtype set, error "Task did not
//     complete: <subtype>";
//   - IsError with any other subtype (notably "success") → failed, error "Task
//     did not complete: <subtype> (is_error: true)", so the text says why a
//     "success" result failed;
//   - any other subtype → ErrInvalid naming it.
//
// A non-empty Finish.Error with a subtype is appended to the error after ": ".
func planFinish(f Finish) (finishPlan, error) {
	if f.Status != "" && f.Subtype != "" {
		return finishPlan{}, Invalidf("finish takes a status or a result subtype, not both (status %q, subtype %q)", f.Status, f.Subtype)
	}
	if f.Status != "" {
		st, err := ParseTaskStatus(string(f.Status))
		if err != nil {
			return finishPlan{}, err
		}
		switch st {
		case TaskSucceeded, TaskFailed, TaskTimedOut, TaskCancelled:
		default:
			return finishPlan{}, Invalidf("finish status %q is not a terminal report (want one of: succeeded, failed, timed_out, cancelled)", st)
		}
		why := f.Error
		if why == "" {
			why = string(st)
		}
		return finishPlan{to: st, errText: f.Error, why: why}, nil
	}
	if f.Subtype == "" {
		return finishPlan{}, Invalidf("finish needs a status or a result subtype")
	}
	withDetail := func(s string) string {
		if f.Error != "" {
			return s + ": " + f.Error
		}
		return s
	}
	switch {
	case strings.HasPrefix(f.Subtype, "error_") || (f.IsError && f.Subtype != "success"):
		return finishPlan{to: TaskFailed, subtype: f.Subtype,
			errText: withDetail("Task did not complete: " + f.Subtype), why: f.Subtype}, nil
	case f.Subtype == "success" && f.IsError:
		label := f.Subtype + " (is_error: true)"
		return finishPlan{to: TaskFailed, subtype: f.Subtype,
			errText: withDetail("Task did not complete: " + label), why: label}, nil
	case f.Subtype == "success":
		return finishPlan{to: TaskSucceeded, subtype: f.Subtype}, nil
	}
	return finishPlan{}, Invalidf("unknown result subtype %q (want success or error_*)", f.Subtype)
}

// FinishTask applies a task's terminal report (docs/contract.md "Result subtypes") through the transition
// rule: a lost task is upgraded (R2: error cleared, cleanup_after recomputed),
// a succeeded or otherwise final task is not changed (Result{Applied:false}).
// Non-empty Finish.Text counts one output. When the task becomes failed here
// (by subtype, is_error, or an explicit failed status such as the CLI's
// "stream ended without terminal result …"), one task_failed notification is
// raised for its owner session — "Task <label or id> did not complete:
// <subtype or reason>", dedup key "task_failed:<id>" — unless its notify
// policy is silent. Finish.Error and Finish.Subtype are redacted (docs/contract.md "Background jobs: Live, redacted log")
// first, so neither the stored error, the journal, the notification nor an
// error message carries a secret. Errors: ErrInvalid for a bad Finish (see
// planFinish).
func (r *Registry) FinishTask(ctx context.Context, id string, f Finish, actor Actor) (*Task, Result, error) {
	f.Error, f.Subtype = r.redactText(f.Error), r.redactText(f.Subtype)
	p, err := planFinish(f)
	if err != nil {
		return nil, Result{}, err
	}
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		reason := "finished"
		if p.subtype != "" {
			reason = "result " + p.subtype
			if f.IsError {
				reason += " (is_error)"
			}
		}
		res, err := r.setTaskStatus(tx, t, taskChange{
			to: p.to, reason: reason,
			edit: func(t *Task) {
				t.LastEventAt = now
				if p.errText != "" || p.to == TaskSucceeded {
					t.Error = p.errText
				}
				if p.subtype != "" {
					t.ResultSubtype = p.subtype
				}
				if f.Text != "" {
					t.OutputCount, _ = SatAdd(t.OutputCount, 1)
				}
			},
		}, actor, now)
		if err != nil || !res.Applied || p.to != TaskFailed || t.NotifyPolicy == NotifySilent {
			return res, err
		}
		return res, notify(tx, &Notification{
			Session: t.OwnerSession, Kind: NotifyTaskFailed, SubjectID: t.ID,
			Text:     fmt.Sprintf("Task %s did not complete: %s", taskName(t), termtext.Exact(p.why, 0)),
			DedupKey: "task_failed:" + t.ID, CreatedAt: now,
		})
	})
}

// taskName is the label of a task, else its id, for notification texts:
// shown exactly (termtext.Exact), so a control in it can neither hide the
// text around it nor start a line of its own.
func taskName(t *Task) string {
	if t.Label != "" {
		return termtext.Exact(t.Label, 0)
	}
	return termtext.Exact(t.ID, 0)
}

// DeliverTask records whether a task's result reached its owner session
// (docs/contract.md "Entities and statuses" delivery status). Refused: the same status ("already <status>"),
// and any change of a not_applicable delivery (no owner session, or a killed
// run, which never announces — docs/contract.md "Kill is not completion"). Errors: ErrInvalid for an unknown
// delivery status.
func (r *Registry) DeliverTask(ctx context.Context, id string, ds DeliveryStatus, actor Actor) (*Task, Result, error) {
	ds, err := ParseDeliveryStatus(string(ds))
	if err != nil {
		return nil, Result{}, err
	}
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		from, to := "delivery_status="+string(t.DeliveryStatus), "delivery_status="+string(ds)
		switch {
		case t.DeliveryStatus == ds:
			return refuse(tx, now, EntityTask, t.ID, from, to, actor, "already "+string(ds))
		case t.DeliveryStatus == DeliveryNotApplicable:
			return refuse(tx, now, EntityTask, t.ID, from, to, actor, "delivery not applicable for this task")
		}
		t.DeliveryStatus = ds
		if err := tx.UpdateTask(t); err != nil {
			return Result{}, wrapWrite("task", t.ID, err)
		}
		return applied(""), journal(tx, now, EntityTask, t.ID, from, to, actor, "delivery reported", true)
	})
}

// CancelTask ends any active task as cancelled with error reason (redacted,
// docs/contract.md "Background jobs: Live, redacted log"; default "Cancelled by operator.") whether or not its run or job
// still exists, then — after that transaction commits — kills what backs it
// (docs/contract.md "Cancel always ends the task"): its run via KillRun (R1) when task.RunID (or, for a cli peer
// row, task.SourceID) names a running run, and its job via the JobController
// (J6) when task.SourceID names an active job. A terminal task answers
// Result{false, "already <status>"} and nothing else happens. An error from
// the follow-ups is returned together with the cancelled task and its Result.
func (r *Registry) CancelTask(ctx context.Context, id, reason string, actor Actor) (*Task, Result, error) {
	if reason = r.redactText(reason); reason == "" {
		reason = DefaultCancelError
	}
	t, res, err := r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		if t.Status.Terminal() {
			return refuse(tx, now, EntityTask, t.ID, string(t.Status), string(TaskCancelled), actor, "already "+string(t.Status))
		}
		return r.setTaskStatus(tx, t, taskChange{
			to: TaskCancelled, reason: "cancel: " + reason,
			edit: func(t *Task) { t.Error = reason },
		}, actor, now)
	})
	if err != nil || !res.Applied {
		return t, res, err
	}
	notes, err := r.cancelBacking(ctx, t, reason, actor)
	res.Reason = strings.Join(notes, "; ")
	return t, res, err
}

// cancelBacking kills the run and cancels the job behind a cancelled task
// (docs/contract.md "Cancel always ends the task") and returns what it did, for the Result.
func (r *Registry) cancelBacking(ctx context.Context, t *Task, reason string, actor Actor) ([]string, error) {
	var (
		run   *Run
		job   *Job
		notes []string
	)
	err := r.store.View(ctx, func(tx Tx) error {
		for _, rid := range []string{t.RunID, cliPeerRunID(t)} {
			if rid == "" || run != nil {
				continue
			}
			got, err := tx.GetRun(rid)
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				return fmt.Errorf("run %s: %w", rid, err)
			case got.Running():
				run = got
			}
		}
		if r.jobs == nil || t.SourceID == "" {
			return nil
		}
		got, err := tx.GetJob(t.SourceID)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return fmt.Errorf("job %s: %w", t.SourceID, err)
		case got.Status.Active():
			job = got
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("task %s cancelled, but looking up what backs it failed: %w", t.ID, err)
	}
	var errs []error
	if run != nil {
		_, kres, err := r.KillRun(ctx, run.RunID, "task "+t.ID+" cancelled: "+reason, actor)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("task %s cancelled, but killing run %s failed: %w", t.ID, run.RunID, err))
		case kres.Applied:
			notes = append(notes, "run "+run.RunID+" killed")
		}
	}
	if job != nil {
		_, jres, err := r.jobs.CancelJob(ctx, job.ID, actor)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("task %s cancelled, but cancelling job %s failed: %w", t.ID, job.ID, err))
		case jres.Applied:
			notes = append(notes, "job "+job.ID+" cancelled")
		}
	}
	return notes, errors.Join(errs...)
}

// cliPeerRunID is the run a cli peer row mirrors through its source_id
// (docs/contract.md "Entities and statuses" mirrored task rows), or "".
func cliPeerRunID(t *Task) string {
	if t.Runtime == RuntimeCLI {
		return t.SourceID
	}
	return ""
}

// MarkTaskLost is the maintenance API (actor sweeper) that infers an active
// task lost (docs/contract.md "Lost work") with error reason (default "marked lost by
// maintenance", redacted, docs/contract.md "Background jobs: Live, redacted log"), stamping ended_at and cleanup_after =
// ended_at + lost retention (R8). A task that is not active is refused.
func (r *Registry) MarkTaskLost(ctx context.Context, id, reason string) (*Task, Result, error) {
	if reason = r.redactText(reason); reason == "" {
		reason = "marked lost by maintenance"
	}
	return r.taskOp(ctx, id, func(tx Tx, t *Task, now Timestamp) (Result, error) {
		return r.setTaskStatus(tx, t, taskChange{
			to: TaskLost, reason: reason,
			edit: func(t *Task) { t.Error = reason },
		}, ActorSweeper, now)
	})
}

// GetTask returns a task by id or unique prefix with its event journal, oldest
// first. Errors: ErrNotFound, *AmbiguousError, ErrInvalid.
func (r *Registry) GetTask(ctx context.Context, id string) (*Task, []Event, error) {
	var (
		t   *Task
		evs []Event
	)
	err := r.store.View(ctx, func(tx Tx) error {
		full, err := resolve(tx, EntityTask, id, r.match)
		if err != nil {
			return err
		}
		if t, err = tx.GetTask(full); err != nil {
			return fmt.Errorf("task %s: %w", full, err)
		}
		evs, err = tx.Events(EntityTask, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return t, evs, nil
}

// ListTasks returns the tasks matching f, newest first.
func (r *Registry) ListTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	var out []Task
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListTasks(f)
		return err
	})
	return out, err
}
