// Command soak is the crash/race soak of the registry (bench/README.md Reliability:
// races and crashes).
//
//	go run -tags sqlite_fts5 ./bench/soak [-duration 60s] [-writers 4] [-kill-every 300ms] [-bin PATH] [-keep]
//	go run -tags sqlite_fts5 ./bench/soak -pg postgres://… [-hosts 3] [-writers 6]
//	go run -tags sqlite_fts5 ./bench/soak -check registry.db|postgres://…
//
// With -pg the registry is PostgreSQL: a new schema soak_<random> in that
// database (dropped at the end unless -keep), and -hosts hosts share it:
// writer i runs with CLAWPIT_HOST=soak-host-(i mod hosts), and each host
// runs its own daemon (sweeps from every host at once, killed like the
// writers). -listen-db gives the daemons and writers a direct URL for
// LISTEN when -pg goes through a pooler.
//
// It builds clawpit (or uses -bin) and, on a fresh registry, runs -writers
// concurrent writer loops, each starting one clawpit CLI process after
// another: register a run and create and start its mirrored task, `run kill`,
// `run complete --outcome ok|error|timeout`, `task cancel`, `task finish`,
// `task progress` and `sweep`, on ids drawn from a shared pool so processes
// collide on the same runs and tasks. A `clawpit daemon` (sweeper every
// 100 ms, watchdog, --notify-cmd) runs beside them. A killer sends SIGKILL,
// about every -kill-every (uniformly 0–2×), to a random live CLI writer or to
// the daemon (restarted at once), so processes die at every point of their
// transactions.
//
// At the end it stops everything, runs one final sweep, and checks the
// invariants on the database:
//   - no task queued or running whose mirrored run has ended (after a sweep);
//   - no succeeded task downgraded: no applied journal row from succeeded to
//     anything else, and every task the journal made succeeded still is;
//   - every lost → succeeded upgrade cleared the error;
//   - no run with a negative pending_approval_waits;
//   - PRAGMA integrity_check is ok (SQLite).
//
// It prints "ops=… kills=… violations=…" with the breakdown, and exits 1 when
// any invariant is violated.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/bench/internal/benchbin"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/mattn/go-sqlite3"
)

