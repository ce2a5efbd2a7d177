package e2e

// A small tmux harness for the console's end-to-end tests: the real binary
// (clawpitBin, built once by TestMain in main_test.go) runs in a detached tmux
// session on a private server socket; the tests type keys with send-keys and
// read the screen with capture-pane, polling with deadlines instead of
// sleeping.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/internal/e2e"
)

// uiTimeout is how long a test waits for the screen to show something
// (e2e.UITimeout: generous, the machine may be a loaded 2-core VM; the
// 500 ms target is measured by bench/p7, not asserted here).
const uiTimeout = e2e.UITimeout

// requireTmux skips the test when tmux is not installed.
func requireTmux(t *testing.T) string { t.Helper(); return e2e.RequireTmux(t) }

// tmuxTerm is one console (or any command) running in a detached tmux
// session on its own tmux server: the e2e harness's Term, with this
// package's console-specific waits.
type tmuxTerm struct {
	*e2e.Term
	t *testing.T
}

// consoleRun configures startConsole.
type consoleRun struct {
	w, h int
	env  []string // extra KEY=VALUE for the console (NO_COLOR=1, say)
	args []string // console flags (--readonly, --sweep-interval 0 …)
}

// startTerm starts a private tmux server running argv in a w×h window
// (e2e.StartTerm: a fixed, minimal environment plus env).
func startTerm(t *testing.T, w, h int, env []string, argv ...string) *tmuxTerm {
	t.Helper()
	return &tmuxTerm{Term: e2e.StartTerm(t, w, h, env, argv...), t: t}
}

// startConsole opens the real console on c's registry.
func startConsole(t *testing.T, c *cli, o consoleRun) *tmuxTerm {
	t.Helper()
	if o.w == 0 {
		o.w, o.h = 120, 40
	}
	env := append([]string{"CLAWPIT_HOME=" + c.home}, o.env...)
	argv := append([]string{clawpitBin, "--db", c.db}, o.args...)
	tm := startTerm(t, o.w, o.h, env, argv...)
	tm.waitConsole()
	return tm
}

func shellJoin(argv []string) string                    { return e2e.ShellJoin(argv) }
func (tm *tmuxTerm) run(args ...string) (string, error) { return tm.Run(args...) }
func (tm *tmuxTerm) must(args ...string) string         { tm.t.Helper(); return tm.Must(args...) }
func (tm *tmuxTerm) capture() []string                  { tm.t.Helper(); return tm.Capture() }
func (tm *tmuxTerm) captureEscapes() string             { tm.t.Helper(); return tm.CaptureEscapes() }
func (tm *tmuxTerm) display(format string) string       { tm.t.Helper(); return tm.Display(format) }
func (tm *tmuxTerm) keys(keys ...string)                { tm.t.Helper(); tm.Keys(keys...) }
func (tm *tmuxTerm) typeText(s string)                  { tm.t.Helper(); tm.TypeText(s) }
func (tm *tmuxTerm) resize(w, h int)                    { tm.t.Helper(); tm.Resize(w, h) }
func (tm *tmuxTerm) waitText(text string) []string      { tm.t.Helper(); return tm.WaitText(text) }

func (tm *tmuxTerm) waitFor(what string, ok func(screen []string) bool) []string {
	tm.t.Helper()
	return tm.WaitFor(what, ok)
}

// waitStatus waits until the status line (second row from the bottom)
// contains text.
func (tm *tmuxTerm) waitStatus(text string) []string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("status line %q", text), func(s []string) bool {
		return len(s) >= 2 && strings.Contains(s[len(s)-2], text)
	})
}

// waitConsole waits for the first frame with the registry loaded.
func (tm *tmuxTerm) waitConsole() []string {
	tm.t.Helper()
	// Loaded: the status line is the idle "operator …" hint ("loading the
	// registry…  operator …" before; "database busy, retrying…" when the
	// first load takes over a second).
	return tm.waitFor("the console's first frame", func(s []string) bool {
		return len(s) >= 3 && isHeader(s[0]) && strings.HasPrefix(s[1], "clawpit") &&
			strings.Contains(s[2], "1 Tasks") && e2e.IdleStatus(s[len(s)-2])
	})
}

func screenHas(screen []string, text string) bool { return e2e.ScreenHas(screen, text) }

// isHeader reports whether l is the header's counts line (any of its widths).
func isHeader(l string) bool {
	return headerRe.MatchString(l)
}

// headerRe matches the start of the header's first line in each of its
// forms: "approvals 0", " 2 pending approvals ", " 1 approval ", " appr 3 ".
var headerRe = regexp.MustCompile(`^(approvals \d|\s*\d+ (pending )?approvals? |\s*appr \d)`)

// checkLayout asserts the console's frame on a w×h screen: h rows, none
// wider than w, the header's two lines and the tabs on top, the key hints
// at the bottom (help shows "help · …" above the status line instead). It returns a description of every problem (empty: fine).
func checkLayout(screen []string, w, h int) []string {
	var bad []string
	if len(screen) != h {
		bad = append(bad, fmt.Sprintf("%d rows, want %d", len(screen), h))
	}
	for i, l := range screen {
		if lw := ansi.StringWidth(l); lw > w {
			bad = append(bad, fmt.Sprintf("row %d is %d cells wide (> %d): %q", i+1, lw, w, l))
		}
	}
	if len(screen) < 6 {
		return append(bad, "screen too short")
	}
	if !isHeader(screen[0]) {
		bad = append(bad, fmt.Sprintf("row 1 is not the header: %q", screen[0]))
	}
	if !strings.HasPrefix(screen[1], "clawpit") {
		bad = append(bad, fmt.Sprintf("row 2 is not the title line: %q", screen[1]))
	}
	tabs := screen[2]
	for _, tab := range []string{"1 Tasks", "2 Runs", "3 Approvals", "4 Jobs", "5 Alerts"} {
		if w >= 80 && !strings.Contains(tabs, tab) {
			bad = append(bad, fmt.Sprintf("row 3 lacks the tab %q: %q", tab, tabs))
		}
	}
	last := screen[len(screen)-1]
	if strings.HasPrefix(screen[len(screen)-3], "help · ") {
		// The help screen: its info line instead of the key hints.
		return bad
	}
	if !strings.Contains(last, " • ") {
		bad = append(bad, fmt.Sprintf("last row is not the key hints: %q", last))
	}
	return bad
}

// requireLayout fails the test when checkLayout finds a problem.
func requireLayout(t *testing.T, what string, screen []string, w, h int) {
	t.Helper()
	if bad := checkLayout(screen, w, h); len(bad) > 0 {
		t.Fatalf("%s (%d×%d): %s\nscreen:\n%s", what, w, h, strings.Join(bad, "\n"), strings.Join(screen, "\n"))
	}
}

// volatile matches what changes from one second to the next on a screen:
// ages, countdowns and clock times.
var volatile = regexp.MustCompile(`\b\d+(ms|s|m|h|d)\b|\d{2}:\d{2}:\d{2}(\.\d+)?|\d{4}-\d{2}-\d{2}[T ]`)

// normalizeScreen makes two screens of the same state comparable: volatile
// values masked, runs of blanks folded.
func normalizeScreen(screen []string) []string {
	out := make([]string, len(screen))
	for i, l := range screen {
		l = volatile.ReplaceAllString(l, "#")
		out[i] = strings.Join(strings.Fields(l), " ")
	}
	return out
}
