package tailer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
)

// A line without its newline is previewed after PartialIdle of silence,
// redacted, instead of only at a newline, EOF or 64 KiB; a trailing run that
// may be a secret still arriving is held back (issue 12 item 5). The preview
// goes beside the log (SetPartial), never into it, and is removed before the
// whole line is written (issue 26 item 13).
func TestPumpPartialLine(t *testing.T) {
	t.Parallel()
	secret := "sk-ant-api03-" + strings.Repeat("Q", 40)
	cases := []struct {
		name    string
		pieces  []string // written with an idle gap after each
		preview []string // the previews expected, in order
		whole   string   // the line as finally written
	}{
		{"prompt", []string{"Password: ", "hunter2\n"}, []string{"Password: "}, "Password: " + redact.Redacted},
		{"progress", []string{"building 45%", " done\n"}, []string{"building 45%"}, "building 45% done"},
		{"secret arriving", []string{"key " + secret[:20], secret[20:] + "\n"}, []string{"key "}, "key " + redact.Redacted},
		{"short token start", []string{"key gh" + "p_ab", "c" + strings.Repeat("Q", 40) + " ok\n"}, []string{"key "}, "key " + redact.Redacted + " ok"},
		{"secret whole", []string{"token=" + secret + " wait", " ok\n"}, []string{"token=" + redact.Redacted + " wait"}, "token=" + redact.Redacted + " wait ok"},
		{"no blank", []string{strings.Repeat("y", 30), "\n"}, nil, strings.Repeat("y", 30)},
		{"progress bar", []string{"\r10%", "\r20%", "\r100%\n"}, []string{"10%", "20%"}, "\r10%\r20%\r100%"},
		{"grows twice", []string{"a ", "b ", "c\n"}, []string{"a ", "a b "}, "a b c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			sink := &memSink{}
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = tailer.Pump(r, sink, "")
			}()
			for _, p := range tc.pieces {
				if _, err := w.WriteString(p); err != nil {
					t.Fatal(err)
				}
				time.Sleep(tailer.PartialIdle + 200*time.Millisecond)
			}
			// Idle again after the line ended: no second copy.
			time.Sleep(tailer.PartialIdle + 100*time.Millisecond)
			w.Close()
			<-done
			r.Close()
			if want := []string{tc.whole}; !slices.Equal(sink.lines, want) {
				t.Errorf("lines %q, want %q", sink.lines, want)
			}
			if !slices.Equal(sink.previews, tc.preview) {
				t.Errorf("previews %q, want %q", sink.previews, tc.preview)
			}
			if sink.early > 0 || len(sink.pending) > 0 {
				t.Errorf("preview not removed before its line: %d lines written early, %q left", sink.early, sink.pending)
			}
			for _, l := range append(sink.lines, sink.previews...) {
				if strings.Contains(l, secret[:20]) {
					t.Errorf("secret reached the log: %q", l)
				}
			}
		})
	}
}

// Without read deadlines (a plain reader) nothing is previewed.
func TestPumpPartialLineNeedsDeadlines(t *testing.T) {
	sink := &memSink{}
	if _, err := tailer.Pump(strings.NewReader("no newline"), sink, redact.StderrPrefix); err != nil {
		t.Fatal(err)
	}
	if want := []string{redact.StderrPrefix + "no newline"}; !slices.Equal(sink.lines, want) || sink.previews != nil {
		t.Errorf("lines %q, previews %q, want %q and none", sink.lines, sink.previews, want)
	}
}

// BenchmarkPumpPipe is BenchmarkPump fed through an os.Pipe, as a supervisor
// reads a command: it includes the read-deadline bookkeeping of the partial
// line preview.
func BenchmarkPumpPipe(b *testing.B) {
	input := benchLines(32 << 20)
	dir := b.TempDir()
	b.SetBytes(int64(len(input)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := tailer.OpenWriter(filepath.Join(dir, fmt.Sprint(i)), tailer.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			_, _ = pw.Write(input)
			pw.Close()
		}()
		if _, err := tailer.Pump(r, w, ""); err != nil {
			b.Fatal(err)
		}
		r.Close()
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(filepath.Join(dir, fmt.Sprint(i)))
		b.StartTimer()
	}
}

// Through a pipe, as a supervisor runs it: a line without its newline shows
// in a live follow after PartialIdle (200 ms) of silence, marked, and the
// whole line replaces it; the log file never holds the preview.
func TestPumpPreviewLiveOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = tailer.Pump(r, w, "")
	}()
	f, err := tailer.Follow(t.Context(), dir, tailer.FollowOptions{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	next := func() []tailer.Line {
		t.Helper()
		select {
		case b := <-f.C():
			return b
		case <-time.After(5 * time.Second):
			t.Fatal("no batch in 5 s")
		}
		return nil
	}
	start := time.Now()
	if _, err := pw.WriteString("progress 7%"); err != nil {
		t.Fatal(err)
	}
	b := next()
	if waited := time.Since(start); waited < tailer.PartialIdle {
		t.Errorf("preview after %v, want at least %v of silence", waited, tailer.PartialIdle)
	}
	if want := []tailer.Line{{Text: "[partial] progress 7%", Partial: true}}; !slices.Equal(b, want) {
		t.Fatalf("first batch %+v, want %+v", b, want)
	}
	if _, err := pw.WriteString(" done\n"); err != nil {
		t.Fatal(err)
	}
	if b, want := next(), []tailer.Line{{Text: "progress 7% done"}}; !slices.Equal(b, want) {
		t.Fatalf("second batch %+v, want %+v", b, want)
	}
	pw.Close()
	<-done
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if log, err := os.ReadFile(filepath.Join(dir, tailer.CurrentLog)); err != nil || string(log) != "progress 7% done\n" {
		t.Errorf("log %q (err %v), want the whole line only", log, err)
	}
	if _, err := os.Stat(filepath.Join(dir, tailer.PartialFile)); !os.IsNotExist(err) {
		t.Errorf("%s left after the job ended (err %v)", tailer.PartialFile, err)
	}
}
