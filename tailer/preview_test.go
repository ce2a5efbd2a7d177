package tailer

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// A stored text (`job tail`, a notification's tail) shows each line once:
// the partial-line previews the pump wrote before a line ended are left
// out, and the lines they displaced are read further back.
func TestStoredTextsDropPreviews(t *testing.T) {
	log := strings.Join([]string{
		"start",
		"[partial] progress 7%",
		"progress 7% done",
		"[stderr] [partial] Continue? ",
		"[stderr] Continue? yes",
		"[partial] a",
		"[partial] ab",
		"[partial] abc",
		"abcd",
		"[partial] waiting",
	}, "\n") + "\n"
	whole := []string{"start", "progress 7% done", "[stderr] Continue? yes", "abcd"}
	dir := writeLogs(t, []byte(log), nil)
	for _, tc := range []struct {
		name string
		opt  TailOptions
		want []string
	}{
		{"all", TailOptions{Lines: 100}, whole},
		{"last 2 past 4 previews", TailOptions{Lines: 2}, whole[2:]},
		{"last 3", TailOptions{Lines: 3}, whole[1:]},
		{"bytes only", TailOptions{Bytes: 1 << 20}, whole},
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
	if want := strings.Join(whole, "\n") + "\n"; chars != want {
		t.Fatalf("TailChars %q, want %q", chars, want)
	}
}

func TestIsPreview(t *testing.T) {
	for line, want := range map[string]bool{
		"[partial] x":          true,
		"[stderr] [partial] x": true,
		"[partial]x":           false,
		"x [partial] y":        false,
		"[stderr] x":           false,
		"":                     false,
	} {
		if got := IsPreview([]byte(line)); got != want {
			t.Errorf("IsPreview(%q) = %v, want %v", line, got, want)
		}
	}
}

// A follow shows a preview only while its line is unfinished: in a backlog
// (or a batch) where the whole line follows, the previews before it are
// left out; a preview whose line has not ended is shown.
func TestFollowDropsSupersededPreviews(t *testing.T) {
	log := strings.Join([]string{
		"start",
		"[partial] progress 7%",
		"[partial] progress 8%",
		"progress 8% done",
		"[partial] Continue? ",
		"[stderr] warning",
		"Continue? yes",
		"[stderr] [partial] waiting",
	}, "\n") + "\n"
	dir := writeLogs(t, []byte(log), nil)
	f, err := Follow(context.Background(), dir, FollowOptions{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	f.StopAtEOF()
	var got []string
	for b := range f.C() {
		for _, l := range b {
			got = append(got, l.Text)
		}
	}
	want := []string{"start", "progress 8% done", "[partial] Continue? ", "[stderr] warning", "Continue? yes", "[stderr] [partial] waiting"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("follow lines %q, want %q", got, want)
	}
}
