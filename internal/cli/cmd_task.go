package cli

// `clawpit task`: create, start, progress, output, finish, deliver, cancel,
// track (cmd_track.go), list, show.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// taskCreateFlags are the flags of `task create`, shared with `task track`.
type taskCreateFlags struct {
	id, runtime, runID, sourceID, session, child, parent, kind, label, task, notify string
	expects, noExpects                                                              bool
}

// taskCreateFlagNames are the flags add registers besides --id.
var taskCreateFlagNames = []string{"runtime", "run-id", "source-id", "session", "child-session",
	"parent-task", "kind", "label", "task", "notify", "expects-output", "no-expects-output"}

func (f *taskCreateFlags) add(cmd *cobra.Command, withID bool) {
	fl := cmd.Flags()
	if withID {
		fl.StringVar(&f.id, "id", "", "task id (default: 12 random characters, its first 8 a unique prefix)")
	}
	fl.StringVar(&f.runtime, "runtime", "", "what runs the task: subagent, cli, cron, acp")
	fl.StringVar(&f.runID, "run-id", "", "the subagent run this task mirrors")
	fl.StringVar(&f.sourceID, "source-id", "", "source id (a cli peer row's run id, or a job id)")
	fl.StringVar(&f.session, "session", "", "owner session (delivery pending when set)")
	fl.StringVar(&f.child, "child-session", "", "child session doing the work")
	fl.StringVar(&f.parent, "parent-task", "", "parent task id")
	fl.StringVar(&f.kind, "kind", "", "free-text kind")
	fl.StringVar(&f.label, "label", "", "human label")
	fl.StringVar(&f.task, "task", "", "what was asked")
	fl.StringVar(&f.notify, "notify", "", "notify policy: done_only (default), state_changes, silent")
	fl.BoolVar(&f.expects, "expects-output", false, "the task is expected to produce output (default for cron)")
	fl.BoolVar(&f.noExpects, "no-expects-output", false, "the task is not expected to produce output")
}

// build validates the flags into a NewTask (ErrInvalid naming the bad value).
func (f *taskCreateFlags) build(cmd *cobra.Command) (core.NewTask, error) {
	if err := nonEmpty(cmd, "id", "runtime", "run-id", "source-id", "session", "child-session", "parent-task", "notify"); err != nil {
		return core.NewTask{}, err
	}
	rt, err := core.ParseRuntime(f.runtime)
	if err != nil {
		return core.NewTask{}, err
	}
	nt := core.NewTask{
		ID: f.id, Runtime: rt, RunID: f.runID, SourceID: f.sourceID,
		OwnerSession: f.session, ChildSession: f.child, ParentTaskID: f.parent,
		Kind: f.kind, Label: f.label, Task: f.task,
	}
	if f.notify != "" {
		if nt.NotifyPolicy, err = core.ParseNotifyPolicy(f.notify); err != nil {
			return core.NewTask{}, err
		}
	}
	switch {
	case f.expects && f.noExpects:
		return core.NewTask{}, core.Invalidf("--expects-output and --no-expects-output contradict each other")
	case f.expects:
		nt.ExpectsOutput = new(true)
	case f.noExpects:
		nt.ExpectsOutput = new(false)
	}
	return nt, nil
}

func taskCommand(a *app) *cobra.Command {
	c := groupCommand("task", "Task runs: create, start, progress, output, finish, deliver, cancel, track, list, show")
	c.AddCommand(taskCreateCommand(a),
		taskStatusCmd(a, "start ID", "Mark a task running (queued → running)", runTaskStart),
		taskStatusCmd(a, "progress ID", "Record that a task is alive (last_event_at = now)", runTaskProgress),
		taskOutputCommand(a), taskFinishCommand(a), taskDeliverCommand(a), taskCancelCommand(a),
		trackCommand(a), taskListCommand(a),
		showCommand(a, "task", "show ID", "Show a task and its event journal", (*core.Registry).GetTask, taskFields))
	return c
}

func taskCreateCommand(a *app) *cobra.Command {
	var cf taskCreateFlags
	create := &cobra.Command{
		Use:   "create --runtime R [flags]",
		Short: "Record a new task (prints its id)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlag(cmd, "runtime"); err != nil {
				return err
			}
			nt, err := cf.build(cmd)
			if err != nil {
				return err
			}
			return runTaskCreate(cmd.Context(), a, taskCreateOptions{Task: nt})
		},
	}
	cf.add(create, true)
	return create
}

