// Package openclaw reads OpenClaw's own task registry (the SQLite database at
// $OPENCLAW_STATE_DIR/state/openclaw.sqlite, schema v18) strictly read-only:
// the rows clawpit's console shows, OpenClaw's audit findings plus the ones
// clawpit knows it misses, and a row-for-row preview of what
// `openclaw tasks maintenance --apply` would do. Nothing here ever writes.
//
// Every query reads through an index OpenClaw created (idx_task_runs_status,
// idx_task_runs_cleanup_after, idx_task_runs_last_event_at, the subagent_runs
// and operator_approvals primary keys and idx_operator_approvals_status_expiry)
// so cost grows with active and due rows, not with history. The one exception
// is the audit's scan for delivery_failed and inconsistent_timestamps on
// terminal rows, which OpenClaw's schema indexes nothing for: it streams
// (constant memory) and is said so in the README.
package openclaw

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawpit/clawpit/core"
	_ "github.com/mattn/go-sqlite3" // database/sql driver "sqlite3"
)

// DBFile is the registry's path under the state directory.
const DBFile = "state/openclaw.sqlite"

// StateDir resolves OpenClaw's state directory: dir when non-empty, else
// $OPENCLAW_STATE_DIR, else ~/.openclaw (OpenClaw's default).
func StateDir(dir string, getenv func(string) string) string {
	if dir != "" {
		return dir
	}
	if d := getenv("OPENCLAW_STATE_DIR"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".openclaw")
}

// Columns clawpit reads, per table. A table present without one of these is
// refused with a sentence naming the column.
var (
	taskColumns = []string{"task_id", "runtime", "task_kind", "source_id", "requester_session_key",
		"owner_key", "scope_kind", "child_session_key", "parent_task_id", "agent_id", "run_id", "label",
		"task", "status", "delivery_status", "notify_policy", "created_at", "started_at", "ended_at",
		"last_event_at", "cleanup_after", "last_tool_name", "error", "progress_summary", "terminal_summary", "terminal_outcome"}
	runColumns      = []string{"run_id", "child_session_key", "requester_session_key", "created_at", "payload_json"}
	approvalColumns = []string{"approval_id", "kind", "status", "presentation_json", "source_agent_id",
		"source_session_key", "source_run_id", "source_tool_name", "created_at_ms", "expires_at_ms",
		"updated_at_ms", "decision", "terminal_reason", "resolved_at_ms"}
)

// DB is an open read-only handle on OpenClaw's registry. Safe for concurrent
// use; Close releases it.
type DB struct {
	StateDir string
	Path     string
	// Immutable is true when the database is in WAL mode and OpenClaw has no
	// -shm beside it (no OpenClaw process has it open): SQLite would have to
	// create -wal and -shm to read it, so it is read as immutable instead.
	Immutable bool
	// JournalMode is "wal" or "delete" (from the file header).
	JournalMode string

	db           *sql.DB
	hasRuns      bool
	hasApprovals bool
	hasSessions  bool // session_state_heads
	hasACP       bool // acp_sessions
	cols         map[string][]string
}

// Open opens $stateDir/state/openclaw.sqlite read-only and checks the tables
// and columns clawpit needs. Errors wrap core.ErrInvalid (exit 2) with one
// sentence naming what is missing: the database, task_runs, or a column.
func Open(ctx context.Context, stateDir string) (*DB, error) {
	path := filepath.Join(stateDir, filepath.FromSlash(DBFile))
	return OpenFile(ctx, path, stateDir)
}

// OpenFile opens the database at path (stateDir is where OpenClaw's session
// stores live; it may be empty).
func OpenFile(ctx context.Context, path, stateDir string) (*DB, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, core.Invalidf("no OpenClaw registry at %s (is OPENCLAW_STATE_DIR or --state-dir right?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("openclaw registry %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, core.Invalidf("%s is a directory, not OpenClaw's registry database", path)
	}
	mode, err := journalMode(path)
	if err != nil {
		return nil, err
	}
	d := &DB{StateDir: stateDir, Path: path, JournalMode: mode}
	if mode == "wal" {
		if _, err := os.Stat(path + "-shm"); errors.Is(err, os.ErrNotExist) {
			d.Immutable = true
		}
	}
	d.db, err = sql.Open("sqlite3", dsn(path, d.Immutable))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection, and none kept between reads: while clawpit holds no
	// connection, OpenClaw closing its own is the last close, so SQLite
	// checkpoints and removes -wal and -shm as it would without clawpit.
	d.db.SetMaxOpenConns(1)
	d.db.SetMaxIdleConns(0)
	if err := d.check(ctx); err != nil {
		d.db.Close()
		return nil, err
	}
	return d, nil
}

