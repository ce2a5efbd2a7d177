package e2e

// End-to-end tests of the Claude Code adapter (README "Use with Claude Code") through claudeRunner,
// a stand-in for Claude Code's hook runner written from the hooks reference:
// it reads the settings file, picks the matcher groups of the event (tool
// name for PreToolUse/PostToolUse, source for SessionStart, reason for
// SessionEnd, notification_type for Notification, agent_type for
// SubagentStart/Stop; "" and "*" match all), runs each command through sh
// with the payload on stdin and its `timeout` (seconds, default 600), and
// reads exit codes and the PreToolUse decision JSON: exit 2 or
// permissionDecision "deny" blocks; a hook that cannot start, times out, is
// killed or exits with another code does not, unless it has onFailure:
// "block" (Claude Code 2.1.295 and later).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

type claudeRunner struct {
	t        *testing.T
	settings string
	// stop, when closed, stops the hooks still running with SIGTERM, as
	// Claude Code does when the user interrupts a tool call (Node's
	// child_process kill, whose default signal is SIGTERM).
	stop chan struct{}
	// stopSig, when set, is the signal stop sends instead (SIGKILL: a hook
	// killed outright).
	stopSig syscall.Signal
}

// hookRun is one hook command's run.
type hookRun struct {
	command        string
	code           int
	stdout, stderr string
	timedOut       bool
	elapsed        time.Duration
	decision       string // hookSpecificOutput.permissionDecision, "" when none
	reason         string
	onFailure      string // the hook's onFailure setting
}

func (h hookRun) String() string {
	return fmt.Sprintf("exit %d (timed out %v, %s)\nstdout: %s\nstderr: %s", h.code, h.timedOut, h.elapsed, h.stdout, h.stderr)
}

// failed reports whether the hook failed as Claude Code's onFailure counts
// it: it could not start, timed out, or exited with a code other than 0 and 2
// (killed by a signal included).
func (h hookRun) failed() bool { return h.timedOut || h.code != 0 && h.code != 2 }

// blocks reports whether Claude Code would block the tool call.
func (h hookRun) blocks() bool {
	return h.code == 2 || h.decision == "deny" || h.onFailure == "block" && h.failed()
}

func hookMatches(matcher, value string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return matcher == value
	}
	return re.MatchString(value)
}

// fire runs every hook the settings file registers for payload's event.
func (r *claudeRunner) fire(payload []byte) []hookRun {
	r.t.Helper()
	var p map[string]any
	if err := json.Unmarshal(payload, &p); err != nil {
		r.t.Fatalf("payload: %v", err)
	}
	event, _ := p["hook_event_name"].(string)
	key := map[string]string{"PreToolUse": "tool_name", "PostToolUse": "tool_name", "SessionStart": "source",
		"SessionEnd": "reason", "Notification": "notification_type", "SubagentStart": "agent_type", "SubagentStop": "agent_type"}[event]
	value, _ := p[key].(string)
	b, err := os.ReadFile(r.settings)
	if err != nil {
		r.t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type      string `json:"type"`
				Command   string `json:"command"`
				Timeout   int    `json:"timeout"`
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		r.t.Fatalf("settings: %v", err)
	}
	var out []hookRun
	for _, g := range s.Hooks[event] {
		if key != "" && !hookMatches(g.Matcher, value) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type == "command" {
				sig := r.stopSig
				if sig == 0 {
					sig = syscall.SIGTERM
				}
				run := runHookSignal(h.Command, h.Timeout, payload, r.stop, sig)
				run.onFailure = h.OnFailure
				out = append(out, run)
			}
		}
	}
	return out
}

func runHookCommand(command string, timeoutS int, payload []byte, stop <-chan struct{}) hookRun {
	return runHookSignal(command, timeoutS, payload, stop, syscall.SIGTERM)
}

