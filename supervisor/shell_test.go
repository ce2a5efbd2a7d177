package supervisor_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/supervisor"
)

// TestShellRuns: stdin reaches the command, env is added to the
// environment, stdout and stderr come back together, and a non-zero exit is
// an *exec.ExitError.
func TestShellRuns(t *testing.T) {
	out, err := supervisor.Shell{}.Run(context.Background(), `cat; echo "$X" >&2; exit 3`, []byte("in\n"), []string{"X=from-env"})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("err %v, want exit status 3", err)
	}
	if string(out) != "in\nfrom-env\n" {
		t.Fatalf("output %q", out)
	}
	if _, err := (supervisor.Shell{}).Run(context.Background(), "true", nil, nil); err != nil {
		t.Fatalf("true: %v", err)
	}
}

// TestShellKillsItsGroup: when ctx ends the command's whole process group is
// killed, a background child included, and Run returns within the wait
// delay rather than when the child would have ended.
func TestShellKillsItsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := supervisor.Shell{}.Run(ctx, `sleep 30 & echo $! > "$PIDF"; wait`, nil, []string{"PIDF=" + pidFile})
	if err == nil {
		t.Fatal("a killed command reported success")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Run returned after %v", d)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); supervisor.ProcessAlive(pid, 0); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command's background child %d outlived the kill", pid)
		}
	}
}
