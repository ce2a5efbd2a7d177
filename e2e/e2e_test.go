package e2e

// `clawpit task track` end to end through the binary, on the real Claude
// stream-json transcripts in adapters/claude/streamjson/testdata/claude-stream (docs/contract.md "Result subtypes").

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

var transcriptDir = inRepo("adapters", "claude", "streamjson", "testdata", "claude-stream")

type transcript struct {
	file, subtype, lastEvent string
	status                   core.TaskStatus
	outputs                  int64
}

func transcripts(t *testing.T) []transcript {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(transcriptDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	var out []transcript
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		n, err := strconv.ParseInt(f[col["expected_output_count"]], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, transcript{
			file: f[col["file"]], subtype: f[col["result_subtype"]],
			lastEvent: strings.ReplaceAll(f[col["last_event_type"]], ":", "/"),
			status:    core.TaskStatus(f[col["expected_status"]]), outputs: n,
		})
	}
	if len(out) != 6 {
		t.Fatalf("%d transcripts, want 6", len(out))
	}
	return out
}

// trackResult is `task track --json` output.
type trackResult struct {
	Applied bool      `json:"applied"`
	Reason  string    `json:"reason"`
	Task    core.Task `json:"task"`
	Stream  struct {
		Lines, Events, Outputs, Blank, Invalid, Unknown int64
		LastEvent                                       string `json:"last_event"`
	} `json:"stream"`
}

