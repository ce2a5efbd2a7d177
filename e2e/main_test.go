// Package e2e holds clawpit's end-to-end tests: the real binary, built once
// by TestMain, driven as a user drives it — plain commands, the console in
// tmux, `clawpit serve` over OpenSSH, the real agent CLIs' hooks, PostgreSQL
// when CLAWPIT_TEST_POSTGRES names a cluster. The command transcripts that
// need none of that are examples in testdata/script (TestScripts). The
// harness itself (building, tmux, ssh) is internal/e2e.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/internal/e2e"
)

var (
	// clawpitBin is the binary under test, built by TestMain.
	clawpitBin string
	// repoRoot is the module's root: the tests read the repository's own
	// files (README.md, docs/, testdata of other packages) from there, not
	// from the test's working directory (this package's folder).
	repoRoot = e2e.ModuleRoot()
)

// inRepo is a path of the repository given relative to its root.
func inRepo(rel ...string) string {
	return filepath.Join(append([]string{repoRoot}, rel...)...)
}

func TestMain(m *testing.M) {
	bin, cleanup, err := e2e.BuildBinary()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clawpitBin = bin
	code := m.Run()
	cleanup()
	os.Exit(code)
}
