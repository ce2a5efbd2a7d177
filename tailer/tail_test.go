package tailer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/redact"
)

// writeLogs creates dir with output.log = cur and output.1.log = old (nil:
// the file does not exist).
func writeLogs(t testing.TB, cur, old []byte) string {
	t.Helper()
	dir := t.TempDir()
	if cur != nil {
		if err := os.WriteFile(filepath.Join(dir, CurrentLog), cur, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if old != nil {
		if err := os.WriteFile(filepath.Join(dir, RotatedLog), old, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func numbered(from, to int) []byte {
	var b bytes.Buffer
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.Bytes()
}

func TestTailBasics(t *testing.T) {
	tests := []struct {
		name     string
		cur, old []byte
		opt      TailOptions
		want     []string
		rotated  bool
		missing  bool
	}{
		{"empty", []byte{}, nil, TailOptions{}, nil, false, false},
		{"one line no newline", []byte("abc"), nil, TailOptions{}, []string{"abc"}, false, false},
		{"last without newline", []byte("a\nb"), nil, TailOptions{}, []string{"a", "b"}, false, false},
		{"crlf", []byte("a\r\nb\r\n"), nil, TailOptions{}, []string{"a", "b"}, false, false},
		{"empty lines", []byte("\n\na\n\n"), nil, TailOptions{}, []string{"", "", "a", ""}, false, false},
		{"last 2", numbered(1, 10), nil, TailOptions{Lines: 2}, []string{"line 9", "line 10"}, false, false},
		{"into rotated", numbered(8, 10), numbered(1, 7), TailOptions{Lines: 5},
			[]string{"line 6", "line 7", "line 8", "line 9", "line 10"}, false, false},
		{"exactly both", numbered(8, 10), numbered(1, 7), TailOptions{Lines: 10},
			strings.Split(strings.TrimSuffix(string(numbered(1, 10)), "\n"), "\n"), false, false},
		{"rotated away", numbered(8, 10), numbered(5, 7), TailOptions{Lines: 10},
			[]string{"line 5", "line 6", "line 7", "line 8", "line 9", "line 10"}, true, false},
		{"never rotated", numbered(1, 3), nil, TailOptions{Lines: 10},
			[]string{"line 1", "line 2", "line 3"}, false, false},
		{"mid rotation", nil, numbered(1, 3), TailOptions{Lines: 2}, []string{"line 2", "line 3"}, false, true},
		{"mid rotation all", nil, numbered(1, 3), TailOptions{Lines: 5},
			[]string{"line 1", "line 2", "line 3"}, true, true},
		{"empty current", []byte{}, numbered(1, 3), TailOptions{Lines: 2}, []string{"line 2", "line 3"}, false, false},
		{"bytes", []byte("aaaa\nbbbb\ncccc\n"), nil, TailOptions{Bytes: 7}, []string{"b", "cccc"}, false, false},
		{"bytes at line start", []byte("aaaa\nbbbb\ncccc\n"), nil, TailOptions{Bytes: 10}, []string{"bbbb", "cccc"}, false, false},
		{"bytes newline only", []byte("abc\n"), nil, TailOptions{Bytes: 1}, nil, false, false},
		{"bytes across", []byte("cc\n"), []byte("aa\nbb\n"), TailOptions{Bytes: 5}, []string{"b", "cc"}, false, false},
		{"bytes and lines", numbered(1, 9), nil, TailOptions{Bytes: 1000, Lines: 1}, []string{"line 9"}, false, false},
		{"long line split", []byte("0123456789\nxy\n"), nil, TailOptions{MaxLineBytes: 4, Lines: 3},
			[]string{"2345", "6789", "xy"}, false, false},
		{"redacted", []byte("ok\npassword=hunter2\n"), nil, TailOptions{}, []string{"ok", "password=" + redact.Redacted}, false, false},
		{"pem spanning files", []byte("AAAABBBB\n-----END PRIVATE KEY-----\n"), []byte("x\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n"),
			TailOptions{}, []string{"x", "-----BEGIN PRIVATE KEY-----", redact.Redacted, redact.Redacted, "-----END PRIVATE KEY-----"}, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeLogs(t, tc.cur, tc.old)
			res, err := Tail(dir, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Lines, tc.want) && !(len(res.Lines) == 0 && len(tc.want) == 0) {
				t.Fatalf("lines\n got %q\nwant %q", res.Lines, tc.want)
			}
			if res.Rotated != tc.rotated || res.Missing != tc.missing {
				t.Fatalf("rotated=%v missing=%v, want %v %v", res.Rotated, res.Missing, tc.rotated, tc.missing)
			}
			if tc.rotated != (res.Notice == RotatedNotice) {
				t.Fatalf("notice %q", res.Notice)
			}
		})
	}
}

func TestTailNoLog(t *testing.T) {
	_, err := Tail(t.TempDir(), TailOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestTailText(t *testing.T) {
	r := TailResult{Lines: []string{"a", "b"}, Notice: RotatedNotice}
	if got := r.Text(); got != RotatedNotice+"\na\nb\n" {
		t.Fatalf("%q", got)
	}
}

// TestTailBoundedRead checks that a tail reads about the tail's size, not
// the file's: a 5 MiB log with one huge line costs at most
// Lines × MaxLineBytes + a chunk.
func TestTailBoundedRead(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 5<<20)
	big = append(big, "\nend\n"...)
	dir := writeLogs(t, big, nil)
	res, err := Tail(dir, TailOptions{Lines: 3, MaxLineBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != 3 || res.Lines[2] != "end" || len(res.Lines[0]) != 1000 {
		t.Fatalf("got %d lines, last %q", len(res.Lines), res.Lines[len(res.Lines)-1])
	}
	f, _ := os.Open(filepath.Join(dir, CurrentLog))
	defer f.Close()
	cr := &countingReaderAt{f: f}
	st, _ := f.Stat()
	if _, _, err := tailFile(cr, st.Size(), 200, 0, 1000, 0); err != nil {
		t.Fatal(err)
	}
	if limit := int64(200*1000 + 2*tailChunk); cr.n > limit {
		t.Fatalf("read %d bytes, limit %d", cr.n, limit)
	}
}

type countingReaderAt struct {
	f *os.File
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// modelLines splits a file the way Tail defines lines: "\n" separates, a
// final "\n" adds no line, lines longer than maxLine are split from their
// end, a trailing "\r" of each piece is removed. partialStart: the data is a
// byte-budget cut, so a leading "\n" ends a line outside the budget.
func modelLines(data []byte, maxLine int, partialStart bool) []string {
	if len(data) == 0 {
		return nil
	}
	if partialStart && data[0] == '\n' {
		data = data[1:]
		if len(data) == 0 {
			return nil
		}
	}
	raw := strings.Split(string(data), "\n")
	if raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
	}
	var out []string
	for _, l := range raw {
		var pieces []string
		for len(l) > maxLine {
			pieces = append([]string{l[len(l)-maxLine:]}, pieces...)
			l = l[:len(l)-maxLine]
		}
		if l != "" || len(pieces) == 0 {
			pieces = append([]string{l}, pieces...)
		}
		for _, p := range pieces {
			out = append(out, strings.TrimSuffix(p, "\r"))
		}
	}
	return out
}

// modelTail is the reference for Tail (before redaction).
func modelTail(cur, old []byte, opt TailOptions) (lines []string, rotated bool) {
	want := opt.Lines
	if want <= 0 && opt.Bytes <= 0 {
		want = DefaultTailLines
	}
	maxLine := opt.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	take := func(data []byte, budget int64) ([]string, bool) { // lines, whole file
		partial := budget > 0 && budget < int64(len(data))
		if partial {
			data = data[int64(len(data))-budget:]
		}
		return modelLines(data, maxLine, partial), !partial
	}
	budget := opt.Bytes
	var curLines []string
	if cur != nil {
		var whole bool
		curLines, whole = take(cur, budget)
		if want > 0 && len(curLines) >= want {
			return curLines[len(curLines)-want:], false
		}
		if !whole || old == nil {
			return curLines, false
		}
		if budget > 0 {
			budget -= int64(len(cur))
			if budget <= 0 {
				return curLines, false
			}
		}
	}
	if old == nil {
		return curLines, false
	}
	oldLines, whole := take(old, budget)
	rem := want - len(curLines)
	if want > 0 && len(oldLines) >= rem {
		oldLines = oldLines[len(oldLines)-rem:]
		return append(oldLines, curLines...), false
	}
	rotated = whole && (budget <= 0 || budget > int64(len(old)))
	return append(oldLines, curLines...), rotated
}

func FuzzTail(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("x\n"), true, true, 2, int64(0), 8)
	f.Add([]byte("\r\n\n\nabc"), []byte(""), true, false, 0, int64(3), 2)
	f.Add([]byte("0123456789\n"), []byte("\n\n"), false, true, 5, int64(0), 3)
	f.Add([]byte("password=x\n-----END PRIVATE KEY-----\n"), []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n"), true, true, 9, int64(0), 100)
	f.Fuzz(func(t *testing.T, cur, prev []byte, hasCur, hasPrev bool, lines int, nbytes int64, maxLine int) {
		if !hasCur {
			cur = nil
		} else if cur == nil {
			cur = []byte{}
		}
		if !hasPrev {
			prev = nil
		} else if prev == nil {
			prev = []byte{}
		}
		opt := TailOptions{Lines: lines % 50, Bytes: nbytes % 5000, MaxLineBytes: maxLine % 70, chunk: 7} // small reads exercise chunk boundaries
		dir := writeLogs(t, cur, prev)
		res, err := Tail(dir, opt)
		if cur == nil && prev == nil {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		wantLines, wantRot := modelTail(cur, prev, opt)
		var want []string
		if len(wantLines) > 0 {
			want = strings.Split(redact.Default().Block(strings.Join(wantLines, "\n")), "\n")
		}
		if !reflect.DeepEqual(res.Lines, want) {
			t.Fatalf("opt %+v\n got %q\nwant %q", opt, res.Lines, want)
		}
		if res.Rotated != wantRot {
			t.Fatalf("rotated = %v, want %v", res.Rotated, wantRot)
		}
		total := 0
		for _, l := range res.Lines {
			total += len(l)
		}
		if total > len(cur)+len(prev)+len(redact.Redacted)*len(res.Lines)*2 {
			t.Fatalf("result larger than the files")
		}
	})
}

// benchLog writes a log of about size bytes of 80-byte numbered lines.
func benchLog(b *testing.B, size int) string {
	line := strings.Repeat("x", 68)
	var buf bytes.Buffer
	for i := 0; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, "%10d %s\n", i, line)
	}
	return writeLogs(b, buf.Bytes(), nil)
}

// BenchmarkTail is bench/README.md P4: the last 200 lines of a 5 MiB log in < 1 ms,
// flat in file size (compare the 50KiB and 5MiB cases).
func BenchmarkTail(b *testing.B) {
	for _, size := range []int{50 << 10, 5 << 20} {
		dir := benchLog(b, size)
		name := fmt.Sprintf("%dKiB", size>>10)
		if size >= 1<<20 {
			name = fmt.Sprintf("%dMiB", size>>20)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := Tail(dir, TailOptions{Lines: 200})
				if err != nil || len(res.Lines) != 200 {
					b.Fatal(err, len(res.Lines))
				}
			}
		})
	}
}
