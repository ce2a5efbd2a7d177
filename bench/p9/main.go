// Command p9 measures SPEC §11 P9 (and P6/P7 at scale): the console over
// registries of 100,000, 1,000,000 and 10,000,000 tasks, side by side.
//
//	go run ./bench/p9 [-sizes 100000,1000000,10000000] [-dir /tmp/clawpit-p9] [-keys 300] [-writes 10]
//
// Each size's registry is bench/p1's shape (p1data: N terminal tasks of
// history plus 10,000 active ones, with runs, approvals, jobs and alerts in
// proportion), built once and cached as <dir>/<N>.db (10M takes minutes and
// several GB). Each size is measured in a child process of its own, so its
// peak RSS (VmHWM) is its own. The child drives the real console model
// (tui.New over the store source, read-only) the way Bubble Tea does — Cmds
// run on goroutines, messages go through Update, every message is followed
// by a View — without a terminal, and reports:
//
//   - first screen: store.Open to the first frame showing task rows (an
//     older registry's migration is timed apart, on its first open);
//   - key → frame: Update + View of down, page down and pane switches (the
//     window reads they start run in the background, off the key path);
//     "window" is how long those background reads took;
//   - filter keystroke: a keystroke of `/` to the frame showing its window
//     (typed one key at a time, each waited for), for a common query, a
//     rare one and one matching nothing (the LIKE scan's worst case);
//   - count: first screen to the info line's row count (COUNT over an
//     index, in the background);
//   - external write → screen: another connection starts a task; the time
//     from its commit to the frame showing it (poll every 200 ms included);
//   - peak RSS.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/tui"
)

func main() {
	sizes := flag.String("sizes", "100000,1000000,10000000", "terminal tasks of each registry, comma-separated")
	dir := flag.String("dir", "/tmp/clawpit-p9", "where the registries are built and cached")
	keys := flag.Int("keys", 300, "timed key presses per kind")
	writes := flag.Int("writes", 10, "timed external writes")
	child := flag.String("child", "", "internal: measure the registry at this path")
	migrate := flag.String("migrate", "", "only open (and so migrate) the registry at this path, timed")
	flag.Parse()
	if *migrate != "" {
		start := time.Now()
		db, err := store.Open(context.Background(), *migrate, store.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "p9:", err)
			os.Exit(1)
		}
		db.Close()
		fmt.Printf("opened (migrated) %s in %s\n", *migrate, time.Since(start).Round(time.Millisecond))
		return
	}
	if *child != "" {
		r, err := measure(*child, *keys, *writes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "p9:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	if err := run(*sizes, *dir, *keys, *writes); err != nil {
		fmt.Fprintln(os.Stderr, "p9:", err)
		os.Exit(1)
	}
}

// result is one size's figures (ms unless said otherwise).
type result struct {
	Tasks       int64
	MigrateMs   float64 // the measurement's first open: an older registry migrates here
	FirstScreen float64
	CountShown  float64
	KeyMedian   float64
	KeyP99      float64
	KeyMax      float64
	WindowMed   float64 // background window read, median
	WindowMax   float64
	Filter      map[string]float64 // query → keystroke to frame, the slowest keystroke of the query
	WriteMedian float64
	WriteMax    float64
	PeakRSSMB   float64
}

