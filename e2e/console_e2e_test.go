package e2e

// End-to-end tests of the real console (README "The console") under tmux: the binary
// built by TestMain runs in a detached tmux session (tmux_test.go), other
// processes change the registry through the CLI, keys go in with send-keys
// and the screen comes back with capture-pane. Every wait polls the screen
// or the CLI with a deadline (uiTimeout); the only latency asserted is
// "within 2 s" for an external write (bench/README.md P7's 500 ms is measured by
// bench/p7, not asserted by a test on a shared, loaded machine).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/tailer"
)

// paneMarker is a column title found in the table header (row 4) of each
// pane, at every width from 80 up.
var paneMarker = map[string]string{"1": "RUNTIME", "2": "STATE", "3": "TOOL", "4": "EXIT", "5": "KIND"}

// switchPane presses a pane key and waits for that pane's table header.
func (tm *tmuxTerm) switchPane(k string) []string {
	tm.t.Helper()
	tm.keys(k)
	return tm.waitFor("pane "+k, func(s []string) bool {
		return len(s) > 3 && strings.Contains(s[3], paneMarker[k]) && (k != "2" || strings.HasPrefix(s[3], "RUN"))
	})
}

// selectRow filters the active pane down to the row with id (/ id enter).
func (tm *tmuxTerm) selectRow(id string) {
	tm.t.Helper()
	tm.keys("/")
	tm.waitText("filter: ")
	tm.typeText(id)
	tm.keys("Enter")
	tm.waitFor("the filter on "+id, func(s []string) bool {
		return screenHas(s, "filter: "+id) && screenHas(s, "(esc clears)") && screenHas(s, "1/")
	})
}

// clearFilter clears the pane's filter (esc) and waits for the prompt hint.
func (tm *tmuxTerm) clearFilter() {
	tm.t.Helper()
	tm.keys("Escape")
	tm.waitText("/ filter")
}

// backgroundCLI starts a clawpit command in the background; its exit code
// arrives on the returned channel. It is killed if still running when the
// test ends.
func backgroundCLI(t *testing.T, c *cli, args ...string) <-chan int {
	t.Helper()
	cmd := c.command(nil, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		ch <- code
		close(done)
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return ch
}

func waitExit(t *testing.T, what string, ch <-chan int, want int) {
	t.Helper()
	select {
	case code := <-ch:
		if code != want {
			t.Fatalf("%s exited %d, want %d", what, code, want)
		}
	case <-time.After(uiTimeout):
		t.Fatalf("%s still waiting after %s", what, uiTimeout)
	}
}

func (c *cli) approval(id string) core.Approval {
	c.t.Helper()
	var a core.Approval
	c.json(&a, "approval", "show", id)
	return a
}

// startJob runs a background job through the CLI (with extra environment)
// and kills what is left of it when the test ends.
func (c *cli) startJob(env []string, session string, argv ...string) core.Job {
	c.t.Helper()
	cmd := c.command(nil, append([]string{"--json", "job", "run", "--session", session, "--"}, argv...)...)
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("job run %q: %v", argv, err)
	}
	var o jobOut
	if err := json.Unmarshal(b, &o); err != nil || o.Job == nil {
		c.t.Fatalf("job run: %q: %v", b, err)
	}
	c.killJobOnCleanup(o.Job.ID)
	return *o.Job
}

func (c *cli) waitJobRunning(id string) core.Job {
	c.t.Helper()
	return c.waitJob(id, uiTimeout, "running", func(j core.Job) bool { return j.Status == core.JobRunning })
}

