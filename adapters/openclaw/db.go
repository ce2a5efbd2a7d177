// Package openclaw reads OpenClaw's own task registry (the SQLite database at
// $OPENCLAW_STATE_DIR/state/openclaw.sqlite, schema v18) strictly read-only:
// the rows clawpit's console shows, OpenClaw's audit findings plus the ones
// clawpit knows it misses, and a row-for-row preview of what
// `openclaw tasks maintenance --apply` would do. Nothing here ever writes.
//
// The rules are OpenClaw 2026.9.6's as the `openclaw tasks` command applies
// them (task-registry.maintenance.ts, task-registry.audit.ts,
// task-flow-registry.audit.ts, task-flow-maintenance-policy.ts,
// cron-history-retention.ts in the npm package's dist/), checked row for row
// against the real OpenClaw by the root package's TestOpenclawDifferential.
//
// Every query reads through an index OpenClaw created (idx_task_runs_status,
// idx_task_runs_cleanup_after, idx_task_runs_runtime_source_ended,
// idx_task_runs_parent_flow_id, the subagent_runs and operator_approvals
// primary keys and idx_operator_approvals_status_expiry) so cost grows with
// active and due rows, not with history. The one exception is the audit's
// scan for delivery_failed on finished rows, which OpenClaw's schema indexes
// nothing for: it streams (constant memory) and is said so in the README.
package openclaw

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
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
		"last_event_at", "cleanup_after", "last_tool_name", "error", "progress_summary", "terminal_summary", "terminal_outcome",
		"parent_flow_id", "detail_json"}
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
	// Immutable is true when the database is in WAL mode with no -shm and
	// no -wal beside it (no OpenClaw process has it open): SQLite would
	// have to create -wal and -shm to read it, so it is read as immutable.
	Immutable bool
	// Snapshot is true when it is in WAL mode with a -wal but no -shm (a
	// copy taken mid-write): it is read from a private copy of both files,
	// so the rows committed only in the -wal are read too.
	Snapshot bool
	// JournalMode is "wal" or "delete" (from the file header).
	JournalMode string

	h            *roHandle
	db           *sql.DB
	hasRuns      bool
	hasApprovals bool
	hasFlows     bool // flow_runs
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
	h, err := roOpen(ctx, path)
	if err != nil {
		return nil, err
	}
	d := &DB{StateDir: stateDir, Path: path, JournalMode: h.mode, Immutable: h.immutable, Snapshot: h.snapshot != "", h: h, db: h.db}
	if err := d.check(ctx); err != nil {
		h.close()
		return nil, err
	}
	return d, nil
}

// roHandle is a read-only connection pool on one SQLite file that never
// writes beside it (no -wal, -shm or journal is ever created there).
type roHandle struct {
	db        *sql.DB
	mode      string // wal | delete
	immutable bool
	snapshot  string // private directory holding a copy of the database and its -wal; "" when none
}

// roOpen opens path read-only. In WAL mode without a -shm (no OpenClaw
// process has it open), SQLite would create -wal and -shm to read it: a
// database with no -wal (or an empty one) is read as immutable; one with a
// -wal (a copy taken mid-write: its committed rows are only in the -wal) is
// read from a snapshot of both files in a private temporary directory,
// removed on close, so no committed row is ignored and nothing is written
// in the state directory.
func roOpen(ctx context.Context, path string) (*roHandle, error) {
	mode, err := journalMode(path)
	if err != nil {
		return nil, err
	}
	h := &roHandle{mode: mode}
	open := path
	if mode == "wal" {
		if _, err := os.Stat(path + "-shm"); errors.Is(err, os.ErrNotExist) {
			if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
				if h.snapshot, err = snapshotDB(path); err != nil {
					return nil, err
				}
				open = filepath.Join(h.snapshot, filepath.Base(path))
			} else {
				h.immutable = true
			}
		}
	}
	dsnStr := dsn(open, h.immutable)
	if h.snapshot != "" {
		// The private copy may be read-write: SQLite needs its own -shm
		// there to read the -wal; query_only still forbids any statement
		// from writing.
		dsnStr = strings.Replace(dsnStr, "mode=ro&", "", 1)
	}
	h.db, err = sql.Open("sqlite3", dsnStr)
	if err != nil {
		h.close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection, and none kept between reads: while clawpit holds no
	// connection, OpenClaw closing its own is the last close, so SQLite
	// checkpoints and removes -wal and -shm as it would without clawpit.
	h.db.SetMaxOpenConns(1)
	h.db.SetMaxIdleConns(0)
	return h, nil
}

func (h *roHandle) close() error {
	var err error
	if h.db != nil {
		err = h.db.Close()
	}
	if h.snapshot != "" {
		os.RemoveAll(h.snapshot)
	}
	return err
}

// snapshotDB copies path and path-wal into a new private temporary
// directory and returns it.
func snapshotDB(path string) (string, error) {
	dir, err := os.MkdirTemp("", "clawpit-openclaw-snapshot-")
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", path, err)
	}
	for _, sfx := range []string{"", "-wal"} {
		if err := copyFile(path+sfx, filepath.Join(dir, filepath.Base(path)+sfx)); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("snapshot %s: %w", path, err)
		}
	}
	return dir, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
	for _, t := range []string{"task_runs", "subagent_runs", "operator_approvals", "flow_runs"} {
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
	d.hasFlows = d.cols["flow_runs"] != nil
	return nil
}

// Close releases the handle (and removes a snapshot).
func (d *DB) Close() error { return d.h.close() }

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
	return (d.Immutable || d.Snapshot) == (err == nil)
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
