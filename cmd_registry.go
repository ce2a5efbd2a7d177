package main

import "github.com/spf13/cobra"

// registryCommands returns the session, task, run, approval and grant commands
// (SPEC §8). Owned by the registry CLI work.
func registryCommands(a *app) []*cobra.Command { return nil }
