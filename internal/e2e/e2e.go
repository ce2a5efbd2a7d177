// Package e2e is the harness of clawpit's end-to-end tests: it builds the
// real binary once per test process and drives it as a user would, as a
// plain command or inside a detached tmux session (send-keys to type,
// capture-pane to read the screen). It is imported only by tests.
package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/store"
)

// BuildBinary builds clawpit (with store.BuildTags) into a fresh temporary
// directory and returns the binary's path and a function that removes it.
// It is meant for TestMain: errors are returned, not reported.
func BuildBinary() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "clawpit-test-bin-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "clawpit")
	build := exec.Command("go", "build", "-tags", store.BuildTags, "-o", bin, ".")
	build.Dir = ModuleRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building clawpit: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// ModuleRoot is the directory of clawpit's go.mod (found from this file's
// own path, so it holds whatever the test's working directory is).
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// CLI runs the binary against one registry with a private CLAWPIT_HOME.
type CLI struct {
	T    testing.TB
	Bin  string
	DB   string
	Home string
	Env  []string // more environment (CLAWPIT_HOST=… for a simulated host)
}

// NewCLI is a CLI on a registry path in a fresh t.TempDir() (the file is
// not created until a command records work).
func NewCLI(t testing.TB, bin string) *CLI {
	t.Helper()
	dir := t.TempDir()
	return &CLI{T: t, Bin: bin, DB: filepath.Join(dir, "registry.db"), Home: filepath.Join(dir, "home")}
}

// Out is one finished command.
type Out struct {
	Stdout, Stderr string
	Code           int
}

func (o Out) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", o.Code, o.Stdout, o.Stderr)
}

// Command prepares the binary with --db and the CLI's environment.
func (c *CLI) Command(stdin io.Reader, args ...string) *exec.Cmd {
	cmd := exec.Command(c.Bin, append([]string{"--db", c.DB}, args...)...)
	cmd.Env = append(append(os.Environ(), "CLAWPIT_HOME="+c.Home, "USER=tester", "SSH_CONNECTION="), c.Env...)
	cmd.Stdin = stdin
	return cmd
}

// RunCmd runs a prepared command and collects its output and exit status;
// a command that cannot start fails the test.
func (c *CLI) RunCmd(cmd *exec.Cmd) Out {
	c.T.Helper()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	o := Out{Stdout: so.String(), Stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
	} else if err != nil {
		c.T.Fatalf("%v: %v", cmd.Args, err)
	}
	return o
}

// RunIn runs one command with stdin.
func (c *CLI) RunIn(stdin io.Reader, args ...string) Out {
	c.T.Helper()
	return c.RunCmd(c.Command(stdin, args...))
}

// Run runs one command with no stdin.
func (c *CLI) Run(args ...string) Out {
	c.T.Helper()
	return c.RunIn(nil, args...)
}

// OK runs a command that must exit 0 and returns its trimmed stdout.
func (c *CLI) OK(args ...string) string {
	c.T.Helper()
	o := c.Run(args...)
	if o.Code != 0 {
		c.T.Fatalf("clawpit %v: %s", args, o)
	}
	return strings.TrimSpace(o.Stdout)
}