// 1. An approval requested by another process shows in the Approvals pane
// (asserted within 2 s; the measured latency is logged), the operator
// approves it with a scope and the waiting `approval wait` exits 0; a second
// one is denied with a reason and its waiter exits 10.
func TestConsoleApprovals(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	c.ok("session", "open", "S1")
	tm := startConsole(t, c, consoleRun{})
	tm.switchPane("3")

	id1 := c.ok("approval", "request", "--session", "S1", "--tool", "Bash", "--command", "rm -rf build")
	// The 2 s bound is a robustness check (parallel tests on a loaded CI
	// machine), not the bench/README.md P7 target: the 500 ms target is measured by
	// bench/p7 (go run ./bench/p7) and quoted in bench/README.md.
	seen := time.Now()
	for !screenHas(tm.capture(), id1) {
		if time.Since(seen) > uiTimeout {
			t.Fatalf("approval %s not on screen after %s", id1, uiTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	lat := time.Since(seen)
	t.Logf("external approval request visible after %s (bench/README.md P7 target 500 ms; asserted ≤ 2 s)", lat.Round(time.Millisecond))
	if lat > 2*time.Second {
		t.Errorf("approval request took %s to appear, want ≤ 2 s", lat)
	}
	wait1 := backgroundCLI(t, c, "approval", "wait", id1, "--timeout", "60s")
	tm.waitText("1 pending approval")

	tm.selectRow(id1)
	tm.keys("a")
	tm.waitText("Approve " + id1)
	tm.waitText("[once]")
	tm.keys("Right")
	tm.waitText("[session]")
	tm.keys("Enter")
	tm.waitStatus("approved " + id1 + " (session)")
	waitExit(t, "approval wait "+id1, wait1, 0)
	if a := c.approval(id1); a.Status != core.ApprovalApproved || a.Scope != core.ScopeSession || !strings.HasPrefix(a.DecidedBy, "tester@") {
		t.Errorf("approval after approve: status %s scope %s decided_by %q", a.Status, a.Scope, a.DecidedBy)
	}

	// The second request (another verb chain: the session grant does not
	// match it) is denied with a reason.
	id2 := c.ok("approval", "request", "--session", "S1", "--tool", "WebFetch", "--command", "curl https://example.com")
	wait2 := backgroundCLI(t, c, "approval", "wait", id2, "--timeout", "60s")
	tm.clearFilter()
	tm.waitText(id2)
	tm.selectRow(id2)
	tm.keys("d")
	tm.waitText("Deny " + id2 + "?")
	tm.typeText("not today")
	tm.waitText("not today")
	tm.keys("Enter")
	tm.waitStatus("denied " + id2 + ": not today")
	waitExit(t, "approval wait "+id2, wait2, 10)
	if a := c.approval(id2); a.Status != core.ApprovalDenied || a.Reason != "not today" || !strings.HasPrefix(a.DecidedBy, "tester@") {
		t.Errorf("approval after deny: status %s reason %q decided_by %q", a.Status, a.Reason, a.DecidedBy)
	}
}

// processGone waits until no process of the group pgid (and not pid) is
// left.
func processGone(t *testing.T, pid, pgid int) {
	t.Helper()
	deadline := time.Now().Add(uiTimeout)
	for {
		errP := syscall.Kill(pid, 0)
		errG := syscall.Kill(-pgid, 0)
		if errors.Is(errP, syscall.ESRCH) && errors.Is(errG, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d / process group %d still alive after %s (%v, %v)", pid, pgid, uiTimeout, errP, errG)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// 2. Cancel a running job from the Jobs pane: it ends cancelled and its
// process is gone.
func TestConsoleCancelJob(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	j := c.startJob(nil, "S1", "sleep", "300")
	j = c.waitJobRunning(j.ID)
	tm := startConsole(t, c, consoleRun{})
	tm.switchPane("4")
	tm.waitText(j.ID)
	tm.selectRow(j.ID)
	tm.keys("c")
	tm.waitText("Cancel job " + j.ID + "?")
	tm.keys("y")
	tm.waitStatus("cancelled job " + j.ID)
	got := c.waitJob(j.ID, uiTimeout, "cancelled", func(j core.Job) bool { return j.Status == core.JobCancelled })
	processGone(t, j.PID, j.PGID)
	// The pane shows the new status.
	tm.waitFor("the job row cancelled", func(s []string) bool {
		for _, l := range s {
			if strings.Contains(l, j.ID) && strings.Contains(l, "cancelled") {
				return true
			}
		}
		return false
	})
	if got.Status != core.JobCancelled {
		t.Errorf("job %s", got.Status)
	}
}

var numbered = regexp.MustCompile(`^n=(\d{6}) `)

// visibleNumbers returns the numbers of the job's lines on screen, in
// screen order.
func visibleNumbers(s []string) []int {
	var out []int
	for _, l := range s {
		if m := numbered.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// consecutive reports whether ns are n, n+1, n+2, …
func consecutive(ns []int) bool {
	for i := 1; i < len(ns); i++ {
		if ns[i] != ns[i-1]+1 {
			return false
		}
	}
	return true
}

func lastOf(ns []int) int {
	if len(ns) == 0 {
		return -1
	}
	return ns[len(ns)-1]
}

// 3. The log view follows a job's log while it rotates several times: the
// newest numbered lines keep appearing, without holes; space pauses ("N new
// lines" while the window stays put), G resumes at the bottom.
func TestConsoleLogFollowsRotation(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	// 64-byte lines, 4 KiB generations: a rotation every 64 lines; about
	// 200 lines/s (3 rotations a second) for up to 2 minutes.
	const rotate = 4096
	const perGen = rotate / 64
	gen := `i=0; while [ $i -lt 24000 ]; do i=$((i+1)); printf 'n=%06d %055d\n' $i $i; if [ $((i % 20)) -eq 0 ]; then sleep 0.1; fi; done`
	j := c.startJob([]string{supervisor.EnvJobRotateBytes + "=" + strconv.Itoa(rotate)}, "S1", "sh", "-c", gen)
	c.waitJobRunning(j.ID)
	tm := startConsole(t, c, consoleRun{})
	tm.switchPane("4")
	tm.waitText(j.ID)
	tm.keys("l")
	s := tm.waitFor("numbered lines in the log view", func(s []string) bool {
		return screenHas(s, "FOLLOWING") && len(visibleNumbers(s)) > 0
	})
	first := lastOf(visibleNumbers(s))
	t.Logf("log view opened at line %d", first)

	// The visible numbers climb past several rotations, the window always
	// a run of consecutive lines ending at the newest. capture-pane is not
	// atomic with the console's frame writes, so one capture may mix two
	// frames; a line really lost leaves the same hole (a → b) in every
	// frame while it is on screen, so only a hole seen twice fails.
	target := first + 5*perGen
	holes := map[[2]int]int{}
	s = tm.waitFor(fmt.Sprintf("line %d (5 rotations later) on screen", target), func(s []string) bool {
		ns := visibleNumbers(s)
		for i := 1; i < len(ns); i++ {
			if ns[i] != ns[i-1]+1 {
				holes[[2]int{ns[i-1], ns[i]}]++
			}
		}
		return lastOf(ns) >= target
	})
	for h, n := range holes {
		if n >= 2 {
			t.Errorf("the log view showed line %d followed by line %d in %d captures (lost or duplicated across a rotation)", h[0], h[1], n)
		} else {
			t.Logf("one capture showed line %d followed by %d (a capture between two frames)", h[0], h[1])
		}
	}
	if screenHas(s, tailer.GapNotice) {
		t.Errorf("gap notice on screen:\n%s", strings.Join(s, "\n"))
	}
	// The log did rotate under the view: output.1.log now starts well after
	// the line the view opened at (at least 3 rotations ago).
	rotated, err := os.ReadFile(filepath.Join(filepath.Dir(j.LogPath), tailer.RotatedLog))
	if err != nil {
		t.Fatalf("no rotated log: %v", err)
	}
	if m := numbered.FindSubmatch(rotated); m == nil {
		t.Errorf("rotated log starts with %.40q", rotated)
	} else if n, _ := strconv.Atoi(string(m[1])); n <= first+2*perGen {
		t.Errorf("rotated log starts at line %d: fewer than 3 rotations since line %d", n, first)
	}
	// The newest line on disk reaches the screen.
	newest := -1
	if m := numbered.FindStringSubmatch(c.ok("job", "tail", j.ID, "--lines", "1")); m != nil {
		newest, _ = strconv.Atoi(m[1])
	}
	t0 := time.Now()
	tm.waitFor(fmt.Sprintf("the newest line on disk (%d) on screen", newest), func(s []string) bool { return lastOf(visibleNumbers(s)) >= newest })
	t.Logf("the newest line on disk reached the screen in %s", time.Since(t0).Round(time.Millisecond))

	// Pause: the window freezes while the count of new lines grows.
	tm.keys("Space")
	s = tm.waitFor("PAUSED with new lines", func(s []string) bool { return screenHas(s, "new line") })
	frozen := visibleNumbers(s)
	s = tm.waitFor("more new lines while paused", func(s2 []string) bool {
		return newLines(s2) > newLines(s)+40
	})
	if got := visibleNumbers(s); fmt.Sprint(got) != fmt.Sprint(frozen) {
		t.Errorf("the paused window moved: %v → %v", frozen, got)
	}
	// G resumes at the bottom, past what was on screen while paused.
	tm.keys("G")
	s = tm.waitFor("FOLLOWING again past the paused window, consecutive lines", func(s []string) bool {
		ns := visibleNumbers(s)
		return screenHas(s, "FOLLOWING") && lastOf(ns) > lastOf(frozen)+40 && consecutive(ns)
	})
	requireLayout(t, "log view", s, 120, 40)
}

var newLinesRe = regexp.MustCompile(`\((\d+) new lines?\)`)

func newLines(s []string) int {
	for _, l := range s {
		if m := newLinesRe.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return -1
}

// 4. m shows the dry-run plan (a killed run's running task: a lost action);
// enter applies it and the task is lost.
func TestConsoleMaintenance(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	sub, _ := c.seedRun("R1")
	c.ok("run", "kill", "R1")
	tm := startConsole(t, c, consoleRun{args: []string{"--sweep-interval", "0"}})
	if len(sub) > 12 {
		t.Fatalf("task id %q is longer than 12 characters", sub)
	}
	tm.waitText(sub) // shown whole
	tm.keys("m")
	tm.waitText("Maintenance — dry run")
	s := tm.waitFor("the plan with a lost action", func(s []string) bool { return screenHas(s, "lost") && screenHas(s, "enter apply") })
	if tk := c.task(sub); tk.Status != core.TaskRunning {
		t.Fatalf("the dry run changed the task: %s", tk.Status)
	}
	tm.keys("Enter")
	tm.waitStatus("maintenance applied")
	if tk := c.task(sub); tk.Status != core.TaskLost {
		t.Errorf("task %s after applying: %s\nplan screen:\n%s", sub, tk.Status, strings.Join(s, "\n"))
	}
	tm.waitFor("the task lost in the pane", func(s []string) bool {
		for _, l := range s {
			if strings.HasPrefix(rowText(l), sub) && strings.Contains(l, "lost") {
				return true
			}
		}
		return false
	})
}

// 5. --readonly: every action key refuses with a message and the database
// is unchanged.
func TestConsoleReadOnly(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	c.seedRun("R1")
	c.ok("approval", "request", "--session", "owner-R1", "--run-id", "R1", "--tool", "Bash", "--command", "make deploy")
	j := c.startJob(nil, "owner-R1", "sleep", "300")
	c.waitJobRunning(j.ID)
	before := c.snapshot()

	tm := startConsole(t, c, consoleRun{args: []string{"--readonly"}})
	tm.waitText("READ-ONLY")
	for _, k := range []struct{ pane, key, name string }{
		// The same name never twice in a row: each wait sees a new message.
		{"3", "a", "approve"}, {"3", "d", "deny"}, {"4", "c", "cancel"}, {"4", "r", "reap"},
		{"1", "c", "cancel"}, {"2", "k", "kill"}, {"1", "m", "maintenance"},
	} {
		tm.switchPane(k.pane)
		tm.keys("Down") // a row selected, whatever the sort
		tm.keys(k.key)
		s := tm.waitStatus("read-only console: " + k.name + " is disabled")
		if screenHas(s, "╭") {
			t.Errorf("pane %s key %s: a dialog opened in the read-only console:\n%s", k.pane, k.key, strings.Join(s, "\n"))
		}
	}
	// Give a write that should not have happened the time to land.
	time.Sleep(300 * time.Millisecond)
	if after := c.snapshot(); after != before {
		t.Errorf("the read-only console changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// 6. Resizing redraws without garbage: after each resize the screen is
// exactly a fresh console's at that size.
func TestConsoleResize(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	seedPanes(t, c)
	args := []string{"--sweep-interval", "0"}
	tm := startConsole(t, c, consoleRun{w: 120, h: 40, args: args})
	fresh := map[[2]int][]string{}
	for _, sz := range [][2]int{{200, 50}, {80, 24}} {
		f := startConsole(t, c, consoleRun{w: sz[0], h: sz[1], args: args})
		// Complete: laid out, and every tab counted (a pane not yet
		// counted shows "…" for a moment after the first screen).
		s := f.waitFor("a complete fresh screen", func(s []string) bool {
			return len(checkLayout(s, sz[0], sz[1])) == 0 && len(s) > 2 && !strings.Contains(s[2], "…")
		})
		fresh[sz] = normalizeScreen(s)
	}
	for _, sz := range [][2]int{{200, 50}, {80, 24}, {200, 50}} {
		w, h := sz[0], sz[1]
		tm.resize(w, h)
		want := strings.Join(fresh[sz], "\n")
		s := tm.waitFor(fmt.Sprintf("the screen redrawn at %d×%d as a fresh console's:\n%s\n(normalised) — got", w, h, want), func(s []string) bool {
			return len(checkLayout(s, w, h)) == 0 && strings.Join(normalizeScreen(s), "\n") == want
		})
		requireLayout(t, "after resize", s, w, h)
	}
}

// seedPanes gives every pane rows: tasks (running, failed, queued), a run,
// a pending approval, a finished and a running job, and alerts.
func seedPanes(t *testing.T, c *cli) {
	t.Helper()
	sub, _ := c.seedRun("R1")
	c.ok("task", "progress", sub, "--summary", "reading files")
	f := c.ok("task", "create", "--runtime", "cli", "--session", "owner-R1", "--label", "a failing build")
	c.ok("task", "start", f)
	c.ok("task", "finish", f, "--status", "failed", "--error", "exit status 2")
	c.ok("task", "create", "--runtime", "cron", "--session", "owner-R1", "--label", "nightly report")
	c.ok("approval", "request", "--session", "owner-R1", "--run-id", "R1", "--tool", "Bash", "--command", "git push --force")
	done := c.startJob(nil, "owner-R1", "sh", "-c", "echo built; exit 3")
	c.waitJob(done.ID, uiTimeout, "failed", func(j core.Job) bool { return j.Status == core.JobFailed })
	c.startJob(nil, "owner-R1", "sleep", "300")
}

// 7. Escape injection: job output and a job's command line full of escape
// sequences (OSC 52 clipboard, OSC 0/2 title, CSI moves and clears, DCS,
// APC, 8-bit C1, bidi override, \r overwrites) show as inert text: the
// layout holds, tmux's pane title, paste buffers, alternate screen and
// cursor visibility are as they were.
func TestConsoleEscapeInjection(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	// Control: on this tmux, a program that does write OSC 52 and OSC 2
	// does set a paste buffer and the title (else the checks below would
	// prove nothing).
	ctl := startTerm(t, 80, 24, nil, "sh", "-c", `printf '\033]52;c;Y29udHJvbA==\007\033]2;CONTROL\007'; sleep 60`)
	ctlDeadline := time.Now().Add(uiTimeout)
	for {
		bufs, _ := ctl.run("list-buffers")
		if strings.Contains(bufs, "control") && ctl.display("#{pane_title}") == "CONTROL" {
			break
		}
		if time.Now().After(ctlDeadline) {
			t.Fatalf("control: tmux did not take OSC 52/OSC 2 from a pane (buffers %q, title %q)", bufs, ctl.display("#{pane_title}"))
		}
		time.Sleep(20 * time.Millisecond)
	}

	c := newCLI(t)
	evil := strings.Join([]string{
		"start",
		"osc52 \x1b]52;c;SGlqYWNrZWQ=\x07 end",
		"title \x1b]0;PWNED0\x07 \x1b]2;PWNED2\x1b\\ end",
		"csi \x1b[2J\x1b[H\x1b[10;10Hmoved\x1b[?1049l\x1b[?25h\x1b[6n\x1b[31mred end",
		"dcs \x1bPtmux;\x1b\x1b]52;c;RENTUGFzcw==\x07\x1b\\ \x1bP1$r0m\x1b\\ end",
		"apc \x1b_Gf=100;APCPAYLOAD\x1b\\ end",
		"c1 \x9b2J\x9d0;C1TITLE\x07\x9b10;10H end",
		"uc1 \u009b2J\u009d0;UC1TITLE\u009c\u009b5;5H end",
		"uc1bel \u009d0;UC1BEL\x07 end",
		"bidi abc\u202edef\u202c end",
		"cr XXXXXXXXXXXXXXXXXXXX\rok end",
		"osc8 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ end",
		"done",
	}, "\n") + "\n"
	evilArg := "arg\x1b]2;CMDTITLE\x07\x1b[2J\x1b]52;c;Q01EQ0xJUA==\x07\u202ex\x9b1;1H"
	// The job prints the file given as its first argument, then waits.
	j := c.startJob(nil, "S1", "sh", "-c", `printf '%s' "$1"; sleep 300`, "evil", evil, evilArg)
	c.waitJobRunning(j.ID)
	label := "label\x1b]2;LABELTITLE\x07\x1b[2J\u202e!"
	c.ok("task", "create", "--runtime", "cli", "--session", "S1", "--label", label)

	tm := startConsole(t, c, consoleRun{})
	state := func() string {
		return tm.display("title=#{pane_title} alt=#{alternate_on} cursor=#{cursor_flag} insert=#{insert_flag} origin=#{origin_flag} wrap=#{wrap_flag} mouse=#{mouse_any_flag} scroll=#{scroll_region_upper},#{scroll_region_lower}")
	}
	base := state()
	bufs := func() string { b, _ := tm.run("list-buffers"); return strings.TrimSpace(b) }
	if b := bufs(); b != "" {
		t.Fatalf("paste buffers before the test: %q", b)
	}
	check := func(what string, s []string) {
		t.Helper()
		requireLayout(t, what, s, 120, 40)
		if got := state(); got != base {
			t.Errorf("%s: terminal state changed:\n got %s\nwant %s", what, got, base)
		}
		if b := bufs(); b != "" {
			t.Errorf("%s: a paste buffer appeared (OSC 52 got through): %q", what, b)
		}
		for _, bad := range []string{"PWNED", "CMDTITLE", "C1TITLE", "LABELTITLE", "APCPAYLOAD"} {
			if screenHas(s, bad) {
				t.Logf("%s: the payload text %q is shown (inert)", what, bad)
			}
		}
		if !strings.Contains(s[len(s)-2], "operator tester@") && !strings.Contains(s[len(s)-2], "cancel") {
			t.Errorf("%s: status line damaged: %q", what, s[len(s)-2])
		}
	}

	// The Tasks pane with the label.
	s := tm.waitText("label")
	check("tasks pane", s)
	// The Jobs pane with the command line.
	tm.switchPane("4")
	s = tm.waitText(j.ID)
	check("jobs pane", s)
	// The log view.
	tm.keys("l")
	s = tm.waitFor("the whole evil log", func(s []string) bool { return screenHas(s, "FOLLOWING") && screenHas(s, "done") })
	check("log view", s)
	for _, l := range s {
		if strings.Contains(l, "moved") && !strings.HasPrefix(l, "csi ") {
			t.Errorf("a cursor move took effect: %q", l)
		}
	}
	// Each evil line ends with " end": a line that lost it had text after
	// a sequence eaten with the sequence (safe, but not faithful).
	for _, l := range s[3 : len(s)-3] {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "start" && f[0] != "done" && f[0] != "ok" && !strings.HasSuffix(l, " end") {
			t.Logf("log view: text after a sequence was dropped: %q", l)
		}
	}
	time.Sleep(300 * time.Millisecond) // let any late response (DSR) arrive
	check("log view, later", tm.capture())
	tm.keys("Escape")
	tm.waitFor("back to the jobs pane", func(s []string) bool { return !screenHas(s, "FOLLOWING") })
	// The detail view of the job.
	tm.keys("i")
	s = tm.waitText("detail of job")
	check("job detail", s)
	tm.keys("Escape")
	tm.waitFor("back to the jobs pane", func(s []string) bool { return !screenHas(s, "detail of job") })
	tm.switchPane("1")
	tm.keys("Enter")
	s = tm.waitText("detail of task")
	check("task detail", s)
}

// sgrColour finds colour parameters (30–38, 40–48, 90–97, 100–107; 39 and
// 49 are resets) in the SGR sequences of s.
var sgrRe = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

func colourSGRs(s string) []string {
	var out []string
	for _, m := range sgrRe.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				out = append(out, strconv.Quote(m[0]))
				break
			}
		}
	}
	return out
}

// 8. NO_COLOR=1: the screen has attributes but no colour (capture-pane -e);
// without it the same screen is coloured (a control for the check).
func TestConsoleNoColor(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	seedPanes(t, c)
	ctl := startConsole(t, c, consoleRun{})
	if got := colourSGRs(ctl.captureEscapes()); len(got) == 0 {
		t.Fatalf("control: the default theme shows no colour in capture-pane -e:\n%q", ctl.captureEscapes())
	}
	tm := startConsole(t, c, consoleRun{env: []string{"NO_COLOR=1"}})
	look := func(what string) {
		t.Helper()
		if got := colourSGRs(tm.captureEscapes()); len(got) > 0 {
			t.Errorf("NO_COLOR=1, %s: colour sequences %v", what, got)
		}
	}
	look("tasks pane")
	tm.switchPane("3")
	look("approvals pane")
	tm.keys("a")
	tm.waitText("[once]")
	look("approve dialog")
	tm.keys("Escape")
	tm.waitStatus("not confirmed")
	tm.keys("?")
	tm.waitText("help · ")
	look("help")
}

// 9. Smoke at 80×24 and 160×48: every pane, help, the detail view, a
// dialog and the log view keep the frame, and no line is wider than the
// screen.
func TestConsoleSmokeSizes(t *testing.T) {
	t.Parallel()
	requireTmux(t)
	c := newCLI(t)
	seedPanes(t, c)
	for _, sz := range [][2]int{{80, 24}, {160, 48}} {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			t.Parallel()
			tm := startConsole(t, c, consoleRun{w: w, h: h})
			for _, k := range []string{"1", "2", "3", "4", "5"} {
				tm.switchPane(k)
				s := tm.waitFor("pane "+k+" with rows", func(s []string) bool { return len(s) > 4 && strings.TrimSpace(s[4]) != "" })
				requireLayout(t, "pane "+k, s, w, h)
			}
			tm.keys("?")
			requireLayout(t, "help", tm.waitText("help · "), w, h)
			tm.keys("?")
			tm.waitFor("help closed", func(s []string) bool { return !screenHas(s, "help · ") })

			tm.switchPane("1")
			tm.keys("Enter")
			requireLayout(t, "task detail", tm.waitText("detail of task"), w, h)
			tm.keys("Escape")
			tm.waitFor("detail closed", func(s []string) bool { return !screenHas(s, "detail of task") })

			tm.switchPane("3")
			tm.keys("a")
			requireLayout(t, "approve dialog", tm.waitText("[once]"), w, h)
			tm.keys("Escape")
			tm.waitStatus("not confirmed")

			tm.switchPane("4")
			tm.keys("i")
			requireLayout(t, "job detail", tm.waitText("detail of job"), w, h)
			tm.keys("l")
			requireLayout(t, "log view", tm.waitFor("the log view", func(s []string) bool {
				return screenHas(s, "FOLLOWING") || screenHas(s, "PAUSED")
			}), w, h)
			tm.keys("Escape")
			tm.waitFor("log view closed", func(s []string) bool { return !screenHas(s, "FOLLOWING") && !screenHas(s, "PAUSED") })
		})
	}
}
