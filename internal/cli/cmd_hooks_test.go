package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hooks status reports every file, and its exit status says whether one of
// them could not be read (docs/contract.md "Commands: exit codes and JSON": 2 for bad input).
func TestHooksStatusExit(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{bad"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		settings string
		json     bool
		code     int
		want     string
	}{
		{"missing file", filepath.Join(dir, "none.json"), false, 0, "not installed"},
		{"bad JSON", bad, false, 2, "bad JSON"},
		{"bad JSON, --json", bad, true, 2, `"error"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--db", filepath.Join(dir, "r.db"), "hooks", "status", "--settings", tc.settings}
			if tc.json {
				args = append([]string{"--json"}, args...)
			}
			var o, e bytes.Buffer
			code := Run(context.Background(), args, strings.NewReader(""), &o, &e)
			if code != tc.code || !strings.Contains(o.String(), tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, o.String(), e.String(), tc.code, tc.want)
			}
		})
	}
}

// hooks install refuses bad input (exit 2, naming it) before it creates the
// registry or touches the settings file.
func TestHooksInstallBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{bad"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "settings.json")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad gate", []string{"--settings", good, "--gate", "("}, `"("`},
		{"bad settings JSON", []string{"--settings", bad}, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(dir, "reg", "registry.db")
			var o, e bytes.Buffer
			code := Run(context.Background(), append([]string{"--db", db, "hooks", "install"}, tc.args...), strings.NewReader(""), &o, &e)
			if code != 2 || !strings.Contains(e.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming %q", code, e.String(), tc.want)
			}
			for _, p := range []string{db, filepath.Dir(db), good, bad + ".clawpit-backup"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s exists after a refused install", p)
				}
			}
		})
	}
}
