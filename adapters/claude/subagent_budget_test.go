package claude

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// TestSubagentTranscriptPath: the sub-agent's transcript beside the
// session's, and no path for an agent id that could leave that directory.
func TestSubagentTranscriptPath(t *testing.T) {
	for _, tc := range []struct{ tp, id, want string }{
		{"/h/.claude/projects/p/S.jsonl", "a3e6", "/h/.claude/projects/p/S/subagents/agent-a3e6.jsonl"},
		{"/h/p/S.jsonl", "", ""},
		{"/h/p/S.jsonl", "..", ""},
		{"/h/p/S.jsonl", "../x", ""},
		{"/h/p/S.jsonl", `a\b`, ""},
		{"/h/p/S.json", "a1", ""},
		{"", "a1", ""},
	} {
		if got := SubagentTranscriptPath(tc.tp, tc.id); got != tc.want {
			t.Errorf("SubagentTranscriptPath(%q, %q) = %q, want %q", tc.tp, tc.id, got, tc.want)
		}
	}
}

// TestSubagentRunBudgetMidRun: a Claude Code sub-agent's PreToolUse names
// only its agent_id and the parent's transcript_path. With a run budget of
// 500 tokens and the action gate, the sub-agent's own transcript
// (S/subagents/agent-ID.jsonl) is counted before each of its calls, into
// its run and its session: the call after the answer that crossed the
// budget is held with the reason, and SubagentStop reads on from the same
// offset (nothing counted twice).
func TestSubagentRunBudgetMidRun(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Location(t, "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The system clock: the held call's approval expires in real time.
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	dir := t.TempDir()
	main := filepath.Join(dir, "s1.jsonl")
	sub := filepath.Join(dir, "s1", "subagents", "agent-a1.jsonl")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	appendLine := func(path, line string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		must(err)
		_, err = f.WriteString(line)
		must(err)
		must(f.Close())
	}
	must(os.MkdirAll(filepath.Dir(sub), 0o700))
	appendLine(main, transcriptLine("m1", "opus", 10, 20, false))
	h := &Handler{Reg: reg, Cfg: Config{ApprovalTimeout: 300 * time.Millisecond, Gate: regexp.MustCompile("^Bash$")}}
	_, err = reg.SetBudget(ctx, core.BudgetSpec{Run: core.Limit{Tokens: 500}, Action: core.BudgetGate}, "alice")
	must(err)
	for _, p := range []*Payload{
		{HookEventName: EventSessionStart, SessionID: "s1", TranscriptPath: main},
		{HookEventName: EventSubagentStart, SessionID: "s1", AgentID: "a1", AgentType: "general-purpose", TranscriptPath: main},
	} {
		_, err := h.Handle(ctx, p)
		must(err)
	}
	read := func(id string) *Payload {
		return &Payload{HookEventName: EventPreToolUse, SessionID: "s1", AgentID: "a1", TranscriptPath: main,
			ToolName: "Read", ToolUseID: id, ToolInput: []byte(`{"file_path":"/w/notes.txt"}`)}
	}

	// 96 tokens (50 + 30 + 7 + 9): under the budget, the Read passes.
	appendLine(sub, transcriptLine("s-1", "haiku", 50, 30, true))
	d, err := h.Handle(ctx, read("toolu_1"))
	if err != nil || d == nil || !d.Pass() {
		t.Fatalf("first sub-agent Read: %+v, %v; want a pass", d, err)
	}
	if got, want := usageOf(t, reg, core.UsageRun, "a1")["haiku"], tk(50, 30, 7, 9); got != want {
		t.Fatalf("run after the first call: %v, want %v (counted before the call)", got, want)
	}

	// 516 more: 612 > 500. The next Read waits for an operator (here it
	// expires and is denied) and its approval says why.
	appendLine(sub, transcriptLine("s-2", "haiku", 400, 100, true))
	d, err = h.Handle(ctx, read("toolu_2"))
	if err != nil || d == nil || d.Permission != Deny {
		t.Fatalf("sub-agent Read over its run's budget: %+v, %v; want held, then denied at expiry", d, err)
	}
	aps, err := reg.ListApprovals(ctx, core.ApprovalFilter{Session: "s1"})
	must(err)
	if len(aps) != 1 || aps[0].RunID != "a1" || aps[0].ToolUseID != "toolu_2" ||
		!strings.HasPrefix(aps[0].Rationale, "over budget: run over its budget of 500 tokens: 612 ") {
		t.Fatalf("approvals %+v: want one for toolu_2 on run a1 saying the run is over its budget", aps)
	}

	// SubagentStop names the same file: it reads on, counting nothing twice.
	_, err = h.Handle(ctx, &Payload{HookEventName: EventSubagentStop, SessionID: "s1", AgentID: "a1", TranscriptPath: main, AgentTranscriptPath: sub})
	must(err)
	_, err = h.Handle(ctx, &Payload{HookEventName: EventStop, SessionID: "s1", TranscriptPath: main})
	must(err)
	if got, want := usageOf(t, reg, core.UsageRun, "a1")["haiku"], tk(450, 130, 14, 18); got != want {
		t.Errorf("run after SubagentStop: %v, want %v", got, want)
	}
	session := usageOf(t, reg, core.UsageSession, "s1")
	if session["haiku"] != tk(450, 130, 14, 18) || session["opus"] != tk(10, 20, 7, 9) {
		t.Errorf("session: %v, want the sub-agent's haiku and the parent's opus, each once", session)
	}
}
