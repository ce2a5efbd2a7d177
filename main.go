// Command clawpit is the operator's console for AI-agent runtimes: a task
// registry, a maintenance sweeper, a background-job supervisor and a Bubble
// Tea console (SPEC §1). Everything lives in internal/cli and below.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	clawpit "github.com/clawpit/clawpit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := clawpit.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