func main() {
	duration := flag.Duration("duration", 60*time.Second, "how long the writers run")
	writers := flag.Int("writers", 4, "concurrent writer loops (each one CLI process at a time)")
	killEvery := flag.Duration("kill-every", 300*time.Millisecond, "mean interval between SIGKILLs (0 disables)")
	bin := flag.String("bin", "", "clawpit binary to use (default: go build)")
	keep := flag.Bool("keep", false, "keep the temporary directory (and print it)")
	only := flag.String("check", "", "only check the invariants of this registry (file or PostgreSQL URL)")
	pg := flag.String("pg", "", "PostgreSQL database URL: run on a new schema there instead of a SQLite file")
	hosts := flag.Int("hosts", 1, "with -pg: hosts (CLAWPIT_HOST) sharing the registry, each with its own daemon")
	listenDB := flag.String("listen-db", "", "with -pg: --listen-db for every process (a direct URL when -pg is a pooler)")
	flag.Parse()
	if *only != "" {
		v, report, err := check(*only)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		fmt.Printf("%sviolations=%d\n", report, v)
		if v > 0 {
			os.Exit(1)
		}
		return
	}
	v, err := run(*duration, *writers, *killEvery, *bin, *keep, *pg, max(1, *hosts), *listenDB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if v > 0 {
		os.Exit(1)
	}
}

// soak is one run's shared state.
type soak struct {
	bin, db, home string
	hosts         int
	listenDB      string

	mu      sync.Mutex
	runs    []string          // run ids, newest last
	tasks   []string          // task ids, newest last
	live    map[int]*exec.Cmd // running CLI writers by pid
	daemons map[int]*exec.Cmd // running daemons by host

	ops, failed, killsCLI, killsDaemon atomic.Int64 // kills: SIGKILLs sent
	landedCLI, landedDaemon            atomic.Int64 // processes that died of them
	exitCodes                          sync.Map     // "op exit N" → *atomic.Int64
}

func run(duration time.Duration, writers int, killEvery time.Duration, bin string, keep bool, pg string, hosts int, listenDB string) (int, error) {
	dir, err := os.MkdirTemp("", "clawpit-soak-")
	if err != nil {
		return 0, err
	}
	if keep {
		fmt.Println("dir:", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if bin, err = benchbin.Build(dir, bin); err != nil {
		return 0, err
	}
	s := &soak{bin: bin, db: filepath.Join(dir, "registry.db"), home: filepath.Join(dir, "home"), live: map[int]*exec.Cmd{},
		daemons: map[int]*exec.Cmd{}, hosts: 1, listenDB: listenDB}
	if pg != "" {
		loc, drop, err := pgSchema(pg, listenDB)
		if err != nil {
			return 0, err
		}
		if keep {
			fmt.Println("registry:", loc.db)
		} else {
			defer drop()
		}
		s.db, s.listenDB, s.hosts = loc.db, loc.listen, hosts
	}
	if _, _, err := s.cli(context.Background(), 0, "init", "session", "open", "soak-child"); err != nil {
		return 0, fmt.Errorf("first write: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.writer(ctx, w%s.hosts)
		}()
	}
	var daemons sync.WaitGroup
	for h := 0; h < s.hosts; h++ {
		daemons.Add(1)
		go func() {
			defer daemons.Done()
			s.daemonLoop(ctx, h)
		}()
	}
	if killEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.killer(ctx, killEvery)
		}()
	}
	start := time.Now()
	wg.Wait()
	daemons.Wait()
	elapsed := time.Since(start)

	// Settle: one final sweep, then check.
	if _, _, err := s.cli(context.Background(), 0, "final", "sweep"); err != nil {
		return 0, fmt.Errorf("final sweep: %w", err)
	}
	violations, report, err := check(s.db)
	if err != nil {
		return 0, err
	}
	store := "SQLite"
	if pg != "" {
		store = fmt.Sprintf("PostgreSQL, %d hosts (a daemon each)", s.hosts)
	}
	fmt.Printf("soak: %s, %s, %d writers, SIGKILL every ~%s\n", elapsed.Round(time.Second), store, writers, killEvery)
	fmt.Printf("ops=%d (%.0f/s; %d exited non-zero, kills included) kills=%d (cli %d, daemon %d; %d sent, some to processes already exiting) violations=%d\n",
		s.ops.Load(), float64(s.ops.Load())/elapsed.Seconds(), s.failed.Load(),
		s.landedCLI.Load()+s.landedDaemon.Load(), s.landedCLI.Load(), s.landedDaemon.Load(),
		s.killsCLI.Load()+s.killsDaemon.Load(), violations)
	var codes []string
	s.exitCodes.Range(func(k, v any) bool {
		codes = append(codes, fmt.Sprintf("%s: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	sort.Strings(codes)
	if len(codes) > 0 {
		fmt.Println("non-zero exits:", strings.Join(codes, ", "))
	}
	fmt.Print(report)
	return violations, nil
}

// cli runs one clawpit command as a killable writer; it returns stdout and
// the exit code (-1 when killed by a signal).
func (s *soak) cli(ctx context.Context, host int, op string, args ...string) (string, int, error) {
	cmd := exec.Command(s.bin, append([]string{"--db", s.db}, args...)...)
	cmd.Env = s.env(host)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return "", 0, err
	}
	s.mu.Lock()
	s.live[cmd.Process.Pid] = cmd
	s.mu.Unlock()
	err := cmd.Wait()
	s.mu.Lock()
	delete(s.live, cmd.Process.Pid)
	s.mu.Unlock()
	s.ops.Add(1)
	code := cmd.ProcessState.ExitCode()
	if err != nil {
		s.failed.Add(1)
		key := fmt.Sprintf("%s exit %d", op, code)
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			key = fmt.Sprintf("%s %s", op, ws.Signal())
			if ws.Signal() == syscall.SIGKILL {
				s.landedCLI.Add(1)
			}
		}
		c, _ := s.exitCodes.LoadOrStore(key, new(atomic.Int64))
		c.(*atomic.Int64).Add(1)
		if op == "init" || op == "final" {
			return "", code, fmt.Errorf("%v: %v: %s", args, err, errb.String())
		}
	}
	return strings.TrimSpace(out.String()), code, nil
}

func (s *soak) pick(pool []string) string {
	if len(pool) == 0 {
		return ""
	}
	// Favour recent ids, so processes collide on live runs and tasks.
	n := min(len(pool), 12)
	return pool[len(pool)-1-rand.IntN(n)]
}

// env is the environment of a process on host (CLAWPIT_HOST soak-host-N
// on PostgreSQL).
func (s *soak) env(host int) []string {
	env := append(os.Environ(), "CLAWPIT_HOME="+s.home, "USER=soak")
	if s.hosts > 1 || s.listenDB != "" {
		env = append(env, fmt.Sprintf("CLAWPIT_HOST=soak-host-%d", host), "CLAWPIT_HOME="+s.home+fmt.Sprint(host))
	}
	if s.listenDB != "" {
		env = append(env, "CLAWPIT_LISTEN_DB="+s.listenDB)
	}
	return env
}

// writer runs CLI operations as host until ctx ends.
func (s *soak) writer(ctx context.Context, host int) {
	for ctx.Err() == nil {
		s.mu.Lock()
		runID, taskID := s.pick(s.runs), s.pick(s.tasks)
		s.mu.Unlock()
		switch r := rand.IntN(100); {
		case r < 20 || runID == "":
			id := fmt.Sprintf("run-%d-%d", time.Now().UnixNano(), rand.IntN(1000))
			if _, code, _ := s.cli(ctx, host, "run register", "run", "register", id, "--session", "soak-child", "--inactivity", "2s"); code != 0 {
				continue
			}
			s.mu.Lock()
			s.runs = append(s.runs, id)
			s.mu.Unlock()
			tid, code, _ := s.cli(ctx, host, "task create", "task", "create", "--runtime", "subagent", "--run-id", id,
				"--child-session", "soak-child", "--session", "soak-owner", "--label", id)
			if code != 0 || tid == "" {
				continue
			}
			s.mu.Lock()
			s.tasks = append(s.tasks, tid)
			s.mu.Unlock()
			s.cli(ctx, host, "task start", "task", "start", tid)
		case r < 35:
			s.cli(ctx, host, "run kill", "run", "kill", runID)
		case r < 55:
			outcome := []string{"ok", "ok", "error", "timeout"}[rand.IntN(4)]
			s.cli(ctx, host, "run complete", "run", "complete", runID, "--outcome", outcome)
		case r < 62 && taskID != "":
			s.cli(ctx, host, "task cancel", "task", "cancel", taskID)
		case r < 72 && taskID != "":
			st := []string{"succeeded", "failed", "timed_out"}[rand.IntN(3)]
			s.cli(ctx, host, "task finish", "task", "finish", taskID, "--status", st)
		case r < 80 && taskID != "":
			s.cli(ctx, host, "task progress", "task", "progress", taskID)
		case r < 88 && runID != "":
			s.cli(ctx, host, "approval request", "approval", "request", "--session", "soak-child", "--run-id", runID,
				"--tool", "Bash", "--command", "git push", "--expires-in", "1s")
		default:
			s.cli(ctx, host, "sweep", "sweep")
		}
	}
}

// daemonLoop keeps host's daemon running until ctx ends, restarting it
// after each kill.
func (s *soak) daemonLoop(ctx context.Context, host int) {
	for ctx.Err() == nil {
		cmd := exec.Command(s.bin, "--db", s.db, "daemon", "--sweep-interval", "100ms", "--watchdog-interval", "100ms",
			"--grace", "2s", "--notify-cmd", "cat >/dev/null")
		cmd.Env = s.env(host)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "soak: daemon:", err)
			return
		}
		s.mu.Lock()
		s.daemons[host] = cmd
		s.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				s.landedDaemon.Add(1)
			}
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
		s.mu.Lock()
		delete(s.daemons, host)
		s.mu.Unlock()
	}
}