func run(sizes, dir string, keys, writes int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var rs []result
	var names []string
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("size %q: %w", s, err)
		}
		path := filepath.Join(dir, strconv.Itoa(n)+".db")
		if _, err := os.Stat(path); err != nil {
			start := time.Now()
			fmt.Fprintf(os.Stderr, "building %s (%d terminal tasks)…\n", path, n)
			if err := p1data.Build(context.Background(), path, p1data.Shape{Terminal: n, Active: 10_000}); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "built in %s\n", time.Since(start).Round(time.Millisecond))
		}
		cmd := exec.Command(self, "-child", path, "-keys", strconv.Itoa(keys), "-writes", strconv.Itoa(writes))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("measuring %s: %w", path, err)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("child output %q: %w", out, err)
		}
		rs = append(rs, r)
		names = append(names, s)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	row := func(label string, f func(r result) string) {
		fmt.Fprintf(w, "%-34s", label)
		for _, r := range rs {
			fmt.Fprintf(w, " %16s", f(r))
		}
		fmt.Fprintln(w)
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }
	row("terminal tasks", func(r result) string { return strconv.FormatInt(r.Tasks, 10) })
	row("first open (migrates an older one)", func(r result) string { return ms(r.MigrateMs) })
	row("first screen (< 300 ms)", func(r result) string { return ms(r.FirstScreen) })
	row("row count shown", func(r result) string { return ms(r.CountShown) })
	row("key → frame median (< 5 ms)", func(r result) string { return ms(r.KeyMedian) })
	row("key → frame p99", func(r result) string { return ms(r.KeyP99) })
	row("key → frame max", func(r result) string { return ms(r.KeyMax) })
	row("window read (background) median", func(r result) string { return ms(r.WindowMed) })
	row("window read max", func(r result) string { return ms(r.WindowMax) })
	var qs []string
	for q := range rs[0].Filter {
		qs = append(qs, q)
	}
	slices.Sort(qs)
	for _, q := range qs {
		row(fmt.Sprintf("filter %q (< 100 ms)", q), func(r result) string { return ms(r.Filter[q]) })
	}
	row("external write → screen median", func(r result) string { return ms(r.WriteMedian) })
	row("external write → screen max", func(r result) string { return ms(r.WriteMax) })
	row("peak RSS (< 100 MB)", func(r result) string { return strconv.FormatFloat(r.PeakRSSMB, 'f', 1, 64) + " MB" })
	if len(rs) > 1 {
		fmt.Fprintf(w, "peak RSS %s vs %s: %.2f×\n", names[len(names)-1], names[0], rs[len(rs)-1].PeakRSSMB/rs[0].PeakRSSMB)
	}
	return nil
}

// driver runs the console model like Bubble Tea's loop, without a terminal.
type driver struct {
	m    tea.Model
	msgs chan tea.Msg
	last string
	stop bool
}

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			d.msgs <- msg
		}
	}()
}

// send handles one message: Update, its Cmds started, a frame rendered.
func (d *driver) send(msg tea.Msg) {
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			d.run(c)
		}
		return
	}
	if _, ok := msg.(tea.QuitMsg); ok {
		d.stop = true
		return
	}
	var cmd tea.Cmd
	d.m, cmd = d.m.Update(msg)
	d.run(cmd)
	d.last = d.m.View().Content
}

// until handles messages until cond holds of the last frame, or timeout.
func (d *driver) until(timeout time.Duration, cond func(frame string, msg tea.Msg) bool) error {
	deadline := time.After(timeout)
	for {
		select {
		case msg := <-d.msgs:
			d.send(msg)
			if cond(d.last, msg) {
				return nil
			}
		case <-deadline:
			return fmt.Errorf("timed out after %s; last frame:\n%s", timeout, d.last)
		}
	}
}

// drain handles the messages that arrive within d.
func (d *driver) drain(dur time.Duration) {
	deadline := time.After(dur)
	for {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-deadline:
			return
		}
	}
}

func isWindow(msg tea.Msg) bool { return fmt.Sprintf("%T", msg) == "tui.windowMsg" }