// runHookSignal is runHookCommand stopping the hook with sig.
func runHookSignal(command string, timeoutS int, payload []byte, stop <-chan struct{}, sig syscall.Signal) hookRun {
	if timeoutS <= 0 {
		timeoutS = 600
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutS)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Env = append(os.Environ(), "USER=tester", "SSH_CONNECTION=")
	cmd.Stdin = bytes.NewReader(payload)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		waited := make(chan struct{})
		go func() {
			select {
			case <-stop:
				cmd.Process.Signal(sig)
			case <-waited:
			}
		}()
		err = cmd.Wait()
		close(waited)
	}
	h := hookRun{command: command, stdout: so.String(), stderr: se.String(), elapsed: time.Since(start)}
	if ctx.Err() != nil {
		h.timedOut = true
	}
	if ee, ok := err.(*exec.ExitError); ok {
		h.code = ee.ExitCode()
	} else if err != nil {
		h.code = -1
	}
	var d struct {
		Out struct {
			Event    string `json:"hookEventName"`
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if h.code == 0 && strings.TrimSpace(h.stdout) != "" && json.Unmarshal(so.Bytes(), &d) == nil && d.Out.Event == "PreToolUse" {
		h.decision, h.reason = d.Out.Decision, d.Out.Reason
	}
	return h
}

// one fires payload and requires exactly one clawpit hook to have run.
func (r *claudeRunner) one(payload []byte) hookRun {
	r.t.Helper()
	runs := r.fire(payload)
	if len(runs) != 1 {
		r.t.Fatalf("%d hooks ran, want 1", len(runs))
	}
	return runs[0]
}

// quiet fires a non-gating event and requires it to succeed silently.
func (r *claudeRunner) quiet(payload []byte) {
	r.t.Helper()
	h := r.one(payload)
	if h.code != 0 || h.stdout != "" {
		r.t.Fatalf("hook: %s", h)
	}
}

// fixture loads adapters/claude/testdata/<name>.json with top-level overrides.
func fixture(t *testing.T, name string, set map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile(inRepo("adapters", "claude", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	out, _ := json.Marshal(m)
	return out
}

const fixtureSession = "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c"

// installHooks installs clawpit's hooks for c into a fresh settings file.
func installHooks(t *testing.T, c *cli, timeout string) *claudeRunner {
	t.Helper()
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	c.ok("hooks", "install", "--settings", settings, "--approval-timeout", timeout)
	return &claudeRunner{t: t, settings: settings}
}

// async fires payload in the background.
func (r *claudeRunner) async(payload []byte) <-chan hookRun {
	ch := make(chan hookRun, 1)
	go func() {
		runs := r.fire(payload)
		if len(runs) != 1 {
			ch <- hookRun{code: -100, stderr: fmt.Sprintf("%d hooks ran", len(runs))}
			return
		}
		ch <- runs[0]
	}()
	return ch
}

// pending waits until the approval of toolUseID is recorded and returns it.
func pending(t *testing.T, c *cli, toolUseID string) core.Approval {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var aps []core.Approval
		c.json(&aps, "approval", "list")
		for _, a := range aps {
			if a.ToolUseID == toolUseID {
				return a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no approval for %s", toolUseID)
	return core.Approval{}
}

func answered(t *testing.T, ch <-chan hookRun) hookRun {
	t.Helper()
	select {
	case h := <-ch:
		return h
	case <-time.After(30 * time.Second):
		t.Fatal("hook did not answer")
	}
	return hookRun{}
}

func TestClaudeHooksApproveDenyGrantRepeat(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	r.quiet(fixture(t, "session_start", nil))
	var s struct {
		core.Session
	}
	c.json(&s, "session", "show", fixtureSession)
	if s.State != core.SessionActive || s.Label != "shop (claude-sonnet-4-5)" {
		t.Fatalf("session: %+v", s.Session)
	}

	// Allow: the operator approves in clawpit.
	ch := r.async(fixture(t, "pre_tool_use_bash", nil))
	a := pending(t, c, "toolu_01ABC123")
	if a.Status != core.ApprovalPending || a.Tool != "Bash" || a.Command != "npm run migrate -- --env staging" ||
		a.Rationale != "Apply the pending database migrations to staging" || a.Cwd != "/home/dev/shop" || a.Session != fixtureSession {
		t.Fatalf("approval: %+v", a)
	}
	c.ok("approval", "approve", a.ID)
	h := answered(t, ch)
	if h.code != 0 || h.decision != "allow" || !strings.Contains(h.reason, "approved in clawpit by tester@") {
		t.Fatalf("allow: %s", h)
	}

	// Deny with the operator's reason.
	ch = r.async(fixture(t, "pre_tool_use_write", nil))
	a = pending(t, c, "toolu_01WRITE456")
	if a.Command != "/home/dev/shop/src/config.ts" || a.Tool != "Write" {
		t.Fatalf("write approval: %+v", a)
	}
	c.ok("approval", "deny", a.ID, "--reason", "config is frozen until Friday")
	h = answered(t, ch)
	if h.code != 0 || h.decision != "deny" || !strings.Contains(h.reason, "config is frozen until Friday") || !h.blocks() {
		t.Fatalf("deny: %s", h)
	}

	// The same tool_use_id again (a resumed session): answered at once from the record.
	h = r.one(fixture(t, "pre_tool_use_write", nil))
	if h.decision != "deny" || !strings.Contains(h.reason, "config is frozen until Friday") || h.elapsed > 5*time.Second {
		t.Fatalf("repeat: %s", h)
	}
	var aps []core.Approval
	c.json(&aps, "approval", "list")
	if len(aps) != 2 {
		t.Fatalf("%d approvals after a repeat, want 2", len(aps))
	}

	// A session grant answers the next identical call at once.
	ch = r.async(fixture(t, "pre_tool_use_bash", map[string]any{"tool_use_id": "toolu_02"}))
	a = pending(t, c, "toolu_02")
	c.ok("approval", "approve", a.ID, "--scope", "session")
	if h = answered(t, ch); h.decision != "allow" {
		t.Fatalf("approve with grant: %s", h)
	}
	h = r.one(fixture(t, "pre_tool_use_bash", map[string]any{"tool_use_id": "toolu_03"}))
	if h.decision != "allow" || !strings.Contains(h.reason, "grant:") || h.elapsed > 5*time.Second {
		t.Fatalf("granted: %s", h)
	}

	// A tool outside the gate is not asked about: its hook (the gate is
	// applied by clawpit, so that a crossed budget can hold any tool)
	// answers nothing at once and records no approval.
	if h := r.one(fixture(t, "pre_tool_use_bash", map[string]any{"tool_name": "Read", "tool_use_id": "toolu_04"})); h.code != 0 || h.stdout != "" || h.elapsed > 5*time.Second {
		t.Fatalf("Read: %s", h)
	}
	aps = nil
	c.json(&aps, "approval", "list")
	for _, a := range aps {
		if a.ToolUseID == "toolu_04" {
			t.Fatalf("Read was asked about: %+v", a)
		}
	}
}

func TestClaudeHooksExpiryDeniesBeforeHookTimeout(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "2s")
	h := r.one(fixture(t, "pre_tool_use_bash", nil))
	if h.timedOut || h.code != 0 || h.decision != "deny" || h.reason != "no operator decision within 2s" {
		t.Fatalf("expiry: %s", h)
	}
	if h.elapsed < 2*time.Second || h.elapsed > 12*time.Second {
		t.Fatalf("answered after %s, want about 2s (hook timeout is 32s)", h.elapsed)
	}
	var a struct{ core.Approval }
	c.json(&a, "approval", "show", pending(t, c, "toolu_01ABC123").ID)
	if a.Status != core.ApprovalExpired {
		t.Fatalf("approval %s, want expired", a.Status)
	}
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != 1 || ns[0].Kind != core.NotifyApprovalExpired {
		t.Fatalf("notifications: %+v", ns)
	}
}

// TestClaudeHooksStoppedHookWithdrawsApproval: when Claude Code stops a
// waiting PreToolUse hook (the user interrupts the tool call), the hook
// withdraws its approval at once and exits: the operator is not left an
// approval no one waits for, and a late approve changes nothing.
func TestClaudeHooksStoppedHookWithdrawsApproval(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "5m")
	r.stop = make(chan struct{})
	ch := r.async(fixture(t, "pre_tool_use_bash", nil))
	a := pending(t, c, "toolu_01ABC123")
	if a.Status != core.ApprovalPending {
		t.Fatalf("approval %s, want pending", a.Status)
	}
	stopped := time.Now()
	close(r.stop)
	h := answered(t, ch)
	if took := time.Since(stopped); took > 5*time.Second {
		t.Fatalf("the stopped hook exited after %s", took)
	}
	if h.code != 0 || h.decision != "deny" {
		t.Fatalf("stopped hook: %s", h)
	}
	// The answer and the message say what stopped it, as the recorded
	// reason does, not "context canceled".
	for what, text := range map[string]string{"reason": h.reason, "stderr": h.stderr} {
		if !strings.Contains(text, "stopped before an operator decided (stopped by SIGTERM)") || strings.Contains(text, "context canceled") {
			t.Fatalf("stopped hook's %s %q, want it to say it was stopped by SIGTERM\n%s", what, text, h)
		}
	}
	var got struct{ core.Approval }
	c.json(&got, "approval", "show", a.ID)
	if got.Status != core.ApprovalCancelled || got.DecidedBy != string(core.ActorRuntime) ||
		!strings.Contains(got.Reason, "the hook waiting for it stopped before a decision (stopped by SIGTERM)") {
		t.Fatalf("approval after the hook stopped: %s by %s: %q, want cancelled by the runtime\n%s", got.Status, got.DecidedBy, got.Reason, h)
	}
	if out := c.run("approval", "approve", a.ID); !strings.Contains(out.stdout, "not applied: already cancelled") {
		t.Fatalf("approve after the hook stopped: %s", out)
	}

	// An install from before `exec` (or any wrapper shell): the signal
	// stops only the shell, and the hook sees its parent exit.
	b, err := os.ReadFile(r.settings)
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatal(err)
	}
	gate, ok := strings.CutPrefix(set.Hooks["PreToolUse"][0].Hooks[0].Command, "exec ")
	if !ok {
		t.Fatalf("PreToolUse command %q does not start with exec", gate)
	}
	stop := make(chan struct{})
	ch2 := make(chan hookRun, 1)
	go func() {
		ch2 <- runHookCommand(gate+"; true", 60, fixture(t, "pre_tool_use_bash", map[string]any{"tool_use_id": "toolu_02"}), stop)
	}()
	a = pending(t, c, "toolu_02")
	close(stop)
	answered(t, ch2)
	c.json(&got, "approval", "show", a.ID)
	if got.Status != core.ApprovalCancelled || !strings.Contains(got.Reason, "the hook waiting for it stopped before a decision (its parent process") {
		t.Fatalf("approval after the hook's shell stopped: %s: %q, want cancelled", got.Status, got.Reason)
	}
}

// TestClaudeHooksSignalBeforePayload: a hook stopped while it still reads
// its payload records nothing to wait for and denies at once.
func TestClaudeHooksSignalBeforePayload(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "s0") // the registry exists
	cmd := c.command(nil, "hook", "--approval-timeout", "1m", "--gated")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var so bytes.Buffer
	cmd.Stdout = &so
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the process is up and reading stdin
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	in.Write(fixture(t, "pre_tool_use_bash", nil))
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the hook stopped before its payload was read still waits")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("exited after %s", took)
	}
	if strings.Contains(so.String(), `"allow"`) {
		t.Fatalf("stopped hook allowed: %s", so.String())
	}
	var aps []core.Approval
	c.json(&aps, "approval", "list", "--status", "pending")
	if len(aps) != 0 {
		t.Fatalf("pending approvals after the hook stopped: %+v", aps)
	}
}

