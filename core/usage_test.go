package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// asst is a Claude Code transcript line of an assistant message.
func asst(id, model string, in, out, cw, cr int64, sidechain bool) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":%t,"type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d}},"requestId":"req_1","uuid":"u"}`+"\n",
		sidechain, id, model, in, cw, cr, out)
}

const userLine = `{"type":"user","isSidechain":false,"message":{"role":"user","content":"say \"usage\": 5"}}` + "\n"

func writeFile(t *testing.T, path, s string, appendTo bool) {
	t.Helper()
	flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestReadClaudeTranscript(t *testing.T) {
	const m, h = "claude-sonnet-4-5", "claude-haiku-4-5"
	tests := []struct {
		name      string
		text      string
		sidechain bool
		want      map[string]core.Tokens
		wantNote  string
		partial   int // bytes of a partial last line left unread
	}{
		{"one message", userLine + asst("msg_1", m, 10, 20, 30, 40, false), false,
			map[string]core.Tokens{m: tk(10, 20, 30, 40)}, "", 0},
		{"content blocks of one message count once", asst("msg_1", m, 10, 5, 30, 40, false) + asst("msg_1", m, 10, 5, 30, 40, false) + asst("msg_2", m, 1, 2, 3, 4, false), false,
			map[string]core.Tokens{m: tk(11, 7, 33, 44)}, "", 0},
		{"a later block's larger usage adds what grew", asst("msg_1", m, 10, 1, 0, 0, false) + asst("msg_1", m, 10, 25, 0, 0, false), false,
			map[string]core.Tokens{m: tk(10, 25, 0, 0)}, "", 0},
		{"per model", asst("msg_1", m, 1, 1, 1, 1, false) + asst("msg_2", h, 2, 2, 2, 2, false), false,
			map[string]core.Tokens{m: tk(1, 1, 1, 1), h: tk(2, 2, 2, 2)}, "", 0},
		{"sidechain lines are the sub-agent's", asst("msg_1", m, 1, 1, 1, 1, false) + asst("msg_2", h, 2, 2, 2, 2, true), false,
			map[string]core.Tokens{m: tk(1, 1, 1, 1)}, "", 0},
		{"a sub-agent's own transcript", asst("msg_2", h, 2, 2, 2, 2, true), true,
			map[string]core.Tokens{h: tk(2, 2, 2, 2)}, "", 0},
		{"synthetic zero usage", asst("msg_1", "<synthetic>", 0, 0, 0, 0, false), false,
			map[string]core.Tokens{}, "", 0},
		{"a line that is not JSON is noted", "{\"usage\": nope\n" + asst("msg_1", m, 1, 1, 1, 1, false), false,
			map[string]core.Tokens{m: tk(1, 1, 1, 1)}, "transcript: 1 line is not JSON", 0},
		{"a partial last line waits", asst("msg_1", m, 1, 1, 1, 1, false) + `{"type":"assistant","message":{"usage"`, false,
			map[string]core.Tokens{m: tk(1, 1, 1, 1)}, "", len(`{"type":"assistant","message":{"usage"`)},
		{"an over-long line is skipped and noted", `{"type":"user","x":"` + strings.Repeat("a", core.MaxTranscriptRecord) + "\"}\n" + asst("msg_1", m, 1, 1, 1, 1, false), false,
			map[string]core.Tokens{m: tk(1, 1, 1, 1)}, "over 4194304 bytes skipped", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			writeFile(t, path, tt.text, false)
			got, err := core.ReadClaudeTranscript(context.Background(), core.UsageSource{Path: path}, tt.sidechain)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got.ByModel) != fmt.Sprint(tt.want) {
				t.Errorf("tokens %v, want %v", got.ByModel, tt.want)
			}
			if want := int64(len(tt.text) - tt.partial); got.Source.Offset != want {
				t.Errorf("offset %d, want %d", got.Source.Offset, want)
			}
			if !strings.Contains(got.Source.Note, tt.wantNote) || (tt.wantNote == "" && got.Source.Note != "") {
				t.Errorf("note %q, want %q", got.Source.Note, tt.wantNote)
			}
		})
	}
}

// usageOf is the tokens recorded for one scope id, by model.
func usageOf(f *registrytest.Fixture, scope core.UsageScope, id string) map[string]core.Tokens {
	f.T.Helper()
	rows, err := f.Reg.ListUsage(f.Ctx, core.UsageFilter{Scope: scope, IDs: []string{id}})
	f.Must(err)
	out := map[string]core.Tokens{}
	for _, r := range rows {
		out[r.Model] = r.Tokens
	}
	return out
}

