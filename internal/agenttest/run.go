package agenttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The environment variables that name each real CLI (.ci/agents prints them).
const (
	EnvClaude = "CLAWPIT_CLAUDE"
	EnvCodex  = "CLAWPIT_CODEX"
	EnvGemini = "CLAWPIT_GEMINI"
)

// RequireCLI returns the CLI named by env, skipping the test with the
// reason when env is unset or names no executable file.
func RequireCLI(t testing.TB, env, pkg string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("%s is not set: the real %s is not installed (run `eval \"$(.ci/agents)\"`, which needs the npm registry)", env, pkg)
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Skipf("%s=%s is not an executable file (%v): reinstall with .ci/agents", env, p, err)
	}
	return p
}

// Result is one finished CLI run.
type Result struct {
	Stdout, Stderr string
	Code           int           // exit code; -1 when killed by a signal
	Elapsed        time.Duration // from start to exit
	TimedOut       bool          // the context ended first (the process group was killed)
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d after %s (timed out %v)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Elapsed.Round(time.Millisecond), r.TimedOut, r.Stdout, r.Stderr)
}

// Proc is a started CLI.
type Proc struct {
	cmd      *exec.Cmd
	ctx      context.Context
	started  time.Time
	out, err lockedBuffer
	done     chan struct{}
	res      Result
}

// lockedBuffer is a bytes.Buffer safe to read while the process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start starts argv in dir with exactly env (nothing inherited), in its own
// process group, killed as a group when ctx ends: the CLIs start shells and
// hooks that must not outlive a test.
func Start(ctx context.Context, dir string, env []string, argv ...string) (*Proc, error) {
	p := &Proc{ctx: ctx, done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil // /dev/null: headless
	cmd.Stdout, cmd.Stderr = &p.out, &p.err
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	p.cmd = cmd
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() {
		err := cmd.Wait()
		p.res = Result{Stdout: p.out.String(), Stderr: p.err.String(), Elapsed: time.Since(p.started), TimedOut: ctx.Err() != nil}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.res.Code = ee.ExitCode()
		case err != nil:
			p.res.Code = -1
		}
		// Whatever the CLI left behind in its group goes with it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(p.done)
	}()
	return p, nil
}

// Wait waits for the process to exit and returns its result.
func (p *Proc) Wait() Result {
	<-p.done
	return p.res
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stdout is what the process has written to stdout so far.
func (p *Proc) Stdout() string { return p.out.String() }

// baseEnv is the environment every CLI runs with: PATH (the caller's, so
// node and the shell tools are found), a scratch HOME, no terminal, UTF-8,
// UTC, and no CI detection surprises.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=tester", "LOGNAME=tester",
		"TERM=dumb", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC", "SHELL=/bin/bash",
		"TMPDIR=" + filepath.Join(home, "tmp"), "NO_COLOR=1",
	}
}

// scratch makes the scratch directories of a run under root: home (with
// home/tmp) and work.
func scratch(root string) (home, work string, err error) {
	home, work = filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{filepath.Join(home, "tmp"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", fmt.Errorf("scratch dir: %w", err)
		}
	}
	return home, work, nil
}
