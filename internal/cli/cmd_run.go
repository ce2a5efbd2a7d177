package cli

// `clawpit run`: register, progress, complete, kill, list, show.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

func runCommand(a *app) *cobra.Command {
	c := groupCommand("run", "Subagent runs: register, progress, complete, kill, list, show")
	progress := &cobra.Command{
		Use:   "progress RUN_ID",
		Short: "Record that a run is alive (re-arms the inactivity watchdog)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRunProgress(cmd.Context(), a, runProgressOptions{ID: args[0]})
		},
	}
	c.AddCommand(runRegisterCommand(a), progress, runCompleteCommand(a), runKillCommand(a), runListCommand(a),
		showCommand(a, "run", "show RUN_ID", "Show a run and its event journal", (*core.Registry).GetRun, runFields))
	return c
}

func runRegisterCommand(a *app) *cobra.Command {
	var o runRegisterOptions
	register := &cobra.Command{
		Use:   "register RUN_ID --session CHILD",
		Short: "Record a running subagent run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A blank id is reported before a missing flag.
			if _, err := idArg("run", args[0]); err != nil {
				return err
			}
			if err := requireFlag(cmd, "session"); err != nil {
				return err
			}
			if err := nonEmpty(cmd, "session", "requester", "inactivity"); err != nil {
				return err
			}
			o.ID = args[0]
			return runRunRegister(cmd.Context(), a, o)
		},
	}
	fl := register.Flags()
	fl.StringVar(&o.Session, "session", "", "the run's child session (required)")
	fl.StringVar(&o.Requester, "requester", "", "the session that requested the run")
	fl.StringVar(&o.Label, "label", "", "human label")
	fl.StringVar(&o.Inactivity, "inactivity", "", "inactivity watchdog budget (default 60s)")
	return register
}

// runRegisterOptions are `run register RUN_ID --session CHILD [flags]`.
type runRegisterOptions struct {
	ID         string // the run id the runtime gave the run
	Session    string // the run's child session (required)
	Requester  string // the session that requested the run
	Label      string
	Inactivity string // Go duration, at least 1ms; "" = the default 60s
}

// runRunRegister records a running subagent run as the runtime, creating a
// missing registry. A blank id or a malformed, negative or sub-millisecond
// inactivity budget is ErrInvalid.
func runRunRegister(ctx context.Context, a *app, o runRegisterOptions) error {
	id, err := idArg("run", o.ID)
	if err != nil {
		return err
	}
	nr := core.NewRun{RunID: id, ChildSession: o.Session, RequesterSession: o.Requester, Label: o.Label}
	if o.Inactivity != "" {
		d, err := parseDuration("inactivity", o.Inactivity)
		if err != nil {
			return err
		}
		if d < time.Millisecond {
			return core.Invalidf("--inactivity %q must be at least 1ms", o.Inactivity)
		}
		nr.InactivityBudget = d
	}
	r, err := a.registryCreate(ctx)
	if err != nil {
		return err
	}
	run, err := r.RegisterRun(ctx, nr, core.ActorRuntime)
	if err != nil {
		return err
	}
	return a.printMutation(core.Result{Applied: true}, "run", run, "run "+termtext.Exact(run.RunID, 80),
		fmt.Sprintf("running (child session %s, inactivity budget %s)", termtext.Exact(run.ChildSession, 80), termtext.Duration(time.Duration(run.InactivityBudgetMs)*time.Millisecond)))
}

// runProgressOptions are `run progress RUN_ID`.
type runProgressOptions struct {
	ID string // full run id or a unique prefix
}

// runRunProgress records that run o.ID is alive, re-arming its inactivity
// watchdog.
func runRunProgress(ctx context.Context, a *app, o runProgressOptions) error {
	return a.runMutation(ctx, o.ID, func(ctx context.Context, r *core.Registry, id string) (*core.Run, core.Result, error) {
		return r.ProgressRun(ctx, id, core.ActorRuntime)
	})
}

func runCompleteCommand(a *app) *cobra.Command {
	var o runCompleteOptions
	complete := &cobra.Command{
		Use:   "complete RUN_ID --outcome ok|error|timeout",
		Short: "Record a run's completion; its tasks follow, even ones maintenance marked lost",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := idArg("run", args[0]); err != nil {
				return err
			}
			if err := requireFlag(cmd, "outcome"); err != nil {
				return err
			}
			o.ID = args[0]
			return runRunComplete(cmd.Context(), a, o)
		},
	}
	complete.Flags().StringVar(&o.Outcome, "outcome", "", "ok, error or timeout (required)")
	complete.Flags().StringVar(&o.Error, "error", "", "error text")
	return complete
}

