package streamjson

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// manifestRow is one line of testdata/claude-stream/MANIFEST.tsv.
type manifestRow struct {
	file, lastEvent, subtype, isError string
	status                            core.TaskStatus
	outputs                           int64
}

func readManifest(t testing.TB) []manifestRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "claude-stream", "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Split(lines[0], "\t")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var rows []manifestRow
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		n, err := strconv.ParseInt(f[col["expected_output_count"]], 10, 64)
		if err != nil {
			t.Fatalf("manifest %q: %v", l, err)
		}
		rows = append(rows, manifestRow{
			file:      f[col["file"]],
			lastEvent: f[col["last_event_type"]],
			subtype:   f[col["result_subtype"]],
			isError:   f[col["is_error"]],
			status:    core.TaskStatus(f[col["expected_status"]]),
			outputs:   n,
		})
	}
	if len(rows) != 6 {
		t.Fatalf("manifest has %d rows, want 6", len(rows))
	}
	return rows
}

// feedFile feeds a transcript line by line, the way `task track` does.
func feedFile(t testing.TB, path string) (*Tracker, []Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tr Tracker
	var evs []Event
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			ev, _ := tr.Feed(line)
			evs = append(evs, ev)
		}
		if err != nil {
			break
		}
	}
	return &tr, evs
}

// TestStreamJSONTranscripts checks R4 on the six real Claude transcripts:
// expected status, result subtype and output count from MANIFEST.tsv.
func TestStreamJSONTranscripts(t *testing.T) {
	for _, row := range readManifest(t) {
		t.Run(row.file, func(t *testing.T) {
			tr, _ := feedFile(t, filepath.Join("testdata", "claude-stream", row.file))
			s := tr.Summary()
			if got := s.Status(); got != row.status {
				t.Errorf("status = %s, want %s", got, row.status)
			}
			if s.Outputs != row.outputs {
				t.Errorf("outputs = %d, want %d", s.Outputs, row.outputs)
			}
			if s.Invalid != 0 || s.Blank != 0 {
				t.Errorf("invalid=%d blank=%d, want 0", s.Invalid, s.Blank)
			}
			if s.Events != s.Lines {
				t.Errorf("events=%d lines=%d, want equal", s.Events, s.Lines)
			}
			f := s.Finish()
			if row.subtype == "none" {
				if s.Result != nil {
					t.Fatalf("result %+v, want none", s.Result)
				}
				want := "stream ended without terminal result (last event: " + strings.ReplaceAll(row.lastEvent, ":", "/") + ")"
				if f.Status != core.TaskFailed || f.Error != want {
					t.Errorf("finish = %+v, want failed with %q", f, want)
				}
				return
			}
			if s.Result == nil {
				t.Fatal("no result event seen")
			}
			if f.Subtype != row.subtype || strconv.FormatBool(f.IsError) != row.isError {
				t.Errorf("finish = %+v, want subtype %s is_error %s", f, row.subtype, row.isError)
			}
			if f.Status != "" {
				t.Errorf("finish status %q, want empty (subtype decides)", f.Status)
			}
			if !tr.Done() {
				t.Error("Done() = false after result")
			}
		})
	}
}

