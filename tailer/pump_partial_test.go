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

// A line without its newline shows after PartialIdle of silence, marked as
// partial and redacted, instead of only at a newline, EOF or 64 KiB; a
// trailing run that may be a secret still arriving is held back; the whole
// line follows when it ends (issue 12 item 5).
func TestPumpPartialLine(t *testing.T) {
	t.Parallel()
	secret := "sk-ant-api03-" + strings.Repeat("Q", 40)
	cases := []struct {
		name    string
		pieces  []string // written with an idle gap after each
		preview []string // the preview lines expected, in order
		whole   string   // the line as finally written
	}{
		{"prompt", []string{"Password: ", "hunter2\n"}, []string{"[partial] Password: "}, "Password: " + redact.Redacted},
		{"progress", []string{"building 45%", " done\n"}, []string{"[partial] building 45%"}, "building 45% done"},
		{"secret arriving", []string{"key " + secret[:20], secret[20:] + "\n"}, []string{"[partial] key "}, "key " + redact.Redacted},
		{"short token start", []string{"key gh" + "p_ab", "c" + strings.Repeat("Q", 40) + " ok\n"}, []string{"[partial] key "}, "key " + redact.Redacted + " ok"},
		{"secret whole", []string{"token=" + secret + " wait", " ok\n"}, []string{"[partial] token=" + redact.Redacted + " wait"}, "token=" + redact.Redacted + " wait ok"},
		{"no blank", []string{strings.Repeat("y", 30), "\n"}, nil, strings.Repeat("y", 30)},
		{"progress bar", []string{"\r10%", "\r20%", "\r100%\n"}, []string{"[partial] 10%", "[partial] 20%"}, "\r10%\r20%\r100%"},
		{"grows twice", []string{"a ", "b ", "c\n"}, []string{"[partial] a ", "[partial] a b "}, "a b c"},
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
			want := append(slices.Clone(tc.preview), tc.whole)
			if !slices.Equal(sink.lines, want) {
				t.Errorf("lines %q, want %q", sink.lines, want)
			}
			for _, l := range sink.lines {
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
	if want := []string{redact.StderrPrefix + "no newline"}; !slices.Equal(sink.lines, want) {
		t.Errorf("lines %q, want %q", sink.lines, want)
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
