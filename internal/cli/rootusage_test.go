package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRootFlagsPlacement: a console or sweep flag given to a subcommand is
// refused (exit 2) with where it belongs; the root's help lists the flags by
// group, with only --db and --json as global.
func TestRootFlagsPlacement(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--theme", "light", "task", "list"}, exitUsage, "--theme is not a flag of 'clawpit task list': it belongs to clawpit with no command"},
		{[]string{"task", "list", "--readonly"}, exitUsage, "--readonly is not a flag of 'clawpit task list'"},
		{[]string{"job", "list", "--grace", "5m"}, exitUsage, "--grace is not a flag of 'clawpit job list': it belongs to clawpit --sweep-once"},
		{[]string{"task", "list", "--nosuch"}, exitUsage, "unknown flag: --nosuch (see 'clawpit task list --help')"},
	} {
		var out, errb bytes.Buffer
		code := Run(context.Background(), append([]string{"--db", t.TempDir() + "/r.db"}, c.args...), nil, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("clawpit %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"--help"}, nil, &out, &errb); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, errb.String())
	}
	help := out.String()
	iConsole := strings.Index(help, "Console flags")
	iSweep := strings.Index(help, "Sweep flags")
	iGlobal := strings.Index(help, "Global flags (every command):")
	if iConsole < 0 || iSweep < iConsole || iGlobal < iSweep {
		t.Fatalf("help lacks the groups in order:\n%s", help)
	}
	if g := help[iGlobal:]; !strings.Contains(g, "--db") || !strings.Contains(g, "--json") || strings.Contains(g, "--theme") {
		t.Errorf("global group: %s", g)
	}
	if c := help[iConsole:iSweep]; !strings.Contains(c, "--theme") || !strings.Contains(c, "--readonly") {
		t.Errorf("console group: %s", c)
	}
	// A subcommand keeps cobra's own help, global flags included.
	out.Reset()
	Run(context.Background(), []string{"task", "list", "--help"}, nil, &out, &errb)
	if !strings.Contains(out.String(), "Global Flags:") || strings.Contains(out.String(), "Console flags") {
		t.Errorf("task list --help:\n%s", out.String())
	}
}
