package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// UITimeout is how long a test waits for the screen to show something:
// generous, since the machine may be a loaded 2-core VM. Speed targets are
// measured in bench/, never asserted here.
const UITimeout = 15 * time.Second

// tmuxSockets numbers the private tmux servers of this test process.
var tmuxSockets atomic.Int64

// RequireTmux skips the test when tmux is not installed and returns its path.
func RequireTmux(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install tmux): the console end-to-end tests need it")
	}
	return p
}

// Term is one command running in a detached tmux session on its own tmux
// server, killed when the test ends.
type Term struct {
	t      testing.TB
	tmux   string
	socket string
	W, H   int
}

// StartTerm starts a private tmux server running argv in a w×h window. The
// pane's environment is exactly: PATH, HOME, TERM (tmux's), LANG/LC_ALL
// (UTF-8), USER=tester, TZ=UTC, plus env.
func StartTerm(t testing.TB, w, h int, env []string, argv ...string) *Term {
	t.Helper()
	tm := &Term{
		t:      t,
		tmux:   RequireTmux(t),
		socket: fmt.Sprintf("clawpit-e2e-%d-%d", os.Getpid(), tmuxSockets.Add(1)),
		W:      w, H: h,
	}
	// A private config: no user config, a pane that stays after the
	// command exits (to show why).
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	text := "set -g remain-on-exit on\nset -g set-clipboard on\nset -g status off\nset -g history-limit 0\nset -g escape-time 0\nset -g default-terminal screen-256color\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	// mark is in the environment of every process the pane starts, and
	// of theirs (a real agent's TUI leaves a background server behind,
	// in a session of its own, that inherits it).
	mark := termMark + "=" + tm.socket
	full := []string{"env", "-i",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"TERM=screen-256color", "USER=tester", "TZ=UTC", mark}
	full = append(append(full, env...), argv...)
	var sockPath string
	t.Cleanup(func() {
		_ = exec.Command(tm.tmux, "-L", tm.socket, "kill-server").Run()
		if sockPath != "" { // tmux 3.3 leaves its socket behind
			_ = os.Remove(sockPath)
		}
		// kill-server hangs the pane up and returns at once: what the
		// pane started may still be writing under the test's temp dirs,
		// recreating one t.TempDir's cleanup (registered earlier, so run
		// after this one) has removed.
		if killed := endMarked(mark); len(killed) > 0 {
			t.Logf("processes %v of the tmux pane outlived its hang-up and SIGTERM: killed", killed)
		}
	})
	tm.Must("-f", conf, "new-session", "-d", "-s", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), ShellJoin(full))
	sockPath = strings.TrimSpace(tm.Must("display-message", "-p", "#{socket_path}"))
	return tm
}

// termMark names the environment variable that marks the processes of a
// StartTerm pane (its value: the pane's tmux socket name).
const termMark = "CLAWPIT_E2E_TERM"

// endMarked ends every process whose environment holds mark
// ("NAME=value"): it gives them a second to exit (on the hang-up already
// sent), then sends SIGTERM and gives them 2 s, then SIGKILL and 5 s. It
// returns the processes that needed SIGKILL. A zombie counts as ended: it
// holds no files and writes nothing.
func endMarked(mark string) []int {
	var left, killed []int
	for _, step := range []struct {
		sig  syscall.Signal // sent to the ones left first; 0: none
		wait time.Duration
	}{{0, time.Second}, {syscall.SIGTERM, 2 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if step.sig != 0 {
			for _, pid := range left {
				_ = syscall.Kill(pid, step.sig)
			}
			if step.sig == syscall.SIGKILL {
				killed = left
			}
		}
		for deadline := time.Now().Add(step.wait); ; time.Sleep(20 * time.Millisecond) {
			if left = marked(mark); len(left) == 0 {
				return killed
			}
			if time.Now().After(deadline) {
				break
			}
		}
	}
	return killed
}

// marked lists the live processes (not zombies) whose environment holds
// mark, from /proc; processes it may not read are not listed.
func marked(mark string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !slices.ContainsFunc(bytes.Split(env, []byte{0}), func(v []byte) bool { return string(v) == mark }) {
			continue // gone, not ours, or unmarked
		}
		// A zombie's environ reads empty, so it was not matched above;
		// one exiting right now may still match: check its state.
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// ShellJoin quotes argv for the shell tmux runs the command with.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "exec " + strings.Join(q, " ")
}

// Run runs a tmux command on this server and returns its output.
func (tm *Term) Run(args ...string) (string, error) {
	cmd := exec.Command(tm.tmux, append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TMUX=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %v: %v: %s", args, err, out)
	}
	return string(out), nil
}

// Must is Run failing the test on error.
func (tm *Term) Must(args ...string) string {
	tm.t.Helper()
	out, err := tm.Run(args...)
	if err != nil {
		tm.t.Fatal(err)
	}
	return out
}

// Capture returns the visible screen as plain text, one string per row.
func (tm *Term) Capture() []string {
	tm.t.Helper()
	return SplitScreen(tm.Must("capture-pane", "-p", "-t", "e2e"))
}

// CaptureEscapes returns the screen with tmux's rendering of attributes
// and colours (capture-pane -e).
func (tm *Term) CaptureEscapes() string {
	tm.t.Helper()
	return tm.Must("capture-pane", "-p", "-e", "-t", "e2e")
}

// SplitScreen splits capture-pane's output into rows.
func SplitScreen(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Display expands a tmux format for the pane (#{pane_title}, …).
func (tm *Term) Display(format string) string {
	tm.t.Helper()
	return strings.TrimSpace(tm.Must("display-message", "-p", "-t", "e2e", format))
}

// Keys sends tmux key names (Enter, Escape, Right, "4", …) one send-keys
// per key, so that an Escape is never read with the next key as alt+key.
func (tm *Term) Keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		tm.Must("send-keys", "-t", "e2e", k)
	}
}

// TypeText sends literal text.
func (tm *Term) TypeText(s string) {
	tm.t.Helper()
	tm.Must("send-keys", "-t", "e2e", "-l", s)
}

// Resize resizes the window (the program gets SIGWINCH).
func (tm *Term) Resize(w, h int) {
	tm.t.Helper()
	tm.Must("resize-window", "-t", "e2e", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h))
	tm.W, tm.H = w, h
}

// WaitFor polls the screen until ok holds, failing the test with the last
// screen after UITimeout. It returns the screen that satisfied ok.
func (tm *Term) WaitFor(what string, ok func(screen []string) bool) []string {
	tm.t.Helper()
	return tm.WaitForWithin(UITimeout, what, ok)
}

// WaitForWithin is WaitFor with its own deadline.
func (tm *Term) WaitForWithin(d time.Duration, what string, ok func(screen []string) bool) []string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tm.Capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited %s for %s; screen:\n%s", d, what, strings.Join(s, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitText waits until the screen contains text and returns the screen.
func (tm *Term) WaitText(text string) []string {
	tm.t.Helper()
	return tm.WaitFor(fmt.Sprintf("%q on screen", text), func(s []string) bool { return ScreenHas(s, text) })
}

// ScreenHas reports whether any row of screen contains text.
func ScreenHas(screen []string, text string) bool {
	for _, l := range screen {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}