// taskCreateOptions are `task create`'s flags, validated by
// taskCreateFlags.build.
type taskCreateOptions struct {
	Task core.NewTask
}

// runTaskCreate records o.Task as the runtime, creating a missing registry,
// and prints the new task's id (its mutation object with --json).
func runTaskCreate(ctx context.Context, a *app, o taskCreateOptions) error {
	reg, err := a.registryCreate(ctx)
	if err != nil {
		return err
	}
	t, err := reg.CreateTask(ctx, o.Task, core.ActorRuntime)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(mutationJSON(core.Result{Applied: true}, "task", t))
	}
	fmt.Fprintln(a.stdout, termtext.Exact(t.ID, 0))
	return nil
}

// taskStatusOptions are `task start|progress ID [--summary S]`.
type taskStatusOptions struct {
	ID      string // full task id or a unique prefix
	Summary string // progress summary; "" keeps the current one
}

// runTaskStart marks task o.ID running (queued → running) as the runtime.
func runTaskStart(ctx context.Context, a *app, o taskStatusOptions) error {
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.StartTask(ctx, id, o.Summary, core.ActorRuntime)
	}, taskDone)
}

// runTaskProgress records that task o.ID is alive (last_event_at = now).
func runTaskProgress(ctx context.Context, a *app, o taskStatusOptions) error {
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.ProgressTask(ctx, id, o.Summary, core.ActorRuntime)
	}, taskDone)
}

// taskStatusCmd builds `task start|progress ID [--summary S]`.
func taskStatusCmd(a *app, use, short string, run func(context.Context, *app, taskStatusOptions) error) *cobra.Command {
	var o taskStatusOptions
	cmd := &cobra.Command{
		Use:   use + " [--summary S]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return run(cmd.Context(), a, o)
		},
	}
	cmd.Flags().StringVar(&o.Summary, "summary", "", "progress summary")
	return cmd
}

func taskOutputCommand(a *app) *cobra.Command {
	var o taskOutputOptions
	output := &cobra.Command{
		Use:   "output ID",
		Short: "Count output produced by a task (output_count += N)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return runTaskOutput(cmd.Context(), a, o)
		},
	}
	output.Flags().Int64Var(&o.Count, "count", 1, "number of outputs to add (1 or more; output_count stops at 9223372036854775807, never wraps)")
	return output
}

// taskOutputOptions are `task output ID [--count N]`.
type taskOutputOptions struct {
	ID    string
	Count int64 // outputs to add, 1 or more
}

// runTaskOutput adds o.Count to task o.ID's output_count (saturating at the
// int64 maximum). A count below 1 is ErrInvalid.
func runTaskOutput(ctx context.Context, a *app, o taskOutputOptions) error {
	if o.Count < 1 {
		return core.Invalidf("--count %d must be at least 1", o.Count)
	}
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.AddTaskOutput(ctx, id, o.Count, core.ActorRuntime)
	}, func(t *core.Task) string { return fmt.Sprintf("output_count %d", t.OutputCount) })
}

func taskFinishCommand(a *app) *cobra.Command {
	var o taskFinishOptions
	finish := &cobra.Command{
		Use:   "finish ID (--status S | --subtype T [--is-error] [--text X]) [--error E]",
		Short: "Report a task's terminal status or Claude result subtype (a succeeded task stays succeeded)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			switch {
			case fl.Changed("status") && fl.Changed("subtype"):
				return usageError{errors.New("give --status or --subtype, not both")}
			case !fl.Changed("status") && !fl.Changed("subtype"):
				return usageError{fmt.Errorf("required flag --status or --subtype not set (see '%s --help')", cmd.CommandPath())}
			case fl.Changed("status") && (fl.Changed("is-error") || fl.Changed("text")):
				return usageError{errors.New("--is-error and --text go with --subtype, not --status")}
			}
			if err := nonEmpty(cmd, "status", "subtype"); err != nil {
				return err
			}
			o.ID = args[0]
			return runTaskFinish(cmd.Context(), a, o)
		},
	}
	fl := finish.Flags()
	fl.StringVar(&o.Status, "status", "", "terminal status: succeeded, failed, timed_out, cancelled")
	fl.StringVar(&o.Subtype, "subtype", "", "Claude / Agent SDK result subtype: success, error_max_turns, …")
	fl.BoolVar(&o.IsError, "is-error", false, "the result had is_error: true (fails even a success subtype)")
	fl.StringVar(&o.Text, "text", "", "result text (counts one output when non-empty)")
	fl.StringVar(&o.Error, "error", "", "error text")
	return finish
}

