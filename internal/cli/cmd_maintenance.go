package cli

// `clawpit maintenance`: repairs of the registry itself (rebuild-index).

import (
	"context"
	"fmt"

	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

func maintenanceCommand(a *app) *cobra.Command {
	c := groupCommand("maintenance", "Repairs of the registry itself: rebuild-index")
	rebuild := &cobra.Command{
		Use:   "rebuild-index",
		Short: "Rebuild the Tasks filter's and label order's indexes from the tasks (SQLite)",
		Long: `Rebuild the SQLite registry's indexes of tasks from the tasks table alone:
the Tasks filter's trigram indexes and the label order's name index, in
one transaction (writers wait for it: about 15 s per million tasks); it
checks that every task is keyed in its bucket before it commits.

Run it when the Tasks filter misses or mislabels rows: after a VACUUM by a
SQLite that renumbered the tasks' row ids, a restore of a partial copy, or
a write by another program with clawpit's triggers dropped. Nothing else
in the registry changes. On PostgreSQL there is nothing to do (its indexes
are PostgreSQL's own: REINDEX).`,
		Example: "  clawpit maintenance rebuild-index",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMaintenanceRebuildIndex(cmd.Context(), a, maintenanceRebuildIndexOptions{})
		},
	}
	c.AddCommand(rebuild)
	return c
}

// maintenanceRebuildIndexOptions are `maintenance rebuild-index` (no flags).
type maintenanceRebuildIndexOptions struct{}

// runMaintenanceRebuildIndex rebuilds the registry's task indexes
// (store.DB.RebuildIndexes) and says how many tasks it indexed and how
// long writers waited. Errors: a missing registry (exit 4), a read-only
// or locked one (exit 1).
func runMaintenanceRebuildIndex(ctx context.Context, a *app, _ maintenanceRebuildIndexOptions) error {
	if _, err := a.registry(ctx); err != nil {
		return err
	}
	r, err := a.db.RebuildIndexes(ctx)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(r)
	}
	if r.Engine == "postgres" {
		_, err = fmt.Fprintln(a.stdout, "nothing to rebuild: a PostgreSQL registry's indexes are PostgreSQL's own (REINDEX)")
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "rebuilt the task indexes: %s tasks in %d ms\n", termtext.Thousands(r.Tasks), r.Ms)
	return err
}
