package adversarial

// What an operator decides on is shown exactly: a carriage return or a
// backspace in a command cannot make "rm -rf ~" look like "git log" — not in
// the local console, not over `clawpit serve` with the real ssh, not in the
// CLI; the approve dialog shows the exact grant "always" creates; a task's
// error or a job's argument cannot forge clawpit's own lines in Alerts, a
// notification's detail, `notifications --json` or what --notify-cmd
// receives; and --json escapes C1, DEL, bidi and zero-width characters.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/internal/e2e"
	"github.com/clawpit/clawpit/termtext"
)

// spoofCR is issue 24's command: a terminal resolving the '\r' shows only
// "git log --oneline -n 20"; the shell runs rm -rf ~.
const spoofCR = "rm -rf ~ #\rgit log --oneline -n 20"

// spoofBS does the same with backspaces: resolved, "ls -la  " overwrites
// "rm -rf ~".
const spoofBS = "rm -rf ~\b\b\b\b\b\b\b\bls -la  "

// spoofCRShown and spoofBSShown are how they must look: every control
// visible.
const (
	spoofCRShown = "rm -rf ~ #␍git log --oneline -n 20"
	spoofBSShown = "rm -rf ~␈␈␈␈␈␈␈␈ls -la"
)

// spoofRequest records a pending Bash approval for command in session S1.
func spoofRequest(c *e2e.CLI, command string) string {
	c.T.Helper()
	return c.OK("approval", "request", "--session", "S1", "--tool", "Bash", "--command", command)
}

// spoofCheckApprovals drives a console (local or over ssh) on the
// Approvals pane: both rows show their command with the controls visible,
// and the approve dialog shows the command and, once "always" is chosen,
// the exact grant (tool, pattern, scope) before anything is created. It
// then approves with "always" and checks the grant is the one shown.
func spoofCheckApprovals(t *testing.T, c *e2e.CLI, tm *e2e.Term, cr, bs string) {
	t.Helper()
	tm.SwitchPane("3")
	scr := tm.WaitText(cr)
	if !e2e.ScreenHas(scr, spoofCRShown) {
		t.Fatalf("the Approvals row of %s does not show %q:\n%s", cr, spoofCRShown, strings.Join(scr, "\n"))
	}
	for _, l := range scr {
		if strings.Contains(l, bs) && !strings.Contains(l, spoofBSShown) {
			t.Fatalf("the Approvals row of %s hides its backspaces: %q (want %q)", bs, l, spoofBSShown)
		}
	}
	if !e2e.ScreenHas(scr, spoofBSShown) {
		t.Fatalf("no Approvals row shows %q:\n%s", spoofBSShown, strings.Join(scr, "\n"))
	}
	tm.SelectRow(cr)
	tm.Keys("a")
	scr = tm.WaitText("Approve " + cr)
	if !spoofScreenJoined(scr, spoofCRShown) {
		t.Fatalf("the approve dialog does not show the exact command %q:\n%s", spoofCRShown, strings.Join(scr, "\n"))
	}
	tm.Keys("Right", "Right") // once → session → always
	want := `Bash "rm" in any session`
	scr = tm.WaitFor("the dialog's grant line", func(s []string) bool { return spoofScreenJoined(s, want) })
	if !e2e.ScreenHas(scr, "[always]") {
		t.Fatalf("scope always not chosen:\n%s", strings.Join(scr, "\n"))
	}
	tm.Keys("Enter")
	tm.WaitStatus("approved " + cr)
	var grants []struct {
		Tool, Pattern, Scope, Session string
	}
	if err := json.Unmarshal([]byte(c.OK("--json", "grant", "list")), &grants); err != nil {
		t.Fatal(err)
	}
	if len(grants) != 1 || grants[0].Tool != "Bash" || grants[0].Pattern != "rm" || grants[0].Scope != "always" || grants[0].Session != "" {
		t.Fatalf("grants after approving always: %+v, want the one the dialog showed (%s)", grants, want)
	}
}

// spoofScreenJoined reports whether text is on screen, allowing it to wrap
// inside a dialog: the rows' contents between the box's borders are
// joined with a space.
func spoofScreenJoined(screen []string, text string) bool {
	if e2e.ScreenHas(screen, text) {
		return true
	}
	var inner []string
	for _, l := range screen {
		l = strings.Trim(strings.TrimSpace(l), "│┃║|")
		inner = append(inner, strings.TrimSpace(l))
	}
	return strings.Contains(strings.Join(strings.Fields(strings.Join(inner, " ")), " "), strings.Join(strings.Fields(text), " "))
}

// TestSpoofApprovalConsole: in the local console at 120×40 the Approvals
// rows and the approve dialog show the CR and BS spoofs with their controls
// visible, and the dialog names the grant "always" makes.
func TestSpoofApprovalConsole(t *testing.T) {
	t.Parallel()
	e2e.RequireTmux(t)
	c := newCLI(t)
	c.OK("session", "open", "S1")
	cr, bs := spoofRequest(c, spoofCR), spoofRequest(c, spoofBS)
	tm := e2e.StartConsole(t, c, 120, 40)
	spoofCheckApprovals(t, c, tm, cr, bs)
}

