package cli

// The registry commands of SPEC §8: session, task, run, approval and grant.
// Every command validates its flags before it opens the database, so bad
// input exits 2 with nothing written; runtime-side commands act as
// core.ActorRuntime, operator decisions as core.OperatorActor().

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// Exit codes of `approval wait` (SPEC §8).
const (
	exitApprovalDenied  = 10
	exitApprovalExpired = 11 // expired or cancelled
	exitWaitTimedOut    = 12
)

// defaultListLimit caps list output unless --limit says otherwise (0 = all):
// a registry may hold a million rows.
const defaultListLimit = 100

// registryCommands returns the session, task, run, approval and grant commands
// (SPEC §8).
func registryCommands(a *app) []*cobra.Command {
	return []*cobra.Command{
		sessionCommand(a),
		taskCommand(a),
		runCommand(a),
		approvalCommand(a),
		grantCommand(a),
	}
}

// ---------------------------------------------------------------------------
// validation helpers (exit 2, before the database is opened)

// groupCommand is a parent command: without a subcommand it prints help; an
// unknown subcommand is a usage error naming it.
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())}
			}
			return cmd.Help()
		},
	}
}

// requireFlag fails with a usage error when flag was not given.
func requireFlag(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		if !cmd.Flags().Changed(n) {
			return usageError{fmt.Errorf("required flag --%s not set (see '%s --help')", n, cmd.CommandPath())}
		}
	}
	return nil
}

// nonEmpty fails with ErrInvalid when a given flag holds an empty (or
// whitespace-only) value.
func nonEmpty(cmd *cobra.Command, names ...string) error {
	for _, n := range names {
		f := cmd.Flags().Lookup(n)
		if f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			return core.Invalidf("--%s must not be empty", n)
		}
	}
	return nil
}

// idArg checks a positional id is not blank.
func idArg(what, id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", core.Invalidf("empty %s id", what)
	}
	return id, nil
}

// parseDuration parses a Go duration flag ("90s", "5m", "1h30m"); a malformed
// or negative value is ErrInvalid naming the flag and the value.
func parseDuration(flag, s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, core.Invalidf("malformed duration %q for --%s (want e.g. 90s, 5m, 1h30m)", s, flag)
	}
	if d < 0 {
		return 0, core.Invalidf("negative duration %q for --%s", s, flag)
	}
	if err := checkDuration("--"+flag, d, 0, true); err != nil {
		return 0, err
	}
	return d, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseList parses a comma-separated list of enum values with parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, p := range splitList(s) {
		v, err := parse(p)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// limitFlag adds --limit to a list command.
func limitFlag(cmd *cobra.Command, p *int) {
	cmd.Flags().IntVar(p, "limit", defaultListLimit, "show at most N rows, newest first (0 = all)")
}

func checkLimit(n int) error {
	if n < 0 {
		return core.Invalidf("negative --limit %d", n)
	}
	return nil
}

// showJSON prints an entity object with an "events" array added (SPEC §8 show).
func (a *app) showJSON(v any, evs []core.Event, usage *orderedObject) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if usage != nil {
		// "usage": {"by_model": [...], "total": {...}} (issue 27).
		u, err := json.Marshal(usage)
		if err != nil {
			return err
		}
		b = append(b[:len(b)-1], []byte(`,"usage":`)...)
		b = append(append(b, u...), '}')
	}
	if evs == nil {
		evs = []core.Event{}
	}
	e, err := json.Marshal(evs)
	if err != nil {
		return err
	}
	b = append(b[:len(b)-1], []byte(`,"events":`)...)
	b = append(append(b, e...), '}')
	return a.printJSON(json.RawMessage(b))
}

// listJSON prints a list as a JSON array, [] when empty.
func listJSON[T any](a *app, items []T) error {
	if items == nil {
		items = []T{}
	}
	return a.printJSON(items)
}

// now is the wall clock for relative ages in human output.
func now() time.Time { return time.Now() }

// showCommand builds `<entity> show ID`: it resolves the id, prints the
// entity with its journal as JSON with --json, else fields as key: value
// lines followed by the event journal.
func showCommand[T any](a *app, entity, use, short string,
	get func(*core.Registry, context.Context, string) (*T, []core.Event, error),
	fields func(n time.Time, x *T) []kv) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg(entity, args[0])
			if err != nil {
				return err
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			x, evs, err := get(reg, cmd.Context(), id)
			if err != nil {
				return err
			}
			prices, err := a.prices()
			if err != nil {
				return err
			}
			usage, lines, err := showUsage(cmd.Context(), reg, prices, any(x))
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.showJSON(x, evs, usage)
			}
			n := now()
			printKV(a.stdout, fields(n, x))
			printShowUsage(a.stdout, lines)
			printEvents(a.stdout, n, evs)
			return nil
		},
	}
}

