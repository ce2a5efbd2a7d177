package adversarial

// The gated hook fails closed, in time, and never stalls the agent: odd
// payloads on the gated command are denied in Claude Code's PreToolUse answer
// format; a stdin left open is answered well before Claude Code's hook
// timeout; no duration flag overflows into a timeout Claude Code would cut
// short; and with the registry write-locked, every non-gated event answers
// within a second and is folded in later, in order, once.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/internal/e2e"
	_ "github.com/mattn/go-sqlite3"
)

// hookSession is the session id of adapters/claude/testdata's payloads.
const hookSession = "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c"

// hookReadDeadline is the hook's documented stdin deadline
// (claude.PayloadReadTimeout).
const hookReadDeadline = 3 * time.Second

// hookFixture is a payload of adapters/claude/testdata with members set (a
// nil value removes the member).
func hookFixture(t *testing.T, name string, set map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2e.ModuleRoot(), "adapters", "claude", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set) == 0 {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// hookResult is one hook process's run.
type hookResult struct {
	e2e.Out
	elapsed  time.Duration
	killed   bool // still running at the test's limit
	decision string
	reason   string
	answers  int // decision objects on stdout
}

func (h hookResult) String() string {
	return fmt.Sprintf("%s\nelapsed %s killed %v", h.Out, h.elapsed, h.killed)
}

// hookRun runs `clawpit hook args…` with stdin, killing it after limit.
func hookRun(t *testing.T, c *e2e.CLI, stdin any, limit time.Duration, args ...string) hookResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := hookCommand(ctx, c, append([]string{"hook"}, append(args, "--installed-by", "clawpit")...)...)
	switch in := stdin.(type) {
	case []byte:
		cmd.Stdin = bytes.NewReader(in)
	case *os.File:
		cmd.Stdin = in
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	start := time.Now()
	err := cmd.Run()
	h := hookResult{Out: e2e.Out{Stdout: so.String(), Stderr: se.String()}, elapsed: time.Since(start), killed: ctx.Err() != nil}
	if ee, ok := err.(*exec.ExitError); ok {
		h.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("hook: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(h.Stdout))
	for {
		var out struct {
			HookSpecificOutput struct {
				HookEventName            string `json:"hookEventName"`
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if dec.Decode(&out) != nil {
			break
		}
		h.answers++
		if out.HookSpecificOutput.HookEventName == "PreToolUse" {
			h.decision, h.reason = out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason
		}
	}
	return h
}

// hookCommand is c's command for args, killed when ctx ends.
func hookCommand(ctx context.Context, c *e2e.CLI, args ...string) *exec.Cmd {
	base := c.Command(nil, args...)
	cmd := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	cmd.Env = base.Env
	return cmd
}

// denied fails unless h is exactly one PreToolUse deny, exit 0.
func denied(t *testing.T, what string, h hookResult) {
	t.Helper()
	if h.killed || h.Code != 0 || h.answers != 1 || h.decision != "deny" {
		t.Errorf("%s: want one PreToolUse deny, exit 0:\n%s", what, h)
	}
}

// TestHookGatedOddEventsDeny: the gated command denies anything that is not
// a readable PreToolUse; a real PreToolUse still waits for the operator.
func TestHookGatedOddEventsDeny(t *testing.T) {
	c := newCLI(t)
	c.OK("session", "open", hookSession)
	pre := hookFixture(t, "pre_tool_use_bash", nil)
	body := strings.TrimPrefix(strings.TrimSpace(string(pre)), "{")
	swap := func(event string) []byte {
		return hookFixture(t, "pre_tool_use_bash", map[string]any{"hook_event_name": event})
	}
	big := hookFixture(t, "pre_tool_use_write", map[string]any{"tool_input": map[string]any{"file_path": "/x", "content": strings.Repeat("A", 1<<20)}})
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"unknown event Foo", swap("Foo")},
		{"lower-case pretooluse", swap("pretooluse")},
		{"trailing space", swap("PreToolUse ")},
		{"PostToolUse on the gated command", swap("PostToolUse")},
		{"duplicated key, PreToolUse last", []byte(`{"hook_event_name":"PostToolUse",` + body)},
		{"duplicated key, PreToolUse first", []byte(`{"hook_event_name":"PreToolUse","hook_event_name":"PostToolUse",` + strings.Replace(body, `"hook_event_name": "PreToolUse",`, "", 1))},
		{"duplicated nested key", bytes.Replace(pre, []byte(`"command": "npm run migrate -- --env staging"`), []byte(`"command": "ls", "command": "npm run migrate -- --env staging"`), 1)},
		{"missing event", hookFixture(t, "pre_tool_use_bash", map[string]any{"hook_event_name": nil})},
		{"event not a string", hookFixture(t, "pre_tool_use_bash", map[string]any{"hook_event_name": 7})},
		{"not an object", []byte(`["PreToolUse"]`)},
		{"truncated JSON", pre[:len(pre)/2]},
		{"garbage bytes", []byte("\x00\xff\x1b[2J PreToolUse \xfe")},
		{"empty", nil},
		{"over-size payload", big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hookRun(t, c, tc.in, 20*time.Second, "--approval-timeout", "1m", "--gated")
			denied(t, tc.name, h)
			if h.elapsed > hookReadDeadline+3*time.Second {
				t.Errorf("%s: answered after %s", tc.name, h.elapsed)
			}
		})
	}
	var aps []json.RawMessage
	if out := c.OK("--json", "approval", "list"); json.Unmarshal([]byte(out), &aps) != nil || len(aps) != 0 {
		t.Fatalf("odd payloads recorded approvals: %s", out)
	}
	// A real PreToolUse still reaches the operator and is allowed.
	ch := make(chan hookResult, 1)
	go func() { ch <- hookRun(t, c, pre, 60*time.Second, "--approval-timeout", "1m", "--gated") }()
	id := hookPendingApproval(t, c)
	c.OK("approval", "approve", id)
	if h := <-ch; h.Code != 0 || h.answers != 1 || h.decision != "allow" {
		t.Fatalf("real PreToolUse: %s", h)
	}
}

// hookPendingApproval waits for one pending approval and returns its id.
func hookPendingApproval(t *testing.T, c *e2e.CLI) string {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var aps []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		o := c.Run("--json", "approval", "list")
		if json.Unmarshal([]byte(o.Stdout), &aps) == nil {
			for _, a := range aps {
				if a.Status == "pending" {
					return a.ID
				}
			}
		}
	}
	t.Fatal("no pending approval")
	return ""
}

// TestHookStdinNeverClosed: a payload whose stdin is never closed is
// answered (deny) within the read deadline, far inside Claude Code's hook
// timeout (approval timeout + 30 s); the non-gated hook exits 0 as promptly.
func TestHookStdinNeverClosed(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		name    string
		payload []byte
		args    []string
	}{
		{"gated, whole payload", hookFixture(t, "pre_tool_use_bash", nil), []string{"--approval-timeout", "1m", "--gated"}},
		{"gated, half a payload", hookFixture(t, "pre_tool_use_bash", nil)[:40], []string{"--approval-timeout", "1m", "--gated"}},
		{"gated, nothing", nil, []string{"--approval-timeout", "1m", "--gated"}},
		{"not gated", hookFixture(t, "stop", nil), []string{"--approval-timeout", "1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close() // only after the hook has answered
			w.Write(tc.payload)
			h := hookRun(t, c, r, 30*time.Second, tc.args...)
			limit := hookReadDeadline + 3*time.Second
			if h.killed || h.elapsed > limit {
				t.Fatalf("answered after %s, want within %s (read deadline + margin):\n%s", h.elapsed, limit, h)
			}
			if slices.Contains(tc.args, "--gated") {
				denied(t, tc.name, h)
			} else if h.Code != 0 || h.Stdout != "" {
				t.Fatalf("non-gated hook: %s", h)
			}
		})
	}
}