// killer sends SIGKILL to a random writer or the daemon.
func (s *soak) killer(ctx context.Context, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(rand.Int64N(int64(2 * every)))):
		}
		s.mu.Lock()
		var victim *exec.Cmd
		daemon := false
		if d, ok := s.daemons[rand.IntN(s.hosts)]; ok && rand.IntN(5) == 0 {
			victim, daemon = d, true
		} else if len(s.live) > 0 {
			pids := make([]int, 0, len(s.live))
			for pid := range s.live {
				pids = append(pids, pid)
			}
			victim = s.live[pids[rand.IntN(len(pids))]]
		}
		s.mu.Unlock()
		if victim == nil {
			continue
		}
		if err := victim.Process.Signal(syscall.SIGKILL); err != nil {
			continue // it had already exited
		}
		if daemon {
			s.killsDaemon.Add(1)
		} else {
			s.killsCLI.Add(1)
		}
	}
}

// pgLoc is a soak registry on PostgreSQL: its URL and its --listen-db.
type pgLoc struct{ db, listen string }

// pgSchema creates schema soak_<random> in the database at base and returns
// base (and listen, when set) with search_path set to it, and a func that
// drops it.
func pgSchema(base, listen string) (pgLoc, func(), error) {
	schema := fmt.Sprintf("soak_%d", rand.Int64N(1<<40))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return pgLoc{}, nil, err
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return pgLoc{}, nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	drop := func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
	with := func(u string) (string, error) {
		if u == "" {
			return "", nil
		}
		pu, err := url.Parse(u)
		if err != nil {
			return "", err
		}
		q := pu.Query()
		q.Set("search_path", schema)
		pu.RawQuery = q.Encode()
		return pu.String(), nil
	}
	var loc pgLoc
	if loc.db, err = with(base); err == nil {
		loc.listen, err = with(listen)
	}
	if err != nil {
		drop()
		return pgLoc{}, nil, err
	}
	return loc, drop, nil
}

