package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/spf13/cobra"
)

// testApp is an app on a registry path in a fresh temp dir (not created until
// a command records work), with buffered streams and an empty config, so a
// run function can be called directly: opts in, output and error out.
type testApp struct {
	*app
	out, errOut *bytes.Buffer
	db          string
}

func newTestApp(t *testing.T) *testApp {
	t.Helper()
	// Nothing may fall back to the real registry or config under $HOME.
	t.Setenv("CLAWPIT_HOME", t.TempDir())
	t.Setenv("CLAWPIT_DB", "")
	t.Setenv("CLAWPIT_CONFIG", filepath.Join(t.TempDir(), "none.toml"))
	ta := &testApp{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, db: filepath.Join(t.TempDir(), "registry.db")}
	ta.app = &app{dbPath: ta.db, stdin: strings.NewReader(""), stdout: ta.out, stderr: ta.errOut,
		th: core.DefaultThresholds(), cfg: &Config{}}
	t.Cleanup(ta.close)
	return ta
}

// do runs step with fresh buffers and returns its stdout; a non-nil error
// fails the test unless wantCode says which exit code it must map to.
func (ta *testApp) do(t *testing.T, step func(context.Context, *app) error, wantCode int) string {
	t.Helper()
	ta.out.Reset()
	ta.errOut.Reset()
	err := step(context.Background(), ta.app)
	if got := runExitCode(err); got != wantCode {
		t.Fatalf("exit %d (err %v), want %d; stdout %q", got, err, wantCode, ta.out.String())
	}
	return ta.out.String()
}

// runExitCode is the exit code Run maps err to.
func runExitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitCode(err)
}

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

// Bad input is refused with exit 2 before the registry is opened: no
// database file appears at the path.
func TestRunFunctionsValidateBeforeOpening(t *testing.T) {
	cases := []struct {
		name string
		run  func(context.Context, *app) error
		msg  string
	}{
		{"session open blank id", func(c context.Context, a *app) error { return runSessionOpen(c, a, sessionOpenOptions{ID: " "}) }, "empty session id"},
		{"session list unknown state", func(c context.Context, a *app) error {
			return runSessionList(c, a, sessionListOptions{States: "active,asleep"})
		}, `unknown session state "asleep"`},
		{"session list negative limit", func(c context.Context, a *app) error { return runSessionList(c, a, sessionListOptions{Limit: -1}) }, "negative --limit -1"},
		{"task output zero", func(c context.Context, a *app) error {
			return runTaskOutput(c, a, taskOutputOptions{ID: "t", Count: 0})
		}, "--count 0 must be at least 1"},
		{"task finish non-terminal", func(c context.Context, a *app) error {
			return runTaskFinish(c, a, taskFinishOptions{ID: "t", Status: "running"})
		}, "not a terminal report"},
		{"task finish unknown subtype", func(c context.Context, a *app) error {
			return runTaskFinish(c, a, taskFinishOptions{ID: "t", Subtype: "meh"})
		}, `unknown result subtype "meh"`},
		{"task deliver pending", func(c context.Context, a *app) error {
			return runTaskDeliver(c, a, taskDeliverOptions{ID: "t", Status: "pending"})
		}, "cannot be reported"},
		{"task list unknown runtime", func(c context.Context, a *app) error { return runTaskList(c, a, taskListOptions{Runtime: "daemon"}) }, "daemon"},
		{"run register sub-ms budget", func(c context.Context, a *app) error {
			return runRunRegister(c, a, runRegisterOptions{ID: "r", Session: "c", Inactivity: "500us"})
		}, "must be at least 1ms"},
		{"run register malformed budget", func(c context.Context, a *app) error {
			return runRunRegister(c, a, runRegisterOptions{ID: "r", Session: "c", Inactivity: "soon"})
		}, `malformed duration "soon" for --inactivity`},
		{"run complete unknown outcome", func(c context.Context, a *app) error {
			return runRunComplete(c, a, runCompleteOptions{ID: "r", Outcome: "meh"})
		}, `unknown outcome "meh"`},
		{"run list negative limit", func(c context.Context, a *app) error { return runRunList(c, a, runListOptions{Limit: -5}) }, "negative --limit -5"},
		{"approval request negative expiry", func(c context.Context, a *app) error {
			return runApprovalRequest(c, a, approvalRequestOptions{Session: "s", Tool: "Bash", Command: "ls", ExpiresIn: "-1s"})
		}, "negative duration"},
		{"approval wait malformed timeout", func(c context.Context, a *app) error {
			return runApprovalWait(c, a, approvalWaitOptions{ID: "ap", Timeout: "", TimeoutSet: true})
		}, "malformed duration"},
		{"approval approve negative suggestion", func(c context.Context, a *app) error {
			return runApprovalApprove(c, a, approvalApproveOptions{ID: "ap", Scope: "once", Suggestion: -1})
		}, "--suggestion N"},
		{"approval approve suggestion with scope", func(c context.Context, a *app) error {
			return runApprovalApprove(c, a, approvalApproveOptions{ID: "ap", Scope: "always", ScopeSet: true, Suggestion: 1})
		}, "it takes no --scope always"},
		{"approval approve unknown scope", func(c context.Context, a *app) error {
			return runApprovalApprove(c, a, approvalApproveOptions{ID: "ap", Scope: "forever"})
		}, "forever"},
		{"approval list unknown status", func(c context.Context, a *app) error {
			return runApprovalList(c, a, approvalListOptions{Status: "maybe"})
		}, "maybe"},
		{"grant revoke blank id", func(c context.Context, a *app) error { return runGrantRevoke(c, a, grantRevokeOptions{ID: ""}) }, "empty grant id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ta := newTestApp(t)
			err := c.run(context.Background(), ta.app)
			if !errors.Is(err, core.ErrInvalid) || runExitCode(err) != exitUsage {
				t.Fatalf("err = %v (exit %d), want ErrInvalid, exit 2", err, runExitCode(err))
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %q lacks %q", err, c.msg)
			}
			if _, serr := os.Stat(ta.db); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("registry %s exists after refused input (stat err %v)", ta.db, serr)
			}
			if ta.out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", ta.out)
			}
		})
	}
}