func TestTrackTranscripts(t *testing.T) {
	c := newCLI(t)
	c.ok("session", "open", "owner")
	for _, tr := range transcripts(t) {
		t.Run(tr.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join(transcriptDir, tr.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			o := c.runIn(f, "--json", "task", "track", "--label", tr.file, "--session", "owner")
			if o.code != 0 {
				t.Fatalf("track: %s", o)
			}
			var res trackResult
			if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
				t.Fatalf("decode %q: %v", o.stdout, err)
			}
			tk := c.task(res.Task.ID)
			if tk.Status != tr.status || tk.OutputCount != tr.outputs || tk.Runtime != core.RuntimeCLI {
				t.Errorf("task: status %s outputs %d runtime %s; want %s, %d, cli", tk.Status, tk.OutputCount, tk.Runtime, tr.status, tr.outputs)
			}
			if tr.subtype == "none" {
				want := "stream ended without terminal result (last event: " + tr.lastEvent + ")"
				if tk.ResultSubtype != "" || tk.Error != want {
					t.Errorf("no-result task: subtype %q error %q; want error %q", tk.ResultSubtype, tk.Error, want)
				}
			} else if tk.ResultSubtype != tr.subtype {
				t.Errorf("result_subtype %q, want %q", tk.ResultSubtype, tr.subtype)
			}
			if tr.status == core.TaskFailed && !strings.Contains(tk.Error, "did not complete") && tr.subtype != "none" {
				t.Errorf("error %q", tk.Error)
			}
			if tk.StartedAt == 0 || tk.EndedAt == 0 {
				t.Errorf("started_at %s ended_at %s: want both stamped", tk.StartedAt, tk.EndedAt)
			}
			if res.Stream.Invalid != 0 || res.Stream.Events != res.Stream.Lines {
				t.Errorf("stream tally %+v", res.Stream)
			}
			if !strings.Contains(o.stderr, "tracked task "+tk.ID+": "+string(tr.status)) {
				t.Errorf("stderr summary: %q", o.stderr)
			}
			// R4: a failed tracked task raises one task_failed notification
			// for its owner session; the journal shows queued → running → verdict.
			var chain []string
			for _, e := range tk.Events {
				if e.Applied && e.From != e.To {
					chain = append(chain, e.To)
				}
			}
			if got := strings.Join(chain, ","); got != "queued,running,"+string(tr.status) {
				t.Errorf("journal chain %s", got)
			}
		})
	}
	// R4: each failed tracked task raised one task_failed notification for
	// its owner session.
	reg, closeReg := c.registry()
	defer closeReg()
	ns, err := reg.ListNotifications(context.Background(), core.NotificationFilter{Session: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, n := range ns {
		if n.Kind == core.NotifyTaskFailed && strings.HasPrefix(n.Text, "Task ") && strings.Contains(n.Text, "did not complete") {
			failed++
		}
	}
	if failed != 4 {
		t.Errorf("%d task_failed notifications, want 4 (one per failed transcript): %+v", failed, ns)
	}
}

// TestTrackTee: --tee passes stdin through byte for byte (CRLF, blank lines,
// garbage included) while blank, invalid and unknown lines are tolerated and
// reported on stderr.
func TestTrackTee(t *testing.T) {
	c := newCLI(t)
	b, err := os.ReadFile(filepath.Join(transcriptDir, "10-md2okf-error-max-turns.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	input := "\r\n" + `{"type":"system","subtype":"compact_boundary"}` + "\r\n" + "not json at all\n\n" +
		`{"type":"from_the_future","x":1}` + "\n" + string(b) + `{"type":"assistant","message":{"content":[{"type":"text","text":"after"}]}}` // no final newline
	o := c.runIn(strings.NewReader(input), "task", "track", "--tee")
	if o.code != 0 {
		t.Fatalf("track: %s", o)
	}
	if o.stdout != input {
		t.Fatalf("tee changed the stream: got %d bytes, want %d", len(o.stdout), len(input))
	}
	for _, w := range []string{": failed (error_max_turns)", "0 outputs", "1 invalid line", "2 blank lines", "1 unknown event", "1 event after the result", "12 events"} {
		if !strings.Contains(o.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
		}
	}
}

// TestTrackStreaming: lines are handled as they arrive — the tee copy and the
// running status appear before the stream ends, batched outputs are written
// while it runs, and the verdict lands at the result.
func TestTrackStreaming(t *testing.T) {
	c := newCLI(t)
	existing := c.ok("task", "create", "--runtime", "subagent", "--label", "streamed")
	cmd := c.command(nil, "task", "track", "--id", existing, "--tee")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	teed := bufio.NewReader(stdout)
	readLine := func() string {
		ch := make(chan string, 1)
		go func() { l, _ := teed.ReadString('\n'); ch <- l }()
		select {
		case l := <-ch:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no tee output within 10 s")
			return ""
		}
	}
	waitFor := func(what string, ok func(taskJSON) bool) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			tk := c.task(existing)
			if ok(tk) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %+v", what, tk.Task)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := `{"type":"system","subtype":"init","session_id":"x"}` + "\n"
	io.WriteString(stdin, first)
	if got := readLine(); got != first {
		t.Fatalf("tee line %q", got)
	}
	waitFor("running", func(tk taskJSON) bool { return tk.Status == core.TaskRunning })

	text := `{"type":"assistant","message":{"content":[{"type":"text","text":"step one done"},{"type":"text","text":"and two"}]}}` + "\n"
	io.WriteString(stdin, text)
	readLine()
	waitFor("2 outputs while running", func(tk taskJSON) bool {
		return tk.Status == core.TaskRunning && tk.OutputCount == 2 && strings.Contains(tk.ProgressSummary, "and two")
	})

	io.WriteString(stdin, `{"type":"result","subtype":"success","is_error":false,"result":"and two"}`+"\n")
	readLine()
	waitFor("succeeded at the result, before EOF", func(tk taskJSON) bool { return tk.Status == core.TaskSucceeded })
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("track: %v\n%s", err, stderr.String())
	}
	if tk := c.task(existing); tk.OutputCount != 2 || tk.ResultSubtype != "success" {
		t.Errorf("final %+v", tk.Task)
	}
}

// TestTrackLongLinesAndEOF: multi-MB lines are read whole; a stream that ends
// without a result fails the task naming the last event.
func TestTrackLongLinesAndEOF(t *testing.T) {
	c := newCLI(t)
	big := strings.Repeat("0123456789", 600_000) // 6 MB
	input := `{"type":"system","subtype":"init"}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` + big + `"}]}}` + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"system","subtype":"compact_boundary"}` + "\n"
	o := c.runIn(strings.NewReader(input), "--json", "task", "track", "--runtime", "acp")
	if o.code != 0 {
		t.Fatalf("track: %s", o)
	}
	var res trackResult
	if err := json.Unmarshal([]byte(o.stdout), &res); err != nil {
		t.Fatal(err)
	}
	tk := res.Task
	if tk.Status != core.TaskFailed || tk.OutputCount != 1 || tk.Runtime != core.RuntimeACP ||
		tk.Error != "stream ended without terminal result (last event: system/compact_boundary)" {
		t.Errorf("task %+v", tk)
	}
	if res.Stream.Invalid != 0 || res.Stream.Events != 4 {
		t.Errorf("stream %+v", res.Stream)
	}
}

func TestTrackBadFlags(t *testing.T) {
	c := newCLI(t)
	id := c.ok("task", "create", "--runtime", "cli")
	before := c.snapshot()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"task", "track", "--id", id, "--runtime", "cli"}, 2, "--runtime"},
		{[]string{"task", "track", "--runtime", "martian"}, 2, `"martian"`},
		{[]string{"task", "track", "--id", "ffffffff"}, 4, `"ffffffff"`},
	} {
		o := c.runIn(strings.NewReader(`{"type":"result","subtype":"success"}`+"\n"), tc.args...)
		if o.code != tc.code || !strings.Contains(o.stderr, tc.want) {
			t.Errorf("%v: %s", tc.args, o)
		}
	}
	if c.snapshot() != before {
		t.Error("database changed")
	}
}
