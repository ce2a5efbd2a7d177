// Command clawpit is the operator's console for AI-agent runtimes: a task
// registry, a maintenance sweeper, a background-job supervisor and a Bubble
// Tea console (docs/architecture.md). Everything lives in internal/cli and below.
package main

import (
	"context"
	"os"

	clawpit "github.com/clawpit/clawpit/internal/cli"
	"github.com/clawpit/clawpit/supervisor"
)

func main() {
	// A job's start shim (supervisor.RunExecShim) execs the command: nothing else
	// of clawpit may run first.
	if len(os.Args) > 1 && os.Args[1] == supervisor.ExecShimCommand {
		os.Exit(supervisor.RunExecShim(os.Args[2:]))
	}
	ctx, stop := clawpit.SignalContext(context.Background())
	code := clawpit.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
