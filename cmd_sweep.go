package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// sweepCommands returns `sweep`, `daemon` and `notifications` (SPEC §5, §7).
// Owned by the sweeper work.
func sweepCommands(a *app) []*cobra.Command { return nil }

// addRootSweepFlags adds --sweep-once, --dry-run and the thresholds to the root.
func addRootSweepFlags(root *cobra.Command, a *app) {
	root.Flags().Bool("sweep-once", false, "run one maintenance sweep and exit (0 on success, 1 on error)")
}

func (a *app) sweepOnceFlag(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("sweep-once")
	return v
}

// runSweepOnce runs one sweep for `clawpit --sweep-once`.
func runSweepOnce(cmd *cobra.Command, a *app) error {
	return errors.New("the sweeper is not built yet")
}
