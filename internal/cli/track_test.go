package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/adapters/claude/streamjson"
)

// TestReadStreamLines: every line reaches the tracker, whatever its length
// (longer than the 64 KiB read buffer included); every byte is teed
// unchanged; a final line without a newline still counts.
func TestReadStreamLines(t *testing.T) {
	long := strings.Repeat("y", 200_000)
	input := "short\n" + strings.Repeat("x", 20) + "\n" + long + "\n\r\n" + `{"type":"assistant","message":{"content":"` + long + `"}}` + "\n" + "tail-no-newline-123"
	var kinds []streamjson.LineKind
	var tee bytes.Buffer
	teeErr := make(chan error, 1)
	var tr streamjson.Tracker
	err := readStreamLines(strings.NewReader(input), &tee, &tr, func(ev streamjson.Event, lineErr error) {
		kinds = append(kinds, ev.Kind)
		if (lineErr != nil) != (ev.Kind == streamjson.Invalid) {
			t.Errorf("line %d: kind %v with error %v", len(kinds), ev.Kind, lineErr)
		}
	}, teeErr)
	if err != nil {
		t.Fatal(err)
	}
	want := []streamjson.LineKind{streamjson.Invalid, streamjson.Invalid, streamjson.Invalid, streamjson.Blank, streamjson.Known, streamjson.Invalid}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("line %d: kind %v, want %v", i+1, kinds[i], want[i])
		}
	}
	if s := tr.Summary(); s.Lines != 6 || s.Outputs != 1 {
		t.Errorf("summary %+v", s)
	}
	if tee.String() != input {
		t.Error("tee differs from input")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

// TestReadStreamLinesTeeError: a failing tee is reported once and the
// stream is still read to the end.
func TestReadStreamLinesTeeError(t *testing.T) {
	input := strings.Repeat(`{"type":"system"}`+"\n", 10_000)
	teeErr := make(chan error, 1)
	var tr streamjson.Tracker
	fw := &failWriter{}
	if err := readStreamLines(strings.NewReader(input), fw, &tr, func(streamjson.Event, error) {}, teeErr); err != nil {
		t.Fatal(err)
	}
	if s := tr.Summary(); s.Events != 10_000 || fw.n != 1 || len(teeErr) != 1 {
		t.Errorf("events %d, %d writes, %d errors", s.Events, fw.n, len(teeErr))
	}
}
