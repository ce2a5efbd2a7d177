// Command p9 measures bench/README.md P9 (and P6/P7 at scale): the console over
// registries of 100,000, 1,000,000 and 10,000,000 tasks, side by side.
//
//	go run -tags sqlite_fts5 ./bench/p9 [-sizes 100000,1000000,10000000] [-dir /tmp/clawpit-p9] [-keys 300] [-writes 10]
//	                                    [-sorts urgency,label]
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
//     rare one and one matching nothing (the LIKE scan's worst case), in
//     the Tasks pane's default order (urgency) and each other one -sorts
//     names;
//   - count: first screen to the info line's row count (COUNT over an
//     index, in the background);
//   - external write → screen: another connection starts a task; the time
//     from its commit to the frame showing it (poll every 200 ms included);
//   - peak RSS.
//
// With -pg URL (a PostgreSQL server; the database in the URL is only used to
// create others), each size is also copied with store.CopyToPostgres into a
// database of its own, p9_<N>, created when missing and copied into when its
// registry is empty (the copy is one transaction, so a non-empty one is a
// finished copy: reused, like the cached SQLite file), and the same child
// measures it: the two stores side by side, one column each. The external
// writes come from another process (a "host" of its own, CLAWPIT_HOST=
// p9-writer) on both stores, so on PostgreSQL the figure is the cross-host
// change → screen latency.
//
// CLAWPIT_P9_TRACE=1 prints every read the console starts (its request,
// rows and time) and every filter keystroke's time to stderr: where a
// slow keystroke's time went.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
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
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/tui"
	"github.com/clawpit/clawpit/view"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func main() {
	sizes := flag.String("sizes", "100000,1000000,10000000", "terminal tasks of each registry, comma-separated")
	dir := flag.String("dir", "/tmp/clawpit-p9", "where the registries are built and cached")
	keys := flag.Int("keys", 300, "timed key presses per kind")
	writes := flag.Int("writes", 10, "timed external writes")
	child := flag.String("child", "", "internal: measure the registry at this path")
	migrate := flag.String("migrate", "", "only open (and so migrate) the registry at this path, timed")
	pg := flag.String("pg", "", "also measure each size copied into PostgreSQL at this server (postgres://…)")
	writer := flag.String("writer", "", "internal: write tasks into the registry at this path, one per label read from stdin")
	sorts := flag.String("sorts", "urgency", "the Tasks pane's orders the filter keystrokes are timed in, comma-separated (urgency, recent, created, label)")
	flag.Parse()
	for _, s := range strings.Split(*sorts, ",") {
		if !slices.Contains(view.SortNames(core.EntityTask), s) {
			fmt.Fprintf(os.Stderr, "p9: -sorts: %q is not a Tasks order (%s)\n", s, strings.Join(view.SortNames(core.EntityTask), ", "))
			os.Exit(2)
		}
	}
	if *writer != "" {
		if err := writeTasks(context.Background(), *writer, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "p9 writer:", err)
			os.Exit(1)
		}
		return
	}
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
		r, err := measure(*child, *keys, *writes, strings.Split(*sorts, ","))
		if err != nil {
			fmt.Fprintln(os.Stderr, "p9:", err)
			os.Exit(1)
		}
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	if err := run(*sizes, *dir, *pg, *keys, *writes, *sorts); err != nil {
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
	Filter      map[string]float64 // query (quoted, with its order when not urgency) → keystroke to frame, the slowest keystroke of the query
	WriteMedian float64
	WriteMax    float64
	PeakRSSMB   float64
}

func run(sizes, dir, pg string, keys, writes int, sorts string) error {
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
		paths := []string{path}
		labels := []string{s + " SQLite"}
		if pg != "" {
			u, err := pgRegistry(context.Background(), pg, path, n)
			if err != nil {
				return err
			}
			paths = append(paths, u)
			labels = append(labels, s+" PostgreSQL")
		}
		for i, p := range paths {
			cmd := exec.Command(self, "-child", p, "-keys", strconv.Itoa(keys), "-writes", strconv.Itoa(writes), "-sorts", sorts)
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("measuring %s: %w", labels[i], err)
			}
			var r result
			if err := json.Unmarshal(out, &r); err != nil {
				return fmt.Errorf("child output %q: %w", out, err)
			}
			rs = append(rs, r)
			names = append(names, labels[i])
		}
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	row := func(label string, f func(r result) string) {
		fmt.Fprintf(w, "%-46s", label)
		for _, r := range rs {
			fmt.Fprintf(w, " %20s", f(r))
		}
		fmt.Fprintln(w)
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " ms" }
	fmt.Fprintf(w, "%-46s", "")
	for _, n := range names {
		fmt.Fprintf(w, " %20s", n)
	}
	fmt.Fprintln(w)
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
		row(fmt.Sprintf("filter %s (< 100 ms)", q), func(r result) string { return ms(r.Filter[q]) })
	}
	row("external write → screen median", func(r result) string { return ms(r.WriteMedian) })
	row("external write → screen max", func(r result) string { return ms(r.WriteMax) })
	row("peak RSS (< 100 MB)", func(r result) string { return strconv.FormatFloat(r.PeakRSSMB, 'f', 1, 64) + " MB" })
	stores := 1
	if pg != "" {
		stores = 2
	}
	for i := range stores {
		if last := len(rs) - stores + i; last > i {
			fmt.Fprintf(w, "peak RSS %s vs %s: %.2f×\n", names[last], names[i], rs[last].PeakRSSMB/rs[i].PeakRSSMB)
		}
	}
	return nil
}

