package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stopped is the cause of a context that a signal ended (context.Cause):
// commands that are interrupted say so and exit 128 + the signal's number,
// as shells report it (130 for Ctrl-C, 143 for SIGTERM).
type Stopped struct{ Sig syscall.Signal }

func (s Stopped) Error() string { return "stopped by " + unix.SignalName(s.Sig) }

// ExitCode is 128 + the signal's number.
func (s Stopped) ExitCode() int { return 128 + int(s.Sig) }

// SignalContext is a context ended by the first SIGINT or SIGTERM, with
// Stopped as its cause. stop releases the signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(Stopped{Sig: s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// stoppedBy is the signal that ended ctx, if one did.
func stoppedBy(ctx context.Context) (Stopped, bool) {
	var s Stopped
	if ctx.Err() == nil {
		return s, false
	}
	ok := errors.As(context.Cause(ctx), &s)
	return s, ok
}
