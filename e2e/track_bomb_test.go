package e2e

// `clawpit task track` fed JSON bombs (issue: 30 MB lines once peaked at
// 3 GB): the binary runs under `ulimit -v` in a helper shell and its peak
// resident set, read from wait4's rusage, must stay small.

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// bombLine streams head, n copies of body joined by sep, tail and "\n",
// generated as it is read: the test holds none of it.
type bombLine struct {
	parts [][]byte // head, body, sep, tail
	n     int
	state int // 0 head, 1 body, 2 sep, 3 tail, 4 done
	i     int // bodies written
	off   int
}

func newBomb(head, body, sep, tail string, n int) *bombLine {
	return &bombLine{parts: [][]byte{[]byte(head), []byte(body), []byte(sep), []byte(tail + "\n")}, n: n}
}

func (b *bombLine) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && b.state < 4 {
		part := b.parts[b.state]
		c := copy(p, part[b.off:])
		p, total, b.off = p[c:], total+c, b.off+c
		if b.off < len(part) {
			continue
		}
		b.off = 0
		switch b.state {
		case 0:
			b.state = 1
		case 1:
			b.i++
			if b.i < b.n {
				b.state = 2
			} else {
				b.state = 3
			}
		case 2:
			b.state = 1
		case 3:
			b.state = 4
		}
	}
	if total == 0 && b.state == 4 {
		return 0, io.EOF
	}
	return total, nil
}

// TestTrackBombsBoundedMemory: each bomb line is followed by a success
// result; track must finish the task right with a peak RSS under 100 MB, in
// a shell whose address space is capped at 2 GB (the bombs once took 3 GB).
func TestTrackBombsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams ~100 MB through the binary")
	}
	const maxRSSKiB = 100 << 10
	cases := []struct {
		name    string
		bomb    *bombLine
		outputs int64
		invalid int64
	}{
		{"30 MB of empty content blocks", newBomb(`{"type": "assistant","message":{"content":[`, `{}`, `,`, `]}}`, 10_000_000), 0, 0},
		{"15.7 MB of numbers", newBomb(`{"type":"assistant","message":{"content":[{"type":"text","text":"ok","usage":[`, `1234567`, `,`, `]}]}}`, 1_962_500), 1, 0},
		{"one million text blocks", newBomb(`{"type":"assistant","message":{"content":[`, `{"type":"text","text":"a block"}`, `,`, `]}}`, 1_000_000), 1_000_000, 0},
		{"40 MB string", newBomb(`{"type":"assistant","message":{"content":[{"type":"text","text":"`, strings.Repeat("x", 1000), ``, `"}]}}`, 40_000), 1, 0},
		{"5 million open brackets", newBomb(`{"type":"assistant","x":`, `[`, ``, ``, 5_000_000), 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := newCLI(t)
			stdin := io.MultiReader(c.bomb, strings.NewReader(`{"type":"result","subtype":"success","is_error":false,"result":"done"}`+"\n"))
			cmd := exec.Command("bash", "-c", `ulimit -v 2097152 && exec "$@"`, "bash", clawpitBin, "--db", cl.db, "--json", "task", "track", "--label", "bomb")
			// glibc reserves 64 MB of address space per thread arena; two keep the
			// cap about the Go heap.
			cmd.Env = append(cl.command(nil).Env, "MALLOC_ARENA_MAX=2")
			cmd.Stdin = stdin
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("track: %v\n%s", err, se.String())
			}
			took := time.Since(start)
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
			t.Logf("peak RSS %d KiB, %v", rss, took.Round(time.Millisecond))
			if rss > maxRSSKiB {
				t.Errorf("peak RSS %d KiB, want < %d KiB", rss, maxRSSKiB)
			}
			var res trackResult
			if err := json.Unmarshal(so.Bytes(), &res); err != nil {
				t.Fatalf("%v: %s", err, so.String())
			}
			if res.Task.Status != core.TaskSucceeded || res.Task.OutputCount != c.outputs || res.Stream.Outputs != c.outputs ||
				res.Stream.Invalid != c.invalid || res.Stream.Lines != 2 {
				t.Errorf("task %+v stream %+v", res.Task, res.Stream)
			}
		})
	}
}
