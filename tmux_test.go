package main

// A small tmux harness for the console's end-to-end tests: the real binary
// (clawpitBin, built once by TestMain in cli_test.go) runs in a detached tmux
// session on a private server socket; the tests type keys with send-keys and
// read the screen with capture-pane, polling with deadlines instead of
// sleeping.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// uiTimeout is how long a test waits for the screen to show something. It
// is deliberately generous (the machine may be a loaded 2-core VM); the
// 500 ms target of SPEC P7 is measured by bench/p7, not asserted here.
const uiTimeout = 15 * time.Second

// tmuxSockets numbers the private tmux servers of this test process.
var tmuxSockets atomic.Int64

// requireTmux skips the test when tmux is not installed.
func requireTmux(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: the console end-to-end tests need it")
	}
	return p
}

// tmuxTerm is one console (or any command) running in a detached tmux session
// on its own tmux server.
type tmuxTerm struct {
	t      *testing.T
	tmux   string
	socket string
	w, h   int
	conf   string
}

// consoleRun configures startConsole.
type consoleRun struct {
	w, h int
	env  []string // extra KEY=VALUE for the console (NO_COLOR=1, say)
	args []string // console flags (--readonly, --sweep-interval 0 …)
}

// startTerm starts a private tmux server running argv in a w×h window. The
// pane's environment is exactly: PATH, HOME, TERM (tmux's), LANG/LC_ALL
// (UTF-8), plus env; NO_COLOR is unset unless env sets it. The server is
// killed when the test ends.
func startTerm(t *testing.T, w, h int, env []string, argv ...string) *tmuxTerm {
	t.Helper()
	tm := &tmuxTerm{
		t:      t,
		tmux:   requireTmux(t),
		socket: fmt.Sprintf("clawpit-e2e-%d-%d", os.Getpid(), tmuxSockets.Add(1)),
		w:      w, h: h,
	}
	// A private config: no user config, a pane that stays after the
	// command exits (to show why), and OSC 52 clipboard writes accepted,
	// so that one leaking from a job would land in a paste buffer.
	tm.conf = filepath.Join(t.TempDir(), "tmux.conf")
	conf := "set -g remain-on-exit on\nset -g set-clipboard on\nset -g status off\nset -g history-limit 0\nset -g escape-time 0\nset -g default-terminal screen-256color\n"
	if err := os.WriteFile(tm.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	full := []string{"env", "-i",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"TERM=screen-256color", "USER=tester", "TZ=UTC"}
	full = append(full, env...)
	full = append(full, argv...)
	cmd := shellJoin(full)
	var sockPath string
	t.Cleanup(func() {
		_ = exec.Command(tm.tmux, "-L", tm.socket, "kill-server").Run()
		// tmux 3.3 leaves its socket file behind after kill-server.
		if sockPath != "" {
			_ = os.Remove(sockPath)
		}
	})
	tm.must("-f", tm.conf, "new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	sockPath = strings.TrimSpace(tm.must("display-message", "-p", "#{socket_path}"))
	return tm
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

// shellJoin quotes argv for the shell tmux runs the command with.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "exec " + strings.Join(q, " ")
}

// run runs a tmux command on this server and returns its output.
func (tm *tmuxTerm) run(args ...string) (string, error) {
	cmd := exec.Command(tm.tmux, append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %v: %v: %s", args, err, out)
	}
	return string(out), nil
}

func (tm *tmuxTerm) must(args ...string) string {
	tm.t.Helper()
	out, err := tm.run(args...)
	if err != nil {
		tm.t.Fatal(err)
	}
	return out
}

// capture returns the visible screen as plain text, one string per row.
func (tm *tmuxTerm) capture() []string {
	tm.t.Helper()
	return splitScreen(tm.must("capture-pane", "-p", "-t", "e2e"))
}

// captureEscapes returns the screen with tmux's rendering of attributes
// and colours (capture-pane -e).
func (tm *tmuxTerm) captureEscapes() string {
	tm.t.Helper()
	return tm.must("capture-pane", "-p", "-e", "-t", "e2e")
}

func splitScreen(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// display expands a tmux format for the pane (#{pane_title}, …).
func (tm *tmuxTerm) display(format string) string {
	tm.t.Helper()
	return strings.TrimSpace(tm.must("display-message", "-p", "-t", "e2e", format))
}

// keys sends tmux key names (Enter, Escape, Right, Space, "4", …) one
// send-keys per key, so that an Escape is never read together with the next
// key as alt+key.
func (tm *tmuxTerm) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.must("send-keys", "-t", "e2e", k)
	}
}

// typeText sends literal text.
func (tm *tmuxTerm) typeText(s string) {
	tm.t.Helper()
	tm.must("send-keys", "-t", "e2e", "-l", s)
}

// resize resizes the window (the console gets SIGWINCH).
func (tm *tmuxTerm) resize(w, h int) {
	tm.t.Helper()
	tm.must("resize-window", "-t", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h))
	tm.w, tm.h = w, h
}

// waitFor polls the screen until ok holds, failing the test with the last
// screen after uiTimeout. It returns the screen that satisfied ok.
func (tm *tmuxTerm) waitFor(what string, ok func(screen []string) bool) []string {
	tm.t.Helper()
	return tm.waitForWithin(uiTimeout, what, ok)
}

func (tm *tmuxTerm) waitForWithin(d time.Duration, what string, ok func(screen []string) bool) []string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	var s []string
	for {
		s = tm.capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited %s for %s; screen:\n%s", d, what, strings.Join(s, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitText waits until the screen contains text and returns the screen.
func (tm *tmuxTerm) waitText(text string) []string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("%q on screen", text), func(s []string) bool { return screenHas(s, text) })
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
			strings.Contains(s[2], "1 Tasks") && strings.HasPrefix(s[len(s)-2], "operator ")
	})
}

func screenHas(screen []string, text string) bool {
	for _, l := range screen {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

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