// listOutput prints a list command's rows: a JSON array with --json, else a
// table with header and one row of cells per item, or "no <what>" (what is
// the plural noun: "tasks") when there is none.
func listOutput[T any](a *app, what string, items []T, header []string, cells func(n time.Time, x *T) []string) error {
	if a.jsonOut {
		return listJSON(a, items)
	}
	if len(items) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no "+what)
		return err
	}
	tw := newTable(a.stdout)
	row(tw, header...)
	n := now()
	for i := range items {
		row(tw, cells(n, &items[i])...)
	}
	return tw.Flush()
}

// applyMutation resolves entity id rawID, opens the registry, applies op and
// prints the §8 mutation result with describe's subject and done text. With
// partial, an entity returned together with an error is printed before the
// error is returned; otherwise any error is returned at once.
func applyMutation[T any](a *app, cmd *cobra.Command, entity, rawID string, partial bool,
	op func(context.Context, *core.Registry, string) (*T, core.Result, error),
	describe func(*T) (subject, done string)) error {
	id, err := idArg(entity, rawID)
	if err != nil {
		return err
	}
	reg, err := a.registry(cmd.Context())
	if err != nil {
		return err
	}
	x, res, err := op(cmd.Context(), reg, id)
	if x == nil || (err != nil && !partial) {
		return err
	}
	subject, done := describe(x)
	if perr := a.printMutation(res, entity, x, subject, done); perr != nil {
		return perr
	}
	return err
}

// ---------------------------------------------------------------------------
// session

func sessionCommand(a *app) *cobra.Command {
	c := groupCommand("session", "Agent sessions: open, passivate, resume, close, list, show")
	var label string
	open := &cobra.Command{
		Use:   "open ID",
		Short: "Create a session or re-activate a passivated one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := idArg("session", args[0]); err != nil {
				return err
			}
			// session open records work: it creates a missing registry.
			if _, err := a.registryCreate(cmd.Context()); err != nil {
				return err
			}
			return applyMutation(a, cmd, "session", args[0], false,
				func(ctx context.Context, reg *core.Registry, id string) (*core.Session, core.Result, error) {
					return reg.OpenSession(ctx, id, label, core.ActorRuntime)
				}, func(s *core.Session) (string, string) { return "session " + termtext.Exact(s.ID, 80), string(s.State) })
		},
	}
	open.Flags().StringVar(&label, "label", "", "human label of the session")

	passivate := &cobra.Command{
		Use:   "passivate ID",
		Short: "Passivate a session and stop its background jobs (reaped)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.sessionEnd(cmd, args[0], false)
		},
	}
	closeCmd := &cobra.Command{
		Use:   "close ID",
		Short: "Close a session: cancel its pending approvals and stop its background jobs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.sessionEnd(cmd, args[0], true)
		},
	}
	resume := &cobra.Command{
		Use:   "resume ID",
		Short: "Re-activate a passivated session and list jobs reaped meanwhile",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("session", args[0])
			if err != nil {
				return err
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			s, jobs, res, err := reg.ResumeSession(cmd.Context(), id, core.ActorRuntime)
			if err != nil {
				return err
			}
			if jobs == nil {
				jobs = []core.Job{}
			}
			if err := a.printMutation(res, "session", s, "session "+termtext.Exact(s.ID, 80), string(s.State), field{"reaped_jobs", jobs}); err != nil || a.jsonOut {
				return err
			}
			if len(jobs) > 0 {
				fmt.Fprintf(a.stdout, "%s reaped while the session was passivated:\n", count(len(jobs), "background job was", "background jobs were"))
				tw := newTable(a.stdout)
				for _, j := range jobs {
					row(tw, "  "+j.ID, age(now(), j.CompletedAt), termtext.Exact(core.CommandLine(j.Command), 100))
				}
				tw.Flush()
			}
			return nil
		},
	}

	var states string
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := parseList(states, parseSessionState)
			if err != nil {
				return err
			}
			if err := checkLimit(limit); err != nil {
				return err
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			ss, err := reg.ListSessions(cmd.Context(), core.SessionFilter{States: st, Limit: limit})
			if err != nil {
				return err
			}
			return listOutput(a, "sessions", ss, []string{"ID", "STATE", "AGENT", "CREATED", "ACTIVE", "LABEL"}, func(n time.Time, s *core.Session) []string {
				return []string{termtext.Exact(s.ID, 64), string(s.State), orDefault(termtext.Exact(s.Agent, 12), "-"), age(n, s.CreatedAt), age(n, s.LastActivityAt), termtext.Exact(s.Label, 60)}
			})
		},
	}
	list.Flags().StringVar(&states, "state", "", "only these states, comma-separated (active, passivated, closed)")
	limitFlag(list, &limit)

	show := showCommand(a, "session", "show ID", "Show a session and its event journal", (*core.Registry).GetSession,
		func(n time.Time, s *core.Session) []kv {
			return []kv{
				{"id", s.ID}, {"label", s.Label}, {"state", string(s.State)},
				{"created_at", stamp(n, s.CreatedAt)}, {"last_activity_at", stamp(n, s.LastActivityAt)},
				{"passivated_at", stamp(n, s.PassivatedAt)},
			}
		})
	c.AddCommand(open, passivate, resume, closeCmd, list, show)
	return c
}

