package core_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// codexRollout is a real Codex 0.169.0 rollout (codex exec against the
// internal/agenttest Responses API stand-in): three responses whose
// stand-in usage was {Input 1200, Output 345, CacheRead 5000}, {31, 42,
// 7000} and {7, 8, 9000}, for the model "agenttest-model".
const codexRollout = "testdata/codex-rollout/rollout-usage.jsonl"

var codexWant = core.Tokens{Input: 1238, Output: 395, CacheRead: 21000}

// TestReadCodexRollout: the rollout's token_usage_record lines summed for
// the turn_context's model give exactly the stand-in's usage, whether read
// at once or in two reads split inside a line.
func TestReadCodexRollout(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(codexRollout)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	writeFile(t, path, string(b), false)
	r, err := core.ReadCodexRollout(ctx, core.UsageSource{Path: path})
	if err != nil || r.Source.Note != "" {
		t.Fatalf("read: %v %q", err, r.Source.Note)
	}
	if len(r.ByModel) != 1 || r.ByModel["agenttest-model"] != codexWant {
		t.Fatalf("counted %+v, want agenttest-model %+v", r.ByModel, codexWant)
	}
	// Two reads: the first stops inside a line, the second goes on.
	cut := len(b) / 2
	writeFile(t, path, string(b[:cut]), false)
	first, err := core.ReadCodexRollout(ctx, core.UsageSource{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b[cut:]), true)
	second, err := core.ReadCodexRollout(ctx, first.Source)
	if err != nil {
		t.Fatal(err)
	}
	sum := first.ByModel["agenttest-model"].Add(second.ByModel["agenttest-model"])
	if sum != codexWant || second.Source.Offset != int64(len(b)) {
		t.Fatalf("two reads counted %+v (offset %d of %d), want %+v", sum, second.Source.Offset, len(b), codexWant)
	}
}

// TestRecordCodexRolloutUsage: through the registry, a Codex rollout's
// tokens are the session's, and a sub-agent's the run's too.
func TestRecordCodexRolloutUsage(t *testing.T) {
	f := registrytest.New(t)
	b, err := os.ReadFile(codexRollout)
	f.Must(err)
	path := filepath.Join(t.TempDir(), "sub.jsonl")
	writeFile(t, path, string(b), false)
	_, err = f.Reg.RecordTranscriptUsage(f.Ctx, core.TranscriptRef{Path: path, Session: "s1", RunID: "agent-1", Format: core.TranscriptCodex})
	f.Must(err)
	if got := usageOf(f, core.UsageSession, "s1")["agenttest-model"]; got != codexWant {
		t.Errorf("session: %+v, want %+v", got, codexWant)
	}
	if got := usageOf(f, core.UsageRun, "agent-1")["agenttest-model"]; got != codexWant {
		t.Errorf("run: %+v, want %+v", got, codexWant)
	}
}

// geminiChat is a real Gemini CLI 0.61.0 chat record (gemini -p against the
// internal/agenttest Gemini API stand-in): three answers of
// "gemini-agenttest" whose stand-in usage was {Input 1200, Output 345,
// CacheRead 5000}, {31, 42, 7000} and {7, 8, 9000}; the two with tool calls
// are written twice.
const geminiChat = "testdata/gemini-chat/session-usage.jsonl"

// TestReadGeminiTranscript: each answer counted once, exactly the
// stand-in's usage, at once or over two reads.
func TestReadGeminiTranscript(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile(geminiChat)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	writeFile(t, path, string(b), false)
	r, err := core.ReadGeminiTranscript(ctx, core.UsageSource{Path: path})
	if err != nil || r.Source.Note != "" {
		t.Fatalf("read: %v %q", err, r.Source.Note)
	}
	if len(r.ByModel) != 1 || r.ByModel["gemini-agenttest"] != codexWant {
		t.Fatalf("counted %+v, want gemini-agenttest %+v", r.ByModel, codexWant)
	}
	cut := len(b) / 2
	writeFile(t, path, string(b[:cut]), false)
	first, err := core.ReadGeminiTranscript(ctx, core.UsageSource{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b[cut:]), true)
	second, err := core.ReadGeminiTranscript(ctx, first.Source)
	if err != nil {
		t.Fatal(err)
	}
	if sum := first.ByModel["gemini-agenttest"].Add(second.ByModel["gemini-agenttest"]); sum != codexWant {
		t.Fatalf("two reads counted %+v, want %+v", sum, codexWant)
	}
}
