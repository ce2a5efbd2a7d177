package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptExitCodes: a command stopped by Ctrl-C or SIGTERM says so and
// exits 128 + the signal (130, 143), never "context canceled" with exit 1;
// an interrupted approval wait says the approval is still pending. A follow
// (notifications --follow, job follow) ends with 0: Ctrl-C is how it ends.
func TestInterruptExitCodes(t *testing.T) {
	c := newCLI(t)
	id := c.ok("approval", "request", "--session", "S1", "--tool", "Bash", "--command", "ls")
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		args []string
		want string
	}{
		{syscall.SIGINT, 130, []string{"approval", "wait", id}, "interrupted (stopped by SIGINT); approval " + id + " is still pending"},
		{syscall.SIGTERM, 143, []string{"approval", "wait", id}, "interrupted (stopped by SIGTERM); approval " + id + " is still pending"},
		// A follow's normal end is Ctrl-C: exit 0, nothing on stderr.
		{syscall.SIGINT, 0, []string{"notifications", "--follow"}, ""},
	} {
		cmd := c.command(nil, tc.args...)
		var se bytes.Buffer
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // past start-up: the signal handler is in place
		_ = cmd.Process.Signal(tc.sig)
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != tc.code || !strings.Contains(se.String(), tc.want) || strings.Contains(se.String(), "context canceled") {
			t.Errorf("%v after %v: exit %d, stderr %q; want exit %d and %q", tc.args, tc.sig, code, se.String(), tc.code, tc.want)
		}
	}
	if st := c.ok("approval", "show", id); !strings.Contains(st, "pending") {
		t.Errorf("approval after interrupted waits:\n%s", st)
	}
}
