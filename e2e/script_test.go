package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/internal/e2e"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command transcripts in testdata/script against the
// built binary: each .txtar is a session a reader can follow (the commands,
// what they print, their exit codes), on its own registry
// ($WORK/registry.db) and CLAWPIT_HOME. Besides testscript's own commands
// and internal/e2e's (`exits N clawpit ARGS…`, `capture VAR [REGEXP]`):
//
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
		Cmds: scriptCmds(),
	})
}

func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := e2e.ScriptCmds()
	cmds["snapshot"] = scriptSnapshot
	cmds["unchanged"] = scriptUnchanged
	return cmds
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