func parseSessionState(s string) (core.SessionState, error) {
	switch st := core.SessionState(s); st {
	case core.SessionActive, core.SessionPassivated, core.SessionClosed:
		return st, nil
	}
	return "", core.Invalidf("unknown session state %q (want one of: active, passivated, closed)", s)
}

// sessionEnd runs session passivate or close (operator decisions).
func (a *app) sessionEnd(cmd *cobra.Command, rawID string, closing bool) error {
	id, err := idArg("session", rawID)
	if err != nil {
		return err
	}
	reg, err := a.registry(cmd.Context())
	if err != nil {
		return err
	}
	var (
		s   *core.Session
		rep core.ReapReport
		res core.Result
	)
	if closing {
		s, rep, res, err = reg.CloseSession(cmd.Context(), id, core.OperatorActor())
	} else {
		s, rep, res, err = reg.PassivateSession(cmd.Context(), id, core.OperatorActor())
	}
	if s == nil {
		return err
	}
	if rep.Reaped == nil {
		rep.Reaped = []core.Job{}
	}
	if perr := a.printMutation(res, "session", s, "session "+termtext.Exact(s.ID, 80), string(s.State), field{"reap", rep}); perr != nil {
		return perr
	}
	if !a.jsonOut && len(rep.Reaped) > 0 {
		fmt.Fprintf(a.stdout, "reaped %s", count(len(rep.Reaped), "background job", "background jobs"))
		if rep.TimedOut {
			fmt.Fprint(a.stdout, " (some processes outlived the 5 s wait; proceeded anyway)")
		}
		fmt.Fprintln(a.stdout)
	}
	return err
}