func TestClaudeHooksSubagentRunTaskAndNotification(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	r.quiet(fixture(t, "session_start", nil))
	r.quiet(fixture(t, "subagent_start", nil))
	run := c.runRow("agent-7f3a9c21")
	if !run.Running() || run.Label != "test-runner" || run.ChildSession != fixtureSession || run.InactivityBudgetMs != 600_000 {
		t.Fatalf("run: %+v", run.Run)
	}
	var tasks []core.Task
	c.json(&tasks, "task", "list", "--session", fixtureSession)
	if len(tasks) != 1 || tasks[0].Runtime != core.RuntimeSubagent || tasks[0].RunID != "agent-7f3a9c21" || tasks[0].Status != core.TaskRunning {
		t.Fatalf("tasks: %+v", tasks)
	}
	r.quiet(fixture(t, "subagent_start", nil)) // repeated: nothing new
	c.json(&tasks, "task", "list")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks after a repeated SubagentStart", len(tasks))
	}

	// The sub-agent's approval pauses its run's watchdog ...
	ch := r.async(fixture(t, "pre_tool_use_subagent", nil))
	a := pending(t, c, "toolu_01SUB789")
	if a.RunID != "agent-7f3a9c21" {
		t.Fatalf("approval not bound to the run: %+v", a)
	}
	if run = c.runRow("agent-7f3a9c21"); run.PendingApprovalWaits != 1 {
		t.Fatalf("waits = %d, want 1", run.PendingApprovalWaits)
	}
	before := run.LastProgressAt

	// ... and Claude Code's permission prompt meanwhile links to it in Alerts.
	r.quiet(fixture(t, "notification", nil))
	var ns []core.Notification
	c.json(&ns, "notifications")
	if len(ns) != 1 || ns[0].Kind != core.NotifyRuntimeNotice || ns[0].SubjectID != a.ID ||
		!strings.Contains(ns[0].Text, "Claude needs your permission to use Bash") {
		t.Fatalf("notifications: %+v", ns)
	}

	time.Sleep(5 * time.Millisecond)
	c.ok("approval", "approve", a.ID)
	if h := answered(t, ch); h.decision != "allow" {
		t.Fatalf("sub-agent approval: %s", h)
	}
	run = c.runRow("agent-7f3a9c21")
	if run.PendingApprovalWaits != 0 || run.LastProgressAt <= before {
		t.Fatalf("watchdog not re-armed: waits %d, last progress %v (was %v)", run.PendingApprovalWaits, run.LastProgressAt, before)
	}
	before = run.LastProgressAt
	time.Sleep(5 * time.Millisecond)
	r.quiet(fixture(t, "post_tool_use_subagent", nil))
	if run = c.runRow("agent-7f3a9c21"); run.LastProgressAt <= before {
		t.Fatal("PostToolUse did not record progress on the run")
	}
	r.quiet(fixture(t, "post_tool_use", nil))
	r.quiet(fixture(t, "stop", nil))

	r.quiet(fixture(t, "subagent_stop", nil))
	run = c.runRow("agent-7f3a9c21")
	if run.Running() || run.Outcome != core.OutcomeOK {
		t.Fatalf("run after SubagentStop: %+v", run.Run)
	}
	if tk := c.task(tasks[0].ID); tk.Status != core.TaskSucceeded {
		t.Fatalf("task %s, want succeeded", tk.Status)
	}
}

