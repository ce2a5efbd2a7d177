package tailer

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestNumberFromGenHistory: a follower whose snapshot of (output.1.log,
// output.log) is already one rotation old when it reads output.gen still
// numbers both files, from output.gen's history, so that a generation it
// never saw is reported as a Gap instead of lost silently. (With only the
// newest entry the pair matched nothing, stayed unnumbered, and a starved
// follower in TestJobRotation skipped 65,536 lines without a Gap line.)
func TestNumberFromGenHistory(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := func(i int) {
		t.Helper()
		if err := w.WriteLine([]byte(fmt.Sprintf("line %03d", i))); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 6; i++ {
		line(i) // each 9-byte line fills a 10-byte file: one rotation each
	}
	g1 := openGen(filepath.Join(dir, RotatedLog))
	g0 := openGen(filepath.Join(dir, CurrentLog))
	if g1 == nil || g0 == nil {
		t.Fatal("no rotated pair")
	}
	defer closeGen(g1)
	defer closeGen(g0)
	newest, _, _ := readGenFile(dir)
	line(6) // rotates after the snapshot: output.gen now names a newer file
	line(7)
	if n, _, _ := readGenFile(dir); n <= newest {
		t.Fatalf("output.gen did not advance (%d → %d)", newest, n)
	}
	r := &followRun{dir: dir}
	r.number(g1, g0)
	if g0.num != newest || g1.num != newest-1 {
		t.Fatalf("numbered output.1.log %d, output.log %d; want %d and %d", g1.num, g0.num, newest-1, newest)
	}
}

// TestGenHistoryBounded: output.gen keeps the last genHistory entries, and a
// reopened writer continues the numbering.
func TestGenHistoryBounded(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < genHistory+10; i++ {
		w.WriteLine([]byte(fmt.Sprintf("line %03d", i)))
		w.Flush()
	}
	w.Close()
	h := readGenHistory(dir)
	if len(h) != genHistory {
		t.Fatalf("%d entries, want %d", len(h), genHistory)
	}
	for k := 1; k < len(h); k++ {
		if h[k].gen != h[k-1].gen+1 {
			t.Fatalf("entries not consecutive: %v", h)
		}
	}
	last := h[len(h)-1].gen
	w2, err := OpenWriter(dir, WriterOptions{MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	w2.WriteLine([]byte("again 001"))
	w2.WriteLine([]byte("again 002"))
	w2.Flush()
	if n, _, _ := readGenFile(dir); n <= last {
		t.Fatalf("reopened writer restarted numbering: %d after %d", n, last)
	}
}
