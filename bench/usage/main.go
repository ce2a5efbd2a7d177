// Command usage measures counting a Claude Code transcript's tokens in the
// hook (issue 27).
//
//	go run -tags sqlite_fts5 ./bench/usage [-mb 200] [-n 20] [-bin PATH] [-keep] [-strict]
//
// It writes a transcript of -mb MB (turns of a user line with a ~4 KiB tool
// result and two content-block lines of one assistant message carrying its
// usage, as Claude Code writes them), then runs real `clawpit hook`
// processes with a Stop payload naming it: first until the whole file is
// counted (the first read, which a hook stops at its 2 s budget and the next
// goes on from), then -n times after appending one turn (~6 KiB). Each of
// those is timed from process start to exit, and its peak RSS is the
// kernel's (rusage maxrss). Targets: median < 50 ms and peak RSS < 30 MB
// per hook after the first read; the tokens counted must equal the tokens
// written. -strict exits 1 when one is missed.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/bench/internal/benchbin"
	"github.com/clawpit/clawpit/core"
)

const (
	session = "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c"
	model   = "claude-sonnet-5"
)

func main() {
	mb := flag.Int("mb", 200, "transcript size, MB")
	n := flag.Int("n", 20, "hooks timed after the first read")
	bin := flag.String("bin", "", "clawpit binary (default: build it)")
	keep := flag.Bool("keep", false, "keep the work directory")
	strict := flag.Bool("strict", false, "exit 1 when a target is missed")
	flag.Parse()
	dir, clawpit, done, err := benchbin.Workdir("clawpit-bench-usage-", *bin, *keep)
	if err != nil {
		fail(err)
	}
	defer done()
	path := filepath.Join(dir, "transcript.jsonl")
	db := filepath.Join(dir, "r.db")
	g := &gen{}
	start := time.Now()
	if err := g.write(path, int64(*mb)<<20); err != nil {
		fail(err)
	}
	fmt.Printf("transcript: %d MB, %d turns, written in %s\n", g.size>>20, g.turns, time.Since(start).Round(time.Millisecond))

	// The first read: hooks until every token is counted.
	var first []time.Duration
	for i := 0; ; i++ {
		d, _, err := hook(clawpit, db, path)
		if err != nil {
			fail(err)
		}
		first = append(first, d)
		got, err := counted(clawpit, db)
		if err != nil {
			fail(err)
		}
		if got == g.want {
			break
		}
		if i > 100 {
			fail(fmt.Errorf("not all counted after 100 hooks: %+v of %+v", got, g.want))
		}
	}
	var total time.Duration
	for _, d := range first {
		total += d
	}
	fmt.Printf("first read: %d hook(s), %s in all (%s)\n", len(first), total.Round(time.Millisecond), durs(first))

	var times []time.Duration
	var peak int64
	for range *n {
		if err := g.append(path); err != nil {
			fail(err)
		}
		d, rss, err := hook(clawpit, db, path)
		if err != nil {
			fail(err)
		}
		times = append(times, d)
		peak = max(peak, rss)
	}
	got, err := counted(clawpit, db)
	if err != nil {
		fail(err)
	}
	slices.Sort(times)
	med := times[len(times)/2]
	fmt.Printf("after the first read: %d hooks, median %s, p90 %s, max %s; peak RSS %.1f MB\n", len(times),
		ms(med), ms(times[len(times)*9/10]), ms(times[len(times)-1]), float64(peak)/(1<<20))
	fmt.Printf("tokens counted %+v, written %+v\n", got, g.want)
	ok := med < 50*time.Millisecond && peak < 30<<20 && got == g.want
	fmt.Printf("targets (median < 50 ms, peak RSS < 30 MB, every token counted once): %s\n", map[bool]string{true: "met", false: "MISSED"}[ok])
	if !ok && *strict {
		os.Exit(1)
	}
}

// hook runs one `clawpit hook` with a Stop payload for path: its wall time
// and peak RSS in bytes.
func hook(bin, db, path string) (time.Duration, int64, error) {
	payload, _ := json.Marshal(map[string]string{"hook_event_name": "Stop", "session_id": session, "transcript_path": path, "cwd": "/tmp"})
	cmd := exec.Command(bin, "--db", db, "hook")
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("hook: %w: %s", err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss << 10 // KiB on Linux
	}
	return d, rss, nil
}

// counted is the session's tokens as `clawpit usage --json` reports them.
func counted(bin, db string) (core.Tokens, error) {
	out, err := exec.Command(bin, "--db", db, "--json", "usage", "--since", "0s", "--by", "session").Output()
	if err != nil {
		return core.Tokens{}, fmt.Errorf("usage: %w", err)
	}
	var rep struct {
		Total struct {
			Tokens core.Tokens `json:"tokens"`
		} `json:"total"`
	}
	return rep.Total.Tokens, json.Unmarshal(out, &rep)
}

// gen writes transcript turns and keeps the tokens written.
type gen struct {
	turns int
	size  int64
	want  core.Tokens
}

var filler = strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 72) // ~4 KiB

// turn writes one turn: a user line with a tool result, then one assistant
// message as two content-block lines with the same id and usage (counted
// once).
func (g *gen) turn(w *bufio.Writer) error {
	g.turns++
	u := core.Tokens{Input: 3, Output: int64(50 + g.turns%100), CacheWrite: int64(200 + g.turns%300), CacheRead: 40_000}
	g.want = g.want.Add(u)
	user := fmt.Sprintf(`{"parentUuid":"p%d","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]},"uuid":"u%d","timestamp":"2026-11-26T12:00:00.000Z"}`+"\n", g.turns, g.turns, filler, g.turns)
	n, err := w.WriteString(user)
	g.size += int64(n)
	if err != nil {
		return err
	}
	for _, block := range []string{`{"type":"text","text":"Running the tests now."}`, `{"type":"tool_use","id":"toolu_x","name":"Bash","input":{"command":"go test ./..."}}`} {
		line := fmt.Sprintf(`{"parentUuid":"u%d","isSidechain":false,"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":%q,"content":[%s],"stop_reason":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"}},"requestId":"req_%d","uuid":"a%d","timestamp":"2026-11-26T12:00:01.000Z"}`+"\n",
			g.turns, g.turns, model, block, u.Input, u.CacheWrite, u.CacheRead, u.Output, g.turns, g.turns)
		n, err := w.WriteString(line)
		g.size += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// write writes turns to path until it holds at least size bytes.
func (g *gen) write(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	for g.size < size {
		if err := g.turn(w); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// append adds one turn to path.
func (g *gen) append(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := g.turn(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func durs(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, ms(d))
	}
	return strings.Join(s, ", ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/usage:", err)
	os.Exit(1)
}
