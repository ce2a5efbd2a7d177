package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawpit/clawpit/store"
)

// The multi-host soak on PostgreSQL, short: three hosts (CLAWPIT_HOST), a
// daemon each, six CLI writers, SIGKILLs every ~300 ms, then the invariants:
// no violation. Skipped without CLAWPIT_TEST_POSTGRES (.ci/pg start); the
// long run is `go run -tags sqlite_fts5 ./bench/soak -pg URL -hosts 3`.
func TestSoakPostgresHosts(t *testing.T) {
	base := os.Getenv("CLAWPIT_TEST_POSTGRES")
	if base == "" {
		t.Skip("CLAWPIT_TEST_POSTGRES is not set (.ci/pg start): the PostgreSQL soak did not run")
	}
	if testing.Short() {
		t.Skip("-short: the soak runs 20 s")
	}
	// The test runs in bench/soak: build clawpit from the repository root.
	bin := filepath.Join(t.TempDir(), "clawpit")
	build := exec.Command("go", "build", "-tags", store.BuildTags, "-o", bin, ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	v, err := run(20*time.Second, 6, 300*time.Millisecond, bin, false, base, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	if v != 0 {
		t.Fatalf("%d invariant violations (see the report above)", v)
	}
}