// taskFinishOptions are `task finish`: exactly one of Status and Subtype is
// set (the command refuses both or neither as a usage error).
type taskFinishOptions struct {
	ID      string
	Status  string // terminal status: succeeded, failed, timed_out, cancelled
	Subtype string // Claude result subtype: success or error_*
	IsError bool   // the result had is_error: true
	Text    string // result text; non-empty counts one output
	Error   string // error text
}

// finish validates o into a core.Finish: a non-terminal status or an unknown
// subtype without IsError is ErrInvalid.
func (o taskFinishOptions) finish() (core.Finish, error) {
	f := core.Finish{Subtype: o.Subtype, IsError: o.IsError, Text: o.Text, Error: o.Error}
	if o.Status == "" {
		if f.Subtype != "success" && !strings.HasPrefix(f.Subtype, "error_") && !f.IsError {
			return core.Finish{}, core.Invalidf("unknown result subtype %q (want success or error_*, or pass --is-error)", f.Subtype)
		}
		return f, nil
	}
	st, err := core.ParseTaskStatus(o.Status)
	if err != nil {
		return core.Finish{}, err
	}
	switch st {
	case core.TaskSucceeded, core.TaskFailed, core.TaskTimedOut, core.TaskCancelled:
	default:
		return core.Finish{}, core.Invalidf("finish status %q is not a terminal report (want one of: succeeded, failed, timed_out, cancelled)", st)
	}
	f.Status = st
	return f, nil
}

// runTaskFinish reports task o.ID's terminal status or result subtype as the
// runtime; a succeeded task stays succeeded.
func runTaskFinish(ctx context.Context, a *app, o taskFinishOptions) error {
	f, err := o.finish()
	if err != nil {
		return err
	}
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.FinishTask(ctx, id, f, core.ActorRuntime)
	}, taskDone)
}

func taskDeliverCommand(a *app) *cobra.Command {
	var o taskDeliverOptions
	deliver := &cobra.Command{
		Use:   "deliver ID --status delivered|failed|session_queued",
		Short: "Record whether a task's result reached its owner session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlag(cmd, "status"); err != nil {
				return err
			}
			o.ID = args[0]
			return runTaskDeliver(cmd.Context(), a, o)
		},
	}
	deliver.Flags().StringVar(&o.Status, "status", "", "delivered, failed or session_queued")
	return deliver
}

// taskDeliverOptions are `task deliver ID --status S`.
type taskDeliverOptions struct {
	ID     string
	Status string // delivered, failed or session_queued
}

// runTaskDeliver records whether task o.ID's result reached its owner
// session. Any other delivery status is ErrInvalid.
func runTaskDeliver(ctx context.Context, a *app, o taskDeliverOptions) error {
	ds, err := core.ParseDeliveryStatus(o.Status)
	if err != nil {
		return err
	}
	switch ds {
	case core.DeliveryDelivered, core.DeliveryFailed, core.DeliverySessionQueued:
	default:
		return core.Invalidf("delivery status %q cannot be reported (want one of: delivered, failed, session_queued)", ds)
	}
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.DeliverTask(ctx, id, ds, core.ActorRuntime)
	}, func(t *core.Task) string { return "delivery " + string(t.DeliveryStatus) })
}

func taskCancelCommand(a *app) *cobra.Command {
	var o taskCancelOptions
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a task and kill what backs it (its run or job)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return runTaskCancel(cmd.Context(), a, o)
		},
	}
	cancel.Flags().StringVar(&o.Reason, "reason", "", "why (default \""+core.DefaultCancelError+"\")")
	return cancel
}

// taskCancelOptions are `task cancel ID [--reason R]`.
type taskCancelOptions struct {
	ID     string
	Reason string // "" = core.DefaultCancelError
}

// runTaskCancel cancels task o.ID as the operator and kills what backs it.
func runTaskCancel(ctx context.Context, a *app, o taskCancelOptions) error {
	return a.taskMutation(ctx, o.ID, func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
		return reg.CancelTask(ctx, id, o.Reason, core.OperatorActor())
	}, taskDone)
}

