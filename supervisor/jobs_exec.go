package supervisor

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// checkCommand reports, before anything is recorded, why argv0 could not be
// started in cwd (docs/contract.md "Commands: exit codes and JSON": bad input gets a clear message and nothing is
// half-written): ErrInvalid naming the command when a bare name is not found
// in $PATH, or a path (absolute, or relative to cwd as the job resolves it)
// does not exist, is a directory or is not executable. The supervisor
// inherits this process's environment, so $PATH is the one the job sees.
func checkCommand(argv0, cwd string) error {
	if !strings.Contains(argv0, "/") {
		_, err := exec.LookPath(argv0)
		if err == nil || errors.Is(err, exec.ErrDot) {
			return nil // ErrDot: found via a relative $PATH entry; the job's own exec decides
		}
		if errors.Is(err, exec.ErrNotFound) {
			return core.Invalidf("command %q not found in $PATH", argv0)
		}
		return core.Invalidf("command %q cannot be run: %v", argv0, unwrapExec(err))
	}
	path := argv0
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return core.Invalidf("command %s does not exist (looked for %s)", argv0, path)
	case err != nil:
		return core.Invalidf("command %s cannot be run: %v", argv0, unwrapExec(err))
	case st.IsDir():
		return core.Invalidf("command %s is a directory", argv0)
	}
	if _, err := exec.LookPath(path); err != nil {
		return core.Invalidf("command %s is not executable (no execute permission on %s)", argv0, path)
	}
	return nil
}

// unwrapExec drops the name exec.Error and fs.PathError repeat.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err
}
