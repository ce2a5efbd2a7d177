package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command transcripts in testdata/script against the
// built binary: each .txtar is a session a reader can follow (the commands,
// what they print, their exit codes), on its own registry
// ($WORK/registry.db) and CLAWPIT_HOME. Besides testscript's own commands:
//
//   - `exits N clawpit ARGS…` runs the binary and fails unless it exits
//     with status N (testscript's `! exec` only tells zero from non-zero;
//     the exit codes are part of the contract, docs/contract.md);
//   - `capture VAR` sets $VAR to the last command's stdout, trimmed (an id
//     it printed);
//   - `snapshot FILE` writes every row of every registry table to FILE;
//   - `unchanged FILE` fails unless the registry's rows are still those
//     FILE holds: a refused command changed nothing.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("PATH", filepath.Dir(clawpitBin)+string(os.PathListSeparator)+e.Getenv("PATH"))
			// Nothing may reach the real registry or config under $HOME.
			e.Setenv("CLAWPIT_HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("CLAWPIT_DB", filepath.Join(e.WorkDir, "registry.db"))
			e.Setenv("CLAWPIT_CONFIG", filepath.Join(e.WorkDir, "config.toml"))
			e.Setenv("CLAWPIT_LISTEN_DB", "")
			e.Setenv("USER", "tester")
			e.Setenv("SSH_CONNECTION", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     scriptExits,
			"capture":   scriptCapture,
			"snapshot":  scriptSnapshot,
			"unchanged": scriptUnchanged,
		},
	})
}

// scriptExits is `exits N PROG ARGS…`.
func scriptExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: exit status %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// scriptCapture is `capture VAR`.
func scriptCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: capture VAR")
	}
	v := strings.TrimSpace(ts.ReadFile("stdout"))
	if v == "" || strings.ContainsAny(v, "\n ") {
		ts.Fatalf("capture %s: stdout %q is not one word", args[0], v)
	}
	ts.Setenv(args[0], v)
}

// scriptSnapshot is `snapshot FILE`: the rows of $CLAWPIT_DB (registrySnapshot).
func scriptSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: snapshot FILE")
	}
	s, err := registrySnapshot(ts.Getenv("CLAWPIT_DB"))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(s), 0o644))
}

// scriptUnchanged is `unchanged FILE`.
func scriptUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: unchanged FILE")
	}
	now, err := registrySnapshot(ts.Getenv("CLAWPIT_DB"))
	ts.Check(err)
	if before := ts.ReadFile(args[0]); now != before {
		ts.Fatalf("the registry changed:\nbefore:\n%s\nafter:\n%s", before, now)
	}
}
