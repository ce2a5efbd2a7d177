package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/supervisor"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as clawpit: testscript copies it onto
// $PATH as "clawpit" and, run under that name, it does what the binary's
// main does (exec shim first, then Run under the signal context).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"clawpit": func() {
			if len(os.Args) > 1 && os.Args[1] == supervisor.ExecShimCommand {
				os.Exit(supervisor.RunExecShim(os.Args[2:]))
			}
			ctx, stop := SignalContext(context.Background())
			code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			stop()
			os.Exit(code)
		},
	})
}

// TestScripts runs the command transcripts in testdata/script: each .txtar
// is a readable session of clawpit commands and what they print, on its own
// registry ($WORK/registry.db). Besides testscript's commands, `capture VAR`
// sets $VAR to the last command's stdout, trimmed (an id it printed).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			// Nothing may reach the real registry or config under $HOME.
			e.Setenv("CLAWPIT_HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("CLAWPIT_DB", filepath.Join(e.WorkDir, "registry.db"))
			e.Setenv("CLAWPIT_CONFIG", filepath.Join(e.WorkDir, "config.toml"))
			e.Setenv("CLAWPIT_LISTEN_DB", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: capture VAR")
				}
				v := strings.TrimSpace(ts.ReadFile("stdout"))
				if v == "" || strings.ContainsAny(v, "\n ") {
					ts.Fatalf("capture %s: stdout %q is not one word", args[0], v)
				}
				ts.Setenv(args[0], v)
			},
		},
	})
}