func TestClaudeHooksSessionEndCloses(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	r.quiet(fixture(t, "session_start", nil))
	ch := r.async(fixture(t, "pre_tool_use_bash", nil))
	a := pending(t, c, "toolu_01ABC123")
	r.quiet(fixture(t, "session_end", nil))
	h := answered(t, ch)
	if h.decision != "deny" || !strings.Contains(h.reason, "cancelled") {
		t.Fatalf("waiting hook after SessionEnd: %s", h)
	}
	var s struct{ core.Session }
	c.json(&s, "session", "show", fixtureSession)
	if s.State != core.SessionClosed {
		t.Fatalf("session %s, want closed", s.State)
	}
	var got struct{ core.Approval }
	c.json(&got, "approval", "show", a.ID)
	if got.Status != core.ApprovalCancelled {
		t.Fatalf("approval %s, want cancelled", got.Status)
	}
	r.quiet(fixture(t, "session_end", nil)) // again: nothing to do, no error

	// A new session with the same id (not a resume) does not re-open it.
	r.quiet(fixture(t, "session_start", nil))
	if c.json(&s, "session", "show", fixtureSession); s.State != core.SessionClosed {
		t.Fatalf("session %s after a startup SessionStart, want closed", s.State)
	}
	// `claude --resume`: the conversation continues, and so does the session.
	r.quiet(fixture(t, "session_start", map[string]any{"source": "resume"}))
	if c.json(&s, "session", "show", fixtureSession); s.State != core.SessionActive {
		t.Fatalf("session %s after SessionStart resume, want active", s.State)
	}
	if got := c.ok("session", "show", fixtureSession); !strings.Contains(got, "re-opened after close") {
		t.Fatalf("session journal:\n%s", got)
	}
	r.quiet(fixture(t, "session_start", map[string]any{"source": "resume"})) // again: already active, no error
}