// ---------------------------------------------------------------------------
// task

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
			reg, err := a.registryCreate(cmd.Context())
			if err != nil {
				return err
			}
			t, err := reg.CreateTask(cmd.Context(), nt, core.ActorRuntime)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(mutationJSON(core.Result{Applied: true}, "task", t))
			}
			fmt.Fprintln(a.stdout, termtext.Exact(t.ID, 0))
			return nil
		},
	}
	cf.add(create, true)

	var summary string
	start := taskStatusCmd(a, "start ID", "Mark a task running (queued → running)", &summary,
		func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
			return reg.StartTask(ctx, id, summary, core.ActorRuntime)
		})
	var psummary string
	progress := taskStatusCmd(a, "progress ID", "Record that a task is alive (last_event_at = now)", &psummary,
		func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
			return reg.ProgressTask(ctx, id, psummary, core.ActorRuntime)
		})

	var count int64
	output := &cobra.Command{
		Use:   "output ID",
		Short: "Count output produced by a task (output_count += N)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if count < 1 {
				return core.Invalidf("--count %d must be at least 1", count)
			}
			return a.taskMutation(cmd, args[0], func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
				return reg.AddTaskOutput(ctx, id, count, core.ActorRuntime)
			}, func(t *core.Task) string { return fmt.Sprintf("output_count %d", t.OutputCount) })
		},
	}
	output.Flags().Int64Var(&count, "count", 1, "number of outputs to add (1 or more; output_count stops at 9223372036854775807, never wraps)")

	var fin struct {
		status, subtype, text, errText string
		isError                        bool
	}
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
			f := core.Finish{Subtype: fin.subtype, IsError: fin.isError, Text: fin.text, Error: fin.errText}
			if fin.status != "" {
				st, err := core.ParseTaskStatus(fin.status)
				if err != nil {
					return err
				}
				switch st {
				case core.TaskSucceeded, core.TaskFailed, core.TaskTimedOut, core.TaskCancelled:
				default:
					return core.Invalidf("finish status %q is not a terminal report (want one of: succeeded, failed, timed_out, cancelled)", st)
				}
				f.Status = st
			} else if f.Subtype != "success" && !strings.HasPrefix(f.Subtype, "error_") && !f.IsError {
				return core.Invalidf("unknown result subtype %q (want success or error_*, or pass --is-error)", f.Subtype)
			}
			return a.taskMutation(cmd, args[0], func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
				return reg.FinishTask(ctx, id, f, core.ActorRuntime)
			}, taskDone)
		},
	}
	finish.Flags().StringVar(&fin.status, "status", "", "terminal status: succeeded, failed, timed_out, cancelled")
	finish.Flags().StringVar(&fin.subtype, "subtype", "", "Claude / Agent SDK result subtype: success, error_max_turns, …")
	finish.Flags().BoolVar(&fin.isError, "is-error", false, "the result had is_error: true (fails even a success subtype)")
	finish.Flags().StringVar(&fin.text, "text", "", "result text (counts one output when non-empty)")
	finish.Flags().StringVar(&fin.errText, "error", "", "error text")

	var dstatus string
	deliver := &cobra.Command{
		Use:   "deliver ID --status delivered|failed|session_queued",
		Short: "Record whether a task's result reached its owner session",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlag(cmd, "status"); err != nil {
				return err
			}
			ds, err := core.ParseDeliveryStatus(dstatus)
			if err != nil {
				return err
			}
			switch ds {
			case core.DeliveryDelivered, core.DeliveryFailed, core.DeliverySessionQueued:
			default:
				return core.Invalidf("delivery status %q cannot be reported (want one of: delivered, failed, session_queued)", ds)
			}
			return a.taskMutation(cmd, args[0], func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
				return reg.DeliverTask(ctx, id, ds, core.ActorRuntime)
			}, func(t *core.Task) string { return "delivery " + string(t.DeliveryStatus) })
		},
	}
	deliver.Flags().StringVar(&dstatus, "status", "", "delivered, failed or session_queued")

	var reason string
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a task and kill what backs it (its run or job)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.taskMutation(cmd, args[0], func(ctx context.Context, reg *core.Registry, id string) (*core.Task, core.Result, error) {
				return reg.CancelTask(ctx, id, reason, core.OperatorActor())
			}, taskDone)
		},
	}
	cancel.Flags().StringVar(&reason, "reason", "", "why (default \""+core.DefaultCancelError+"\")")

	var lf struct {
		status, runtime, session, runID string
		limit                           int
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List tasks, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "status", "runtime", "session", "run-id"); err != nil {
				return err
			}
			st, err := parseList(lf.status, core.ParseTaskStatus)
			if err != nil {
				return err
			}
			f := core.TaskFilter{Statuses: st, Session: lf.session, RunID: lf.runID, Limit: lf.limit}
			if lf.runtime != "" {
				if f.Runtime, err = core.ParseRuntime(lf.runtime); err != nil {
					return err
				}
			}
			if err := checkLimit(lf.limit); err != nil {
				return err
			}
			reg, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			ts, err := reg.ListTasks(cmd.Context(), f)
			if err != nil {
				return err
			}
			return listOutput(a, "tasks", ts, []string{"ID", "STATUS", "RUNTIME", "DELIVERY", "OUT", "AGE", "ACTIVE", "LABEL"}, func(n time.Time, t *core.Task) []string {
				return []string{termtext.Exact(t.ID, 64), string(t.Status), string(t.Runtime), string(t.DeliveryStatus),
					fmt.Sprint(t.OutputCount), age(n, t.CreatedAt), age(n, t.LastActivity()), termtext.Exact(orDash(t.Label), 60)}
			})
		},
	}
	list.Flags().StringVar(&lf.status, "status", "", "only these statuses, comma-separated")
	list.Flags().StringVar(&lf.runtime, "runtime", "", "only this runtime")
	list.Flags().StringVar(&lf.session, "session", "", "only tasks of this owner or child session")
	list.Flags().StringVar(&lf.runID, "run-id", "", "only tasks with this run id")
	limitFlag(list, &lf.limit)

	show := showCommand(a, "task", "show ID", "Show a task and its event journal", (*core.Registry).GetTask,
		func(n time.Time, t *core.Task) []kv {
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
		})

	c.AddCommand(create, start, progress, output, finish, deliver, cancel, trackCommand(a), list, show)
	return c
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

// taskStatusCmd builds `task start|progress ID [--summary S]`.
func taskStatusCmd(a *app, use, short string, summary *string,
	op func(context.Context, *core.Registry, string) (*core.Task, core.Result, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use + " [--summary S]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.taskMutation(cmd, args[0], op, taskDone)
		},
	}
	cmd.Flags().StringVar(summary, "summary", "", "progress summary")
	return cmd
}

// taskMutation opens the registry, applies op to task rawID and prints the
// §8 mutation result.
func (a *app) taskMutation(cmd *cobra.Command, rawID string,
	op func(context.Context, *core.Registry, string) (*core.Task, core.Result, error), done func(*core.Task) string) error {
	return applyMutation(a, cmd, "task", rawID, true, op, func(t *core.Task) (string, string) {
		return "task " + termtext.Exact(t.ID, 80), done(t)
	})
}

// ---------------------------------------------------------------------------
// run