func taskListCommand(a *app) *cobra.Command {
	var o taskListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List tasks, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "status", "runtime", "session", "run-id"); err != nil {
				return err
			}
			return runTaskList(cmd.Context(), a, o)
		},
	}
	fl := list.Flags()
	fl.StringVar(&o.Status, "status", "", "only these statuses, comma-separated")
	fl.StringVar(&o.Runtime, "runtime", "", "only this runtime")
	fl.StringVar(&o.Session, "session", "", "only tasks of this owner or child session")
	fl.StringVar(&o.RunID, "run-id", "", "only tasks with this run id")
	limitFlag(list, &o.Limit)
	return list
}

// taskListOptions are `task list`'s filters; "" means any.
type taskListOptions struct {
	Status  string // comma-separated statuses
	Runtime string
	Session string // owner or child session
	RunID   string
	Limit   int // at most this many rows, newest first; 0 = all
}

// runTaskList prints tasks as a table (or a JSON array). An unknown status
// or runtime, or a negative limit, is ErrInvalid before the registry opens.
func runTaskList(ctx context.Context, a *app, o taskListOptions) error {
	st, err := parseList(o.Status, core.ParseTaskStatus)
	if err != nil {
		return err
	}
	f := core.TaskFilter{Statuses: st, Session: o.Session, RunID: o.RunID, Limit: o.Limit}
	if o.Runtime != "" {
		if f.Runtime, err = core.ParseRuntime(o.Runtime); err != nil {
			return err
		}
	}
	if err := checkLimit(o.Limit); err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	ts, err := reg.ListTasks(ctx, f)
	if err != nil {
		return err
	}
	return listOutput(a, "tasks", ts, []string{"ID", "STATUS", "RUNTIME", "DELIVERY", "OUT", "AGE", "ACTIVE", "LABEL"}, func(n time.Time, t *core.Task) []string {
		return []string{termtext.Exact(t.ID, 64), string(t.Status), string(t.Runtime), string(t.DeliveryStatus),
			fmt.Sprint(t.OutputCount), age(n, t.CreatedAt), age(n, t.LastActivity()), termtext.Exact(orDash(t.Label), 60)}
	})
}

// taskFields are `task show`'s key: value lines.
func taskFields(n time.Time, t *core.Task) []kv {
	return []kv{
		{"id", t.ID}, {"status", string(t.Status)}, {"runtime", string(t.Runtime)}, {"kind", t.Kind},
		{"label", t.Label}, {"task", t.Task}, {"delivery_status", string(t.DeliveryStatus)},
		{"notify_policy", string(t.NotifyPolicy)}, {"run_id", t.RunID}, {"source_id", t.SourceID},
		{"owner_session", t.OwnerSession}, {"child_session", t.ChildSession}, {"parent_task_id", t.ParentTaskID},
		{"error", t.Error}, {"result_subtype", t.ResultSubtype}, {"progress_summary", t.ProgressSummary},
		{"expects_output", yesNo(t.ExpectsOutput)}, {"output_count", fmt.Sprint(t.OutputCount)},
		{"created_at", stamp(n, t.CreatedAt)}, {"started_at", stamp(n, t.StartedAt)},
		{"last_event_at", stamp(n, t.LastEventAt)}, {"ended_at", stamp(n, t.EndedAt)},
		{"cleanup_after", stamp(n, t.CleanupAfter)},
	}
}

// taskDone describes a task's state after a status change: "failed (Task did
// not complete: error_max_turns)".
func taskDone(t *core.Task) string {
	s := string(t.Status)
	if t.Status.Terminal() && t.Error != "" {
		s += " (" + termtext.Exact(t.Error, 200) + ")"
	}
	return s
}

// taskMutation opens the registry, applies op to task rawID and prints the
// mutation result (docs/contract.md "Commands: exit codes and JSON").
func (a *app) taskMutation(ctx context.Context, rawID string,
	op func(context.Context, *core.Registry, string) (*core.Task, core.Result, error), done func(*core.Task) string) error {
	return applyMutation(ctx, a, "task", rawID, true, op, func(t *core.Task) (string, string) {
		return "task " + termtext.Exact(t.ID, 80), done(t)
	})
}