func TestClaudeHooksBrokenRegistry(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	// Corrupt the registry after install.
	os.Remove(c.db + "-wal")
	os.Remove(c.db + "-shm")
	if err := os.WriteFile(c.db, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	h := r.one(fixture(t, "pre_tool_use_bash", nil))
	if h.code != 0 || h.decision != "deny" || !strings.Contains(h.reason, "denied") {
		t.Fatalf("PreToolUse on a broken registry: %s", h)
	}
	for _, name := range []string{"session_start", "post_tool_use", "subagent_start", "subagent_stop", "notification", "stop", "session_end"} {
		h := r.one(fixture(t, name, nil))
		if h.blocks() || h.code != 1 || h.stdout != "" || h.stderr == "" {
			t.Fatalf("%s on a broken registry must not block: %s", name, h)
		}
	}
	// An unreadable payload on the gated command denies; elsewhere it only reports.
	var gate, post string
	b, _ := os.ReadFile(r.settings)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "--gated") {
			gate = line
		} else if strings.Contains(line, "--installed-by") && post == "" {
			post = line
		}
	}
	unq := func(l string) string {
		var s string
		json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(l, ":", 2)[1]), ",")), &s)
		return s
	}
	if h := runHookCommand(unq(gate), 60, []byte(`{"hook_event_name": "PreToolUse", "tool_input": `), nil); h.decision != "deny" {
		t.Fatalf("unreadable gated payload: %s", h)
	}
	if h := runHookCommand(unq(post), 60, []byte(`]`), nil); h.code != 1 || h.blocks() {
		t.Fatalf("unreadable payload: %s", h)
	}
}

// TestClaudeHooksLockedRegistryDenies: a gated call keeps trying a
// write-locked registry until its deadline (approval timeout + 5 s), then
// denies, before Claude Code's hook timeout (approval timeout + 30 s).
func TestClaudeHooksLockedRegistryDenies(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the approval timeout and half the answer margin (6 s)")
	}
	c := newCLI(t)
	r := installHooks(t, c, "1s")
	db, err := sql.Open("sqlite3", "file:"+c.db+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	h := r.one(fixture(t, "pre_tool_use_bash", nil))
	tx.Rollback()
	if h.decision != "deny" || !strings.Contains(h.reason, "locked") || h.elapsed > 20*time.Second {
		t.Fatalf("locked registry: %s", h)
	}
}

// TestClaudeHooksHungRegistryDenies: a registry that accepts the connection
// and then never answers (a PostgreSQL host hung mid-handshake) still gets
// the gated call denied, before Claude Code's own hook timeout would let it
// through.
func TestClaudeHooksHungRegistryDenies(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the approval timeout and half the answer margin (6 s)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn) // accepted, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, conn := range held {
			conn.Close()
		}
		mu.Unlock()
	}()
	c := newCLI(t)
	r := installHooks(t, c, "1s")
	// install checks its registry: point the installed commands at the
	// hung one afterwards.
	b, err := os.ReadFile(r.settings)
	if err != nil {
		t.Fatal(err)
	}
	hung := "postgres://clawpit@" + ln.Addr().String() + "/hung?sslmode=disable"
	if err := os.WriteFile(r.settings, bytes.ReplaceAll(b, []byte(c.db), []byte("'"+hung+"'")), 0o600); err != nil {
		t.Fatal(err)
	}
	h := r.one(fixture(t, "pre_tool_use_bash", nil))
	if h.timedOut || h.code != 0 || h.decision != "deny" || !strings.Contains(h.reason, "could not record or decide") {
		t.Fatalf("hung registry: %s", h)
	}
	// Claude Code's hook timeout is the approval timeout + 30 s.
	if h.elapsed > 20*time.Second {
		t.Fatalf("denied after %s, want well before the hook timeout (31 s)", h.elapsed)
	}
}

