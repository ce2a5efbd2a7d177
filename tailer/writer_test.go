package tailer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRotatingWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "job")
	w, err := OpenWriter(dir, WriterOptions{MaxBytes: 20, MaxLine: 8})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, CurrentLog)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("log not created 0600 before any write: %v %v", st, err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", st.Mode())
	}
	for _, l := range []string{"aaaa", "bbbb\n", "cccccccccccc", "dddd", "eeee"} {
		if err := w.WriteLine([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil || w.Err() != nil {
		t.Fatalf("second Close %v, Err %v", err, w.Err())
	}
	if err := w.WriteLine([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
	old, _ := os.ReadFile(filepath.Join(dir, RotatedLog))
	cur, _ := os.ReadFile(filepath.Join(dir, CurrentLog))
	// 5+5+9 = 19 bytes, then "cccc\n" would pass 20: rotate; the 12-byte
	// line is split at 8.
	all := string(old) + string(cur)
	if all != "aaaa\nbbbb\ncccccccc\ncccc\ndddd\neeee\n" || w.Rotations() < 1 {
		t.Fatalf("rotated %d: old %q cur %q", w.Rotations(), old, cur)
	}
	gen, ino, ok := readGenFile(dir)
	st, _ := os.Stat(filepath.Join(dir, CurrentLog))
	if i, _ := inode(st); !ok || gen != int64(w.Rotations()) || ino != i {
		t.Fatalf("output.gen: gen %d ino %d ok %v; want gen %d ino %d", gen, ino, ok, w.Rotations(), i)
	}
	if _, err := os.Stat(filepath.Join(dir, CurrentLog+".new")); err == nil {
		t.Fatal("temporary file left behind")
	}
	for _, f := range []string{string(old), string(cur)} {
		if len(f) > 20 {
			t.Fatalf("file over MaxBytes: %q", f)
		}
		if !strings.HasSuffix(f, "\n") {
			t.Fatalf("file does not end at a line: %q", f)
		}
	}
}

func TestRotatingWriterRotateFailureNotFatal(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{MaxBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A directory named output.1.log makes the rename fail.
	if err := os.Mkdir(filepath.Join(dir, RotatedLog), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, RotatedLog, "x"), []byte("x"), 0o600)
	for i := 0; i < 5; i++ {
		if err := w.WriteLine([]byte("0123456")); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if w.RotateErr() == nil || w.Err() != nil {
		t.Fatalf("RotateErr %v Err %v", w.RotateErr(), w.Err())
	}
	os.RemoveAll(filepath.Join(dir, RotatedLog))
	for i := 0; i < 3; i++ {
		w.WriteLine([]byte("0123456"))
	}
	if w.Rotations() == 0 || w.RotateErr() != nil {
		t.Fatalf("no retry after the failure: rotations %d, %v", w.Rotations(), w.RotateErr())
	}
	w.Close()
}