func key(code rune, text string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code, Text: text} }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func measure(path string, keys, writes int) (result, error) {
	ctx := context.Background()
	var r result
	// An older registry migrates on its first open: timed apart.
	mstart := time.Now()
	if db, err := store.Open(ctx, path, store.Options{}); err != nil {
		return r, err
	} else {
		db.Close()
	}
	r.MigrateMs = ms(time.Since(mstart))
	start := time.Now()
	db, err := store.Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return r, err
	}
	defer db.Close()
	src := &timedSource{WindowSource: tui.NewStoreSource(db).(tui.WindowSource)}
	m := tui.New(tui.Options{Source: src, Keys: tui.DefaultKeyMap(), ReadOnly: true, Operator: "bench@p9"})
	d := &driver{m: m, msgs: make(chan tea.Msg, 4096)}
	d.send(tea.WindowSizeMsg{Width: 160, Height: 50})
	d.run(m.Init())
	if err := d.until(30*time.Second, func(f string, _ tea.Msg) bool { return strings.Contains(f, "live task") }); err != nil {
		return r, fmt.Errorf("first screen: %w", err)
	}
	r.FirstScreen = ms(time.Since(start))
	if err := d.until(60*time.Second, func(f string, _ tea.Msg) bool { return strings.Contains(f, " rows") }); err != nil {
		return r, fmt.Errorf("count: %w", err)
	}
	r.CountShown = ms(time.Since(start))
	d.drain(300 * time.Millisecond)

	// Key → frame: Update and View on the UI goroutine; the window reads
	// keys start run in the background (timed by the source).
	var lat []float64
	press := func(k tea.KeyPressMsg) {
		t := time.Now()
		d.send(k)
		lat = append(lat, ms(time.Since(t)))
	}
	src.reset()
	for i := range keys {
		press(tea.KeyPressMsg{Code: tea.KeyDown})
		if i%10 == 0 {
			d.drain(2 * time.Millisecond)
		}
	}
	for range keys / 10 {
		press(tea.KeyPressMsg{Code: tea.KeyPgDown})
		d.drain(5 * time.Millisecond)
	}
	for _, k := range []string{"2", "3", "4", "5", "1"} {
		press(key(rune(k[0]), k))
		d.drain(20 * time.Millisecond)
	}
	slices.Sort(lat)
	r.KeyMedian, r.KeyP99, r.KeyMax = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	if win := src.reset(); len(win) > 0 {
		slices.Sort(win)
		r.WindowMed, r.WindowMax = win[len(win)/2], win[len(win)-1]
	}

	// Filter keystrokes, each waited for (a person types slower than 100 ms).
	d.send(key('g', "g"))
	d.drain(100 * time.Millisecond)
	r.Filter = map[string]float64{}
	for _, q := range []string{"failed", "task 4242", "zzz"} {
		d.send(key('/', "/"))
		worst := 0.0
		for _, c := range q {
			t := time.Now()
			d.send(key(c, string(c)))
			// A keystroke that narrows rows already found reads nothing;
			// one that reads shows "searching…" until its window is in.
			if strings.Contains(d.last, "searching…") {
				if err := d.until(180*time.Second, func(f string, _ tea.Msg) bool { return !strings.Contains(f, "searching…") }); err != nil {
					return r, fmt.Errorf("filter %q: %w", q, err)
				}
			}
			worst = max(worst, ms(time.Since(t)))
		}
		r.Filter[q] = worst
		d.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		d.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		if err := d.until(180*time.Second, func(_ string, msg tea.Msg) bool { return isWindow(msg) }); err != nil {
			return r, err
		}
		d.drain(200 * time.Millisecond)
	}

	// External writes from another connection, seen through the poll.
	wdb, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return r, err
	}
	defer wdb.Close()
	reg := core.NewRegistry(wdb, core.SystemClock{}, core.DefaultThresholds())
	var ws []float64
	for i := range writes {
		label := fmt.Sprintf("p9-write-%d-%d", os.Getpid(), i)
		t, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: label}, core.ActorRuntime)
		if err != nil {
			return r, err
		}
		if _, _, err := reg.StartTask(ctx, t.ID, "", core.ActorRuntime); err != nil {
			return r, err
		}
		w0 := time.Now()
		if err := d.until(10*time.Second, func(f string, _ tea.Msg) bool { return strings.Contains(f, label) }); err != nil {
			return r, fmt.Errorf("write %d: %w", i, err)
		}
		ws = append(ws, ms(time.Since(w0)))
		d.drain(time.Duration(100+i*37%200) * time.Millisecond)
	}
	slices.Sort(ws)
	r.WriteMedian, r.WriteMax = ws[len(ws)/2], ws[len(ws)-1]

	var n int64
	if err := db.View(ctx, func(tx core.Tx) error {
		c, _, err := tx.(core.WindowTx).CountWindow(core.WindowQuery{Entity: core.EntityTask}, -1)
		n = c
		return err
	}); err != nil {
		return r, err
	}
	r.Tasks = n
	r.PeakRSSMB = peakRSS()
	return r, nil
}

// timedSource times the window reads (not the counts).
type timedSource struct {
	tui.WindowSource
	mu    sync.Mutex
	times []float64
}

func (s *timedSource) Window(ctx context.Context, req tui.WindowRequest, sink tui.Sink) (tui.WindowResult, error) {
	t := time.Now()
	res, err := s.WindowSource.Window(ctx, req, sink)
	if req.After > 0 && err == nil {
		s.mu.Lock()
		s.times = append(s.times, ms(time.Since(t)))
		s.mu.Unlock()
	}
	return res, err
}

// reset returns the times so far and forgets them.
func (s *timedSource) reset() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.times
	s.times = nil
	return out
}

// peakRSS is VmHWM in MB (Linux).
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
