package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "script.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		argv0, want string // want "" = startable
	}{
		{"sh", ""},
		{"/bin/sh", ""},
		{"./script.sh", ""},
		{filepath.Join(dir, "script.sh"), ""},
		{"no-such-command-clawpit", `command "no-such-command-clawpit" not found in $PATH`},
		{"./missing.sh", "command ./missing.sh does not exist (looked for " + filepath.Join(dir, "missing.sh") + ")"},
		{"./notes.txt", "command ./notes.txt is not executable"},
		{"./sub", "command ./sub is a directory"},
	} {
		err := checkCommand(c.argv0, dir)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.argv0, err)
			}
			continue
		}
		if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want ErrInvalid containing %q", c.argv0, err, c.want)
		}
	}
}
