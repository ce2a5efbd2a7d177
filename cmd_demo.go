package main

import "github.com/spf13/cobra"

// demoCommands returns `demo` (SPEC §10). Owned by the demo work.
func demoCommands(a *app) []*cobra.Command { return nil }