func runCommand(a *app) *cobra.Command {
	c := groupCommand("run", "Subagent runs: register, progress, complete, kill, list, show")

	var reg struct{ session, requester, label, inactivity string }
	register := &cobra.Command{
		Use:   "register RUN_ID --session CHILD",
		Short: "Record a running subagent run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			if err := requireFlag(cmd, "session"); err != nil {
				return err
			}
			if err := nonEmpty(cmd, "session", "requester", "inactivity"); err != nil {
				return err
			}
			nr := core.NewRun{RunID: id, ChildSession: reg.session, RequesterSession: reg.requester, Label: reg.label}
			if reg.inactivity != "" {
				d, err := parseDuration("inactivity", reg.inactivity)
				if err != nil {
					return err
				}
				if d < time.Millisecond {
					return core.Invalidf("--inactivity %q must be at least 1ms", reg.inactivity)
				}
				nr.InactivityBudget = d
			}
			r, err := a.registryCreate(cmd.Context())
			if err != nil {
				return err
			}
			run, err := r.RegisterRun(cmd.Context(), nr, core.ActorRuntime)
			if err != nil {
				return err
			}
			return a.printMutation(core.Result{Applied: true}, "run", run, "run "+termtext.Exact(run.RunID, 80),
				fmt.Sprintf("running (child session %s, inactivity budget %s)", termtext.Exact(run.ChildSession, 80), termtext.Duration(time.Duration(run.InactivityBudgetMs)*time.Millisecond)))
		},
	}
	register.Flags().StringVar(&reg.session, "session", "", "the run's child session (required)")
	register.Flags().StringVar(&reg.requester, "requester", "", "the session that requested the run")
	register.Flags().StringVar(&reg.label, "label", "", "human label")
	register.Flags().StringVar(&reg.inactivity, "inactivity", "", "inactivity watchdog budget (default 60s)")

	progress := &cobra.Command{
		Use:   "progress RUN_ID",
		Short: "Record that a run is alive (re-arms the inactivity watchdog)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMutation(cmd, args[0], func(ctx context.Context, r *core.Registry, id string) (*core.Run, core.Result, error) {
				return r.ProgressRun(ctx, id, core.ActorRuntime)
			})
		},
	}

	var outcome, errText string
	complete := &cobra.Command{
		Use:   "complete RUN_ID --outcome ok|error|timeout",
		Short: "Record a run's completion; its tasks follow, even ones maintenance marked lost",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("run", args[0])
			if err != nil {
				return err
			}
			if err := requireFlag(cmd, "outcome"); err != nil {
				return err
			}
			o := core.RunOutcome(outcome)
			switch o {
			case core.OutcomeOK, core.OutcomeError, core.OutcomeTimeout:
			default:
				return core.Invalidf("unknown outcome %q (want one of: ok, error, timeout)", outcome)
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			run, tasks, res, err := r.CompleteRun(cmd.Context(), id, o, errText, core.ActorRuntime)
			if err != nil {
				return err
			}
			if tasks == nil {
				tasks = []core.Task{}
			}
			done := "ended (" + string(run.Outcome) + ")"
			if !a.jsonOut && res.Applied && strings.Contains(res.Reason, "late completion") {
				// A late completion changed tasks, not the run: say that first.
				fmt.Fprintf(a.stdout, "run %s: %s\n", termtext.Exact(run.RunID, 80), termtext.Exact(res.Reason, 300))
				for _, t := range tasks {
					fmt.Fprintf(a.stdout, "  task %s %s\n", termtext.Exact(t.ID, 80), taskDone(&t))
				}
				return nil
			}
			if err := a.printMutation(res, "run", run, "run "+termtext.Exact(run.RunID, 80), done, field{"tasks", tasks}); err != nil || a.jsonOut {
				return err
			}
			for _, t := range tasks {
				fmt.Fprintf(a.stdout, "  task %s %s\n", termtext.Exact(t.ID, 80), taskDone(&t))
			}
			return nil
		},
	}
	complete.Flags().StringVar(&outcome, "outcome", "", "ok, error or timeout (required)")
	complete.Flags().StringVar(&errText, "error", "", "error text")

	var kreason string
	kill := &cobra.Command{
		Use:   "kill RUN_ID",
		Short: "Kill a run: ends it, never announces; its tasks become lost at the next sweep",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMutation(cmd, args[0], func(ctx context.Context, r *core.Registry, id string) (*core.Run, core.Result, error) {
				return r.KillRun(ctx, id, kreason, core.OperatorActor())
			})
		},
	}
	kill.Flags().StringVar(&kreason, "reason", "", "why")

	var lf struct {
		running bool
		session string
		limit   int
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLimit(lf.limit); err != nil {
				return err
			}
			if err := nonEmpty(cmd, "session"); err != nil {
				return err
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			runs, err := r.ListRuns(cmd.Context(), core.RunFilter{RunningOnly: lf.running, Session: lf.session, Limit: lf.limit})
			if err != nil {
				return err
			}
			return listOutput(a, "runs", runs, []string{"RUN", "STATE", "CHILD", "STARTED", "PROGRESS", "WAITS", "LABEL"}, func(n time.Time, run *core.Run) []string {
				state := "running"
				if !run.Running() {
					state = string(run.Outcome)
				}
				return []string{termtext.Exact(run.RunID, 64), state, termtext.Exact(run.ChildSession, 40), age(n, run.StartedAt),
					age(n, run.LastProgressAt), fmt.Sprint(run.PendingApprovalWaits), termtext.Exact(orDash(run.Label), 60)}
			})
		},
	}
	list.Flags().BoolVar(&lf.running, "running", false, "only runs that have not ended")
	list.Flags().StringVar(&lf.session, "session", "", "only runs of this child or requester session")
	limitFlag(list, &lf.limit)

	show := showCommand(a, "run", "show RUN_ID", "Show a run and its event journal", (*core.Registry).GetRun,
		func(n time.Time, run *core.Run) []kv {
			return []kv{
				{"run_id", run.RunID}, {"label", run.Label}, {"child_session", run.ChildSession},
				{"requester_session", run.RequesterSession}, {"outcome", orDash(string(run.Outcome))},
				{"started_at", stamp(n, run.StartedAt)}, {"last_progress_at", stamp(n, run.LastProgressAt)},
				{"inactivity_budget", (time.Duration(run.InactivityBudgetMs) * time.Millisecond).String()},
				{"pending_approval_waits", fmt.Sprint(run.PendingApprovalWaits)},
				{"ended_at", stamp(n, run.EndedAt)}, {"ended_reason", run.EndedReason}, {"error", run.Error},
				{"suppress_announce_reason", run.SuppressAnnounceReason}, {"cleanup_handled", yesNo(run.CleanupHandled)},
				{"cleanup_after", stamp(n, run.CleanupAfter)},
			}
		})
	c.AddCommand(register, progress, complete, kill, list, show)
	return c
}

