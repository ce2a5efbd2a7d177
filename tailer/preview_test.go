package tailer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/redact"
)

// A stored text (`job tail`, a notification's tail) shows the log as it is:
// previews are never in it (they live in PartialFile), so a command's own
// line that starts with "[partial] " is kept (issue 26 item 13).
func TestStoredTextsKeepCommandsPartialLines(t *testing.T) {
	log := strings.Join([]string{
		"start",
		"[partial] x",
		"[stderr] [partial] y",
		"end",
	}, "\n") + "\n"
	all := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	dir := writeLogs(t, []byte(log), nil)
	// A preview beside the log is no stored text's business.
	if err := os.WriteFile(filepath.Join(dir, PartialFile), []byte("waiting\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opt  TailOptions
		want []string
	}{
		{"all", TailOptions{Lines: 100}, all},
		{"last 3", TailOptions{Lines: 3}, all[1:]},
		{"last 2", TailOptions{Lines: 2}, all[2:]},
		{"bytes only", TailOptions{Bytes: 1 << 20}, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Tail(dir, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Lines, tc.want) {
				t.Fatalf("Tail lines %q, want %q", res.Lines, tc.want)
			}
		})
	}
	chars, err := TailChars(dir, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if chars != log {
		t.Fatalf("TailChars %q, want %q", chars, log)
	}
}

// SetPartial keeps each stream's preview in PartialFile (stdout's first,
// mode 0600), never in the log; the file goes when no preview is left, when
// the writer closes, and when a writer opens over a stale one.
func TestWriterPartialFile(t *testing.T) {
	dir := t.TempDir()
	pf := filepath.Join(dir, PartialFile)
	if err := os.WriteFile(pf, []byte("stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step, want string) {
		t.Helper()
		b, err := os.ReadFile(pf)
		if want == "" {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s holds %q (err %v), want no file", step, PartialFile, b, err)
			}
			return
		}
		if err != nil || string(b) != want {
			t.Errorf("%s: %s holds %q (err %v), want %q", step, PartialFile, b, err, want)
		}
		if st, err := os.Stat(pf); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", step, st.Mode().Perm())
		}
	}
	check("open", "")
	w.SetPartial(redact.StderrPrefix, []byte("[stderr] Continue? "))
	w.SetPartial("", []byte("progress 7%"))
	check("two streams", "progress 7%\n[stderr] Continue? \n")
	w.SetPartial("", nil)
	if err := w.WriteLine([]byte("progress 7% done")); err != nil {
		t.Fatal(err)
	}
	check("stdout line ended", "[stderr] Continue? \n")
	w.SetPartial("", []byte("next"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed", "")
	if b, _ := os.ReadFile(filepath.Join(dir, CurrentLog)); string(b) != "progress 7% done\n" {
		t.Errorf("log %q, want the whole line only", b)
	}
}

// nextBatch returns the follower's next batch; it fails the test after 5 s.
func nextBatch(t *testing.T, f *Follower) []Line {
	t.Helper()
	select {
	case b, ok := <-f.C():
		if !ok {
			t.Fatal("follower ended")
		}
		return b
	case <-time.After(5 * time.Second):
		t.Fatal("no batch in 5 s")
	}
	return nil
}

// A live follow shows a stream's preview at the end of a batch, replaces it
// by the whole line, and delivers a preview still current again after the
// other stream's lines; a command's own "[partial] " line is a whole line;
// after StopAtEOF no preview is delivered.
func TestFollowPreviews(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(lines ...string) {
		for _, l := range lines {
			if err := w.WriteLine([]byte(l)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write("start")
	f, err := Follow(context.Background(), dir, FollowOptions{FromStart: true, PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	var got []Line
	want := func(step string, lines ...Line) {
		t.Helper()
		for len(got) < len(lines) {
			got = append(got, nextBatch(t, f)...)
		}
		if !reflect.DeepEqual(got, lines) {
			t.Fatalf("%s: delivered %+v, want %+v", step, got, lines)
		}
		got = nil
	}
	want("backlog", Line{Text: "start"})
	w.SetPartial("", []byte("progress 7%"))
	want("preview", Line{Text: "[partial] progress 7%", Partial: true})
	w.SetPartial("", []byte("progress 8%"))
	want("new preview", Line{Text: "[partial] progress 8%", Partial: true})
	w.SetPartial("", nil)
	write("progress 8% done")
	want("whole line", Line{Text: "progress 8% done"})
	w.SetPartial(redact.StderrPrefix, []byte("[stderr] Continue? "))
	want("stderr preview", Line{Text: "[stderr] [partial] Continue? ", Partial: true})
	write("[partial] own line")
	want("other stream's line, preview again",
		Line{Text: "[partial] own line"}, Line{Text: "[stderr] [partial] Continue? ", Partial: true})
	f.StopAtEOF()
	for b := range f.C() {
		got = append(got, b...)
	}
	if len(got) > 0 {
		t.Fatalf("after StopAtEOF: %+v, want nothing", got)
	}
}
