package cli

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/store/storetest"
)

// hookRegistry keeps a URL a URL (issue 30: it was made a relative file
// path, '<cwd>/postgres:/…', and every gated call was denied) without its
// password, and makes a file path absolute.
func TestHookRegistry(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
		password bool
	}{
		{"postgres://u:s3cret@db.example:5432/fleet?sslmode=require", "postgres://u@db.example:5432/fleet?sslmode=require", true},
		{"postgresql://u@/fleet?host=/run/pg", "postgresql://u@/fleet?host=/run/pg", false},
		{"postgres:///fleet", "postgres:///fleet", false},
		{"reg.db", filepath.Join(wd, "reg.db"), false},
		{"/abs/reg.db", "/abs/reg.db", false},
	} {
		got, pw, err := hookRegistry(tc.in)
		if err != nil || got != tc.want || pw != tc.password {
			t.Errorf("hookRegistry(%q) = %q, %v, %v; want %q, %v", tc.in, got, pw, err, tc.want, tc.password)
		}
	}
}

// redactURLs hides the password of every PostgreSQL URL inside a hook
// command, quoted or not, and leaves the rest alone.
func TestRedactURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"exec /b --db 'postgres://u:s3cret@h/db' hook", "exec /b --db 'postgres://u:xxxxx@h/db' hook"},
		{"--db postgresql://u:p%40ss@h:5/db?x=1 hook", "--db postgresql://u:xxxxx@h:5/db?x=1 hook"},
		{"--db 'postgres://u@h/db' hook", "--db 'postgres://u@h/db' hook"},
		{"--db '/home/u:x@y/reg.db' hook", "--db '/home/u:x@y/reg.db' hook"},
	} {
		if got := redactURLs(tc.in); got != tc.want {
			t.Errorf("redactURLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// hooks install against a PostgreSQL registry (--db or CLAWPIT_DB), for
// every agent: the hook command names the same registry by URL, so a hook
// run from it opens it; the password is neither written nor printed, by
// install or by status.
func TestHooksInstallPostgresURL(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set")
	}
	const secret = "s3cret-pw"
	dbArg := regexp.MustCompile(`--db '([^']*)'`)
	for _, tc := range []struct {
		agent string
		env   bool // the URL comes from CLAWPIT_DB, not --db
		file  string
	}{
		{"claude", false, "settings.json"},
		{"claude", true, "settings.json"},
		{"codex", false, "hooks.json"},
		{"gemini", true, "settings.json"},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			u, err := url.Parse(storetest.Schema(t, base))
			if err != nil {
				t.Fatal(err)
			}
			u.User = url.UserPassword(u.User.Username(), secret) // the test cluster trusts its socket: any password
			loc := u.String()
			dir := t.TempDir()
			var args []string
			if tc.env {
				t.Setenv("CLAWPIT_DB", loc)
			} else {
				args = []string{"--db", loc}
			}
			place := []string{"--settings", filepath.Join(dir, tc.file)}
			if tc.agent != "claude" {
				place = []string{"--agent", tc.agent, "--config-dir", dir}
			}
			var o, e bytes.Buffer
			code := Run(context.Background(), append(append(append([]string{}, args...), "hooks", "install"), place...), strings.NewReader(""), &o, &e)
			if code != 0 {
				t.Fatalf("install: exit %d, stdout %q, stderr %q", code, o.String(), e.String())
			}
			body, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			m := dbArg.FindStringSubmatch(string(body))
			u.User = url.User(u.User.Username())
			if m == nil || m[1] != u.String() {
				t.Fatalf("hook command's --db %q, want %q", m, u.String())
			}
			var so, se bytes.Buffer
			statusArgs := append(append([]string{}, args...), "hooks", "status")
			if tc.agent == "claude" {
				statusArgs = append(statusArgs, "--settings", filepath.Join(dir, tc.file))
			} else {
				statusArgs = append(statusArgs, "--agent", tc.agent, "--config-dir", dir)
			}
			Run(context.Background(), statusArgs, strings.NewReader(""), &so, &se)
			for what, s := range map[string]string{"settings": string(body), "install's output": o.String() + e.String(), "status": so.String() + se.String()} {
				if strings.Contains(s, secret) {
					t.Errorf("%s shows the password: %q", what, s)
				}
			}
			if !strings.Contains(e.String(), "PGPASSWORD") {
				t.Errorf("install's stderr %q does not say where the hook finds the password", e.String())
			}
			// The stored location opens the registry install created.
			var ro, re bytes.Buffer
			if code := Run(context.Background(), []string{"--db", m[1], "task", "list"}, strings.NewReader(""), &ro, &re); code != 0 {
				t.Errorf("--db %s task list: exit %d, stderr %q", m[1], code, re.String())
			}
		})
	}
}

// The hook (its command holds no password) and a daemon or console given
// the URL with its password share one hook spool.
func TestHookSpoolIgnoresPassword(t *testing.T) {
	t.Setenv("CLAWPIT_HOME", t.TempDir())
	with := &app{dbPath: "postgres://u:s3cret@h/db?sslmode=disable"}
	without := &app{dbPath: "postgres://u@h/db?sslmode=disable"}
	if a, b := with.hookSpool().Dir, without.hookSpool().Dir; a != b {
		t.Errorf("spool %s with the password, %s without", a, b)
	}
}
