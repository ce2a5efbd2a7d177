package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadStreamLines: lines are handed over whole up to max bytes, longer
// ones only by length; every byte is teed unchanged; a final line without a
// newline still counts; lines longer than the 64 KiB read buffer are joined.
func TestReadStreamLines(t *testing.T) {
	long := strings.Repeat("y", 200_000)
	input := "short\n" + strings.Repeat("x", 20) + "\n" + long + "\n\r\n" + "tail-no-newline-123"
	type got struct {
		line    string
		tooLong int64
	}
	var calls []got
	var tee bytes.Buffer
	teeErr := make(chan error, 1)
	err := readStreamLines(strings.NewReader(input), &tee, 300_000, func(line []byte, tooLong int64) {
		calls = append(calls, got{string(line), tooLong})
	}, teeErr)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{"short\n", 0}, {strings.Repeat("x", 20) + "\n", 0}, {long + "\n", 0}, {"\r\n", 0}, {"tail-no-newline-123", 0}}
	if len(calls) != len(want) {
		t.Fatalf("%d calls, want %d", len(calls), len(want))
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d: %.40q/%d, want %.40q/%d", i, calls[i].line, calls[i].tooLong, want[i].line, want[i].tooLong)
		}
	}
	if tee.String() != input {
		t.Error("tee differs from input")
	}
	calls = nil
	readStreamLines(strings.NewReader(input), nil, 10, func(line []byte, tooLong int64) {
		calls = append(calls, got{string(line), tooLong})
	}, teeErr)
	want = []got{{"short\n", 0}, {"", 21}, {"", 200_001}, {"\r\n", 0}, {"", 19}}
	for i := range want {
		if i >= len(calls) || calls[i] != want[i] {
			t.Fatalf("max 10: calls %v, want %v", calls, want)
		}
	}
}
