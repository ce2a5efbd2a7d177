package e2e

import (
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// ScriptCmds are the commands clawpit's testscript transcripts add to
// testscript's own (see each function): exits and capture.
func ScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exits":   ScriptExits,
		"capture": ScriptCapture,
	}
}

// ScriptExits is `exits N PROG ARGS…`: it runs PROG like exec and fails
// unless PROG exits with status N. testscript's `! exec` only tells zero
// from non-zero; clawpit's exit codes are part of its contract
// (docs/contract.md "Commands: exit codes and JSON").
func ScriptExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: exit status %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// ScriptCapture is `capture VAR [REGEXP]`: it sets $VAR to the last
// command's stdout, trimmed, which must be one word (an id the command
// printed); with REGEXP, to the first submatch of REGEXP in that stdout
// (`capture J '^job (\S+) started$'`), which must match.
func ScriptCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: capture VAR [REGEXP]")
	}
	out := ts.ReadFile("stdout")
	if len(args) == 2 {
		re, err := regexp.Compile("(?m)" + args[1])
		if err != nil {
			ts.Fatalf("capture %s: %v", args[0], err)
		}
		m := re.FindStringSubmatch(out)
		if len(m) < 2 || m[1] == "" {
			ts.Fatalf("capture %s: %q has no submatch in stdout %q", args[0], args[1], out)
		}
		ts.Setenv(args[0], m[1])
		return
	}
	v := strings.TrimSpace(out)
	if v == "" || strings.ContainsAny(v, "\n ") {
		ts.Fatalf("capture %s: stdout %q is not one word", args[0], v)
	}
	ts.Setenv(args[0], v)
}
