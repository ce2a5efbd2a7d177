package cli

// `clawpit approval`: request, wait, approve, deny, list, show.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// Exit codes of `approval wait` (docs/contract.md "Commands: exit codes and JSON").
const (
	exitApprovalDenied  = 10
	exitApprovalExpired = 11 // expired or cancelled
	exitWaitTimedOut    = 12
)

func approvalCommand(a *app) *cobra.Command {
	c := groupCommand("approval", "Approvals: request, wait, approve, deny, list, show")
	c.AddCommand(approvalRequestCommand(a), approvalWaitCommand(a), approvalApproveCommand(a),
		approvalDenyCommand(a), approvalListCommand(a),
		showCommand(a, "approval", "show ID", "Show an approval and its event journal", (*core.Registry).GetApproval, approvalFields))
	return c
}

func approvalRequestCommand(a *app) *cobra.Command {
	var o approvalRequestOptions
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
			return runApprovalRequest(cmd.Context(), a, o)
		},
	}
	fl := request.Flags()
	fl.StringVar(&o.Session, "session", "", "the requesting session (required)")
	fl.StringVar(&o.RunID, "run-id", "", "the run waiting for it (its inactivity watchdog pauses while it waits)")
	fl.StringVar(&o.TaskID, "task", "", "the task it belongs to")
	fl.StringVar(&o.Tool, "tool", "", "tool name, e.g. Bash (required)")
	fl.StringVar(&o.Command, "command", "", "the command to approve (required)")
	fl.StringVar(&o.Rationale, "rationale", "", "why the agent wants it")
	fl.StringVar(&o.Cwd, "cwd", "", "working directory of the command")
	fl.StringVar(&o.ExpiresIn, "expires-in", "", "expire after this long (default: never)")
	return request
}

// approvalRequestOptions are `approval request`'s flags. Session, Tool and
// Command are required (the command refuses them missing or blank).
type approvalRequestOptions struct {
	Session, RunID, TaskID string
	Tool, Command          string // e.g. "Bash", "rm -rf build"
	Rationale, Cwd         string
	ExpiresIn              string // Go duration; "" = never expires
}

// runApprovalRequest records a pending approval as the runtime, creating a
// missing registry, and prints its id. A grant can decide it at once: then
// stderr says "approval ID approved at once by …". A malformed or negative
// ExpiresIn is ErrInvalid.
func runApprovalRequest(ctx context.Context, a *app, o approvalRequestOptions) error {
	na := core.NewApproval{Session: o.Session, RunID: o.RunID, TaskID: o.TaskID, Tool: o.Tool,
		Command: o.Command, Rationale: o.Rationale, Cwd: o.Cwd}
	if o.ExpiresIn != "" {
		d, err := parseDuration("expires-in", o.ExpiresIn)
		if err != nil {
			return err
		}
		na.ExpiresIn = d
	}
	r, err := a.registryCreate(ctx)
	if err != nil {
		return err
	}
	ap, err := r.RequestApproval(ctx, na, core.ActorRuntime)
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
}

func approvalWaitCommand(a *app) *cobra.Command {
	var o approvalWaitOptions
	wait := &cobra.Command{
		Use:   "wait ID [--timeout D]",
		Short: "Wait for a decision: exit 0 approved, 10 denied, 11 expired or cancelled, 12 wait timed out",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID, o.TimeoutSet = args[0], cmd.Flags().Changed("timeout")
			return runApprovalWait(cmd.Context(), a, o)
		},
	}
	wait.Flags().StringVar(&o.Timeout, "timeout", "", "give up after this long (exit 12); default: wait forever")
	return wait
}

// approvalWaitOptions are `approval wait ID [--timeout D]`.
type approvalWaitOptions struct {
	ID         string // full approval id or a unique prefix
	Timeout    string // Go duration; "0s" = wait forever
	TimeoutSet bool   // --timeout was given (even as ""), so Timeout is parsed
}

// runApprovalWait blocks until approval o.ID is decided and prints the
// decision. It returns nil when approved and an *exitError otherwise: 10
// denied, 11 expired or cancelled, 12 still pending after the timeout, or a
// signal's code when ctx was stopped by one (see stoppedBy).
func runApprovalWait(ctx context.Context, a *app, o approvalWaitOptions) error {
	id, err := idArg("approval", o.ID)
	if err != nil {
		return err
	}
	var d time.Duration
	if o.TimeoutSet {
		if d, err = parseDuration("timeout", o.Timeout); err != nil {
			return err
		}
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	wctx := ctx
	if d > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	ap, err := r.WaitApproval(wctx, id, 0)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return &exitError{code: exitWaitTimedOut, msg: fmt.Sprintf("approval %s still pending after %s", id, termtext.Duration(d))}
	}
	if st, ok := stoppedBy(ctx); ok {
		return &exitError{code: st.ExitCode(), msg: fmt.Sprintf("interrupted (%s); approval %s is still pending", st, id)}
	}
	if err != nil {
		return err
	}
	if err := a.printDecision(ap); err != nil {
		return err
	}
	switch ap.Status {
	case core.ApprovalApproved:
		return nil
	case core.ApprovalDenied:
		return &exitError{code: exitApprovalDenied}
	default:
		return &exitError{code: exitApprovalExpired}
	}
}

// printDecision prints a decided approval for `approval wait`: the approval
// object with --json, else "approval ID approved (session) by operator:…" or
// "approval ID denied by …: reason".
func (a *app) printDecision(ap *core.Approval) error {
	if a.jsonOut {
		return a.printJSON(ap)
	}
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
	return nil
}

