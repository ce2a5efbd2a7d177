package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/internal/e2e"
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
// registry ($WORK/registry.db). Besides testscript's commands, internal/e2e's:
// `exits N clawpit ARGS…` checks an exit status, `capture VAR [REGEXP]` sets
// $VAR to an id the last command printed. $TRANSCRIPTS is
// adapters/claude/streamjson/testdata/claude-stream.
func TestScripts(t *testing.T) {
	transcripts, err := filepath.Abs(filepath.Join("..", "..", "adapters", "claude", "streamjson", "testdata", "claude-stream"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			// Nothing may reach the real registry or config under $HOME.
			e.Setenv("CLAWPIT_HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("CLAWPIT_DB", filepath.Join(e.WorkDir, "registry.db"))
			e.Setenv("CLAWPIT_CONFIG", filepath.Join(e.WorkDir, "config.toml"))
			e.Setenv("CLAWPIT_LISTEN_DB", "")
			// The real Claude stream-json transcripts (their MANIFEST.tsv
			// says where each comes from), read in place: `stdin
			// $TRANSCRIPTS/03-agentharness-bash-done.jsonl`.
			e.Setenv("TRANSCRIPTS", transcripts)
			return nil
		},
		Cmds: e2e.ScriptCmds(),
	})
}