// TestStreamJSONLines covers single-line behaviour: blanks, CRLF, invalid JSON,
// unknown types, deltas that must not count, non-terminal system events, and
// events after the result.
func TestStreamJSONLines(t *testing.T) {
	type want struct {
		kind     LineKind
		outputs  int
		terminal bool
		after    bool
		err      bool
	}
	steps := []struct {
		name string
		line string
		want want
	}{
		{"blank", "", want{kind: Blank}},
		{"spaces crlf", "  \r\n", want{kind: Blank}},
		{"init", `{"type":"system","subtype":"init"}` + "\r\n", want{kind: Known}},
		{"compact boundary is not a result", `{"type":"system","subtype":"compact_boundary"}`, want{kind: Known}},
		{"api retry is not a result", `{"type":"system","subtype":"api_retry","attempt":1}`, want{kind: Known}},
		{"garbage", `not json`, want{kind: Invalid, err: true}},
		{"truncated", `{"type":"assistant","message":{"content":[{"type":"text"`, want{kind: Invalid, err: true}},
		{"array", `[1,2]`, want{kind: Invalid, err: true}},
		{"unknown type", `{"type":"brand_new","x":1}`, want{kind: Unknown}},
		{"no type", `{"x":1}`, want{kind: Unknown}},
		{"type not a string", `{"type":7}`, want{kind: Unknown}},
		{"delta does not count", `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}}`, want{kind: Known}},
		{"two texts, one blank, thinking, tool", `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"  "},{"type":"thinking","thinking":"x"},{"type":"text","text":"b"},{"type":"tool_use","name":"Bash"}]}}`, want{kind: Known, outputs: 2}},
		{"string content", `{"type":"assistant","message":{"content":"hello"}}`, want{kind: Known, outputs: 1}},
		{"content wrong type", `{"type":"assistant","message":{"content":{"a":1}}}`, want{kind: Known}},
		{"user text does not count", `{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}`, want{kind: Known}},
		{"result", `{"is_error":false,"result":"done","type":"result","subtype":"success"}`, want{kind: Known, terminal: true}},
		{"after result", `{"type":"assistant","message":{"content":[{"type":"text","text":"late"}]}}`, want{kind: Known, after: true}},
		{"second result", `{"type":"result","subtype":"error_max_turns","is_error":true}`, want{kind: Known, after: true}},
	}
	var tr Tracker
	for _, st := range steps {
		ev, err := tr.Feed([]byte(st.line))
		got := want{kind: ev.Kind, outputs: ev.Outputs, terminal: ev.Terminal, after: ev.AfterResult, err: err != nil}
		if got != st.want {
			t.Errorf("%s: got %+v (err %v), want %+v", st.name, got, err, st.want)
		}
	}
	s := tr.Summary()
	if s.Outputs != 3 || s.Blank != 2 || s.Invalid != 3 || s.Unknown != 3 || s.AfterResult != 2 {
		t.Errorf("summary %+v", s)
	}
	if s.Lines != int64(len(steps)) || s.Events != s.Lines-s.Blank-s.Invalid {
		t.Errorf("lines=%d events=%d", s.Lines, s.Events)
	}
	if s.Status() != core.TaskSucceeded || s.Result.Text != "done" {
		t.Errorf("status %s result %+v", s.Status(), s.Result)
	}
}

func TestStreamJSONVerdicts(t *testing.T) {
	cases := []struct {
		name    string
		lines   []string
		status  core.TaskStatus
		subtype string
		errText string
	}{
		{"empty stream", nil, core.TaskFailed, "", "stream ended without terminal result (last event: none)"},
		{"only garbage", []string{"{{{", ""}, core.TaskFailed, "", "stream ended without terminal result (last event: none)"},
		{"ends on assistant", []string{`{"type":"system","subtype":"init"}`, `{"type":"assistant","message":{"content":[]}}`}, core.TaskFailed, "", "stream ended without terminal result (last event: assistant)"},
		{"ends on compact boundary", []string{`{"type":"system","subtype":"compact_boundary"}`}, core.TaskFailed, "", "stream ended without terminal result (last event: system/compact_boundary)"},
		{"success", []string{`{"type":"result","subtype":"success"}`}, core.TaskSucceeded, "success", ""},
		{"success but is_error", []string{`{"type":"result","subtype":"success","is_error":true}`}, core.TaskFailed, "success", ""},
		{"error subtype", []string{`{"type":"result","subtype":"error_during_execution","is_error":true}`}, core.TaskFailed, "error_during_execution", ""},
		{"error subtype without is_error", []string{`{"type":"result","subtype":"error_max_budget_usd"}`}, core.TaskFailed, "error_max_budget_usd", ""},
		{"no subtype", []string{`{"type":"result"}`}, core.TaskSucceeded, "success", ""},
		{"no subtype, is_error", []string{`{"type":"result","is_error":true}`}, core.TaskFailed, "error", ""},
		{"unfamiliar subtype", []string{`{"type":"result","subtype":"paused"}`}, core.TaskFailed, "paused", ""},
		{"is_error not a bool", []string{`{"type":"result","subtype":"success","is_error":"yes"}`}, core.TaskSucceeded, "success", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr Tracker
			for _, l := range c.lines {
				tr.Feed([]byte(l))
			}
			s := tr.Summary()
			f := s.Finish()
			if s.Status() != c.status || f.Subtype != c.subtype || f.Error != c.errText {
				t.Errorf("status %s finish %+v, want %s subtype %q error %q", s.Status(), f, c.status, c.subtype, c.errText)
			}
		})
	}
}

// TestStreamJSONLongLine: lines of several MB are read whole; capped strings
// stay capped.
func TestStreamJSONLongLine(t *testing.T) {
	big := strings.Repeat("x", 5<<20)
	var tr Tracker
	ev, err := tr.Feed([]byte(`{"type":"assistant","message":{"content":[{"type":"text","text":"` + big + `"}]}}`))
	if err != nil || ev.Outputs != 1 {
		t.Fatalf("ev %+v err %v", ev, err)
	}
	if len(ev.Activity) > maxStreamActivity+len("text: ")+len("…") {
		t.Errorf("activity not capped: %d bytes", len(ev.Activity))
	}
	tr.Feed([]byte(`{"type":"result","subtype":"success","result":"` + big + `"}`))
	if s := tr.Summary(); len(s.Result.Text) != maxStreamText {
		t.Errorf("result text %d bytes, want capped at %d", len(s.Result.Text), maxStreamText)
	}
}

