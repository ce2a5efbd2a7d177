package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// Connect opens an SSH session with key in a tmux terminal of w×h and waits
// for the console's first frame (WaitConsole). The ssh runs under a shell
// that outlives it, so a closing session's last words stay on screen.
func (s *Server) Connect(t testing.TB, key string, w, h int, env []string, extra ...string) *Term {
	t.Helper()
	script := strings.TrimPrefix(ShellJoin(s.SSHArgs(key, extra...)), "exec ") + `; echo "[ssh exited $?]"; exec sleep 600`
	tm := StartTerm(t, w, h, env, "sh", "-c", script)
	tm.WaitConsole()
	return tm
}

// StartConsole runs the local console (`clawpit --db …`) for c's registry
// in a w×h tmux terminal and waits for its first frame.
func StartConsole(t testing.TB, c *CLI, w, h int, args ...string) *Term {
	t.Helper()
	env := append([]string{"CLAWPIT_HOME=" + c.Home}, c.Env...)
	tm := StartTerm(t, w, h, env, append([]string{c.Bin, "--db", c.DB}, args...)...)
	tm.WaitConsole()
	return tm
}

// headerRe matches the start of the console header's first line in each
// of its forms: "approvals 0", " 2 pending approvals ", " appr 3 ".
var headerRe = regexp.MustCompile(`^(approvals \d|\s*\d+ (pending )?approvals? |\s*appr \d)`)

// WaitConsole waits for the console's first frame with the registry
// loaded: the header, the tabs and the idle status line ("operator …", or
// "read-only · viewing as …" in a read-only console).
func (tm *Term) WaitConsole() []string {
	tm.t.Helper()
	return tm.WaitFor("the console's first frame", func(s []string) bool {
		return len(s) >= 3 && headerRe.MatchString(s[0]) && strings.HasPrefix(s[1], "clawpit") &&
			strings.Contains(s[2], "1 Tasks") && IdleStatus(s[len(s)-2])
	})
}

// IdleStatus reports whether l is the console's idle status line: who is
// at it.
func IdleStatus(l string) bool {
	return strings.HasPrefix(l, "operator ") || strings.HasPrefix(l, "read-only · viewing as ")
}

// paneMarker is a column title of each pane's table header (row 4).
var paneMarker = map[string]string{"1": "RUNTIME", "2": "STATE", "3": "TOOL", "4": "EXIT", "5": "KIND"}

// SwitchPane presses a pane key ("1"–"5") and waits for its table header.
func (tm *Term) SwitchPane(k string) []string {
	tm.t.Helper()
	tm.Keys(k)
	return tm.WaitFor("pane "+k, func(s []string) bool {
		return len(s) > 3 && strings.Contains(s[3], paneMarker[k]) && (k != "2" || strings.HasPrefix(s[3], "RUN"))
	})
}

// SelectRow filters the active pane down to the row with id (/ id enter).
func (tm *Term) SelectRow(id string) {
	tm.t.Helper()
	tm.Keys("/")
	tm.WaitText("filter: ")
	tm.TypeText(id)
	tm.Keys("Enter")
	tm.WaitFor("the filter on "+id, func(s []string) bool {
		return ScreenHas(s, "filter: "+id) && ScreenHas(s, "(esc clears)") && ScreenHas(s, "1/")
	})
}

// WaitStatus waits until the status line (second row from the bottom)
// contains text.
func (tm *Term) WaitStatus(text string) []string {
	tm.t.Helper()
	return tm.WaitFor("status line "+text, func(s []string) bool {
		return len(s) >= 2 && strings.Contains(s[len(s)-2], text)
	})
}
