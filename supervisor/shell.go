package supervisor

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
)

// Shell runs command lines for core.Notifier (`--notify-cmd`): each through
// `sh -c` as a process group of its own, so that the group, and not only
// sh, is killed when the command's time is up: a notification command that
// starts a pipeline or a background child leaves nothing running behind it.
// The zero value is ready to use.
type Shell struct{}

var _ core.Shell = Shell{}

// shellWaitDelay is how long Run waits, after killing the group, for the
// command's output pipes to close (a child that escaped the group may hold
// them): past it Run returns anyway.
const shellWaitDelay = time.Second

// Run runs command through `sh -c` with stdin on its standard input and env
// added to this process's environment, and returns its stdout and stderr
// together. When ctx ends the process group is killed with SIGKILL. err is
// nil exactly when the command exited 0; otherwise *exec.ExitError, the
// start error, or the error of the kill's aftermath (exec.ErrWaitDelay).
func (Shell) Run(ctx context.Context, command string, stdin []byte, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = shellWaitDelay
	err := cmd.Run()
	return out.Bytes(), err
}
