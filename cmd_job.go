package main

import "github.com/spf13/cobra"

// jobCommands returns `job …` and the hidden supervisor command (SPEC §6).
// Owned by the background-jobs work.
func jobCommands(a *app) []*cobra.Command { return nil }