// TestHookDurationCaps: no duration flag overflows. hooks install refuses an
// approval timeout whose hook timeout Claude Code cannot hold (exit 2, the
// value named, the settings file byte-identical); every other duration
// flag refuses values past its documented maximum the same way.
func TestHookDurationCaps(t *testing.T) {
	const huge = "2562047h47m16s"
	c := newCLI(t)
	dir := t.TempDir()
	settings := filepath.Join(dir, "settings.json")
	orig := []byte("{\n  \"model\": \"opus\",\n  \"hooks\": {}\n}\n")
	if err := os.WriteFile(settings, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, value string }{
		{"--approval-timeout", huge},
		{"--approval-timeout", "577h"}, // past 576h: hook timeout over Claude Code's 2^31-1 ms timer
		{"--approval-timeout", "-1s"},
		{"--run-inactivity", huge},
	} {
		o := c.Run("hooks", "install", "--settings", settings, "--on-failure", "block", tc.flag, tc.value)
		if o.Code != 2 || !strings.Contains(o.Stderr, tc.value) {
			t.Errorf("hooks install %s %s: want exit 2 naming the value:\n%s", tc.flag, tc.value, o)
		}
		if b, _ := os.ReadFile(settings); !bytes.Equal(b, orig) {
			t.Fatalf("hooks install %s %s changed the settings file:\n%s", tc.flag, tc.value, b)
		}
		if _, err := os.Stat(settings + ".clawpit-backup"); err == nil {
			t.Fatalf("hooks install %s %s wrote a backup", tc.flag, tc.value)
		}
	}
	// The documented maximum installs, its timeout inside the bound.
	c.OK("hooks", "install", "--settings", settings, "--on-failure", "block", "--approval-timeout", "576h")
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Timeout int64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(settings)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for ev, gs := range doc.Hooks {
		for _, g := range gs {
			for _, h := range g.Hooks {
				if h.Timeout <= 0 || h.Timeout*1000 > 1<<31-1 {
					t.Errorf("%s timeout %d s: outside Claude Code's timer", ev, h.Timeout)
				}
			}
		}
	}
	// Every other duration flag that feeds an agent or a timer.
	for _, args := range [][]string{
		{"sweep", "--busy-timeout", huge},
		{"sweep", "--grace", huge},
		{"sweep", "--retention", huge},
		{"daemon", "--sweep-interval", huge},
		{"daemon", "--watchdog-interval", huge},
		{"approval", "request", "--session", hookSession, "--tool", "Bash", "--command", "ls", "--expires-in", huge},
		{"approval", "wait", "abcd1234", "--timeout", huge},
		{"run", "register", "run-huge", "--session", hookSession, "--requester", hookSession, "--inactivity", huge},
		{"serve", "--idle-timeout", huge},
		{"demo", "--headless", "--duration", huge},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		o := c.RunCmd(hookCommand(ctx, c, args...))
		cancel()
		if o.Code != 2 || !strings.Contains(o.Stderr, huge) {
			t.Errorf("clawpit %s: want exit 2 naming %s:\n%s", strings.Join(args, " "), huge, o)
		}
	}
	// The hook itself: a gated call with an overflowing timeout is denied.
	h := hookRun(t, c, hookFixture(t, "pre_tool_use_bash", nil), 20*time.Second, "--approval-timeout", huge, "--gated")
	denied(t, "hook --approval-timeout "+huge, h)
}