func TestOneLine(t *testing.T) {
	cases := map[string]string{
		"a\n\nb\tc":          "a b c",
		"  lead":             "lead",
		"\x1b[31mred\x1b[0m": "[31mred[0m",
		"ok\u0085x":          "okx",
	}
	for in, want := range cases {
		if got := oneLine(in, 100); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
	if got := oneLine("héllo wörld", 3); got != "hé…" {
		t.Errorf("cap: %q", got)
	}
}

// FuzzStreamJSON: any line is tolerated (no panic), the tally stays
// consistent and what the tracker keeps stays bounded.
func FuzzStreamJSON(f *testing.F) {
	for _, row := range readManifest(f) {
		b, err := os.ReadFile(filepath.Join("testdata", "claude-stream", row.file))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) < 2048 {
				f.Add(l)
			}
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":"x"}}`))
	f.Add([]byte(`{"type":"result","subtype":"\u00e9rror","is_error":true,"result":"\ud800"}`))
	f.Add([]byte("\xef\xbb\xbf{\"type\":\"system\"}\r\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		var tr Tracker
		for i := 0; i < 3; i++ { // before, as and after a result
			ev, err := tr.Feed(line)
			if (err != nil) != (ev.Kind == Invalid) {
				t.Fatalf("err %v with kind %v", err, ev.Kind)
			}
			if len(ev.Type) > maxStreamName || len(ev.Subtype) > maxStreamName || len(ev.Activity) > maxStreamActivity+16 {
				t.Fatalf("unbounded strings in %+v", ev)
			}
			if ev.Outputs < 0 || ev.Outputs > len(line) {
				t.Fatalf("outputs %d for %d bytes", ev.Outputs, len(line))
			}
		}
		s := tr.Summary()
		if s.Lines != 3 || s.Events+s.Blank+s.Invalid != s.Lines {
			t.Fatalf("inconsistent tally %+v", s)
		}
		if s.Result != nil && len(s.Result.Text) > maxStreamText {
			t.Fatalf("result text %d bytes", len(s.Result.Text))
		}
		if st := s.Status(); st != core.TaskSucceeded && st != core.TaskFailed {
			t.Fatalf("status %s", st)
		}
	})
}

// BenchmarkStreamJSONFeed: tracker throughput over the real transcripts.
func BenchmarkStreamJSONFeed(b *testing.B) {
	var lines [][]byte
	size := 0
	for _, row := range readManifest(b) {
		data, err := os.ReadFile(filepath.Join("testdata", "claude-stream", row.file))
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			lines = append(lines, l)
			size += len(l)
		}
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		var tr Tracker
		for _, l := range lines {
			tr.Feed(l)
		}
	}
}

// TestStreamUsageRecorded: the result lines of the recorded transcripts
// give the tokens per model and the cost their modelUsage and
// total_cost_usd say (checked with Python's json against the files).
func TestStreamUsageRecorded(t *testing.T) {
	tests := []struct {
		file string
		want string // fmt of ByModel, "" for no usage
		cost float64
	}{
		{"03-agentharness-bash-done.jsonl", "map[claude-haiku-4-5-20251001:{18 259 5101 48359}]", 0.0163509},
		{"09-smartgrep-rate-limited-killed.jsonl", "", 0},
		{"12-papai-auth-error-not-logged-in.jsonl", "map[]", 0},
		{"14-weavefleet-partial-messages-reduced.jsonl", "", 0},
		{"16-rimaia-interrupted-sigterm.jsonl", "map[claude-haiku-4-5-20251001:{1158 15 0 0} claude-sonnet-5:{14 2188 12643 234316}]", 0.1802478},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "claude-stream", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var tr Tracker
			br := bufio.NewReader(f)
			for {
				if _, fed, _, _ := tr.ReadLine(br); !fed {
					break
				}
			}
			var got string
			var cost float64
			if r := tr.Summary().Result; r != nil && r.Usage != nil {
				got, cost = fmt.Sprint(r.Usage.ByModel), r.Usage.CostUSD
			}
			if got != tt.want || cost != tt.cost {
				t.Errorf("usage %s $%v, want %s $%v", got, cost, tt.want, tt.cost)
			}
		})
	}
}
