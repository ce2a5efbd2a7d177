package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// ErrForbidden is the refusal of an action from a session whose operator is
// readonly or no longer registered.
var ErrForbidden = errors.New("not allowed")

// guard is the server side of roles (README "Serve the console over SSH"): every action of a session
// goes through it, whatever the console shows. It re-reads the operator by
// key fingerprint for each action, so removing an operator or a readonly
// role takes effect at once, and it journals as the session's operator and
// address whatever actor the console passed.
type guard struct {
	reg   *core.Registry
	fp    string
	actor core.Actor
	log   *slog.Logger

	actions tui.Actions
	jobs    tui.JobActions
	maint   tui.Maintenance
}

// allowed returns nil when the key's operator may act now; otherwise a
// wrapped ErrForbidden saying why.
func (g *guard) allowed(ctx context.Context, what string) error {
	op, err := g.reg.OperatorByFingerprint(ctx, g.fp)
	switch {
	case errors.Is(err, core.ErrNotFound):
		err = fmt.Errorf("%w: this key's operator was removed", ErrForbidden)
	case err != nil:
		return fmt.Errorf("checking the operator's role: %w", err)
	case op.Role != core.RoleOperator:
		err = fmt.Errorf("%w: operator %s is %s", ErrForbidden, op.Name, op.Role)
	default:
		return nil
	}
	g.log.Warn("action refused", "action", what, "err", err)
	return err
}

func (g *guard) ApproveApproval(ctx context.Context, id string, scope core.Scope, _ core.Actor) (*core.Approval, *core.Grant, core.Result, error) {
	if err := g.allowed(ctx, "approve "+id); err != nil {
		return nil, nil, core.Result{}, err
	}
	return g.actions.ApproveApproval(ctx, id, scope, g.actor)
}

func (g *guard) ApproveWithSuggestion(ctx context.Context, id string, n int, _ core.Actor) (*core.Approval, core.Result, error) {
	if err := g.allowed(ctx, "approve "+id); err != nil {
		return nil, core.Result{}, err
	}
	return g.actions.ApproveWithSuggestion(ctx, id, n, g.actor)
}

func (g *guard) DenyApproval(ctx context.Context, id, reason string, _ core.Actor) (*core.Approval, core.Result, error) {
	if err := g.allowed(ctx, "deny "+id); err != nil {
		return nil, core.Result{}, err
	}
	return g.actions.DenyApproval(ctx, id, reason, g.actor)
}

func (g *guard) CancelTask(ctx context.Context, id, reason string, _ core.Actor) (*core.Task, core.Result, error) {
	if err := g.allowed(ctx, "cancel task "+id); err != nil {
		return nil, core.Result{}, err
	}
	return g.actions.CancelTask(ctx, id, reason, g.actor)
}

func (g *guard) KillRun(ctx context.Context, runID, reason string, _ core.Actor) (*core.Run, core.Result, error) {
	if err := g.allowed(ctx, "kill run "+runID); err != nil {
		return nil, core.Result{}, err
	}
	return g.actions.KillRun(ctx, runID, reason, g.actor)
}

func (g *guard) ReadNotification(ctx context.Context, id int64, _ core.Actor) (core.Result, error) {
	if err := g.allowed(ctx, "mark alert read "+strconv.FormatInt(id, 10)); err != nil {
		return core.Result{}, err
	}
	return g.actions.ReadNotification(ctx, id, g.actor)
}

func (g *guard) ReadAllNotifications(ctx context.Context, _ core.Actor) (int, error) {
	if err := g.allowed(ctx, "mark all alerts read"); err != nil {
		return 0, err
	}
	return g.actions.ReadAllNotifications(ctx, g.actor)
}

func (g *guard) CancelJob(ctx context.Context, id string, _ core.Actor) (*core.Job, core.Result, error) {
	if err := g.allowed(ctx, "cancel job "+id); err != nil {
		return nil, core.Result{}, err
	}
	if g.jobs == nil {
		return nil, core.Result{}, fmt.Errorf("job control is not available")
	}
	return g.jobs.CancelJob(ctx, id, g.actor)
}

func (g *guard) ReapSession(ctx context.Context, session string, _ core.Actor) (core.ReapReport, error) {
	if err := g.allowed(ctx, "reap "+session); err != nil {
		return core.ReapReport{}, err
	}
	if g.jobs == nil {
		return core.ReapReport{}, fmt.Errorf("job control is not available")
	}
	return g.jobs.ReapSession(ctx, session, g.actor)
}

// Plan only reads: any operator may look at the dry run.
func (g *guard) Plan(ctx context.Context) (*tui.Plan, error) { return g.maint.Plan(ctx) }

func (g *guard) Apply(ctx context.Context, p *tui.Plan) (tui.SweepResult, error) {
	if err := g.allowed(ctx, "maintenance"); err != nil {
		return tui.SweepResult{}, err
	}
	return g.maint.Apply(ctx, p)
}

func (g *guard) Sweep(ctx context.Context) (tui.SweepResult, error) {
	if err := g.allowed(ctx, "sweep"); err != nil {
		return tui.SweepResult{}, err
	}
	return g.maint.Sweep(ctx)
}

func (g *guard) Watchdog(ctx context.Context) (tui.SweepResult, error) {
	if err := g.allowed(ctx, "watchdog"); err != nil {
		return tui.SweepResult{}, err
	}
	return g.maint.Watchdog(ctx)
}
