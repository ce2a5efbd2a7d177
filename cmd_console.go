package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// addConsoleFlags adds the console's flags to the root (SPEC §8 first line).
// Owned by the console work.
func addConsoleFlags(root *cobra.Command, a *app) {}

// runConsole opens the console.
func runConsole(cmd *cobra.Command, a *app) error {
	return errors.New("the console is not built yet")
}
