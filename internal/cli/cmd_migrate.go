package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/spf13/cobra"
)

// migrateCmd is `clawpit migrate --from registry.db --to postgres://…`
// (README "Many hosts: PostgreSQL"): one SQLite registry copied into an empty PostgreSQL one.
func migrateCmd(a *app) *cobra.Command {
	var from, to string
	c := &cobra.Command{
		Use:   "migrate --from registry.db --to postgres://…",
		Short: "Copy a SQLite registry into a PostgreSQL one (for many hosts)",
		Long: `Copy every table of a SQLite registry — sessions, tasks, runs, approvals,
grants, jobs, notifications, hosts and the event journal — into an empty
PostgreSQL registry, ids and timestamps unchanged, in one transaction: either
everything is copied or nothing is. The PostgreSQL schema is created when
missing. Jobs recorded before jobs had a host are given this machine's name
(CLAWPIT_HOST or the hostname): only this host can see their processes.
Prints how many rows of each kind moved.

Stop the daemon and consoles on the SQLite registry first; afterwards point
every host at the PostgreSQL URL (--db or CLAWPIT_DB).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return usageError{fmt.Errorf("required flags --from and --to (see '%s --help')", cmd.CommandPath())}
			}
			if store.IsPostgresURL(from) {
				return core.Invalidf("--from %s: give the SQLite registry file to copy from", store.RedactURL(from))
			}
			if !store.IsPostgresURL(to) {
				return core.Invalidf("--to %q: give a postgres:// or postgresql:// URL", to)
			}
			ctx := cmd.Context()
			started := time.Now()
			src, err := store.Open(ctx, from, store.Options{MustExist: true})
			if err != nil {
				if errors.Is(err, core.ErrNotFound) {
					return core.NotFoundf("no registry database at %s", sweepAbs(from))
				}
				return err
			}
			defer src.Close()
			dst, err := store.Open(ctx, to, store.Options{})
			if err != nil {
				return err
			}
			defer dst.Close()
			counts, err := store.CopyToPostgres(ctx, src, dst, core.HostName())
			if err != nil {
				return fmt.Errorf("nothing was copied: %w", err)
			}
			// The copy is committed; without a vacuum the console's counts
			// read every row's heap page until autovacuum comes by.
			if err := dst.VacuumAnalyze(ctx); err != nil {
				fmt.Fprintf(a.stderr, "clawpit: warning: copied, but %v: autovacuum will do it later\n", err)
			}
			if a.jsonOut {
				return a.printJSON(map[string]any{"from": src.Path(), "to": dst.Path(), "tables": counts,
					"duration_ms": time.Since(started).Milliseconds()})
			}
			parts := make([]string, len(counts))
			for i, c := range counts {
				parts[i] = fmt.Sprintf("%d %s", c.Rows, c.Table)
			}
			fmt.Fprintf(a.stdout, "Copied %s to %s in %s: %s\n", src.Path(), dst.Path(),
				time.Since(started).Round(time.Millisecond), strings.Join(parts, " · "))
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", "SQLite registry file to copy")
	c.Flags().StringVar(&to, "to", "", "PostgreSQL registry URL (postgres://user@host/db)")
	return c
}
