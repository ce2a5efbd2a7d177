package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// transcriptLine is an assistant line of a Claude Code transcript.
func transcriptLine(id, model string, in, out int64, sidechain bool) string {
	return fmt.Sprintf(`{"isSidechain":%t,"type":"assistant","message":{"id":%q,"model":%q,"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":7,"cache_read_input_tokens":9}}}`+"\n", sidechain, id, model, in, out)
}

func usageOf(t *testing.T, reg *core.Registry, scope core.UsageScope, id string) map[string]core.Tokens {
	t.Helper()
	rows, err := reg.ListUsage(context.Background(), core.UsageFilter{Scope: scope, IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]core.Tokens{}
	for _, r := range rows {
		out[r.Model] = r.Tokens
	}
	return out
}

// TestHookUsage: Stop counts the session's transcript, SubagentStop the
// sub-agent's into its run and its session, SessionEnd the last turn;
// another agent's transcript (Codex) is not read as Claude Code's.
func TestHookUsage(t *testing.T) {
	ctx := context.Background()
	reg, _ := spoolFixture(t)
	dir := t.TempDir()
	main, sub := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "agent-a1.jsonl")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(main, []byte(transcriptLine("m1", "opus", 10, 20, false)), 0o600))
	must(os.WriteFile(sub, []byte(transcriptLine("m2", "haiku", 1, 2, true)), 0o600))
	h := &Handler{Reg: reg}
	events := []*Payload{
		{HookEventName: EventSessionStart, SessionID: "s1", TranscriptPath: main},
		{HookEventName: EventSubagentStart, SessionID: "s1", AgentID: "a1", TranscriptPath: main},
		{HookEventName: EventSubagentStop, SessionID: "s1", AgentID: "a1", TranscriptPath: main, AgentTranscriptPath: sub},
		{HookEventName: EventStop, SessionID: "s1", TranscriptPath: main},
	}
	for _, p := range events {
		_, err := h.Handle(ctx, p)
		must(err)
	}
	if got, want := fmt.Sprint(usageOf(t, reg, core.UsageSession, "s1")), "map[haiku:{1 2 7 9} opus:{10 20 7 9}]"; got != want {
		t.Errorf("session: %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(usageOf(t, reg, core.UsageRun, "a1")), "map[haiku:{1 2 7 9}]"; got != want {
		t.Errorf("run: %s, want %s", got, want)
	}
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	_, err = f.WriteString(transcriptLine("m3", "opus", 100, 200, false))
	must(err)
	f.Close()
	_, err = h.Handle(ctx, &Payload{HookEventName: EventSessionEnd, SessionID: "s1", TranscriptPath: main})
	must(err)
	if got, want := usageOf(t, reg, core.UsageSession, "s1")["opus"], tk(110, 220, 14, 18); got != want {
		t.Errorf("after SessionEnd: %v, want %v", got, want)
	}
	codex := &Handler{Reg: reg, Cfg: Config{Agent: "codex"}}
	_, err = codex.Handle(ctx, &Payload{HookEventName: EventStop, SessionID: "c1", TranscriptPath: main})
	must(err)
	if got := usageOf(t, reg, core.UsageSession, "c1"); len(got) != 0 {
		t.Errorf("a Codex session counted a transcript as Claude Code's: %v", got)
	}
}

// TestHookUsageSpooled: a Stop spooled while the registry was busy is
// counted when the spool is folded in.
func TestHookUsageSpooled(t *testing.T) {
	ctx := context.Background()
	reg, sp := spoolFixture(t)
	main := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(main, []byte(transcriptLine("m1", "opus", 10, 20, false)), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := EncodeSpoolRecord(&Payload{HookEventName: EventStop, SessionID: "s1", TranscriptPath: main}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := FoldSpool(ctx, reg, sp, nil, Config{}); err != nil {
		t.Fatal(err)
	}
	if got, want := usageOf(t, reg, core.UsageSession, "s1")["opus"], tk(10, 20, 7, 9); got != want {
		t.Errorf("after the fold: %v, want %v", got, want)
	}
}

// tk is a core.Tokens: input, output, cache write, cache read.
func tk(in, out, cw, cr int64) core.Tokens {
	return core.Tokens{Input: in, Output: out, CacheWrite: cw, CacheRead: cr}
}