// runCompleteOptions are `run complete RUN_ID --outcome O [--error E]`.
type runCompleteOptions struct {
	ID      string
	Outcome string // ok, error or timeout
	Error   string
}

// runRunComplete records run o.ID's completion as the runtime; its tasks
// follow ("tasks" in JSON, [] when none). A completion after the run ended
// changes only its tasks and says so first. An unknown outcome is ErrInvalid.
func runRunComplete(ctx context.Context, a *app, o runCompleteOptions) error {
	id, err := idArg("run", o.ID)
	if err != nil {
		return err
	}
	out := core.RunOutcome(o.Outcome)
	switch out {
	case core.OutcomeOK, core.OutcomeError, core.OutcomeTimeout:
	default:
		return core.Invalidf("unknown outcome %q (want one of: ok, error, timeout)", o.Outcome)
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	run, tasks, res, err := r.CompleteRun(ctx, id, out, o.Error, core.ActorRuntime)
	if err != nil {
		return err
	}
	if tasks == nil {
		tasks = []core.Task{}
	}
	if !a.jsonOut && res.Applied && strings.Contains(res.Reason, "late completion") {
		// A late completion changed tasks, not the run: say that first.
		fmt.Fprintf(a.stdout, "run %s: %s\n", termtext.Exact(run.RunID, 80), termtext.Exact(res.Reason, 300))
		printTaskLines(a, tasks)
		return nil
	}
	done := "ended (" + string(run.Outcome) + ")"
	if err := a.printMutation(res, "run", run, "run "+termtext.Exact(run.RunID, 80), done, field{"tasks", tasks}); err != nil || a.jsonOut {
		return err
	}
	printTaskLines(a, tasks)
	return nil
}

// printTaskLines prints "  task ID STATE" per task a run completion moved.
func printTaskLines(a *app, tasks []core.Task) {
	for _, t := range tasks {
		fmt.Fprintf(a.stdout, "  task %s %s\n", termtext.Exact(t.ID, 80), taskDone(&t))
	}
}

func runKillCommand(a *app) *cobra.Command {
	var o runKillOptions
	kill := &cobra.Command{
		Use:   "kill RUN_ID",
		Short: "Kill a run: ends it, never announces; its tasks become lost at the next sweep",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return runRunKill(cmd.Context(), a, o)
		},
	}
	kill.Flags().StringVar(&o.Reason, "reason", "", "why")
	return kill
}

// runKillOptions are `run kill RUN_ID [--reason R]`.
type runKillOptions struct {
	ID     string
	Reason string
}

// runRunKill ends run o.ID as the operator without an announcement; its tasks
// become lost at the next sweep.
func runRunKill(ctx context.Context, a *app, o runKillOptions) error {
	return a.runMutation(ctx, o.ID, func(ctx context.Context, r *core.Registry, id string) (*core.Run, core.Result, error) {
		return r.KillRun(ctx, id, o.Reason, core.OperatorActor())
	})
}

func runListCommand(a *app) *cobra.Command {
	var o runListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// A negative --limit is reported before an empty --session.
			if err := checkLimit(o.Limit); err != nil {
				return err
			}
			if err := nonEmpty(cmd, "session"); err != nil {
				return err
			}
			return runRunList(cmd.Context(), a, o)
		},
	}
	list.Flags().BoolVar(&o.Running, "running", false, "only runs that have not ended")
	list.Flags().StringVar(&o.Session, "session", "", "only runs of this child or requester session")
	limitFlag(list, &o.Limit)
	return list
}

// runListOptions are `run list`'s filters.
type runListOptions struct {
	Running bool   // only runs that have not ended
	Session string // child or requester session; "" = any
	Limit   int    // at most this many rows, newest first; 0 = all
}

// runRunList prints runs as a table (or a JSON array); STATE is "running" or
// the outcome. A negative limit is ErrInvalid.
func runRunList(ctx context.Context, a *app, o runListOptions) error {
	if err := checkLimit(o.Limit); err != nil {
		return err
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	runs, err := r.ListRuns(ctx, core.RunFilter{RunningOnly: o.Running, Session: o.Session, Limit: o.Limit})
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
}

// runFields are `run show`'s key: value lines.
func runFields(n time.Time, run *core.Run) []kv {
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
}

// runMutation opens the registry, applies op to run rawID and prints the
// mutation result.
func (a *app) runMutation(ctx context.Context, rawID string, op func(context.Context, *core.Registry, string) (*core.Run, core.Result, error)) error {
	return applyMutation(ctx, a, "run", rawID, false, op, func(run *core.Run) (string, string) {
		done := "running"
		if !run.Running() {
			done = "ended (" + string(run.Outcome) + ")"
		}
		return "run " + termtext.Exact(run.RunID, 80), done
	})
}
