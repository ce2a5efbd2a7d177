package streamjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// refLine is the encoding/json reading of one line that the streaming
// tokenizer replaced; the differential fuzz target holds the two together.
type refLine struct {
	valid        bool
	typ, subtype string
	result       string
	isError      bool
	outputs      int
	activity     string
}

func refRawString(raw json.RawMessage, max int) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return capString(s, max)
}

func refParse(trimmed []byte) refLine {
	var head struct {
		Type    json.RawMessage `json:"type"`
		Subtype json.RawMessage `json:"subtype"`
		IsError json.RawMessage `json:"is_error"`
		Result  json.RawMessage `json:"result"`
	}
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &head) != nil {
		return refLine{}
	}
	r := refLine{valid: true, typ: refRawString(head.Type, maxStreamName), subtype: refRawString(head.Subtype, maxStreamName),
		result: refRawString(head.Result, maxStreamText)}
	var b bool
	if len(head.IsError) > 0 && json.Unmarshal(head.IsError, &b) == nil {
		r.isError = b
	}
	var m struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(trimmed, &m) != nil || len(m.Message.Content) == 0 {
		return r
	}
	c := bytes.TrimSpace(m.Message.Content)
	switch {
	case c[0] == '"':
		if s := refRawString(c, maxStreamText); strings.TrimSpace(s) != "" {
			r.outputs, r.activity = 1, "text: "+oneLine(s, maxStreamActivity)
		}
		return r
	case c[0] != '[':
		return r
	}
	var blocks []struct {
		Type json.RawMessage `json:"type"`
		Text json.RawMessage `json:"text"`
		Name json.RawMessage `json:"name"`
	}
	if json.Unmarshal(c, &blocks) != nil {
		return r
	}
	for _, b := range blocks {
		switch refRawString(b.Type, maxStreamName) {
		case "text":
			if s := refRawString(b.Text, maxStreamText); strings.TrimSpace(s) != "" {
				r.outputs++
				r.activity = "text: " + oneLine(s, maxStreamActivity)
			}
		case "tool_use", "server_tool_use":
			if name := refRawString(b.Name, maxStreamName); name != "" {
				r.activity = "tool: " + oneLine(name, maxStreamActivity)
			}
		}
	}
	return r
}

// FuzzStreamJSONMatchesStdlib: the streaming tokenizer accepts exactly the
// lines encoding/json accepts and reads the same type, subtype, result,
// is_error, output count and activity from them.
func FuzzStreamJSONMatchesStdlib(f *testing.F) {
	for _, row := range readManifest(f) {
		b, err := os.ReadFile(filepath.Join("testdata", "claude-stream", row.file))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) < 4096 {
				f.Add(l)
			}
		}
	}
	for _, s := range []string{
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a\ud83d\ude00"},{"type":"text","text":"\ud800x"},1]}}`,
		`{"TYPE":"result","Subtype":"success","is_error":true,"result":"\u00e9\xff\xfe"}`,
		`{"type":"assistant","message":{"content":[null,{"text":"a","type":"text"}]},"message":null}`,
		`{"type":"assistant","message":{"content":"x"},"message":{"content":[{"type":"tool_use","name":"Bash"}]}}`,
		`{"type":"assistant","message":5}`,
		`{"a":-0.5e+10,"b":[true,false,null,{},[]],"c":"\/\b\f\n\r\t\\\""}`,
		`{"a":01}`, `{"a":1.}`, `{"a":"` + "\x01" + `"}`, `{"a":1}x`, `{"a":1} `, `{"type":"result"}` + "\t\r",
		`{"type":"text","text":"\uD834\uDD1E\uDD1E\uD834"}`,
		"\v{\"type\":\"system\"}\f\r\n", "\u0085{\"type\":\"system\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		trimmed := bytes.TrimSpace(bytes.TrimRight(line, "\r\n"))
		if len(trimmed) == 0 || trimmed[0] != '{' || bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
			return
		}
		want := refParse(trimmed)
		var tr Tracker
		ev, err := tr.Feed(line)
		if want.valid != (ev.Kind != Invalid) {
			t.Fatalf("stdlib valid=%v, tokenizer kind %v err %v", want.valid, ev.Kind, err)
		}
		if !want.valid {
			return
		}
		if ev.Type != want.typ || ev.Subtype != want.subtype {
			t.Fatalf("type %q/%q, stdlib %q/%q", ev.Type, ev.Subtype, want.typ, want.subtype)
		}
		s := tr.Summary()
		switch want.typ {
		case "assistant":
			if ev.Outputs != want.outputs || ev.Activity != want.activity {
				t.Fatalf("outputs %d activity %q, stdlib %d %q", ev.Outputs, ev.Activity, want.outputs, want.activity)
			}
		case "result":
			if s.Result.Text != want.result || s.Result.IsError != want.isError {
				t.Fatalf("result %+v, stdlib %q is_error %v", s.Result, want.result, want.isError)
			}
		}
		// The same line read from a stream gives the same event (a stream
		// line ends at '\n'; only ASCII white space is trimmed around it).
		if bytes.ContainsAny(trimmed, "\n") || !bytes.Equal(bytes.Trim(line, " \t\r\n\v\f"), trimmed) {
			return
		}
		var tr2 Tracker
		ev2, fed, _, rerr := tr2.ReadLine(bufio.NewReader(bytes.NewReader(line)))
		if !fed || rerr != nil || ev2 != ev {
			t.Fatalf("ReadLine %+v fed %v err %v, Feed %+v", ev2, fed, rerr, ev)
		}
	})
}