func TestRecordTranscriptUsageIncremental(t *testing.T) {
	f := registrytest.New(t)
	const m = "claude-sonnet-4-5"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ref := core.TranscriptRef{Path: path, Session: "s1"}
	writeFile(t, path, userLine+asst("msg_1", m, 10, 1, 100, 1000, false)+asst("msg_1", m, 10, 1, 100, 1000, false), false)
	rep, err := f.Reg.RecordTranscriptUsage(f.Ctx, ref)
	f.Must(err)
	if rep.Note != "" || rep.Lines != 3 {
		t.Errorf("first read: %+v", rep)
	}
	// The same message's last block, a new message and a partial line.
	writeFile(t, path, asst("msg_1", m, 10, 9, 100, 1000, false)+asst("msg_2", m, 5, 5, 5, 5, false)+`{"type":"assist`, true)
	_, err = f.Reg.RecordTranscriptUsage(f.Ctx, ref)
	f.Must(err)
	if got, want := usageOf(f, core.UsageSession, "s1")[m], tk(15, 14, 105, 1005); got != want {
		t.Fatalf("after the second read: %v, want %v", got, want)
	}
	// Nothing new: nothing added.
	_, err = f.Reg.RecordTranscriptUsage(f.Ctx, ref)
	f.Must(err)
	if got, want := usageOf(f, core.UsageSession, "s1")[m], tk(15, 14, 105, 1005); got != want {
		t.Fatalf("after a read of nothing new: %v, want %v", got, want)
	}
}

func TestRecordTranscriptUsageResets(t *testing.T) {
	const m = "claude-sonnet-4-5"
	tests := []struct {
		name     string
		rewrite  string // the file after the first read
		wantNote string
		want     core.Tokens
	}{
		{"truncated", asst("msg_9", m, 1, 1, 1, 1, false), "truncated", tk(101, 101, 101, 101)},
		{"rotated (longer, other first bytes)", strings.Replace(asst("msg_8", m, 2, 2, 2, 2, false), `"parentUuid":"p"`, `"parentUuid":"q"`, 1) + asst("msg_9", m, 3, 3, 3, 3, false) + asst("msg_10", m, 4, 4, 4, 4, false), "replaced",
			tk(109, 109, 109, 109)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := registrytest.New(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			ref := core.TranscriptRef{Path: path, Session: "s1"}
			writeFile(t, path, asst("msg_1", m, 100, 100, 100, 100, false), false)
			_, err := f.Reg.RecordTranscriptUsage(f.Ctx, ref)
			f.Must(err)
			writeFile(t, path, tt.rewrite, false)
			rep, err := f.Reg.RecordTranscriptUsage(f.Ctx, ref)
			f.Must(err)
			if !strings.Contains(rep.Note, tt.wantNote) {
				t.Errorf("note %q, want %q", rep.Note, tt.wantNote)
			}
			if got := usageOf(f, core.UsageSession, "s1")[m]; got != tt.want {
				t.Errorf("tokens %v, want %v", got, tt.want)
			}
			ns, err := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{Session: "s1"})
			f.Must(err)
			if len(ns) != 1 || ns[0].Kind != core.NotifyRuntimeNotice || !strings.Contains(ns[0].Text, tt.wantNote) {
				t.Errorf("notices %+v, want one saying %q", ns, tt.wantNote)
			}
		})
	}
}

func TestRecordTranscriptUsageUnreadableIsNoted(t *testing.T) {
	f := registrytest.New(t)
	rep, err := f.Reg.RecordTranscriptUsage(f.Ctx, core.TranscriptRef{Path: filepath.Join(t.TempDir(), "gone.jsonl"), Session: "s1"})
	if err != nil {
		t.Fatalf("an unreadable transcript failed the call: %v", err)
	}
	if !strings.Contains(rep.Note, "open transcript") {
		t.Errorf("note %q", rep.Note)
	}
}

func TestRecordTranscriptUsageSubagent(t *testing.T) {
	f := registrytest.New(t)
	const h = "claude-haiku-4-5"
	path := filepath.Join(t.TempDir(), "agent-a1.jsonl")
	writeFile(t, path, asst("msg_1", h, 1, 2, 3, 4, true), false)
	_, err := f.Reg.RecordTranscriptUsage(f.Ctx, core.TranscriptRef{Path: path, Session: "s1", RunID: "a1"})
	f.Must(err)
	want := tk(1, 2, 3, 4)
	if got := usageOf(f, core.UsageRun, "a1")[h]; got != want {
		t.Errorf("run: %v, want %v", got, want)
	}
	if got := usageOf(f, core.UsageSession, "s1")[h]; got != want {
		t.Errorf("parent session: %v, want %v", got, want)
	}
}

// Hooks of one session racing on one transcript count each line once.
func TestRecordTranscriptUsageConcurrentCountsOnce(t *testing.T) {
	f := registrytest.New(t)
	const m = "claude-sonnet-4-5"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b strings.Builder
	for i := range 200 {
		b.WriteString(asst(fmt.Sprintf("msg_%d", i), m, 1, 1, 1, 1, false))
	}
	writeFile(t, path, b.String(), false)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Reg.RecordTranscriptUsage(f.Ctx, core.TranscriptRef{Path: path, Session: "s1"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, want := usageOf(f, core.UsageSession, "s1")[m], tk(200, 200, 200, 200); got != want {
		t.Errorf("tokens %v, want %v", got, want)
	}
}

// tk is a core.Tokens: input, output, cache write, cache read.
func tk(in, out, cw, cr int64) core.Tokens {
	return core.Tokens{Input: in, Output: out, CacheWrite: cw, CacheRead: cr}
}