func TestClaudeHooksStatusCLI(t *testing.T) {
	c := newCLI(t)
	r := installHooks(t, c, "1m")
	out := c.ok("hooks", "status", "--settings", r.settings)
	if !strings.Contains(out, "8 clawpit hooks") || !strings.Contains(out, "PreToolUse") || !strings.Contains(out, c.db) {
		t.Fatalf("status: %s", out)
	}
	if o := c.ok("hooks", "install", "--settings", r.settings, "--approval-timeout", "1m"); !strings.Contains(o, "already installed") {
		t.Fatalf("second install: %s", o)
	}
	c.ok("hooks", "uninstall", "--settings", r.settings)
	if out := c.ok("hooks", "status", "--settings", r.settings); !strings.Contains(out, "not installed") {
		t.Fatalf("status after uninstall: %s", out)
	}
	if o := c.run("hooks", "install", "--settings", r.settings, "--gate", "Bash("); o.code != 2 {
		t.Fatalf("bad gate: %s", o)
	}
}

// TestClaudeHookUnknownFlag: an installed command from another clawpit version
// never exits 2 (which would block a Stop); a tool call is still denied.
func TestClaudeHookUnknownFlag(t *testing.T) {
	c := newCLI(t)
	o := c.runIn(bytes.NewReader(fixture(t, "stop", nil)), "hook", "--from-the-future")
	if o.code != 1 || o.stdout != "" {
		t.Fatalf("Stop: %s", o)
	}
	o = c.runIn(bytes.NewReader(fixture(t, "pre_tool_use_bash", nil)), "hook", "--from-the-future")
	if o.code != 0 || !strings.Contains(o.stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("PreToolUse: %s", o)
	}
}

// TestClaudeHooksApprovalPausesWatchdog: a sub-agent waiting for approval is
// not timed out by the watchdog however long the operator takes; once the
// approval is decided the watchdog is re-armed and ends a run that then goes
// quiet.
func TestClaudeHooksApprovalPausesWatchdog(t *testing.T) {
	c := newCLI(t)
	settings := filepath.Join(t.TempDir(), "settings.json")
	c.ok("hooks", "install", "--settings", settings, "--approval-timeout", "1m", "--run-inactivity", "2s")
	r := &claudeRunner{t: t, settings: settings}
	r.quiet(fixture(t, "subagent_start", nil))
	if run := c.runRow("agent-7f3a9c21"); run.InactivityBudgetMs != 2000 {
		t.Fatalf("budget %d ms, want 2000", run.InactivityBudgetMs)
	}
	ch := r.async(fixture(t, "pre_tool_use_subagent", nil))
	a := pending(t, c, "toolu_01SUB789")
	time.Sleep(2500 * time.Millisecond)
	c.ok("sweep")
	if run := c.runRow("agent-7f3a9c21"); !run.Running() || run.PendingApprovalWaits != 1 {
		t.Fatalf("run timed out while waiting for approval: %+v", run.Run)
	}
	c.ok("approval", "approve", a.ID)
	if h := answered(t, ch); h.decision != "allow" {
		t.Fatalf("approve: %s", h)
	}
	c.ok("sweep")
	if run := c.runRow("agent-7f3a9c21"); !run.Running() {
		t.Fatalf("run timed out right after the approval re-armed it: %+v", run.Run)
	}
	time.Sleep(2500 * time.Millisecond)
	c.ok("sweep")
	if run := c.runRow("agent-7f3a9c21"); run.Running() || run.Outcome != core.OutcomeTimeout {
		t.Fatalf("quiet run not timed out after the re-arm: %+v", run.Run)
	}
}

// installWith installs clawpit's hooks for c with more flags into a fresh
// settings file, running the clawpit binary at bin (the hooks run it by
// that path).
func installWith(t *testing.T, c *cli, bin string, flags ...string) (*claudeRunner, out) {
	t.Helper()
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	cmd := c.command(nil, append([]string{"hooks", "install", "--settings", settings, "--approval-timeout", "1m"}, flags...)...)
	cmd.Path = bin
	return &claudeRunner{t: t, settings: settings}, c.runCmd(cmd)
}