// TestStreamJSONReadLineTranscripts: reading the real transcripts straight
// from a stream gives the tally Feed gives.
func TestStreamJSONReadLineTranscripts(t *testing.T) {
	for _, row := range readManifest(t) {
		path := filepath.Join("testdata", "claude-stream", row.file)
		want, _ := feedFile(t, path)
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var tr Tracker
		br := bufio.NewReaderSize(fh, 16)
		for {
			_, fed, _, rerr := tr.ReadLine(br)
			if !fed {
				if !errors.Is(rerr, io.EOF) {
					t.Fatal(rerr)
				}
				break
			}
		}
		fh.Close()
		if g, w := tr.Summary(), want.Summary(); g.Outputs != w.Outputs || g.Events != w.Events || g.LastEvent() != w.LastEvent() ||
			g.Invalid != w.Invalid || g.Status() != w.Status() || g.Status() != row.status || g.Outputs != row.outputs {
			t.Errorf("%s: ReadLine %+v, Feed %+v", row.file, g, w)
		}
	}
}

// TestStreamJSONReadLineLines: lines of any length (longer than the reader's
// buffer), CRLF, blank and garbage lines, a BOM and a final line without a
// newline, read from a stream.
func TestStreamJSONReadLineLines(t *testing.T) {
	long := strings.Repeat("y", 200_000)
	input := "\xef\xbb\xbf" + `{"type":"system","subtype":"init"}` + "\r\n" + "garbage " + long + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"` + long + `"}]}}` + "\n\r\n  \n" +
		`{"type":"result","subtype":"success","result":"` + long + `"}`
	var tr Tracker
	br := bufio.NewReaderSize(strings.NewReader(input), 64<<10)
	var kinds []LineKind
	for {
		ev, fed, _, rerr := tr.ReadLine(br)
		if !fed {
			if rerr != io.EOF {
				t.Fatal(rerr)
			}
			break
		}
		kinds = append(kinds, ev.Kind)
	}
	want := []LineKind{Known, Invalid, Known, Blank, Blank, Known}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds %v, want %v", kinds, want)
		}
	}
	s := tr.Summary()
	if s.Lines != 6 || s.Outputs != 1 || s.Status() != core.TaskSucceeded || len(s.Result.Text) != maxStreamText {
		t.Errorf("summary %+v", s)
	}
}

// repeatReader yields head, then body n times, then tail, without holding
// the whole line in memory.
type repeatReader struct {
	parts [][]byte
	n     int
	i     int
	off   int
}

func bombReader(head, body, sep, tail string, n int) io.Reader {
	rs := []io.Reader{strings.NewReader(head)}
	rs = append(rs, &repeatReader{parts: [][]byte{[]byte(body), []byte(sep)}, n: n})
	rs = append(rs, strings.NewReader(tail))
	return io.MultiReader(rs...)
}

func (r *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if r.i >= 2*r.n-1 {
			if total == 0 {
				return 0, io.EOF
			}
			return total, nil
		}
		part := r.parts[r.i%2]
		c := copy(p, part[r.off:])
		p, total, r.off = p[c:], total+c, r.off+c
		if r.off == len(part) {
			r.i, r.off = r.i+1, 0
		}
	}
	return total, nil
}

// TestStreamJSONBombsBounded: the JSON bombs of a hostile runtime — 30 MB of
// `{}` content blocks, 15.7 MB of numbers, a million text blocks, deep
// nesting — are read from a stream with a few KB allocated in all, and
// counted right.
func TestStreamJSONBombsBounded(t *testing.T) {
	cases := []struct {
		name    string
		r       func() io.Reader
		kind    LineKind
		outputs int
	}{
		{"30 MB of empty blocks", func() io.Reader {
			return bombReader(`{"type":"assistant","message":{"content":[`, `{}`, `,`, `]}}`+"\n", 10_000_000)
		}, Known, 0},
		{"15.7 MB of numbers", func() io.Reader {
			return bombReader(`{"type":"assistant","message":{"content":[{"type":"text","text":"x","n":[`, `1234567`, `,`, `]}]}}`+"\n", 2_000_000)
		}, Known, 1},
		{"a million text blocks", func() io.Reader {
			return bombReader(`{"type":"assistant","message":{"content":[`, `{"type":"text","text":"hello world"}`, `,`, `]}}`+"\n", 1_000_000)
		}, Known, 1_000_000},
		{"deep nesting", func() io.Reader {
			return bombReader(`{"type":"assistant","x":`, `[`, ``, ``+"\n", 5_000_000)
		}, Invalid, 0},
		{"a 20 MB text", func() io.Reader {
			return bombReader(`{"type":"assistant","message":{"content":[{"type":"text","text":"`, `\u00e9`, ``, `"}]}}`+"\n", 3_000_000)
		}, Known, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr Tracker
			br := bufio.NewReaderSize(c.r(), 64<<10)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ev, fed, _, rerr := tr.ReadLine(br)
			runtime.ReadMemStats(&after)
			if !fed || rerr != nil || ev.Kind != c.kind || ev.Outputs != c.outputs {
				t.Fatalf("ev %+v fed %v err %v; want kind %v outputs %d", ev, fed, rerr, c.kind, c.outputs)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("allocated %d bytes reading the line, want < 1 MiB", got)
			}
			if _, fed, _, rerr := tr.ReadLine(br); fed || rerr != io.EOF {
				t.Errorf("after the line: fed %v err %v", fed, rerr)
			}
		})
	}
}
