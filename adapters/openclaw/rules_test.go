package openclaw

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/maintain/sweep"
)

// Every hand-made shape against OpenClaw 2026.9.6's rules as its dist/
// source writes them (the differential test checks the same rules against
// the real OpenClaw; this one runs everywhere):
//
//   - task-registry.maintenance.ts previewTaskRegistryMaintenance: per task,
//     resolveDurableCronTaskRecovery → recovered, else shouldMarkLost →
//     reconciled, else shouldPruneTerminalTask → pruned, else
//     shouldStampCleanupAfter → cleanupStamped.
//   - shouldMarkLost: isActiveTask && hasLostGraceExpired (5 min, 30 for a
//     harness-owned subagent) && !hasBackingSession.
//   - hasBackingSession in the CLI process: cli, acp, cron → backed; a
//     subagent → its child session is in the agent's session database and
//     not wedged (registry-backed: backed unless wedged; no child session:
//     backed unless harness-owned).
//   - shouldPruneTerminalTask: now >= resolveEffectiveTaskCleanupAfter
//     (cleanupAfter, capped for a lost task at its end + 24 h; none:
//     end + 7 d, lost + 24 h), or beyond its cron job's newest 2,000.
//   - rows are normalized on load (normalizeTaskTimestamps), so of the
//     timestamp findings only an active task with endedAt remains.
//   - task-registry.audit.ts visitTaskAuditCodes over
//     reconcileInspectableTasks: stale_queued warn ≥ 10 min, stale_running
//     error ≥ 30 min, lost error (warn while retained), delivery_failed
//     warn unless notifyPolicy silent, missing_cleanup warn,
//     inconsistent_timestamps warn.
func TestShapesAgainstOpenClawRules(t *testing.T) {
	d := openShapes(t)
	ctx := context.Background()
	actions := map[string]string{}
	if _, err := d.Preview(ctx, Options{Now: fixtureNow}, func(a sweep.Action) error {
		actions[a.ID] = a.Rule
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := d.Audit(ctx, Options{Now: fixtureNow})
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string][]string{}
	for _, f := range rep.Findings {
		codes[f.ID] = append(codes[f.ID], f.Severity+" "+f.Code)
	}
	for _, tc := range []struct {
		id     string
		action string   // preview rule, "" for none
		audit  []string // "severity code", sorted
		why    string
	}{
		{"t-queued-fresh", "", nil, "queued 1 min, session exists: inside every window"},
		{"t-queued-stale", "", []string{"warn stale_queued"}, "cli without run identity, session exists → backed; queued 20 min ≥ 10"},
		{"t-running-backed-stale", "", []string{"error stale_running"}, "session exists → backed; running 45 min ≥ 30"},
		{"t-running-orphan", sweep.RuleGraceLost, []string{"warn lost"}, "session gone, idle 40 min ≥ 5: lost; audited as lost, retained (cleanupAfter ahead)"},
		{"t-running-grace", "", nil, "session gone but idle 2 min < 5-min grace"},
		{"t-90444-subagent", "", []string{"error run_ended_task_active"}, "#90444: run killed 10 min ago, session still in the store → OpenClaw keeps it running; clawpit flags it"},
		{"t-90444-cli", "", []string{"error run_ended_task_active", "warn inconsistent_timestamps"}, "#90444 cli peer: cli is backed in the CLI process; its ended_at before started_at is normalized to started_at, leaving active_ended"},
		{"t-cron-stuck", "", []string{"error stale_running"}, "cron is never authoritative in the CLI → backed, so never lost"},
		{"t-acp-stuck", "", []string{"error stale_running"}, "acp session entry exists → backed"},
		{"t-acp-missing", "", nil, "acp is backed in the CLI process whatever its session; idle 10 min < 30"},
		{"t-cli-group", "", nil, "cli is backed in the CLI process whatever its chat type; idle 8 min < 30"},
		{"t-active-ended", "", []string{"warn inconsistent_timestamps"}, "active_ended"},
		{"t-yield-owner", "", []string{"error stale_running"}, "backed; running 35 min; detail is the yield guidance (task-retained-yield-guidance.ts isRetainedYieldOwner)"},
		{"t-succeeded-stamped", "", nil, "cleanupAfter ahead"},
		{"t-succeeded-nocleanup", sweep.RuleStamp, []string{"warn missing_cleanup"}, "ended 1 d ago < 7 d: stamp endedAt + 7 d"},
		{"t-failed-old-nocleanup", sweep.RulePrune, []string{"warn missing_cleanup"}, "ended 8 d ago ≥ 7 d, no cleanupAfter: prune"},
		{"t-cancelled-due", sweep.RulePrune, nil, "cleanupAfter an hour ago"},
		{"t-timed-out-delivery-failed", "", []string{"warn delivery_failed"}, "delivery failed, notify done_only"},
		{"t-failed-delivery-silent", "", nil, "delivery failed but notify silent"},
		{"t-lost-retained", "", []string{"warn lost"}, "lost 2 h ago, cleanupAfter ahead"},
		{"t-lost-expired", sweep.RulePrune, []string{"error lost"}, "cleanupAfter 5 d ahead, but a lost task is pruned at endedAt + 24 h, passed"},
		{"t-lost-due", sweep.RulePrune, []string{"error lost"}, "cleanupAfter passed: pruned; not retained"},
		{"t-start-before-created", "", nil, "normalized on load: createdAt becomes startedAt"},
		{"t-end-before-start", "", nil, "normalized on load: endedAt becomes startedAt"},
		{"t-end-before-created", "", nil, "normalized on load: createdAt becomes endedAt"},
	} {
		if got := actions[tc.id]; got != tc.action {
			t.Errorf("%s: preview %q, want %q (%s)", tc.id, got, tc.action, tc.why)
		}
		got := codes[tc.id]
		slices.Sort(got)
		if strings.Join(got, ",") != strings.Join(tc.audit, ",") {
			t.Errorf("%s: audit %v, want %v (%s)", tc.id, got, tc.audit, tc.why)
		}
	}
	if got := codes["a-overdue"]; len(got) != 1 || got[0] != "warn approval_pending_past_expiry" {
		t.Errorf("a-overdue: %v", got)
	}
	if got := codes["a-pending"]; got != nil {
		t.Errorf("a-pending (not expired): %v", got)
	}
	if got := codes["r-bad-times"]; len(got) != 1 || got[0] != "warn run_end_before_start" {
		t.Errorf("r-bad-times: %v", got)
	}
}

func TestPresentationCommand(t *testing.T) {
	for js, want := range map[string]string{
		`{"commandText":"rm -rf build/"}`:      "rm -rf build/",
		`{"command":["git","push","--force"]}`: "git push --force",
		`{"request":{"commandPreview":"ls"}}`:  "ls",
		`{"title":"Allow plugin x?"}`:          "Allow plugin x?",
		`{"commandText":"","command":"make"}`:  "make",
		`{}`:                                   "",
	} {
		if got, bad := presentationCommand(js); got != want || bad {
			t.Errorf("presentationCommand(%s) = %q, %v; want %q", js, got, bad, want)
		}
	}
	if _, bad := presentationCommand("{not json"); !bad {
		t.Error("malformed presentation_json not reported")
	}
}

func FuzzPresentationCommand(f *testing.F) {
	for _, s := range []string{`{"commandText":"x"}`, `{"command":["a",1,null]}`, `{"request":{"title":5}}`, `[]`, `"s"`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		got, bad := presentationCommand(js)
		if bad && got != "" {
			t.Fatalf("malformed input gave a command %q", got)
		}
	})
}

// With MaxActions the preview lists at most that many rows per rule and
// counts the rest by index: the counts are the unlimited preview's.
func TestPreviewMaxActions(t *testing.T) {
	d := openShapes(t)
	ctx := context.Background()
	all, err := d.Preview(ctx, Options{Now: fixtureNow}, func(sweep.Action) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 100} {
		per := map[string]int{}
		got, err := d.Preview(ctx, Options{Now: fixtureNow, MaxActions: limit}, func(a sweep.Action) error {
			per[a.Rule]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != all {
			t.Errorf("limit %d: counts %+v, unlimited %+v", limit, got, all)
		}
		want := map[string]int{sweep.RuleGraceLost: min(limit, all.Reconciled), sweep.RulePrune: min(limit, all.Pruned),
			sweep.RuleStamp: min(limit, all.CleanupStamped)}
		for r, n := range want {
			if per[r] != n {
				t.Errorf("limit %d: %d %s listed, want %d", limit, per[r], r, n)
			}
		}
	}
}