// TestClaudeHooksFailClosed: with onFailure "block", a gated hook that cannot
// answer (its binary gone, the hook killed) blocks the tool call; without
// it Claude Code lets the call through, which is why install sets it.
func TestClaudeHooksFailClosed(t *testing.T) {
	c := newCLI(t)
	// A copy of the binary, installed from and then removed: the hooks'
	// binary is gone (uninstalled, moved, a go run build cleaned up).
	moved := filepath.Join(t.TempDir(), "clawpit")
	b, err := os.ReadFile(clawpitBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moved, b, 0o755); err != nil {
		t.Fatal(err)
	}
	block, o := installWith(t, c, moved, "--on-failure", "block")
	if o.code != 0 || !strings.Contains(o.stdout, "Claude Code blocks the tool call") {
		t.Fatalf("install --on-failure block: %s", o)
	}
	open, o := installWith(t, c, moved, "--on-failure", "continue")
	if o.code != 0 || strings.Contains(o.stdout, "blocks the tool call") || o.stderr != "" {
		t.Fatalf("install --on-failure continue: %s", o)
	}
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	call := fixture(t, "pre_tool_use_bash", nil)
	if h := block.one(call); h.code != 127 || !h.blocks() {
		t.Fatalf("gated hook without its binary, onFailure block: %s (blocks %v), want exit 127 and blocked", h, h.blocks())
	}
	if h := open.one(call); h.code != 127 || h.blocks() {
		t.Fatalf("gated hook without its binary, no onFailure: %s (blocks %v), want exit 127 and let through", h, h.blocks())
	}
	// Only the gated hook blocks on failure: a session hook that fails
	// must not stop Claude Code.
	if h := block.one(fixture(t, "session_start", nil)); h.code != 127 || h.onFailure != "" {
		t.Fatalf("SessionStart without its binary: %s, onFailure %q", h, h.onFailure)
	}

	// A hook killed outright (SIGKILL: no chance to answer or withdraw).
	r, o := installWith(t, c, clawpitBin, "--on-failure", "block")
	if o.code != 0 {
		t.Fatal(o)
	}
	r.stop, r.stopSig = make(chan struct{}), syscall.SIGKILL
	ch := r.async(fixture(t, "pre_tool_use_bash", map[string]any{"tool_use_id": "toolu_kill"}))
	a := pending(t, c, "toolu_kill")
	close(r.stop)
	h := answered(t, ch)
	if h.code != -1 || !h.blocks() {
		t.Fatalf("killed gated hook, onFailure block: %s (blocks %v), want killed and blocked", h, h.blocks())
	}
	// It had no chance to withdraw its approval: the next sweep on this
	// host does, seeing its process gone.
	var got struct{ core.Approval }
	c.json(&got, "approval", "show", a.ID)
	if got.Status != core.ApprovalPending || got.Waiter.PID == 0 || got.Waiter.Host != core.HostName() {
		t.Fatalf("approval of the killed hook before a sweep: %s, waiter %+v", got.Status, got.Waiter)
	}
	if o := c.ok("sweep"); !strings.Contains(o, "1 withdrawn") || !strings.Contains(o, "approval_waiter approval "+a.ID) {
		t.Fatalf("sweep: %s", o)
	}
	c.json(&got, "approval", "show", a.ID)
	want := fmt.Sprintf("the hook waiting for it is gone (process %d on %s exited before a decision)", got.Waiter.PID, got.Waiter.Host)
	if got.Status != core.ApprovalCancelled || got.Reason != want {
		t.Fatalf("approval of the killed hook after a sweep: %s %q, want cancelled %q", got.Status, got.Reason, want)
	}
	if o := c.ok("approval", "show", a.ID); !strings.Contains(o, fmt.Sprintf("waiter:         pid %d on %s\n", got.Waiter.PID, got.Waiter.Host)) {
		t.Fatalf("approval show names no waiter:\n%s", o)
	}
	// A decided approval no longer expires: its list row says so.
	if o := c.ok("approval", "list"); !regexp.MustCompile(a.ID + ` +cancelled +\S+ +Bash +\S+ +- +`).MatchString(o) {
		t.Fatalf("approval list:\n%s", o)
	}
}

