package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// The console's attention: on by default, --attention narrows it, --quiet
// and CLAWPIT_QUIET=1 silence it (a bad --attention is refused even then).
func TestConsoleAttention(t *testing.T) {
	all := tui.Attention{Approvals: true, Failures: true, Budgets: true}
	cases := []struct {
		name  string
		args  []string
		quiet string
		want  tui.Attention
		err   bool
	}{
		{name: "default", want: all},
		{name: "approvals only", args: []string{"--attention", "approvals"}, want: tui.Attention{Approvals: true}},
		{name: "none", args: []string{"--attention", "none"}},
		{name: "--quiet", args: []string{"--quiet"}},
		{name: "CLAWPIT_QUIET=1", quiet: "1"},
		{name: "CLAWPIT_QUIET=0", quiet: "0", want: all},
		{name: "bad", args: []string{"--attention", "bells"}, err: true},
		{name: "bad even when quiet", args: []string{"--quiet", "--attention", "bells"}, err: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &app{th: core.DefaultThresholds()}
			root := newRootCmd(a)
			if err := root.ParseFlags(c.args); err != nil {
				t.Fatal(err)
			}
			s, err := resolveConsole(root, a, nil, func(k string) string {
				if k == "CLAWPIT_QUIET" {
					return c.quiet
				}
				return ""
			})
			if c.err {
				if !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || s.attention != c.want {
				t.Fatalf("attention %+v, err %v; want %+v", s.attention, err, c.want)
			}
		})
	}
}

// serve on a registry without operators says that nobody can connect, and
// stops saying it once there is one.
func TestServeWarnsWithoutOperators(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "registry.db")
	var o, e bytes.Buffer
	if code := Run(context.Background(), []string{"--db", db, "session", "open", "s1"}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("session open: exit %d, stderr %q", code, e.String())
	}
	serveFor := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		var o, e bytes.Buffer
		if code := Run(ctx, []string{"--db", db, "serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(dir, "hk")}, strings.NewReader(""), &o, &e); code != 0 {
			t.Fatalf("serve: exit %d, stderr %q", code, e.String())
		}
		return e.String()
	}
	if e := serveFor(); !strings.Contains(e, "no operators are registered") {
		t.Fatalf("no warning without operators: %q", e)
	}
	pub := filepath.Join(dir, "k.pub")
	if err := os.WriteFile(pub, []byte(testPublicKey), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	e.Reset()
	if code := Run(context.Background(), []string{"--db", db, "operator", "add", "alice", "--role", "operator", "--key", pub}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("operator add: exit %d, stderr %q", code, e.String())
	}
	if e := serveFor(); strings.Contains(e, "no operators") {
		t.Fatalf("warning with an operator: %q", e)
	}
}

// testPublicKey is a valid ed25519 public key (no private half is kept).
const testPublicKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice\n"

// Bad connection limits exit 2 naming the value, before anything listens;
// --help documents them.
func TestServeBadLimitFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "registry.db")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--login-grace-time", "0s"}, "--login-grace-time 0s: must be positive"},
		{[]string{"--login-grace-time", "-5s"}, "--login-grace-time -5s"},
		{[]string{"--max-startups", "10:30"}, `--max-startups "10:30"`},
		{[]string{"--max-startups", "10:0:100"}, "rate 0%"},
		{[]string{"--max-startups", "20:30:10"}, "full 10 is below start 20"},
		{[]string{"--max-startups", "0"}, "start 0 must be at least 1"},
		{[]string{"--max-startups", "many"}, `"many" is not a whole number`},
	} {
		var o, e bytes.Buffer
		args := append([]string{"--db", db, "serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(t.TempDir(), "hk")}, c.args...)
		if code := Run(context.Background(), args, strings.NewReader(""), &o, &e); code != 2 || !strings.Contains(e.String(), c.msg) || strings.Contains(o.String(), "listening") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, o.String(), e.String(), c.msg)
		}
	}
	var o, e bytes.Buffer
	if code := Run(context.Background(), []string{"serve", "--help"}, strings.NewReader(""), &o, &e); code != 0 {
		t.Fatalf("serve --help: exit %d %q", code, e.String())
	}
	for _, want := range []string{"--login-grace-time duration", "(default 30s)", "--max-startups string", `(default "10:30:100")`, "before the SSH handshake"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("serve --help does not say %q:\n%s", want, o.String())
		}
	}
}
