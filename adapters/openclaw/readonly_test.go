package openclaw

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain/sweep"
)

// snapshot is the state directory as bytes: every file's name, size and
// sha256 (the database, and any -wal, -shm or -journal beside it).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %d %s", rel, len(data), hex.EncodeToString(sum[:8])))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

type nopSink struct{ n int }

func (s *nopSink) Task(*core.Task)          { s.n++ }
func (s *nopSink) Run(*core.Run)            { s.n++ }
func (s *nopSink) Approval(*core.Approval)  { s.n++ }
func (s *nopSink) Job(*core.Job)            {}
func (s *nopSink) Alert(*core.Notification) { s.n++ }
func (s *nopSink) Gone(feed.Kind, string)   {}

// readEverything runs what the console, the audit and the preview read.
func readEverything(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	d, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	src := NewSource(d)
	defer src.Close()
	if _, err := src.DataVersion(ctx); err != nil {
		t.Fatal(err)
	}
	var s nopSink
	if _, err := src.Load(ctx, feed.LoadRequest{Full: true}, &s); err != nil {
		t.Fatal(err)
	}
	if s.n == 0 {
		t.Fatal("console loaded nothing")
	}
	for _, k := range []struct {
		kind feed.Kind
		id   string
	}{{feed.KindTask, "t-90444-subagent"}, {feed.KindRun, "r-killed"}, {feed.KindApproval, "a-pending"}, {feed.KindAlert, "1"}} {
		if _, err := src.Detail(ctx, k.kind, k.id); err != nil {
			t.Fatalf("detail %v %s: %v", k.kind, k.id, err)
		}
	}
	// The source owns d (it may have reopened it): audit and preview open
	// their own handle, as the CLI does.
	d2, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if _, err := d2.Audit(ctx, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Preview(ctx, Options{}, func(sweep.Action) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// The console, the audit and the preview leave the state directory byte for
// byte as they found it, in OpenClaw's WAL mode (no -wal or -shm appears when
// OpenClaw has none) and in rollback-journal mode (no -journal).
func TestReadersLeaveFilesUntouched(t *testing.T) {
	for _, wal := range []bool{true, false} {
		t.Run(fmt.Sprintf("wal=%v", wal), func(t *testing.T) {
			dir, _ := shapesDB(t, wal)
			before := snapshot(t, dir)
			readEverything(t, dir)
			if after := snapshot(t, dir); after != before {
				t.Fatalf("state dir changed:\n--- before\n%s\n--- after\n%s", before, after)
			}
		})
	}
}

// Why a WAL database without -shm is read as immutable: SQLite's plain
// mode=ro creates -wal and -shm beside it and leaves them there after
// closing. If this test starts failing, SQLite changed and the immutable
// switch in OpenFile may be revisited.
func TestPlainReadOnlyOnWALCreatesFiles(t *testing.T) {
	_, path := shapesDB(t, true)
	db, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM task_runs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := os.Stat(path + "-shm"); err != nil {
		t.Fatalf("plain mode=ro left no -shm (%v): SQLite no longer needs the immutable switch", err)
	}
}

// TestMain lets the test binary act as OpenClaw's gateway writing to its
// registry (a second process): see runWriter.
func TestMain(m *testing.M) {
	if p := os.Getenv("CLAWPIT_OPENCLAW_WRITER"); p != "" {
		if err := runWriter(p); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runWriter opens path in WAL mode as OpenClaw does, inserts and updates 150
// task rows, one transaction each, prints "written", waits for a line on
// stdin, then closes (checkpointing and removing -wal and -shm).
func runWriter(path string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	for i := 0; i < 150; i++ {
		if i == 1 {
			fmt.Println("open") // -wal and -shm exist now
		}
		at := fixtureNow.UnixMilli() + int64(i)
		if _, err := db.Exec(`INSERT INTO task_runs(task_id, runtime, owner_key, scope_kind, task, status, delivery_status, notify_policy, created_at, last_event_at)
			VALUES (?, 'subagent', 'agent:main:main', 'session', 'written while read', 'running', 'pending', 'done_only', ?, ?)`, fmt.Sprintf("w-%03d", i), at, at); err != nil {
			return err
		}
		if _, err := db.Exec(`UPDATE task_runs SET status='succeeded', ended_at=?, cleanup_after=? WHERE task_id=?`, at+1, at+RetentionMs, fmt.Sprintf("w-%03d", i-1)); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	fmt.Println("written")
	bufio.NewReader(os.Stdin).ReadString('\n')
	return db.Close()
}

// writeWhile runs the writer process on a copy of the fixture in dir and,
// when read is true, reads everything over and over while it writes. It
// returns the state directory's snapshot after the writer closed.
func writeWhile(t *testing.T, dir string, read bool) (string, int) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(DBFile))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CLAWPIT_OPENCLAW_WRITER="+path)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "open" {
		t.Fatalf("writer did not start: %q", lines.Text())
	}
	done := make(chan struct{})
	go func() {
		for lines.Scan() {
			if lines.Text() == "written" {
				close(done)
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	reads := 0
	for read {
		readEverything(t, dir)
		reads++
		select {
		case <-done:
			read = false
		default:
		}
	}
	<-done
	io.WriteString(stdin, "\n")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	return snapshot(t, dir), reads
}

// While a second process writes to the registry (WAL mode, as OpenClaw's
// gateway), the readers neither block it nor change what it leaves: the
// state directory ends byte for byte as it does when the writer runs alone.
func TestReadersWhileAnotherProcessWrites(t *testing.T) {
	alone, _ := shapesDB(t, true)
	read, _ := shapesDB(t, true)
	if snapshot(t, alone) != snapshot(t, read) {
		t.Fatal("fixture is not deterministic")
	}
	want, _ := writeWhile(t, alone, false)
	got, reads := writeWhile(t, read, true)
	if reads == 0 {
		t.Fatal("no read overlapped the writes")
	}
	if got != want {
		t.Fatalf("state dir differs from the writer-alone run after %d reads:\n--- with readers\n%s\n--- writer alone\n%s", reads, got, want)
	}
	t.Logf("%d full reads overlapped the writer", reads)
}

// A WAL registry read as immutable (OpenClaw not running) is reopened
// normally once OpenClaw opens it, and the console then sees its writes.
func TestSourceReopensWhenOpenClawStarts(t *testing.T) {
	ctx := context.Background()
	dir, path := shapesDB(t, true)
	d, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Immutable {
		t.Fatal("a WAL registry without -shm should be read as immutable")
	}
	src := NewSource(d)
	defer src.Close()
	v1, err := src.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`INSERT INTO task_runs(task_id, runtime, owner_key, scope_kind, task, status, delivery_status, notify_policy, created_at)
		VALUES ('t-new','subagent','o','session','new','queued','pending','done_only',1)`); err != nil {
		t.Fatal(err)
	}
	v2, err := src.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v1 == v2 {
		t.Fatal("data version did not change after OpenClaw wrote")
	}
	if src.db().Immutable {
		t.Fatal("source still reads immutable while OpenClaw has the registry open")
	}
	var got []string
	sink := &taskIDs{ids: &got}
	if _, err := src.Load(ctx, feed.LoadRequest{Full: true}, sink); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(got, ","), "t-new") {
		t.Fatalf("console does not see OpenClaw's new row: %v", got)
	}
	// Each further commit changes the version.
	for i := 0; i < 3; i++ {
		va, err := src.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`UPDATE task_runs SET last_event_at = ? WHERE task_id = 't-new'`, 100+i); err != nil {
			t.Fatal(err)
		}
		vb, err := src.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if va == vb {
			t.Fatalf("commit %d not noticed", i)
		}
	}
	// OpenClaw exits. clawpit holds no connection between reads, so
	// OpenClaw's close is the last one and removes -wal and -shm; the
	// console goes back to immutable reads and creates neither.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suf); err == nil {
			t.Fatalf("%s left behind after OpenClaw closed while the console was open", suf)
		}
	}
	before := snapshot(t, dir)
	if _, err := src.DataVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if !src.db().Immutable {
		t.Fatal("source did not go back to immutable reads after OpenClaw closed")
	}
	if _, err := src.Load(ctx, feed.LoadRequest{Full: true}, &nopSink{}); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, dir); after != before {
		t.Fatalf("console changed the state dir after OpenClaw closed:\n%s\n---\n%s", before, after)
	}
}

type taskIDs struct {
	nopSink
	ids *[]string
}

func (s *taskIDs) Task(t *core.Task) { *s.ids = append(*s.ids, t.ID) }

// The handle refuses writes itself (mode=ro and query_only), in both the
// immutable and the normal read mode.
func TestHandleRefusesWrites(t *testing.T) {
	for _, wal := range []bool{true, false} {
		dir, _ := shapesDB(t, wal)
		d, err := Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"DELETE FROM task_runs",
			"UPDATE task_runs SET status = 'lost'",
			"CREATE TABLE clawpit_was_here(x)",
		} {
			if _, err := d.db.Exec(q); err == nil {
				t.Errorf("wal=%v: %s succeeded on a read-only handle", wal, q)
			}
		}
		d.Close()
	}
}