// TestClaudeHooksOnFailureAuto: install's default reads the version of the
// claude on PATH and sets onFailure "block" only where Claude Code reads it
// (an older one would skip the whole settings file); otherwise it says why
// the gated hook fails open and what to run.
func TestClaudeHooksOnFailureAuto(t *testing.T) {
	dir := t.TempDir()
	fake := func(version string) string {
		bin := filepath.Join(dir, strings.ReplaceAll(version, " ", "_"))
		os.MkdirAll(bin, 0o755)
		if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho '"+version+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	for _, tc := range []struct {
		name, path string
		block      bool
		warn       string
	}{
		{"current", fake("2.1.317 (Claude Code)"), true, ""},
		{"first with onFailure", fake("2.1.295 (Claude Code)"), true, ""},
		{"older", fake("2.1.294 (Claude Code)"), false, `Claude Code "2.1.294 (Claude Code)" lets a gated tool call through`},
		{"no version", fake("Claude Code"), false, "Claude Code's version could not be read"},
		{"not on PATH", "/nonexistent", false, "claude is not on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t)
			c.env = []string{"PATH=" + tc.path}
			r, o := installWith(t, c, clawpitBin)
			if o.code != 0 {
				t.Fatal(o)
			}
			// The advice repeats the flags given (here the settings file
			// and the approval timeout), not a bare command.
			if !tc.block && !strings.Contains(o.stderr, " hooks install --approval-timeout=1m0s --settings="+r.settings+" --on-failure block`") && !strings.Contains(o.stderr, "upgrade, then run `clawpit --db=") {
				t.Fatalf("advice without the install's own flags: %q", o.stderr)
			}
			st := c.ok("hooks", "status", "--settings", r.settings)
			if got := strings.Contains(st, "onFailure block"); got != tc.block {
				t.Fatalf("onFailure block installed %v, want %v:\n%s", got, tc.block, st)
			}
			if tc.warn == "" && o.stderr != "" || !strings.Contains(o.stderr, tc.warn) {
				t.Fatalf("install stderr %q, want %q", o.stderr, tc.warn)
			}
			if !tc.block && !strings.Contains(o.stderr, "--on-failure block") && !strings.Contains(o.stderr, "upgrade") {
				t.Fatalf("warning says nothing to do: %q", o.stderr)
			}
		})
	}
	// A block set before stays when a re-install cannot read the version
	// (claude not on this shell's PATH); a Claude Code found too old
	// takes it off, saying so.
	c := newCLI(t)
	r, o := installWith(t, c, clawpitBin, "--on-failure", "block")
	if o.code != 0 {
		t.Fatal(o)
	}
	again := func(path string) (string, out) {
		t.Helper()
		cmd := c.command(nil, "hooks", "install", "--settings", r.settings, "--approval-timeout", "1m")
		cmd.Env = append(cmd.Env, "PATH="+path)
		o := c.runCmd(cmd)
		if o.code != 0 {
			t.Fatalf("re-install: %s", o)
		}
		return c.ok("hooks", "status", "--settings", r.settings), o
	}
	if st, o := again("/nonexistent"); !strings.Contains(st, "onFailure block") || o.stderr != "" || !strings.Contains(o.stdout, "already installed") {
		t.Fatalf("re-install without claude on PATH dropped the block: %s\n%s", st, o)
	}
	if st, o := again(fake("2.1.200 (Claude Code)")); strings.Contains(st, "onFailure block") || !strings.Contains(o.stderr, "2.1.200") {
		t.Fatalf("re-install with an old Claude Code kept the block: %s\n%s", st, o)
	}

	settings := filepath.Join(t.TempDir(), "settings.json")
	if o := c.run("hooks", "install", "--settings", settings, "--on-failure", "maybe"); o.code != 2 || !strings.Contains(o.stderr, `"maybe"`) {
		t.Fatalf("--on-failure maybe: %s", o)
	}
	if _, err := os.Stat(settings); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install wrote %s (%v)", settings, err)
	}
}

// `hook` is listed by `clawpit --help` as what Claude Code runs; `hook
// --help` names every event with the payload fields clawpit reads and shows
// a sample payload; an event clawpit does not handle is called an unknown
// event (exit 0, a line on stderr), not blamed on a missing session_id.
func TestHookHelpAndUnknownEvent(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if o := c.run("--help"); !regexp.MustCompile(`(?m)^  hook +.*Claude Code runs it`).MatchString(o.stdout) {
		t.Errorf("clawpit --help does not list hook as run by Claude Code:\n%s", o.stdout)
	}
	help := c.run("hook", "--help").stdout
	for _, want := range []string{
		"Claude Code runs this command",
		"SessionStart", "SessionEnd", "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "Stop", "Notification",
		"fields: session_id, tool_name, tool_input, tool_use_id, agent_id, cwd",
		"fields: session_id, agent_id, agent_type",
		`"hook_event_name": "PreToolUse"`,
		"unknown event",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("hook --help lacks %q:\n%s", want, help)
		}
	}
	for _, payload := range []string{
		`{"hook_event_name": "PreCompact", "session_id": "s1", "trigger": "auto"}`,
		`{"hook_event_name": "UserPromptSubmit", "prompt": "hello"}`,
	} {
		o := c.runIn(strings.NewReader(payload), "hook")
		var p struct {
			Event string `json:"hook_event_name"`
		}
		json.Unmarshal([]byte(payload), &p)
		if o.code != 0 || o.stdout != "" || !strings.Contains(o.stderr, `unknown event "`+p.Event+`"`) || strings.Contains(o.stderr, "session_id") {
			t.Errorf("hook with %s: %s", payload, o)
		}
	}
	// Nothing was recorded.
	if o := c.run("session", "list"); o.code == 0 && strings.Contains(o.stdout, "s1") {
		t.Errorf("an unknown event recorded a session:\n%s", o)
	}
}
