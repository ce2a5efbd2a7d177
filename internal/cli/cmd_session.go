package cli

// `clawpit session`: open, passivate, resume, close, list, show.

import (
	"context"
	"fmt"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

func sessionCommand(a *app) *cobra.Command {
	c := groupCommand("session", "Agent sessions: open, passivate, resume, close, list, show")

	var oo sessionOpenOptions
	open := &cobra.Command{
		Use:   "open ID",
		Short: "Create a session or re-activate a passivated one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			oo.ID = args[0]
			return runSessionOpen(cmd.Context(), a, oo)
		},
	}
	open.Flags().StringVar(&oo.Label, "label", "", "human label of the session")

	passivate := &cobra.Command{
		Use:   "passivate ID",
		Short: "Passivate a session and stop its background jobs (reaped)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionPassivate(cmd.Context(), a, sessionIDOptions{ID: args[0]})
		},
	}
	closeCmd := &cobra.Command{
		Use:   "close ID",
		Short: "Close a session: cancel its pending approvals and stop its background jobs",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionClose(cmd.Context(), a, sessionIDOptions{ID: args[0]})
		},
	}
	resume := &cobra.Command{
		Use:   "resume ID",
		Short: "Re-activate a passivated session and list jobs reaped meanwhile",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionResume(cmd.Context(), a, sessionIDOptions{ID: args[0]})
		},
	}

	var lo sessionListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionList(cmd.Context(), a, lo)
		},
	}
	list.Flags().StringVar(&lo.States, "state", "", "only these states, comma-separated (active, passivated, closed)")
	limitFlag(list, &lo.Limit)

	show := showCommand(a, "session", "show ID", "Show a session and its event journal", (*core.Registry).GetSession, sessionFields)
	c.AddCommand(open, passivate, resume, closeCmd, list, show)
	return c
}

// sessionOpenOptions are `session open ID [--label L]`.
type sessionOpenOptions struct {
	ID    string // session id, as the agent runtime names it
	Label string // human label; "" keeps the current one
}

// runSessionOpen creates session o.ID, or re-activates it when passivated, as
// the runtime. It records work, so it creates a missing registry. A blank id
// is ErrInvalid.
func runSessionOpen(ctx context.Context, a *app, o sessionOpenOptions) error {
	if _, err := idArg("session", o.ID); err != nil {
		return err
	}
	if _, err := a.registryCreate(ctx); err != nil {
		return err
	}
	return applyMutation(ctx, a, "session", o.ID, false,
		func(ctx context.Context, reg *core.Registry, id string) (*core.Session, core.Result, error) {
			return reg.OpenSession(ctx, id, o.Label, core.ActorRuntime)
		}, func(s *core.Session) (string, string) { return "session " + termtext.Exact(s.ID, 80), string(s.State) })
}

// sessionIDOptions are the session commands that take only an id: passivate,
// close, resume.
type sessionIDOptions struct {
	ID string // full session id or a unique prefix
}

// runSessionPassivate passivates session o.ID as the operator and reaps its
// background jobs ("reap" in JSON).
func runSessionPassivate(ctx context.Context, a *app, o sessionIDOptions) error {
	return a.sessionEnd(ctx, o.ID, false)
}

// runSessionClose closes session o.ID as the operator: its pending approvals
// are cancelled and its background jobs reaped.
func runSessionClose(ctx context.Context, a *app, o sessionIDOptions) error {
	return a.sessionEnd(ctx, o.ID, true)
}

// runSessionResume re-activates passivated session o.ID as the runtime and
// lists the background jobs reaped while it was passivated ("reaped_jobs" in
// JSON, [] when none).
func runSessionResume(ctx context.Context, a *app, o sessionIDOptions) error {
	id, err := idArg("session", o.ID)
	if err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	s, jobs, res, err := reg.ResumeSession(ctx, id, core.ActorRuntime)
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
}

// sessionListOptions are `session list [--state S,…] [--limit N]`.
type sessionListOptions struct {
	States string // comma-separated states; "" = all
	Limit  int    // at most this many rows, newest first; 0 = all
}

// runSessionList prints sessions as a table (or a JSON array). An unknown
// state or a negative limit is ErrInvalid, checked before the registry opens.
func runSessionList(ctx context.Context, a *app, o sessionListOptions) error {
	st, err := parseList(o.States, parseSessionState)
	if err != nil {
		return err
	}
	if err := checkLimit(o.Limit); err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	ss, err := reg.ListSessions(ctx, core.SessionFilter{States: st, Limit: o.Limit})
	if err != nil {
		return err
	}
	return listOutput(a, "sessions", ss, []string{"ID", "STATE", "AGENT", "CREATED", "ACTIVE", "LABEL"}, func(n time.Time, s *core.Session) []string {
		return []string{termtext.Exact(s.ID, 64), string(s.State), orDefault(termtext.Exact(s.Agent, 12), "-"), age(n, s.CreatedAt), age(n, s.LastActivityAt), termtext.Exact(s.Label, 60)}
	})
}

// sessionFields are `session show`'s key: value lines.
func sessionFields(n time.Time, s *core.Session) []kv {
	return []kv{
		{"id", s.ID}, {"label", s.Label}, {"state", string(s.State)},
		{"created_at", stamp(n, s.CreatedAt)}, {"last_activity_at", stamp(n, s.LastActivityAt)},
		{"passivated_at", stamp(n, s.PassivatedAt)},
	}
}

func parseSessionState(s string) (core.SessionState, error) {
	switch st := core.SessionState(s); st {
	case core.SessionActive, core.SessionPassivated, core.SessionClosed:
		return st, nil
	}
	return "", core.Invalidf("unknown session state %q (want one of: active, passivated, closed)", s)
}

// sessionEnd runs session passivate or close (operator decisions).
func (a *app) sessionEnd(ctx context.Context, rawID string, closing bool) error {
	id, err := idArg("session", rawID)
	if err != nil {
		return err
	}
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	var (
		s   *core.Session
		rep core.ReapReport
		res core.Result
	)
	if closing {
		s, rep, res, err = reg.CloseSession(ctx, id, core.OperatorActor())
	} else {
		s, rep, res, err = reg.PassivateSession(ctx, id, core.OperatorActor())
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