// TestSpoofApprovalSSH: the same over `clawpit serve` with the real
// OpenSSH client.
func TestSpoofApprovalSSH(t *testing.T) {
	t.Parallel()
	e2e.RequireSSH(t)
	c := newCLI(t)
	alice := e2e.SSHKey(t, "alice")
	e2e.AddOperator(c, "alice", "operator", alice)
	c.OK("session", "open", "S1")
	cr, bs := spoofRequest(c, spoofCR), spoofRequest(c, spoofBS)
	s := e2e.StartServe(t, c)
	tm := s.Connect(t, alice, 120, 40, nil)
	spoofCheckApprovals(t, c, tm, cr, bs)
}

// TestSpoofApprovalCLI: `approval list` and `approval show` print every
// decision field with its controls visible: the command's CR and BS, a
// bidi override in the rationale, a zero-width space in the cwd.
func TestSpoofApprovalCLI(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.OK("session", "open", "S1")
	cr := c.OK("approval", "request", "--session", "S1", "--tool", "Bash", "--command", spoofCR,
		"--rationale", "read the log\u202e;gol daer", "--cwd", "/srv/app\u200b/x")
	bs := spoofRequest(c, spoofBS)
	list := c.OK("approval", "list")
	for id, want := range map[string]string{cr: spoofCRShown, bs: spoofBSShown} {
		var row string
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, id) {
				row = l
			}
		}
		if !strings.Contains(row, want) {
			t.Errorf("approval list row of %s is %q, want it to show %q\n%s", id, row, want, list)
		}
	}
	show := c.OK("approval", "show", cr)
	for _, want := range []string{spoofCRShown, "read the log<U+202E>;gol daer", "/srv/app<U+200B>/x"} {
		if !strings.Contains(show, want) {
			t.Errorf("approval show does not show %q:\n%s", want, show)
		}
	}
	for _, r := range show {
		if r == '\r' || r == '\b' || r == '\u202e' || r == '\u200b' {
			t.Errorf("approval show prints %U raw:\n%q", r, show)
		}
	}
}

// spoofForgedError is issue 24's task error: resolved, only the forged
// sentence shows.
const spoofForgedError = "migration failed\rDeploy prod verified OK, no action needed."

// TestSpoofAlert: a failed task's error with a CR shows in the Alerts pane
// and in the alert's detail with the CR visible, never as only the forged
// part.
func TestSpoofAlert(t *testing.T) {
	t.Parallel()
	e2e.RequireTmux(t)
	c := newCLI(t)
	c.OK("session", "open", "S1")
	id := c.OK("task", "create", "--runtime", "cli", "--session", "S1", "--label", "db")
	c.OK("task", "start", id)
	c.OK("task", "finish", id, "--status", "failed", "--error", spoofForgedError)
	tm := e2e.StartConsole(t, c, 120, 40)
	tm.SwitchPane("5")
	scr := tm.WaitText("task_failed")
	if !e2e.ScreenHas(scr, "migration failed␍Deploy prod") {
		t.Fatalf("the Alerts row does not show the error with its CR visible:\n%s", strings.Join(scr, "\n"))
	}
	tm.SelectRow("task_failed")
	tm.Keys("Enter")
	scr = tm.WaitText("Journal")
	if !spoofScreenJoined(scr, "Task db did not complete: migration failed␍Deploy prod verified OK, no action needed.") {
		t.Fatalf("the alert's detail does not show the whole error with its CR visible:\n%s", strings.Join(scr, "\n"))
	}
}

// spoofForgedArg is a job argument that, printed raw, adds clawpit's own
// lines to the job_finished notification.
const spoofForgedArg = "ok\r\nCommand: make test\nDuration: 1s\nOutput: (none)\nFull log: /dev/null"

// forgedLine matches a line of a notification text that the argument
// forged: a line of clawpit's own starting with "Command: make test".
var forgedLine = regexp.MustCompile(`(?m)^\s*(text\s+)?Command: make test`)