// runMutation opens the registry, applies op to run rawID and prints the
// mutation result.
func (a *app) runMutation(cmd *cobra.Command, rawID string, op func(context.Context, *core.Registry, string) (*core.Run, core.Result, error)) error {
	return applyMutation(a, cmd, "run", rawID, false, op, func(run *core.Run) (string, string) {
		done := "running"
		if !run.Running() {
			done = "ended (" + string(run.Outcome) + ")"
		}
		return "run " + termtext.Exact(run.RunID, 80), done
	})
}

// ---------------------------------------------------------------------------
// approval and grant

func approvalCommand(a *app) *cobra.Command {
	c := groupCommand("approval", "Approvals: request, wait, approve, deny, list, show")

	var rq struct{ session, runID, taskID, tool, command, rationale, cwd, expiresIn string }
	request := &cobra.Command{
		Use:   "request --session S --tool T --command C [flags]",
		Short: "Ask for a human decision on a tool call (prints the approval id)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requireFlag(cmd, "session", "tool", "command"); err != nil {
				return err
			}
			if err := nonEmpty(cmd, "session", "tool", "command", "run-id", "task", "expires-in"); err != nil {
				return err
			}
			na := core.NewApproval{Session: rq.session, RunID: rq.runID, TaskID: rq.taskID, Tool: rq.tool,
				Command: rq.command, Rationale: rq.rationale, Cwd: rq.cwd}
			if rq.expiresIn != "" {
				d, err := parseDuration("expires-in", rq.expiresIn)
				if err != nil {
					return err
				}
				na.ExpiresIn = d
			}
			r, err := a.registryCreate(cmd.Context())
			if err != nil {
				return err
			}
			ap, err := r.RequestApproval(cmd.Context(), na, core.ActorRuntime)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(mutationJSON(core.Result{Applied: true, Reason: ap.Reason}, "approval", ap))
			}
			fmt.Fprintln(a.stdout, ap.ID)
			if ap.Status != core.ApprovalPending {
				fmt.Fprintf(a.stderr, "approval %s %s at once by %s\n", ap.ID, ap.Status, termtext.Exact(ap.DecidedBy, 80))
			}
			return nil
		},
	}
	fl := request.Flags()
	fl.StringVar(&rq.session, "session", "", "the requesting session (required)")
	fl.StringVar(&rq.runID, "run-id", "", "the run waiting for it (its inactivity watchdog pauses while it waits)")
	fl.StringVar(&rq.taskID, "task", "", "the task it belongs to")
	fl.StringVar(&rq.tool, "tool", "", "tool name, e.g. Bash (required)")
	fl.StringVar(&rq.command, "command", "", "the command to approve (required)")
	fl.StringVar(&rq.rationale, "rationale", "", "why the agent wants it")
	fl.StringVar(&rq.cwd, "cwd", "", "working directory of the command")
	fl.StringVar(&rq.expiresIn, "expires-in", "", "expire after this long (default: never)")

	var timeout string
	wait := &cobra.Command{
		Use:   "wait ID [--timeout D]",
		Short: "Wait for a decision: exit 0 approved, 10 denied, 11 expired or cancelled, 12 wait timed out",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("approval", args[0])
			if err != nil {
				return err
			}
			var d time.Duration
			if cmd.Flags().Changed("timeout") {
				if d, err = parseDuration("timeout", timeout); err != nil {
					return err
				}
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			ap, err := r.WaitApproval(ctx, id, 0)
			if errors.Is(err, context.DeadlineExceeded) && cmd.Context().Err() == nil {
				return &exitError{code: exitWaitTimedOut, msg: fmt.Sprintf("approval %s still pending after %s", id, termtext.Duration(d))}
			}
			if st, ok := stoppedBy(cmd.Context()); ok {
				return &exitError{code: st.ExitCode(), msg: fmt.Sprintf("interrupted (%s); approval %s is still pending", st, id)}
			}
			if err != nil {
				return err
			}
			if a.jsonOut {
				if err := a.printJSON(ap); err != nil {
					return err
				}
			} else {
				line := fmt.Sprintf("approval %s %s", ap.ID, ap.Status)
				if ap.Status == core.ApprovalApproved {
					line += " (" + string(ap.Scope) + ")"
				}
				if ap.DecidedBy != "" {
					line += " by " + termtext.Exact(ap.DecidedBy, 80)
				}
				if ap.Reason != "" && ap.Status != core.ApprovalApproved {
					line += ": " + termtext.Exact(ap.Reason, 200)
				}
				fmt.Fprintln(a.stdout, line)
			}
			switch ap.Status {
			case core.ApprovalApproved:
				return nil
			case core.ApprovalDenied:
				return &exitError{code: exitApprovalDenied}
			default:
				return &exitError{code: exitApprovalExpired}
			}
		},
	}
	wait.Flags().StringVar(&timeout, "timeout", "", "give up after this long (exit 12); default: wait forever")

	var scope string
	var suggestion int
	approve := &cobra.Command{
		Use:   "approve ID [--scope once|session|always | --suggestion N]",
		Short: "Approve a pending request; session/always scope remembers a grant, --suggestion N applies the agent's suggestion N",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("approval", args[0])
			if err != nil {
				return err
			}
			sc, err := core.ParseScope(scope)
			if err != nil {
				return err
			}
			if suggestion < 0 || suggestion > 0 && cmd.Flags().Changed("scope") && sc != core.ScopeOnce {
				return core.Invalidf("--suggestion N (1 or more) approves once with the agent's suggestion N; it takes no --scope %s", sc)
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			var ap *core.Approval
			var g *core.Grant
			var res core.Result
			if suggestion > 0 {
				ap, res, err = r.ApproveWithSuggestion(cmd.Context(), id, suggestion, core.OperatorActor())
			} else {
				ap, g, res, err = r.ApproveApproval(cmd.Context(), id, sc, core.OperatorActor())
			}
			if err != nil {
				return err
			}
			done := string(ap.Status)
			if ap.Status == core.ApprovalApproved && ap.Suggestion > 0 {
				done += " (once, with suggestion " + strconv.Itoa(ap.Suggestion) + ")"
			} else if ap.Status == core.ApprovalApproved {
				done += " (" + string(ap.Scope) + ")"
			}
			if g != nil {
				done += "; grant " + g.ID + " remembers " + termtext.Exact(g.Tool+" "+g.Pattern, 100)
			}
			return a.printMutation(res, "approval", ap, "approval "+ap.ID, done, field{"grant", g})
		},
	}
	approve.Flags().StringVar(&scope, "scope", string(core.ScopeOnce), "once, session or always")
	approve.Flags().IntVar(&suggestion, "suggestion", 0, "approve once with the agent's suggested permission update N (as `approval show` numbers them; --gate-on ask): the agent applies it")

	var dreason string
	deny := &cobra.Command{
		Use:   "deny ID [--reason R]",
		Short: "Deny a pending request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return applyMutation(a, cmd, "approval", args[0], false,
				func(ctx context.Context, r *core.Registry, id string) (*core.Approval, core.Result, error) {
					return r.DenyApproval(ctx, id, dreason, core.OperatorActor())
				}, func(ap *core.Approval) (string, string) { return "approval " + ap.ID, string(ap.Status) })
		},
	}
	deny.Flags().StringVar(&dreason, "reason", "", "why")

	var lf struct {
		status, session, runID string
		limit                  int
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List approvals, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "status", "session", "run-id"); err != nil {
				return err
			}
			st, err := parseList(lf.status, core.ParseApprovalStatus)
			if err != nil {
				return err
			}
			if err := checkLimit(lf.limit); err != nil {
				return err
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			aps, err := r.ListApprovals(cmd.Context(), core.ApprovalFilter{Statuses: st, Session: lf.session, RunID: lf.runID, Limit: lf.limit})
			if err != nil {
				return err
			}
			return listOutput(a, "approvals", aps, []string{"ID", "STATUS", "SESSION", "TOOL", "AGE", "EXPIRES", "COMMAND"}, func(n time.Time, ap *core.Approval) []string {
				expires := "-" // a decided approval no longer expires
				if ap.Status == core.ApprovalPending {
					expires = age(n, ap.ExpiresAt)
				}
				return []string{ap.ID, string(ap.Status), termtext.Exact(ap.Session, 40), termtext.Exact(ap.Tool, 30), age(n, ap.RequestedAt),
					expires, termtext.Exact(ap.Command, 80)}
			})
		},
	}
	list.Flags().StringVar(&lf.status, "status", "", "only these statuses, comma-separated")
	list.Flags().StringVar(&lf.session, "session", "", "only this session")
	list.Flags().StringVar(&lf.runID, "run-id", "", "only this run")
	limitFlag(list, &lf.limit)

	show := showCommand(a, "approval", "show ID", "Show an approval and its event journal", (*core.Registry).GetApproval,
		func(n time.Time, ap *core.Approval) []kv {
			return append([]kv{
				{"id", ap.ID}, {"status", string(ap.Status)}, {"session", ap.Session}, {"run_id", ap.RunID},
				{"task_id", ap.TaskID}, {"tool", ap.Tool}, {"command", ap.Command}, {"pattern", ap.Pattern},
				{"rationale", ap.Rationale}, {"cwd", ap.Cwd}, {"scope", string(ap.Scope)}, {"reason", ap.Reason},
				{"decided_by", ap.DecidedBy}, {"requested_at", stamp(n, ap.RequestedAt)},
				{"decided_at", stamp(n, ap.DecidedAt)}, {"expires_at", stamp(n, ap.ExpiresAt)},
				{"cleanup_after", stamp(n, ap.CleanupAfter)},
				{"waiter", waiterText(ap.Waiter)},
			}, suggestionRows(ap)...)
		})
	c.AddCommand(request, wait, approve, deny, list, show)
	return c
}

