// Package adversarial holds the gate's adversarial suite: one test per class
// of attack that once broke clawpit's promises, each driving the real binary
// (and, where one exists, the real client: tmux, OpenSSH's ssh) as an
// attacker would. See README's "Security model".
//
// Files are named by class: spoof_test.go (what an operator decides on is
// shown exactly), replay_test.go (an answer belongs to one tool call),
// hook_test.go (the gated hook fails closed, in time), ssh_test.go (no one
// outside the operators list can starve the console), redact_test.go (no
// secret survives into a log), registry_test.go (foreign files, counters,
// ids).
package adversarial

import (
	"fmt"
	"os"
	"testing"

	"github.com/clawpit/clawpit/internal/e2e"
)

// bin is the clawpit binary under test, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	b, cleanup, err := e2e.BuildBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// newCLI is a CLI on a fresh registry path.
func newCLI(t testing.TB) *e2e.CLI {
	t.Helper()
	return e2e.NewCLI(t, bin)
}
