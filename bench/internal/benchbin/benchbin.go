// Package benchbin gives the benchmarks the clawpit binary they measure.
package benchbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build returns bin when it is set; otherwise it builds clawpit from the
// current directory (the repository root) into dir/clawpit, go build's
// output going to stderr, and returns that path. Errors: the failed build,
// wrapped.
func Build(dir, bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin = filepath.Join(dir, "clawpit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return bin, nil
}