func approvalApproveCommand(a *app) *cobra.Command {
	var o approvalApproveOptions
	approve := &cobra.Command{
		Use:   "approve ID [--scope once|session|always | --suggestion N]",
		Short: "Approve a pending request; session/always scope remembers a grant, --suggestion N applies the agent's suggestion N",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID, o.ScopeSet = args[0], cmd.Flags().Changed("scope")
			return runApprovalApprove(cmd.Context(), a, o)
		},
	}
	approve.Flags().StringVar(&o.Scope, "scope", string(core.ScopeOnce), "once, session or always")
	approve.Flags().IntVar(&o.Suggestion, "suggestion", 0, "approve once with the agent's suggested permission update N (as `approval show` numbers them; --gate-on ask): the agent applies it")
	return approve
}

// approvalApproveOptions are `approval approve ID [--scope S | --suggestion N]`.
type approvalApproveOptions struct {
	ID         string
	Scope      string // once, session or always
	ScopeSet   bool   // --scope was given: with Suggestion only "once" is allowed
	Suggestion int    // 1-based suggestion to approve once with; 0 = none
}

// runApprovalApprove approves pending approval o.ID as the operator. Scope
// session or always also remembers a grant ("grant" in JSON, null when
// none); Suggestion N approves once with the agent's suggestion N. A negative
// Suggestion, or one with a scope other than once, is ErrInvalid.
func runApprovalApprove(ctx context.Context, a *app, o approvalApproveOptions) error {
	id, err := idArg("approval", o.ID)
	if err != nil {
		return err
	}
	sc, err := core.ParseScope(o.Scope)
	if err != nil {
		return err
	}
	if o.Suggestion < 0 || o.Suggestion > 0 && o.ScopeSet && sc != core.ScopeOnce {
		return core.Invalidf("--suggestion N (1 or more) approves once with the agent's suggestion N; it takes no --scope %s", sc)
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	var ap *core.Approval
	var g *core.Grant
	var res core.Result
	if o.Suggestion > 0 {
		ap, res, err = r.ApproveWithSuggestion(ctx, id, o.Suggestion, core.OperatorActor())
	} else {
		ap, g, res, err = r.ApproveApproval(ctx, id, sc, core.OperatorActor())
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
}

func approvalDenyCommand(a *app) *cobra.Command {
	var o approvalDenyOptions
	deny := &cobra.Command{
		Use:   "deny ID [--reason R]",
		Short: "Deny a pending request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return runApprovalDeny(cmd.Context(), a, o)
		},
	}
	deny.Flags().StringVar(&o.Reason, "reason", "", "why")
	return deny
}

// approvalDenyOptions are `approval deny ID [--reason R]`.
type approvalDenyOptions struct {
	ID     string
	Reason string
}

// runApprovalDeny denies pending approval o.ID as the operator.
func runApprovalDeny(ctx context.Context, a *app, o approvalDenyOptions) error {
	return applyMutation(ctx, a, "approval", o.ID, false,
		func(ctx context.Context, r *core.Registry, id string) (*core.Approval, core.Result, error) {
			return r.DenyApproval(ctx, id, o.Reason, core.OperatorActor())
		}, func(ap *core.Approval) (string, string) { return "approval " + ap.ID, string(ap.Status) })
}

func approvalListCommand(a *app) *cobra.Command {
	var o approvalListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List approvals, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nonEmpty(cmd, "status", "session", "run-id"); err != nil {
				return err
			}
			return runApprovalList(cmd.Context(), a, o)
		},
	}
	list.Flags().StringVar(&o.Status, "status", "", "only these statuses, comma-separated")
	list.Flags().StringVar(&o.Session, "session", "", "only this session")
	list.Flags().StringVar(&o.RunID, "run-id", "", "only this run")
	limitFlag(list, &o.Limit)
	return list
}

// approvalListOptions are `approval list`'s filters; "" means any.
type approvalListOptions struct {
	Status  string // comma-separated statuses
	Session string
	RunID   string
	Limit   int // at most this many rows, newest first; 0 = all
}

// runApprovalList prints approvals as a table (or a JSON array); EXPIRES is
// "-" once an approval is decided. An unknown status or a negative limit is
// ErrInvalid.
func runApprovalList(ctx context.Context, a *app, o approvalListOptions) error {
	st, err := parseList(o.Status, core.ParseApprovalStatus)
	if err != nil {
		return err
	}
	if err := checkLimit(o.Limit); err != nil {
		return err
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	aps, err := r.ListApprovals(ctx, core.ApprovalFilter{Statuses: st, Session: o.Session, RunID: o.RunID, Limit: o.Limit})
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
}

// approvalFields are `approval show`'s key: value lines.
func approvalFields(n time.Time, ap *core.Approval) []kv {
	return append([]kv{
		{"id", ap.ID}, {"status", string(ap.Status)}, {"session", ap.Session}, {"run_id", ap.RunID},
		{"task_id", ap.TaskID}, {"tool", ap.Tool}, {"command", ap.Command}, {"pattern", ap.Pattern},
		{"rationale", ap.Rationale}, {"cwd", ap.Cwd}, {"scope", string(ap.Scope)}, {"reason", ap.Reason},
		{"decided_by", ap.DecidedBy}, {"requested_at", stamp(n, ap.RequestedAt)},
		{"decided_at", stamp(n, ap.DecidedAt)}, {"expires_at", stamp(n, ap.ExpiresAt)},
		{"cleanup_after", stamp(n, ap.CleanupAfter)},
		{"waiter", waiterText(ap.Waiter)},
	}, suggestionRows(ap)...)
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

// waiterText is an approval's waiting process for `approval show`: "pid 7735
// on vm", or "-" when none was recorded.
func waiterText(w core.Waiter) string {
	if w.PID == 0 {
		return "-"
	}
	return fmt.Sprintf("pid %d on %s", w.PID, w.Host)
}
