// Package benchbin gives the benchmarks the clawpit binary they measure.
package benchbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/clawpit/clawpit/store"
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
	build := exec.Command("go", "build", "-tags", store.BuildTags, "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build: %w", err)
	}
	return bin, nil
}

// Workdir makes a temporary directory named after prefix and gives it the
// binary (Build(dir, bin)). With keep the directory is printed and left
// behind; otherwise done removes it. Errors: the directory or the build.
func Workdir(prefix, bin string, keep bool) (dir, clawpit string, done func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", "", nil, err
	}
	done = func() { os.RemoveAll(dir) }
	if keep {
		fmt.Println("directory:", dir)
		done = func() {}
	}
	if clawpit, err = Build(dir, bin); err != nil {
		done()
		return "", "", nil, err
	}
	return dir, clawpit, done, nil
}