// check counts invariant violations and describes them.
func check(path string) (int, string, error) {
	driver, dsn := "sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000"
	if strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://") {
		driver, dsn = "pgx", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return 0, "", err
	}
	defer db.Close()
	var b strings.Builder
	total := 0
	integrity := "ok"
	if driver == "sqlite3" {
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil {
			return 0, "", err
		}
	} else {
		integrity = "n/a (PostgreSQL)"
	}
	if integrity != "ok" && driver == "sqlite3" {
		total++
		fmt.Fprintf(&b, "VIOLATION integrity_check: %s\n", integrity)
	}
	var counts []string
	for _, q := range []struct{ name, sql string }{
		{"tasks", "SELECT COUNT(*) FROM tasks"},
		{"runs", "SELECT COUNT(*) FROM runs"},
		{"events", "SELECT COUNT(*) FROM events"},
		{"lost→succeeded upgrades", "SELECT COUNT(*) FROM events WHERE entity = 'task' AND from_state = 'lost' AND to_state = 'succeeded' AND applied = 1"},
		{"refused downgrades of succeeded", "SELECT COUNT(*) FROM events WHERE entity = 'task' AND from_state = 'succeeded' AND to_state <> 'succeeded' AND applied = 0"},
	} {
		var n int64
		if err := db.QueryRow(q.sql).Scan(&n); err != nil {
			return 0, "", fmt.Errorf("%s: %w", q.name, err)
		}
		counts = append(counts, fmt.Sprintf("%s %d", q.name, n))
	}
	fmt.Fprintf(&b, "registry: %s; integrity_check %s\n", strings.Join(counts, ", "), integrity)
	for _, inv := range []struct{ name, sql string }{
		{"active task whose run has ended (after the final sweep)",
			`SELECT t.id FROM tasks t JOIN runs r ON r.run_id = t.run_id
			  WHERE t.status IN ('queued','running') AND r.ended_at IS NOT NULL`},
		{"succeeded downgraded (applied journal row leaving succeeded)",
			`SELECT entity_id FROM events WHERE entity = 'task' AND from_state = 'succeeded'
			  AND to_state <> 'succeeded' AND to_state <> '' AND applied = 1`},
		{"made succeeded by the journal but no longer succeeded",
			`SELECT DISTINCT e.entity_id FROM events e JOIN tasks t ON t.id = e.entity_id
			  WHERE e.entity = 'task' AND e.to_state = 'succeeded' AND e.applied = 1 AND t.status <> 'succeeded'`},
		{"lost → succeeded upgrade kept an error",
			`SELECT DISTINCT t.id FROM events e JOIN tasks t ON t.id = e.entity_id
			  WHERE e.entity = 'task' AND e.from_state = 'lost' AND e.to_state = 'succeeded' AND e.applied = 1
			    AND t.error <> ''`},
		{"negative pending_approval_waits", `SELECT run_id FROM runs WHERE pending_approval_waits < 0`},
	} {
		rows, err := db.Query(inv.sql)
		if err != nil {
			return 0, "", fmt.Errorf("%s: %w", inv.name, err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return 0, "", err
			}
			ids = append(ids, id)
		}
		err = errors.Join(rows.Err(), rows.Close())
		if err != nil {
			return 0, "", err
		}
		if len(ids) > 0 {
			total += len(ids)
			fmt.Fprintf(&b, "VIOLATION %s: %d (%s)\n", inv.name, len(ids), strings.Join(ids[:min(len(ids), 5)], ", "))
		}
	}
	return total, b.String(), nil
}
