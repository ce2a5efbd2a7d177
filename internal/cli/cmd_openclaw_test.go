package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/openclaw"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/tui"
)

func runOpenclaw(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), append([]string{"openclaw"}, args...), strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

// openclawState writes the fixture's shapes, relative to now, into a fresh
// state dir.
func openclawState(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(openclaw.DBFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := openclaw.WriteFixture(context.Background(), p, openclaw.FixtureSpec{Now: time.Now(), Shapes: true, WAL: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Each broken registry gives exit 2 and one sentence naming what is missing.
func TestOpenclawMissingThings(t *testing.T) {
	noDB := t.TempDir()
	noTable := t.TempDir()
	noColumn := t.TempDir()
	for dir, ddl := range map[string]string{
		noTable:  `CREATE TABLE schema_meta(meta_key TEXT)`,
		noColumn: `CREATE TABLE task_runs(task_id TEXT, runtime TEXT, status TEXT)`,
	} {
		p := filepath.Join(dir, filepath.FromSlash(openclaw.DBFile))
		os.MkdirAll(filepath.Dir(p), 0o755)
		db, err := sql.Open("sqlite3", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ddl); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"no database", noDB, "no OpenClaw registry at " + filepath.Join(noDB, "state", "openclaw.sqlite")},
		{"no task_runs", noTable, "has no task_runs table"},
		{"no column", noColumn, "table task_runs lacks column task_kind, source_id"},
	} {
		for _, sub := range [][]string{{"audit"}, {"maintenance"}, {"maintenance", "--json"}} {
			code, out, errOut := runOpenclaw(t, append(sub, "--state-dir", tc.dir)...)
			if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", tc.name, sub, code, out, errOut, tc.want)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%s %v: more than one line: %q", tc.name, sub, errOut)
			}
		}
	}
	if code, _, errOut := runOpenclaw(t, "audit", "--limit", "0", "--state-dir", noDB); code != 2 || !strings.Contains(errOut, "--limit 0") {
		t.Errorf("--limit 0: exit %d %q", code, errOut)
	}
}

func TestOpenclawAuditCLI(t *testing.T) {
	dir := openclawState(t)
	code, out, errOut := runOpenclaw(t, "audit", "--state-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"OpenClaw audit of ", "18 findings · 8 errors · 10 warnings",
		"error stale_running task t-acp-stuck [running, acp] 3h",
		"error run_ended_task_active task t-90444-subagent [running, subagent]",
		"(clawpit)",
		"warn  approval_pending_past_expiry approval a-overdue [pending] 5m",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runOpenclaw(t, "audit", "--limit", "1", "--state-dir", dir)
	if code != 0 || !strings.Contains(out, "… and 3 more lost (--json lists all)") {
		t.Errorf("--limit 1:\n%s", out)
	}
	code, out, _ = runOpenclaw(t, "--json", "audit", "--state-dir", dir)
	var rep struct {
		Findings []openclaw.Finding    `json:"findings"`
		Summary  openclaw.AuditSummary `json:"summary"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("json: exit %d %q", code, out)
	}
	if len(rep.Findings) != 18 || rep.Summary.ByCode["lost"] != 4 || rep.Summary.ByCode["run_ended_task_active"] != 2 {
		t.Errorf("json summary %+v (%d findings)", rep.Summary, len(rep.Findings))
	}
	// As stored, the orphan OpenClaw's maintenance would mark lost is still
	// running: no lost finding for it.
	lostOrphan := func(fs []openclaw.Finding) bool {
		for _, f := range fs {
			if f.ID == "t-running-orphan" && f.Code == "lost" {
				return true
			}
		}
		return false
	}
	if !lostOrphan(rep.Findings) {
		t.Errorf("the reconciled audit lacks t-running-orphan as lost")
	}
	code, out, _ = runOpenclaw(t, "--json", "audit", "--as-stored", "--state-dir", dir)
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("json --as-stored: exit %d %q", code, out)
	}
	if lostOrphan(rep.Findings) || rep.Summary.ByCode["lost"] != 3 {
		t.Errorf("--as-stored audits t-running-orphan as lost: %+v", rep.Summary)
	}
}

func TestOpenclawMaintenanceCLI(t *testing.T) {
	dir := openclawState(t)
	code, out, errOut := runOpenclaw(t, "maintenance", "--state-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"'openclaw tasks maintenance --apply' would reconcile 1 · recover 0 · stamp 1 · prune 4; task flows: reconcile 0 · prune 0",
		"Sweep dry run in ", ": 1 lost · 0 timed out · 0 expired · 0 silent · 1 stamped · 4 pruned · 0 raced; audit: 8 errors · 10 warnings",
		"  grace_lost task t-running-orphan: running → lost — backing session missing",
		"  retention_prune task t-failed-old-nocleanup: failed → deleted",
		"  retention_stamp task t-succeeded-nocleanup: succeeded → succeeded — cleanup_after = ",
		"  audit error run_ended_task_active task t-90444-subagent: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("maintenance lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "[not applied]") {
		t.Errorf("a dry run marks actions not applied:\n%s", out)
	}
	_, out, _ = runOpenclaw(t, "maintenance", "--limit", "2", "--state-dir", dir)
	if strings.Contains(out, "more grace_lost") || !strings.Contains(out, "… and 2 more retention_prune (--json lists all)") {
		t.Errorf("--limit 2:\n%s", out)
	}
	code, out, _ = runOpenclaw(t, "maintenance", "--json", "--state-dir", dir)
	var rep struct {
		Mode    string `json:"mode"`
		Actions []struct {
			Rule, ID, Result string
		} `json:"actions"`
		Counts struct {
			Lost, Stamped, Pruned, Errors, Warnings int
		} `json:"counts"`
		OpenClaw openclaw.PreviewCounts `json:"openclaw"`
		Findings []json.RawMessage      `json:"findings"`
	}
	if code != 0 {
		t.Fatalf("json exit %d", code)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.Mode != "dry_run" || len(rep.Actions) != 6 || rep.Counts.Lost != 1 || rep.Counts.Pruned != 4 ||
		rep.Counts.Stamped != 1 || rep.OpenClaw.Reconciled != 1 || len(rep.Findings) != 18 || rep.Actions[0].Result != "planned" {
		t.Errorf("json report: mode %s, %d actions, counts %+v, openclaw %+v, %d findings", rep.Mode, len(rep.Actions), rep.Counts, rep.OpenClaw, len(rep.Findings))
	}
}

func TestOpenclawExplain(t *testing.T) {
	for _, tc := range []struct {
		action string
		t      tui.Target
		have   bool
		want   string
	}{
		{"approve", tui.Target{Kind: feed.KindApproval, ID: "a-1", Short: "a-1", Status: "pending"}, true, "/approve a-1 allow-once"},
		{"deny", tui.Target{Kind: feed.KindApproval, ID: "a-1", Short: "a-1", Status: "pending"}, true, "/approve a-1 deny"},
		{"approve", tui.Target{Kind: feed.KindApproval, ID: "a-2", Short: "a-2", Status: "approved"}, true, "already approved"},
		{"cancel", tui.Target{Kind: feed.KindTask, ID: "t-1"}, true, "openclaw tasks cancel t-1"},
		{"kill", tui.Target{Kind: feed.KindRun, ID: "r-1"}, true, "/subagents stop r-1"},
		{"maintenance", tui.Target{}, false, "openclaw tasks maintenance --apply"},
		{"reap", tui.Target{}, false, "OpenClaw owns this registry"},
	} {
		if got := openclawExplain(tc.action, tc.t, tc.have); !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q lacks %q", tc.action, tc.t.ID, got, tc.want)
		}
	}
}

// Without a terminal the console refuses (exit 2) and points at the
// scriptable subcommands; the registry is checked first.
func TestOpenclawConsoleNeedsATerminal(t *testing.T) {
	dir := openclawState(t)
	code, _, errOut := runOpenclaw(t, "--state-dir", dir)
	if code != 2 || !strings.Contains(errOut, "the console needs a terminal") || !strings.Contains(errOut, "clawpit openclaw audit") {
		t.Fatalf("exit %d: %q", code, errOut)
	}
	code, _, errOut = runOpenclaw(t, "--state-dir", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "no OpenClaw registry at") {
		t.Fatalf("missing registry: exit %d: %q", code, errOut)
	}
}

func TestOpenclawConsoleOptions(t *testing.T) {
	o := openclawConsoleOptions(nil, nil)
	if !o.ReadOnly || o.Actions != nil || o.Maintenance != nil || o.Owner == nil || o.Owner.Name != "OPENCLAW" ||
		o.Owner.Note != "active + newest 5,000 finished rows" {
		t.Fatalf("options %+v owner %+v", o, o.Owner)
	}
}