// Commands that read or change recorded work refuse a missing registry with
// exit 4 naming the path, and create nothing.
func TestRunFunctionsNeedARegistry(t *testing.T) {
	cases := map[string]func(context.Context, *app) error{
		"session list":  func(c context.Context, a *app) error { return runSessionList(c, a, sessionListOptions{}) },
		"task list":     func(c context.Context, a *app) error { return runTaskList(c, a, taskListOptions{}) },
		"run progress":  func(c context.Context, a *app) error { return runRunProgress(c, a, runProgressOptions{ID: "r"}) },
		"approval deny": func(c context.Context, a *app) error { return runApprovalDeny(c, a, approvalDenyOptions{ID: "ap"}) },
		"grant list":    func(c context.Context, a *app) error { return runGrantList(c, a, grantListOptions{}) },
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			ta := newTestApp(t)
			err := run(context.Background(), ta.app)
			if runExitCode(err) != exitNotFound || !strings.Contains(err.Error(), "no registry database at "+ta.db) {
				t.Fatalf("err = %v (exit %d), want exit 4 naming %s", err, runExitCode(err), ta.db)
			}
			if _, serr := os.Stat(ta.db); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("registry created: stat err %v", serr)
			}
		})
	}
}

// The approval commands end to end, in-process: request, list, approve with
// session scope (a grant), a second request decided at once by that grant,
// deny, and wait's exit code per outcome.
func TestRunApprovalCommands(t *testing.T) {
	ta := newTestApp(t)
	ctx := context.Background()
	req := func(cmd string) string {
		t.Helper()
		return strings.TrimSpace(ta.do(t, func(c context.Context, a *app) error {
			return runApprovalRequest(c, a, approvalRequestOptions{Session: "s1", Tool: "Bash", Command: cmd, Rationale: "build it"})
		}, exitOK))
	}
	id := req("make build")
	if id == "" || strings.Contains(id, "\n") {
		t.Fatalf("request printed %q, want one id", id)
	}
	out := ta.do(t, func(c context.Context, a *app) error {
		return runApprovalList(c, a, approvalListOptions{Status: "pending", Limit: defaultListLimit})
	}, exitOK)
	wantLines(t, out, "ID", "STATUS", "COMMAND", id, "pending", "make build")

	// wait on a pending approval gives up after its timeout: exit 12.
	ta.out.Reset()
	err := runApprovalWait(ctx, ta.app, approvalWaitOptions{ID: id, Timeout: "50ms", TimeoutSet: true})
	if runExitCode(err) != exitWaitTimedOut || !strings.Contains(err.Error(), "still pending after") {
		t.Fatalf("wait on pending: %v (exit %d), want exit 12", err, runExitCode(err))
	}

	out = ta.do(t, func(c context.Context, a *app) error {
		return runApprovalApprove(c, a, approvalApproveOptions{ID: id, Scope: "session", ScopeSet: true})
	}, exitOK)
	if !strings.HasPrefix(out, "approval "+id+" approved (session); grant ") || !strings.Contains(out, "remembers Bash") {
		t.Fatalf("approve printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error {
		return runApprovalWait(c, a, approvalWaitOptions{ID: id})
	}, exitOK)
	if !strings.HasPrefix(out, "approval "+id+" approved (session) by ") {
		t.Fatalf("wait printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error { return runGrantList(c, a, grantListOptions{}) }, exitOK)
	wantLines(t, out, "SCOPE", "session", "s1", "Bash")

	// The grant decides the same command at once, and says so on stderr.
	again := req("make build")
	if again == id {
		t.Fatalf("second request reused id %s", id)
	}
	if got := ta.errOut.String(); !strings.HasPrefix(got, "approval "+again+" approved at once by ") || strings.Count(got, "\n") != 1 {
		t.Fatalf("stderr %q, want the at-once decision", got)
	}

	other := req("rm -rf /")
	out = ta.do(t, func(c context.Context, a *app) error {
		return runApprovalDeny(c, a, approvalDenyOptions{ID: other, Reason: "no"})
	}, exitOK)
	if out != "approval "+other+" denied\n" {
		t.Fatalf("deny printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error {
		return runApprovalWait(c, a, approvalWaitOptions{ID: other})
	}, exitApprovalDenied)
	wantLines(t, out, "approval "+other+" denied by ", ": no\n")
	// A decided approval cannot be decided again: not applied, exit 0.
	out = ta.do(t, func(c context.Context, a *app) error {
		return runApprovalApprove(c, a, approvalApproveOptions{ID: other, Scope: "once"})
	}, exitOK)
	wantLines(t, out, "approval "+other+": not applied: ")

	out = ta.do(t, func(c context.Context, a *app) error {
		return runShow(c, a, "approval", other, (*core.Registry).GetApproval, approvalFields)
	}, exitOK)
	wantLines(t, out, "id", other, "status", "denied", "command", "rm -rf /", "rationale", "build it", "waiter")
	ta.do(t, func(c context.Context, a *app) error {
		return runShow(c, a, "approval", "nosuch", (*core.Registry).GetApproval, approvalFields)
	}, exitNotFound)
}

// --json output of a mutation is the documented object: applied, reason,
// the entity.
func TestRunApprovalRequestJSON(t *testing.T) {
	ta := newTestApp(t)
	ta.jsonOut = true
	out := ta.do(t, func(c context.Context, a *app) error {
		return runApprovalRequest(c, a, approvalRequestOptions{Session: "s1", Tool: "Bash", Command: "ls", ExpiresIn: "5m"})
	}, exitOK)
	var got struct {
		Applied  bool
		Reason   string
		Approval struct {
			ID, Status, Tool, Command string
			ExpiresAt                 *string `json:"expires_at"`
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if !got.Applied || got.Approval.ID == "" || got.Approval.Status != "pending" || got.Approval.Command != "ls" || got.Approval.ExpiresAt == nil {
		t.Fatalf("got %+v from\n%s", got, out)
	}
	out = ta.do(t, func(c context.Context, a *app) error { return runGrantList(c, a, grantListOptions{}) }, exitOK)
	if out != "[]\n" {
		t.Fatalf("grant list --json with none = %q, want []", out)
	}
}

// A task from create to delivery, each step's human line.
func TestRunTaskCommands(t *testing.T) {
	ta := newTestApp(t)
	// build checks flags on the command they were added to: an empty one.
	var cf taskCreateFlags
	cmd := &cobra.Command{}
	cf.add(cmd, true)
	if err := cmd.ParseFlags([]string{"--id", "t-one", "--runtime", "cli", "--session", "owner", "--label", "build"}); err != nil {
		t.Fatal(err)
	}
	nt, err := cf.build(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out := ta.do(t, func(c context.Context, a *app) error { return runTaskCreate(c, a, taskCreateOptions{Task: nt}) }, exitOK)
	if out != "t-one\n" {
		t.Fatalf("create printed %q", out)
	}
	steps := []struct {
		name string
		run  func(context.Context, *app) error
		code int
		want string
	}{
		{"start", func(c context.Context, a *app) error {
			return runTaskStart(c, a, taskStatusOptions{ID: "t-one", Summary: "compiling"})
		}, exitOK, "task t-one running\n"},
		{"progress", func(c context.Context, a *app) error { return runTaskProgress(c, a, taskStatusOptions{ID: "t-on"}) }, exitOK, "task t-one running\n"},
		{"output", func(c context.Context, a *app) error {
			return runTaskOutput(c, a, taskOutputOptions{ID: "t-one", Count: 3})
		}, exitOK, "task t-one output_count 3\n"},
		{"finish", func(c context.Context, a *app) error {
			return runTaskFinish(c, a, taskFinishOptions{ID: "t-one", Subtype: "error_max_turns"})
		}, exitOK, "task t-one failed ("},
		{"deliver", func(c context.Context, a *app) error {
			return runTaskDeliver(c, a, taskDeliverOptions{ID: "t-one", Status: "delivered"})
		}, exitOK, "task t-one delivery delivered\n"},
		{"cancel unknown", func(c context.Context, a *app) error { return runTaskCancel(c, a, taskCancelOptions{ID: "zzzz"}) }, exitNotFound, ""},
		{"list", func(c context.Context, a *app) error {
			return runTaskList(c, a, taskListOptions{Status: "failed", Runtime: "cli"})
		}, exitOK, "t-one"},
		{"list none", func(c context.Context, a *app) error { return runTaskList(c, a, taskListOptions{Status: "running"}) }, exitOK, "no tasks\n"},
		{"show", func(c context.Context, a *app) error {
			return runShow(c, a, "task", "t-one", (*core.Registry).GetTask, taskFields)
		}, exitOK, "error_max_turns"},
	}
	for _, s := range steps {
		out := ta.do(t, s.run, s.code)
		if !strings.HasPrefix(out, s.want) && !strings.Contains(out, s.want) {
			t.Errorf("%s printed %q, want %q", s.name, out, s.want)
		}
	}
}

// A run registered, completed with its task following, then killed too late.
func TestRunRunCommands(t *testing.T) {
	ta := newTestApp(t)
	out := ta.do(t, func(c context.Context, a *app) error {
		return runRunRegister(c, a, runRegisterOptions{ID: "r1", Session: "child", Requester: "parent", Label: "sub", Inactivity: "2m"})
	}, exitOK)
	if out != "run r1 running (child session child, inactivity budget 2m)\n" {
		t.Fatalf("register printed %q", out)
	}
	nt := core.NewTask{ID: "t-run", Runtime: core.RuntimeSubagent, RunID: "r1", ChildSession: "child"}
	ta.do(t, func(c context.Context, a *app) error { return runTaskCreate(c, a, taskCreateOptions{Task: nt}) }, exitOK)
	out = ta.do(t, func(c context.Context, a *app) error { return runRunProgress(c, a, runProgressOptions{ID: "r1"}) }, exitOK)
	if out != "run r1 running\n" {
		t.Fatalf("progress printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error { return runRunList(c, a, runListOptions{Running: true}) }, exitOK)
	wantLines(t, out, "RUN", "STATE", "r1", "running", "child", "sub")
	out = ta.do(t, func(c context.Context, a *app) error {
		return runRunComplete(c, a, runCompleteOptions{ID: "r1", Outcome: "ok"})
	}, exitOK)
	wantLines(t, out, "run r1 ended (ok)\n", "  task t-run succeeded\n")
	out = ta.do(t, func(c context.Context, a *app) error { return runRunList(c, a, runListOptions{Running: true}) }, exitOK)
	if out != "no runs\n" {
		t.Fatalf("list --running after completion printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error {
		return runRunKill(c, a, runKillOptions{ID: "r1", Reason: "late"})
	}, exitOK)
	wantLines(t, out, "run r1: not applied: ")
	out = ta.do(t, func(c context.Context, a *app) error {
		return runShow(c, a, "run", "r1", (*core.Registry).GetRun, runFields)
	}, exitOK)
	wantLines(t, out, "run_id", "r1", "requester_session", "parent", "inactivity_budget", "2m0s", "outcome", "ok")
}

// A session opened, passivated, resumed and closed.
func TestRunSessionCommands(t *testing.T) {
	ta := newTestApp(t)
	steps := []struct {
		name string
		run  func(context.Context, *app) error
		want string
	}{
		{"open", func(c context.Context, a *app) error {
			return runSessionOpen(c, a, sessionOpenOptions{ID: "s1", Label: "main"})
		}, "session s1 active\n"},
		{"passivate", func(c context.Context, a *app) error { return runSessionPassivate(c, a, sessionIDOptions{ID: "s1"}) }, "session s1 passivated\n"},
		{"resume", func(c context.Context, a *app) error { return runSessionResume(c, a, sessionIDOptions{ID: "s1"}) }, "session s1 active\n"},
		{"close", func(c context.Context, a *app) error { return runSessionClose(c, a, sessionIDOptions{ID: "s1"}) }, "session s1 closed\n"},
	}
	for _, s := range steps {
		if out := ta.do(t, s.run, exitOK); out != s.want {
			t.Errorf("%s printed %q, want %q", s.name, out, s.want)
		}
	}
	out := ta.do(t, func(c context.Context, a *app) error {
		return runSessionList(c, a, sessionListOptions{States: "closed"})
	}, exitOK)
	wantLines(t, out, "ID", "STATE", "s1", "closed", "main")
	out = ta.do(t, func(c context.Context, a *app) error {
		return runSessionList(c, a, sessionListOptions{States: "active"})
	}, exitOK)
	if out != "no sessions\n" {
		t.Errorf("list --state active printed %q", out)
	}
	out = ta.do(t, func(c context.Context, a *app) error {
		return runShow(c, a, "session", "s1", (*core.Registry).GetSession, sessionFields)
	}, exitOK)
	wantLines(t, out, "label", "main", "state", "closed", "passivated_at")
}