// hookLock holds the registry's write lock from this process (another
// process than the hooks) until the returned func is called.
func hookLock(t *testing.T, db string) func() {
	t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+db+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin()
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			tx.Rollback()
			conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// hookSpoolRecords lists the spool's records, checking its modes.
func hookSpoolRecords(t *testing.T, c *e2e.CLI) []string {
	t.Helper()
	dir := c.DB + ".spool"
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("hook spool: %v", err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("hook spool %s mode %v, want 0700", dir, fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	var recs []string
	for _, e := range ents {
		i, _ := e.Info()
		if i.Mode().Perm()&0o077 != 0 {
			t.Errorf("spool file %s mode %v, want 0600", e.Name(), i.Mode().Perm())
		}
		if strings.HasSuffix(e.Name(), ".rec") {
			recs = append(recs, e.Name())
		}
	}
	return recs
}

// hookJournal is the session's journal reasons, oldest first.
func hookJournal(t *testing.T, c *e2e.CLI, session string) []string {
	t.Helper()
	var s struct {
		Events []struct {
			Reason string `json:"reason"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(c.OK("--json", "session", "show", session)), &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range s.Events {
		out = append(out, e.Reason)
	}
	return out
}

// TestHookSpoolUnderLock: with the registry write-locked by another
// process, every non-gated event answers within 1 s, exit 0, nothing on
// stdout; the gated one keeps trying until its deadline and denies, never
// spooled. Once the lock is gone the next hook folds the events in, in
// order, none lost, none twice.
func TestHookSpoolUnderLock(t *testing.T) {
	c := newCLI(t)
	if h := hookRun(t, c, hookFixture(t, "session_start", nil), 10*time.Second); h.Code != 0 {
		t.Fatalf("session start: %s", h)
	}
	release := hookLock(t, c.DB)
	events := []string{"post_tool_use", "subagent_start", "post_tool_use_subagent", "notification", "subagent_stop", "stop", "session_end"}
	for _, ev := range events {
		h := hookRun(t, c, hookFixture(t, ev, nil), 20*time.Second, "--approval-timeout", "1m")
		if h.killed || h.Code != 0 || h.Stdout != "" || h.elapsed > time.Second {
			t.Errorf("%s under a write lock: want exit 0 within 1s:\n%s", ev, h)
		}
	}
	if recs := hookSpoolRecords(t, c); len(recs) != len(events) {
		t.Fatalf("%d spooled records, want %d", len(recs), len(events))
	}
	// The gated hook needs the registry: it retries until its deadline
	// (approval timeout 1s + 5 s) and denies, before Claude Code's hook
	// timeout (31 s); it spools nothing.
	h := hookRun(t, c, hookFixture(t, "pre_tool_use_bash", nil), 40*time.Second, "--approval-timeout", "1s", "--gated")
	denied(t, "PreToolUse under a write lock", h)
	if h.elapsed > 20*time.Second || !strings.Contains(h.reason, "locked") {
		t.Errorf("gated hook under a lock: %s", h)
	}
	if recs := hookSpoolRecords(t, c); len(recs) != len(events) {
		t.Fatalf("the gated hook spooled: %d records", len(recs))
	}
	release()
	// The next hook (another session's) folds them in.
	if h := hookRun(t, c, hookFixture(t, "session_start", map[string]any{"session_id": "sess-after-lock"}), 10*time.Second); h.Code != 0 {
		t.Fatalf("next hook: %s", h)
	}
	want := []string{"opened", "activity: PostToolUse Write", "activity: SubagentStart test-runner", "activity: PostToolUse Bash", "activity: Stop", "closed"}
	if got := hookJournal(t, c, hookSession); !slices.Equal(got, want) {
		t.Fatalf("session journal after the fold:\n%q\nwant\n%q", got, want)
	}
	var run struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal([]byte(c.OK("--json", "run", "show", "agent-7f3a9c21")), &run); err != nil || run.Outcome != "ok" {
		t.Fatalf("sub-agent run after the fold: %+v %v", run, err)
	}
	if n := strings.Count(c.OK("notifications", "--all"), "Claude needs your permission"); n != 1 {
		t.Fatalf("%d notifications, want 1", n)
	}
	if recs := hookSpoolRecords(t, c); len(recs) != 0 {
		t.Fatalf("%d records left after the fold", len(recs))
	}
}

// TestHookSpoolConcurrentFolders: two hooks and a sweep folding the same
// spool at once apply each event exactly once, in order.
func TestHookSpoolConcurrentFolders(t *testing.T) {
	c := newCLI(t)
	if h := hookRun(t, c, hookFixture(t, "session_start", nil), 10*time.Second); h.Code != 0 {
		t.Fatalf("session start: %s", h)
	}
	release := hookLock(t, c.DB)
	tools := []string{"Write", "Edit", "Bash", "Read", "Grep"}
	for _, tool := range tools {
		h := hookRun(t, c, hookFixture(t, "post_tool_use", map[string]any{"tool_name": tool}), 20*time.Second)
		if h.Code != 0 || h.elapsed > time.Second {
			t.Errorf("PostToolUse %s under a lock: %s", tool, h)
		}
	}
	release()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hookRun(t, c, hookFixture(t, "session_start", map[string]any{"session_id": fmt.Sprintf("sess-fold-%d", i)}), 10*time.Second)
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); c.Run("sweep") }()
	wg.Wait()
	c.Run("sweep") // whatever is left
	want := []string{"opened"}
	for _, tool := range tools {
		want = append(want, "activity: PostToolUse "+tool)
	}
	if got := hookJournal(t, c, hookSession); !slices.Equal(got, want) {
		t.Fatalf("session journal after concurrent folds:\n%q\nwant\n%q", got, want)
	}
}

// TestHookGatedRetriesBusyRegistry: a write lock held past SQLite's busy
// timeout (5 s) is not a deny: the gated hook keeps trying, records the
// tool call once the lock is gone, and the operator's answer still counts.
func TestHookGatedRetriesBusyRegistry(t *testing.T) {
	c := newCLI(t)
	c.OK("session", "open", hookSession)
	release := hookLock(t, c.DB)
	ch := make(chan hookResult, 1)
	go func() {
		ch <- hookRun(t, c, hookFixture(t, "pre_tool_use_bash", nil), 60*time.Second, "--approval-timeout", "1m", "--gated")
	}()
	time.Sleep(7 * time.Second)
	select {
	case h := <-ch:
		t.Fatalf("answered while the registry was locked (7 s, approval timeout 1m): %s", h)
	default:
	}
	release()
	id := hookPendingApproval(t, c)
	c.OK("approval", "approve", id)
	if h := <-ch; h.Code != 0 || h.answers != 1 || h.decision != "allow" {
		t.Fatalf("after the lock: %s", h)
	}
}

// TestHookSpoolFull: a full spool (32 MiB) under a write lock drops the
// event with a line on stderr, exit 0 within 1 s; the next fold applies the
// spooled events and shows the count of the lost one in Alerts.
func TestHookSpoolFull(t *testing.T) {
	c := newCLI(t)
	if h := hookRun(t, c, hookFixture(t, "session_start", nil), 10*time.Second); h.Code != 0 {
		t.Fatalf("session start: %s", h)
	}
	dir := c.DB + ".spool"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// 32 spooled PostToolUse events of 1 MiB each: the spool's byte bound.
	prefix := `{"v":1,"payload":{"SessionID":"` + hookSession + `","HookEventName":"PostToolUse","ToolName":"Read","ToolResponse":"`
	suffix := `"}}`
	rec := []byte(prefix + strings.Repeat("r", 1<<20-len(prefix)-len(suffix)) + suffix)
	for i := range 32 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d-planted%02d.rec", i+1, i)), rec, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	release := hookLock(t, c.DB)
	h := hookRun(t, c, hookFixture(t, "stop", nil), 20*time.Second)
	if h.Code != 0 || h.Stdout != "" || h.elapsed > time.Second || !strings.Contains(h.Stderr, "event dropped") {
		t.Fatalf("Stop with the spool full: want exit 0 within 1s and a line on stderr:\n%s", h)
	}
	release()
	hookRun(t, c, hookFixture(t, "session_start", map[string]any{"session_id": "sess-after-full"}), 20*time.Second)
	c.Run("sweep") // folds whatever the hook's budget left
	if out := c.OK("notifications", "--all"); !strings.Contains(out, "1 Claude Code hook event was lost") {
		t.Fatalf("no count of the lost event in the notifications:\n%s", out)
	}
	got := hookJournal(t, c, hookSession)
	if n := strings.Count(strings.Join(got, "\n"), "activity: PostToolUse Read"); n != 32 || slices.Contains(got, "activity: Stop") {
		t.Fatalf("session journal: %d spooled events applied, want 32 (and no Stop): %q", n, got)
	}
	if recs := hookSpoolRecords(t, c); len(recs) != 0 {
		t.Fatalf("%d records left", len(recs))
	}
}