// pgRegistry returns the URL of size n's PostgreSQL registry on the server
// of base: database p9_<n>, created when missing, and the SQLite registry at
// path copied into it when it is empty (timed, on stderr). Errors: the
// server's, or the copy's.
func pgRegistry(ctx context.Context, base, path string, n int) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("-pg %q: %w", base, err)
	}
	name := "p9_" + strconv.Itoa(n)
	raw, err := sql.Open("pgx", base)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	var exists bool
	if err := raw.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("-pg %s: %w", store.RedactURL(base), err)
	}
	if !exists {
		if _, err := raw.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	u.Path = "/" + name
	dst, err := store.Open(ctx, u.String(), store.Options{})
	if err != nil {
		return "", err
	}
	defer dst.Close()
	var have int64
	if err := dst.View(ctx, func(tx core.Tx) error {
		c, _, err := tx.(core.WindowTx).CountWindow(core.WindowQuery{Entity: core.EntityTask}, -1)
		have = c
		return err
	}); err != nil {
		return "", err
	}
	if have > 0 {
		fmt.Fprintf(os.Stderr, "reusing %s (%d tasks)\n", name, have)
		return u.String(), analyze(ctx, u.String())
	}
	src, err := store.Open(ctx, path, store.Options{MustExist: true, ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer src.Close()
	start := time.Now()
	fmt.Fprintf(os.Stderr, "copying %s into PostgreSQL %s…\n", path, name)
	if _, err := store.CopyToPostgres(ctx, src, dst, "p9"); err != nil {
		return "", fmt.Errorf("copy %s into %s: %w", path, name, err)
	}
	fmt.Fprintf(os.Stderr, "copied in %s\n", time.Since(start).Round(time.Millisecond))
	return u.String(), analyze(ctx, u.String())
}

// analyze runs VACUUM (ANALYZE) on the registry at u (PostgreSQL), as
// `clawpit migrate` does after its copy and autovacuum would within minutes:
// the planner sees the copied rows, and index-only counts need no heap
// visits. The measurement starts at once. Errors: the server's.
func analyze(ctx context.Context, u string) error {
	db, err := store.Open(ctx, u, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.VacuumAnalyze(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "VACUUM (ANALYZE) %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// writeTasks is the other host: for each label read from in (one a line) it
// creates and starts a task of that label in the registry at path, then
// writes "ok" to out once the start has committed. Errors: the store's.
func writeTasks(ctx context.Context, path string, in io.Reader, out io.Writer) error {
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	// The tasks this writer starts run until it stops: then they succeed,
	// so the cached registry's running set, the top of the urgency order
	// the next run watches, stays the same from run to run.
	var started []string
	defer func() {
		if err := finishWrites(ctx, reg, started); err != nil {
			fmt.Fprintln(os.Stderr, "p9 writer:", err)
		}
	}()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		t, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: sc.Text()}, core.ActorRuntime)
		if err != nil {
			return err
		}
		started = append(started, t.ID)
		if _, _, err := reg.StartTask(ctx, t.ID, "", core.ActorRuntime); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(out, "ok"); err != nil {
			return err
		}
	}
	return sc.Err()
}

// finishWrites marks the writer's tasks (ids; nil: every running one an
// earlier run left, killed before it could) succeeded.
func finishWrites(ctx context.Context, reg *core.Registry, ids []string) error {
	if ids == nil {
		running, err := reg.ListTasks(ctx, core.TaskFilter{Statuses: []core.TaskStatus{core.TaskRunning}, Runtime: core.RuntimeCLI})
		if err != nil {
			return err
		}
		for _, t := range running {
			if strings.HasPrefix(t.Label, "p9-write-") {
				ids = append(ids, t.ID)
			}
		}
	}
	for _, id := range ids {
		if _, _, err := reg.FinishTask(ctx, id, core.Finish{Status: core.TaskSucceeded}, core.ActorRuntime); err != nil {
			return fmt.Errorf("finish %s: %w", id, err)
		}
	}
	return nil
}

// driver runs the console model like Bubble Tea's loop, without a terminal.
type driver struct {
	m     tea.Model
	msgs  chan tea.Msg
	last  string
	stop  bool
	trace bool // CLAWPIT_P9_TRACE: each filter keystroke's time on stderr
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

func measure(path string, keys, writes int, sorts []string) (result, error) {
	ctx := context.Background()
	var r result
	// An older registry migrates on its first open: timed apart.
	mstart := time.Now()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return r, err
	}
	r.MigrateMs = ms(time.Since(mstart))
	// The writes of a run killed before its writer stopped still run.
	err = finishWrites(ctx, core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds()), nil)
	db.Close()
	if err != nil {
		return r, err
	}
	start := time.Now()
	db, err = store.Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return r, err
	}
	defer db.Close()
	trace := os.Getenv("CLAWPIT_P9_TRACE") != ""
	src := &timedSource{WindowSource: feed.NewStoreSource(db).(feed.WindowSource), trace: trace}
	m := tui.New(tui.Options{Source: src, Keys: tui.DefaultKeyMap(), ReadOnly: true, Operator: "bench@p9"})
	d := &driver{m: m, msgs: make(chan tea.Msg, 4096), trace: trace}
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
	all := view.SortNames(core.EntityTask)
	at := 0 // the pane's order: all[at]; `s` moves to the next
	for _, sort := range sorts {
		for ; all[at] != sort; at = (at + 1) % len(all) {
			d.send(key('s', "s"))
			if err := d.until(180*time.Second, func(_ string, msg tea.Msg) bool { return isWindow(msg) }); err != nil {
				return r, fmt.Errorf("sort %s: %w", sort, err)
			}
		}
		d.drain(200 * time.Millisecond)
		if err := timeFilters(d, r.Filter, sort); err != nil {
			return r, err
		}
	}
	// Back to the default order (urgency) and its top, where a new task
	// shows.
	for ; at != 0; at = (at + 1) % len(all) {
		d.send(key('s', "s"))
		if err := d.until(180*time.Second, func(_ string, msg tea.Msg) bool { return isWindow(msg) }); err != nil {
			return r, err
		}
	}
	d.send(key('g', "g"))
	d.drain(200 * time.Millisecond)

	// External writes from another process (another host's clawpit, on
	// PostgreSQL), seen through the poll: timed from its commit.
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	wcmd := exec.Command(self, "-writer", path)
	wcmd.Env = append(os.Environ(), "CLAWPIT_HOST=p9-writer")
	wcmd.Stderr = os.Stderr
	win, err := wcmd.StdinPipe()
	if err != nil {
		return r, err
	}
	wout, err := wcmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	if err := wcmd.Start(); err != nil {
		return r, err
	}
	defer func() { win.Close(); wcmd.Wait() }()
	acks := bufio.NewScanner(wout)
	var ws []float64
	for i := range writes {
		label := fmt.Sprintf("p9-write-%d-%d", os.Getpid(), i)
		if _, err := fmt.Fprintln(win, label); err != nil {
			return r, err
		}
		if !acks.Scan() {
			return r, fmt.Errorf("write %d: writer stopped: %w", i, errors.Join(acks.Err(), io.ErrUnexpectedEOF))
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
	feed.WindowSource
	mu    sync.Mutex
	times []float64
	trace bool // CLAWPIT_P9_TRACE: every read (window or count) on stderr
}

func (s *timedSource) Window(ctx context.Context, req feed.WindowRequest, sink feed.Sink) (feed.WindowResult, error) {
	t := time.Now()
	res, err := s.WindowSource.Window(ctx, req, sink)
	if s.trace {
		fmt.Fprintf(os.Stderr, "p9: read at %s: query %q count %v (matched only %v) after %d before %d anchor %q key %q: %d rows, more before/after %v/%v, %.1f ms, err %v\n",
			t.Format("05.000"), req.Query, req.Count, req.MatchedOnly, req.After, req.Before, req.Anchor, req.AnchorKey,
			res.Page.Rows, res.Page.MoreBefore, res.Page.MoreAfter, ms(time.Since(t)), err)
	}
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

// timeFilters types each query of the filter, one key at a time, each waited
// for, into out (its slowest keystroke, ms) under the query's name: quoted,
// with its order unless urgency.
func timeFilters(d *driver, out map[string]float64, sort string) error {
	for _, q := range []string{"failed", "task 4242", "zzz", "sess-4242", "cron"} {
		d.send(key('/', "/"))
		worst := 0.0
		for _, c := range q {
			t := time.Now()
			d.send(key(c, string(c)))
			// A keystroke that narrows rows already found reads nothing;
			// one that reads shows "searching…" until its window is in.
			if strings.Contains(d.last, "searching…") {
				if err := d.until(180*time.Second, func(f string, _ tea.Msg) bool { return !strings.Contains(f, "searching…") }); err != nil {
					return fmt.Errorf("filter %q: %w", q, err)
				}
			}
			worst = max(worst, ms(time.Since(t)))
			if d.trace {
				fmt.Fprintf(os.Stderr, "p9: key %q at %s: %.1f ms to its frame\n", c, t.Format("05.000"), ms(time.Since(t)))
			}
		}
		name := strconv.Quote(q)
		if sort != "urgency" {
			name += " in " + sort + " order"
		}
		out[name] = worst
		d.send(tea.KeyPressMsg{Code: tea.KeyEnter})
		d.send(tea.KeyPressMsg{Code: tea.KeyEscape})
		if err := d.until(180*time.Second, func(_ string, msg tea.Msg) bool { return isWindow(msg) }); err != nil {
			return err
		}
		d.drain(200 * time.Millisecond)
	}
	return nil
}
