package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
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

// TestGatedHookDeadlineIsTheRegistrysWait: a gated call whose try the
// hook's own deadline cut short (on SQLite a bare context deadline, no
// PostgreSQL server in sight) is denied as a registry that stayed busy
// until the deadline, and the reason names no PostgreSQL.
func TestGatedHookDeadlineIsTheRegistrysWait(t *testing.T) {
	ta := newTestApp(t)
	if _, err := ta.registryCreate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	p := &claude.Payload{SessionID: "s1", HookEventName: "PreToolUse", ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"make"}`), ToolUseID: "toolu_1"}
	d, err := ta.decideRetrying(ctx, claude.Config{ApprovalTimeout: time.Second}, p)
	if err == nil || d.Permission != claude.Deny {
		t.Fatalf("decision %+v, err %v; want a deny", d, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(d.Reason, "the registry stayed busy until the hook's deadline") ||
		strings.Contains(d.Reason, "PostgreSQL") {
		t.Fatalf("reason %q (err %v); want the registry's wait until the deadline, no PostgreSQL", d.Reason, err)
	}
}