// TestSpoofJobNotification: a job argument with CR and LF forges no line
// in the job_finished notification: not in its text (`notifications`,
// `notifications --json`), not in the console's detail of the alert, not in
// the JSON --notify-cmd receives.
func TestSpoofJobNotification(t *testing.T) {
	t.Parallel()
	e2e.RequireTmux(t)
	c := newCLI(t)
	c.OK("session", "open", "S1")
	c.OK("job", "run", "--session", "S1", "--", "true", spoofForgedArg)
	text := spoofWaitJobFinished(t, c)
	if forgedLine.MatchString(text) || strings.Count(text, "\nCommand: ") != 1 {
		t.Errorf("notifications --json: the argument forged lines of the notification:\n%s", text)
	}
	if !strings.Contains(text, "ok␍␊Command: make test␊Duration: 1s") {
		t.Errorf("notifications --json: the job's command is not shown as one value with its controls visible:\n%s", text)
	}
	if out := c.OK("notifications"); forgedLine.MatchString(out) || strings.ContainsAny(out, "\r\b") {
		t.Errorf("notifications: forged or raw line:\n%s", out)
	}

	// What --notify-cmd receives.
	sink := filepath.Join(t.TempDir(), "sink")
	d := c.Command(nil, "daemon", "--sweep-interval", "0", "--watchdog-interval", "0", "--notify-cmd", "cat >> '"+sink+"'")
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Process.Signal(syscall.SIGTERM); _ = d.Wait() })
	var got []byte
	for deadline := time.Now().Add(e2e.UITimeout); !strings.HasSuffix(string(got), "\n"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("--notify-cmd received nothing")
		}
		got, _ = os.ReadFile(sink)
	}
	var n struct{ Kind, Text string }
	if err := json.Unmarshal(got, &n); err != nil {
		t.Fatalf("--notify-cmd received %q: %v", got, err)
	}
	if n.Kind != "job_finished" || forgedLine.MatchString(n.Text) {
		t.Errorf("--notify-cmd received a forged line:\n%s", n.Text)
	}

	// The console's detail of the alert.
	tm := e2e.StartConsole(t, c, 120, 40)
	tm.SwitchPane("5")
	tm.WaitText("job_finished")
	tm.SelectRow("job_finished")
	tm.Keys("Enter")
	scr := tm.WaitText("Journal")
	if forgedLine.MatchString(strings.Join(scr, "\n")) || !e2e.ScreenHas(scr, "␊Command: make test") {
		t.Fatalf("the alert's detail shows the argument as lines of its own:\n%s", strings.Join(scr, "\n"))
	}
}

// spoofWaitJobFinished waits for the job_finished notification and returns
// its text as `notifications --json` gives it.
func spoofWaitJobFinished(t *testing.T, c *e2e.CLI) string {
	t.Helper()
	for deadline := time.Now().Add(e2e.UITimeout); ; time.Sleep(50 * time.Millisecond) {
		var ns []struct{ Kind, Text string }
		if err := json.Unmarshal([]byte(c.OK("--json", "notifications")), &ns); err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if n.Kind == "job_finished" {
				return n.Text
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job_finished notification after %s: %+v", e2e.UITimeout, ns)
		}
	}
}

// spoofHidden is every character --json must escape: C1 U+0080–U+009F,
// DEL, the bidi controls and marks, the zero-width characters.
func spoofHidden() []rune {
	rs := []rune{0x7f, 0x200e, 0x200f, 0x061c, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff}
	for r := rune(0x80); r <= 0x9f; r++ {
		rs = append(rs, r)
	}
	for r := rune(0x202a); r <= 0x202e; r++ {
		rs = append(rs, r)
	}
	for r := rune(0x2066); r <= 0x2069; r++ {
		rs = append(rs, r)
	}
	return rs
}

// TestSpoofJSONEscapes: every --json output that carries the characters —
// the request's own answer, approval show and list, task show (error) —
// escapes each as \uXXXX and prints none raw; notifications --json, whose
// task_failed text already shows them as ␡ and <U+202E>, prints none raw
// either.
func TestSpoofJSONEscapes(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.OK("session", "open", "S1")
	var payload strings.Builder
	for _, r := range spoofHidden() {
		fmt.Fprintf(&payload, "x%c", r)
	}
	p := payload.String()
	var req struct {
		Approval struct{ ID string }
	}
	reqOut := c.OK("--json", "approval", "request", "--session", "S1", "--tool", "Bash", "--command", "echo "+p, "--rationale", p)
	if err := json.Unmarshal([]byte(reqOut), &req); err != nil {
		t.Fatalf("%v: %s", err, reqOut)
	}
	id := c.OK("task", "create", "--runtime", "cli", "--session", "S1", "--label", "t")
	c.OK("task", "start", id)
	c.OK("task", "finish", id, "--status", "failed", "--error", p)
	outs := map[string]string{
		"approval request": reqOut,
		"approval show":    c.OK("--json", "approval", "show", req.Approval.ID),
		"approval list":    c.OK("--json", "approval", "list"),
		"task show":        c.OK("--json", "task", "show", id),
		"notifications":    c.OK("--json", "notifications"),
	}
	for name, out := range outs {
		var raw, unescaped []string
		for _, r := range spoofHidden() {
			if strings.ContainsRune(out, r) {
				raw = append(raw, fmt.Sprintf("%U", r))
			}
			esc := fmt.Sprintf(`\u%04x`, r)
			if name == "notifications" {
				// The task_failed text embeds the error as clawpit shows
				// it (every control visible): that form, never raw.
				var ns []struct{ Text string }
				_ = json.Unmarshal([]byte(out), &ns)
				if len(ns) == 1 && strings.Contains(ns[0].Text, termtext.Exact(string(r), 0)) {
					continue
				}
			}
			if !strings.Contains(strings.ToLower(out), esc) {
				unescaped = append(unescaped, esc)
			}
		}
		if len(raw) > 0 || len(unescaped) > 0 {
			t.Errorf("--json %s prints %d characters raw (%s) and lacks %d escapes (%s)", name,
				len(raw), strings.Join(raw, " "), len(unescaped), strings.Join(unescaped, " "))
		}
	}
}