// suggestionRows are `approval show`'s lines for the agent's suggested
// permission updates, numbered as `approval approve --suggestion N` takes
// them, each exactly as the agent sent it, and the one approved with.
func suggestionRows(ap *core.Approval) []kv {
	var out []kv
	for i, s := range core.SuggestionList(ap.Suggestions) {
		out = append(out, kv{"suggestion " + strconv.Itoa(i+1), string(s)})
	}
	if ap.Suggestion > 0 {
		out = append(out, kv{"approved_with", "suggestion " + strconv.Itoa(ap.Suggestion)})
	}
	return out
}

func grantCommand(a *app) *cobra.Command {
	c := groupCommand("grant", "Remembered approvals: list, revoke")
	list := &cobra.Command{
		Use:   "list",
		Short: "List grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			gs, err := r.ListGrants(cmd.Context())
			if err != nil {
				return err
			}
			return listOutput(a, "grants", gs, []string{"ID", "SCOPE", "SESSION", "TOOL", "PATTERN", "AGE", "CREATED BY"}, func(n time.Time, g *core.Grant) []string {
				return []string{g.ID, string(g.Scope), termtext.Exact(orDash(g.Session), 40), termtext.Exact(g.Tool, 30), termtext.Exact(g.Pattern, 60),
					age(n, g.CreatedAt), termtext.Exact(g.CreatedBy, 60)}
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Delete a grant; later requests are no longer approved by it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := idArg("grant", args[0])
			if err != nil {
				return err
			}
			r, err := a.registry(cmd.Context())
			if err != nil {
				return err
			}
			g, err := r.RevokeGrant(cmd.Context(), id, core.OperatorActor())
			if err != nil {
				return err
			}
			return a.printMutation(core.Result{Applied: true}, "grant", g, "grant "+g.ID, "revoked ("+termtext.Exact(g.Tool+" "+g.Pattern, 100)+")")
		},
	}
	c.AddCommand(list, revoke)
	return c
}

// waiterText is an approval's waiting process for `approval show`: "pid 7735
// on vm", or "-" when none was recorded.
func waiterText(w core.Waiter) string {
	if w.PID == 0 {
		return "-"
	}
	return fmt.Sprintf("pid %d on %s", w.PID, w.Host)
}