// dsn is the read-only connection string: mode=ro (the file is opened
// O_RDONLY), query_only (no statement may write), and immutable only when
// no OpenClaw process has the database open (see DB.Immutable).
func dsn(path string, immutable bool) string {
	u := url.URL{Scheme: "file", Path: path}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("_query_only", "true")
	q.Set("_busy_timeout", "5000")
	if immutable {
		q.Set("immutable", "1")
	}
	return u.String() + "?" + q.Encode()
}

// journalMode reads the file header: bytes 18 and 19 are 2 in WAL mode.
func journalMode(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	var h [100]byte
	n, _ := f.ReadAt(h[:], 0)
	if n < 100 || string(h[:16]) != "SQLite format 3\x00" {
		if n == 0 {
			return "", core.Invalidf("%s is empty, not an OpenClaw registry (no task_runs table)", path)
		}
		return "", core.Invalidf("%s is not a SQLite database", path)
	}
	if h[18] == 2 && h[19] == 2 {
		return "wal", nil
	}
	return "delete", nil
}

func (d *DB) check(ctx context.Context) error {
	d.cols = map[string][]string{}
	for _, t := range []string{"task_runs", "subagent_runs", "operator_approvals", "session_state_heads", "acp_sessions"} {
		rows, err := d.db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return fmt.Errorf("read schema of %s: %w", d.Path, err)
		}
		var cs []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return fmt.Errorf("read schema of %s: %w", d.Path, err)
			}
			cs = append(cs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read schema of %s: %w", d.Path, err)
		}
		if len(cs) > 0 {
			d.cols[t] = cs
		}
	}
	if d.cols["task_runs"] == nil {
		return core.Invalidf("%s has no task_runs table: not an OpenClaw task registry (or one older than its task registry)", d.Path)
	}
	need := func(table string, want []string) error {
		have := map[string]bool{}
		for _, c := range d.cols[table] {
			have[c] = true
		}
		var miss []string
		for _, c := range want {
			if !have[c] {
				miss = append(miss, c)
			}
		}
		if len(miss) > 0 {
			return core.Invalidf("%s: table %s lacks column %s that clawpit reads (schema older or newer than v18?)", d.Path, table, strings.Join(miss, ", "))
		}
		return nil
	}
	if err := need("task_runs", taskColumns); err != nil {
		return err
	}
	if d.cols["subagent_runs"] != nil {
		if err := need("subagent_runs", runColumns); err != nil {
			return err
		}
		d.hasRuns = true
	}
	if d.cols["operator_approvals"] != nil {
		if err := need("operator_approvals", approvalColumns); err != nil {
			return err
		}
		d.hasApprovals = true
	}
	d.hasSessions = d.cols["session_state_heads"] != nil
	d.hasACP = d.cols["acp_sessions"] != nil
	return nil
}

// Close releases the handle.
func (d *DB) Close() error { return d.db.Close() }

// Version changes whenever OpenClaw commits: a fingerprint of the size and
// modification time (ns) of the database, its -wal and its -shm. A commit in
// WAL mode grows or rewrites the -wal; a checkpoint rewrites the database.
// (PRAGMA data_version would need a connection held open between polls,
// which would keep OpenClaw's -wal and -shm alive after it exits.)
func (d *DB) Version(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h := fnv.New64a()
	for _, p := range []string{d.Path, d.Path + "-wal", d.Path + "-shm"} {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(h, "%s:%d:%d;", p, st.Size(), st.ModTime().UnixNano())
		} else if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(h, "%s:-;", p)
		} else {
			return 0, fmt.Errorf("openclaw registry: %w", err)
		}
	}
	return int64(h.Sum64() >> 1), nil
}

// NeedsReopen reports whether the handle's read mode no longer fits the
// files: opened immutable but OpenClaw now has the database open (a -shm
// appeared), or opened normally but OpenClaw has closed it (its -shm is
// gone: reading on would create -wal and -shm that nobody removes).
func (d *DB) NeedsReopen() bool {
	if d.JournalMode != "wal" {
		return false
	}
	_, err := os.Stat(d.Path + "-shm")
	return d.Immutable == (err == nil)
}

// readTx runs fn in one read transaction (a consistent snapshot; no lock is
// held beyond it).
func (d *DB) readTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("openclaw read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(tx)
}
