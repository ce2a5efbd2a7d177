package cli

// `clawpit grant`: list, revoke.

import (
	"context"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

func grantCommand(a *app) *cobra.Command {
	c := groupCommand("grant", "Remembered approvals: list, revoke")
	list := &cobra.Command{
		Use:   "list",
		Short: "List grants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGrantList(cmd.Context(), a, grantListOptions{})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Delete a grant; later requests are no longer approved by it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGrantRevoke(cmd.Context(), a, grantRevokeOptions{ID: args[0]})
		},
	}
	c.AddCommand(list, revoke)
	return c
}

// grantListOptions are `grant list` (it has no flags).
type grantListOptions struct{}

// runGrantList prints the remembered approvals as a table (or a JSON array).
func runGrantList(ctx context.Context, a *app, _ grantListOptions) error {
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	gs, err := r.ListGrants(ctx)
	if err != nil {
		return err
	}
	return listOutput(a, "grants", gs, []string{"ID", "SCOPE", "SESSION", "TOOL", "PATTERN", "AGE", "CREATED BY"}, func(n time.Time, g *core.Grant) []string {
		return []string{g.ID, string(g.Scope), termtext.Exact(orDash(g.Session), 40), termtext.Exact(g.Tool, 30), termtext.Exact(g.Pattern, 60),
			age(n, g.CreatedAt), termtext.Exact(g.CreatedBy, 60)}
	})
}

// grantRevokeOptions are `grant revoke ID`.
type grantRevokeOptions struct {
	ID string // full grant id or a unique prefix
}

// runGrantRevoke deletes grant o.ID as the operator; later requests are no
// longer approved by it.
func runGrantRevoke(ctx context.Context, a *app, o grantRevokeOptions) error {
	id, err := idArg("grant", o.ID)
	if err != nil {
		return err
	}
	r, err := a.registry(ctx)
	if err != nil {
		return err
	}
	g, err := r.RevokeGrant(ctx, id, core.OperatorActor())
	if err != nil {
		return err
	}
	return a.printMutation(core.Result{Applied: true}, "grant", g, "grant "+g.ID, "revoked ("+termtext.Exact(g.Tool+" "+g.Pattern, 100)+")")
}
