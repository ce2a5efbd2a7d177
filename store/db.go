// Package store is clawpit's SQLite persistence (docs/architecture.md): schema
// migrations, queries, atomic conditional transitions, the event journal and
// change detection. It implements core.Store; it knows no screen.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/clawpit/clawpit/store/internal/labelindex"
	"github.com/clawpit/clawpit/store/postgres"
	sqlite3 "github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// BusyTimeoutMs is how long a connection waits for a lock before giving up
// (docs/contract.md "Files": at least 5 s).
const BusyTimeoutMs = 5000

// Options tune Open.
type Options struct {
	// MustExist refuses to create a missing database (used by headless sweeps,
	// where a missing file is an operator error, not a first run).
	MustExist bool
	// ReadOnly opens the database for reading only (console --readonly).
	ReadOnly bool
	// ListenURL is a direct PostgreSQL connection for LISTEN (--listen-db),
	// when the registry's URL goes through a pooler in transaction mode,
	// where LISTEN cannot work; empty: LISTEN on the registry's URL. A
	// handle whose LISTEN does not work polls (ChangePolling). Ignored on
	// SQLite.
	ListenURL string
	// BusyTimeoutMs overrides BusyTimeoutMs when positive (tests).
	BusyTimeoutMs int
	// PGRegistryLock makes every PostgreSQL Update take the registry-wide
	// advisory lock it took before issue 30 (writers serialised, READ
	// COMMITTED): bench/pg's "before", measured beside the default.
	PGRegistryLock bool
	// immutable opens with SQLite's immutable=1 (the full-disk fallback).
	immutable bool
}

// DB is an open registry. It implements core.Store. Safe for concurrent use.
//
// The SQL is this package's, written once; what differs per storage
// engine (opening, the write transactions' policy, change detection) is
// eng's: store/postgres, or sqliteEngine.
type DB struct {
	eng   driver.Engine
	path  string
	write *sql.DB // SQLite: one connection, BEGIN IMMEDIATE transactions
	read  *sql.DB // a few connections, deferred read transactions
	// full: opened for reading only because the disk is full; Update
	// returns core.ErrDiskFull.
	full bool

	hints hintHub // ChangeHints' subscribers and, for SQLite, its file system watch

	dialect   dialect
	rewritten sync.Map         // SQLite-dialect statement → its PostgreSQL text
	pg        *postgres.Engine // PostgreSQL only: the writer lock and notification (copy)
	lite      *sqliteEngine    // SQLite only: the label index's statements
	// pgTrgm: the PostgreSQL registry has the task filter's trigram index
	// (store/postgres/migrations 0011 skips it where pg_trgm cannot be created).
	pgTrgm bool

	// filterCap overrides the task filter's caps (filterIndexCap,
	// maxVocabTerms, filterProbeCap, nearRows) where non-zero: tests reach
	// the common-text, probe and large-status arms on small tables.
	filterCap filterCaps
	// labelReads counts the windows read through the label order's name
	// index (tests check a query takes that path).
	labelReads atomic.Int64
}

var _ core.Store = (*DB)(nil)

// Open opens (creating when allowed) the registry at path: directory 0700, file
// 0600, WAL, busy_timeout, foreign keys, and migrates an older schema forward.
// A registry is marked with application_id AppID on every writable open.
// An existing file that is neither empty nor a clawpit registry (another
// program's SQLite database, or no database) is refused before any
// connection writes to it: core.ErrInvalid naming the file, which is left
// byte for byte as it was; an empty (0-byte) file becomes a registry with
// mode 0600. Errors: core.ErrNewerSchema for a database written by a newer clawpit,
// core.ErrNotFound when MustExist and the file is missing, core.ErrInvalid when
// path is a directory, fifo, device or socket, core.ErrReadOnly,
// core.ErrBusy, and a wrapped error naming the path for anything else
// (corrupt file, not a database).
//
// A path starting with postgres:// or postgresql:// opens a PostgreSQL
// registry instead (README "Many hosts: PostgreSQL", see openPG).
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, core.Invalidf("empty database path")
	}
	if IsPostgresURL(path) {
		return openPG(ctx, path, opt)
	}
	// Before the path is touched: a build without FTS5 creates nothing.
	if err := checkFTS5(ctx); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	st, err := os.Stat(abs)
	if err == nil && !st.Mode().IsRegular() {
		// SQLite would block on a fifo and fail obscurely on the rest.
		return nil, core.Invalidf("registry path %s is %s, not a database file", abs, fileKind(st.Mode()))
	}
	if err == nil {
		if err := checkExisting(ctx, abs, st, opt); err != nil {
			return nil, err
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		if opt.MustExist || opt.ReadOnly {
			return nil, core.NotFoundf("no registry database at %s", abs)
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("create registry directory %s: %w", filepath.Dir(abs), mapErr(err))
		}
		f, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create registry %s: %w", abs, mapErr(err))
		}
		if f != nil {
			f.Close()
		}
	}
	busy := BusyTimeoutMs
	if opt.BusyTimeoutMs > 0 {
		busy = opt.BusyTimeoutMs
	}
	base := "file:" + abs + fmt.Sprintf("?_busy_timeout=%d&_foreign_keys=on&_synchronous=NORMAL", busy)
	mode := ""
	if opt.ReadOnly {
		mode = "&mode=ro"
	}
	if opt.immutable {
		mode += "&immutable=1"
	}
	write, err := sql.Open("sqlite3", base+"&_journal_mode=WAL&_txlock=immediate"+mode)
	if err != nil {
		return nil, fmt.Errorf("open registry %s: %w", abs, err)
	}
	write.SetMaxOpenConns(1)
	read, err := sql.Open("sqlite3", base+"&_txlock=deferred"+mode)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open registry %s: %w", abs, err)
	}
	read.SetMaxOpenConns(4)
	db := &DB{path: abs, write: write, read: read}
	db.lite = &sqliteEngine{db: db}
	db.eng = db.lite
	if err := db.init(ctx, opt.ReadOnly); err != nil {
		db.Close()
		if errors.Is(mapErr(err), core.ErrDiskFull) && !opt.ReadOnly && !opt.immutable {
			// A full disk still reads (issue 12): open for reading only,
			// and say "disk full" to whoever tries to write.
			ro := opt
			ro.ReadOnly = true
			rdb, rerr := Open(ctx, path, ro)
			if rerr != nil {
				// Read-only WAL access needs -shm, which cannot be created
				// on a full disk when no one has the database open: read
				// the file as it is (no writer can commit meanwhile).
				ro.immutable = true
				rdb, rerr = Open(ctx, path, ro)
			}
			if rerr == nil {
				rdb.full = true
				return rdb, nil
			}
		}
		return nil, fmt.Errorf("open registry %s: %w", abs, err)
	}
	return db, nil
}

// checkExisting refuses (core.ErrInvalid, nothing changed) an existing
// file that is not a clawpit registry and not empty (checkSQLiteFile), and
// makes an empty one that is about to become a registry readable by its
// owner only (0600), as a registry clawpit creates.
func checkExisting(ctx context.Context, abs string, st os.FileInfo, opt Options) error {
	class, why, err := checkSQLiteFile(ctx, abs, st.Size())
	if err != nil {
		return err
	}
	switch class {
	case fileForeign:
		return refuseForeign(abs, why)
	case fileEmpty:
		if !opt.ReadOnly && st.Mode().Perm() != 0o600 {
			if err := os.Chmod(abs, 0o600); err != nil {
				return fmt.Errorf("make registry %s private (mode 0600): %w", abs, mapErr(err))
			}
		}
	}
	return nil
}

// fileKind names a non-regular file's type for an error message: "a
// directory", "a named pipe (fifo)", "a device", "a socket", "not a regular file".
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (fifo)"
	case m&(os.ModeDevice|os.ModeCharDevice) != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Path returns the absolute database path.
func (db *DB) Path() string { return db.path }

// Close releases every connection.
func (db *DB) Close() error {
	db.hints.close()
	return db.eng.Close()
}

// BuildTags are the build tags every build of clawpit needs (go build
// -tags …): sqlite_fts5 compiles SQLite's FTS5 into go-sqlite3 for the task
// filter's trigram index (migration 0009). Tests and benchmarks that build
// the binary pass them.
const BuildTags = "sqlite_fts5"

// ErrNoFTS5 is returned by Open for an SQLite registry when this binary was
// built without SQLite's FTS5 (the sqlite_fts5 build tag): the registry's
// triggers write the task filter's trigram index, so such a build could not
// record a task.
var ErrNoFTS5 = errors.New("this clawpit was built without SQLite's full-text module (FTS5), which the registry's task filter index needs; rebuild it with: go build -tags " + BuildTags)

// checkFTS5 returns ErrNoFTS5 when the linked SQLite lacks FTS5 (a
// compile-time option: the same for every connection, so an in-memory one
// answers; known without asking when the build tag compiled it in).
func checkFTS5(ctx context.Context) error {
	if fts5Compiled {
		return nil
	}
	mem, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return err
	}
	defer mem.Close()
	var on bool
	if err := mem.QueryRowContext(ctx, "SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&on); err != nil {
		return mapErr(err)
	}
	if !on {
		return ErrNoFTS5
	}
	return nil
}

// SchemaVersion is the schema version this build writes (PRAGMA user_version).
func SchemaVersion() int {
	n, _ := migrations()
	return len(n)
}

func migrations() ([]string, error) { return driver.MigrationNames(migrationFS, "migrations") }

// init checks the file is a database, refuses a newer schema and applies
// forward-only migrations, each in its own BEGIN IMMEDIATE transaction.
func (db *DB) init(ctx context.Context, readOnly bool) error {
	names, err := migrations()
	if err != nil {
		return err
	}
	var v int
	if err := db.write.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return mapErr(err)
	}
	if v > len(names) {
		return fmt.Errorf("%w: schema version %d, this build knows up to %d; upgrade clawpit", core.ErrNewerSchema, v, len(names))
	}
	if v < len(names) && readOnly {
		return fmt.Errorf("%w: schema version %d needs migrating to %d, which a read-only open cannot do", core.ErrReadOnly, v, len(names))
	}
	for i := v; i < len(names); i++ {
		body, err := migrationFS.ReadFile("migrations/" + names[i])
		if err != nil {
			return err
		}
		tx, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return mapErr(err)
		}
		// Re-check under the write lock: another process may have migrated.
		var cur int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			tx.Rollback()
			return mapErr(err)
		}
		if cur > i {
			tx.Rollback()
			i = cur - 1
			continue
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", names[i], mapErr(err))
		}
		if names[i] == labelindex.Migration {
			// Its backfill, in the same transaction.
			if err := labelindex.Rebuild(ctx, tx, db.labelSizes()); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %s: %w", names[i], mapErr(err))
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return mapErr(err)
		}
		if err := tx.Commit(); err != nil {
			return mapErr(err)
		}
	}
	if readOnly {
		return nil
	}
	return db.stampAppID(ctx)
}

// Update runs fn in one write transaction (docs/contract.md "Files"): BEGIN IMMEDIATE on
// SQLite, the registry's single writer; on PostgreSQL a REPEATABLE READ
// transaction with no registry-wide lock, run again after a serialization
// failure (postgres.Engine.Update), so fn may run more than once (core.Store).
func (db *DB) Update(ctx context.Context, fn func(core.Tx) error) error {
	if db.full {
		return fmt.Errorf("%w: the registry's file system had no space left when it was opened (opened for reading only)", core.ErrDiskFull)
	}
	return db.eng.Update(ctx, func(opts *sql.TxOptions) error { return db.update(ctx, opts, fn) })
}

// update is one attempt of Update, in a transaction begun with opts.
func (db *DB) update(ctx context.Context, opts *sql.TxOptions, fn func(core.Tx) error) error {
	sqlTx, err := db.write.BeginTx(ctx, opts)
	if err != nil {
		return mapErr(err)
	}
	if err := db.eng.Began(ctx, sqlTx); err != nil {
		sqlTx.Rollback()
		return mapErr(err)
	}
	// Roll back on every path that does not commit, a panic in fn included:
	// the write pool has a single connection, so a leaked transaction would
	// block every later Update of this process.
	committed := false
	defer func() {
		if !committed {
			sqlTx.Rollback()
		}
	}()
	t := &tx{ctx: ctx, tx: sqlTx, db: db}
	if err := fn(t); err != nil {
		return mapErr(err)
	}
	if err := db.eng.Committing(ctx, sqlTx, t.wrote); err != nil {
		return mapErr(err)
	}
	if err := sqlTx.Commit(); err != nil {
		return mapErr(err)
	}
	committed = true
	db.eng.Committed(ctx)
	return nil
}

// View runs fn in a read-only transaction over one snapshot.
func (db *DB) View(ctx context.Context, fn func(core.Tx) error) error {
	sqlTx, err := db.read.BeginTx(ctx, db.eng.ViewOptions())
	if err != nil {
		return mapErr(err)
	}
	defer sqlTx.Rollback()
	t := &tx{ctx: ctx, tx: sqlTx, readOnly: true, db: db}
	if err := fn(t); err != nil {
		return mapErr(err)
	}
	return nil
}

// ChangeMode returns how this handle learns of other processes' writes:
// ChangeData on SQLite; on PostgreSQL ChangeLive or ChangePolling once
// DataVersion has been called, "" before.
func (db *DB) ChangeMode() ChangeMode { return db.eng.ChangeMode() }

// ChangeNote says, for the console's header, how this handle learns of
// other processes' writes: "live" or "polling 1s" on PostgreSQL (once
// DataVersion has been called), "" on SQLite (one host: nothing to say).
func (db *DB) ChangeNote() string { return db.eng.ChangeNote() }

// ChangedAfter returns a channel closed once DataVersion has moved past
// since; nil when the handle does not listen (SQLite, PostgreSQL polling), so
// a waiter polls as before. It lets core.WaitApproval wake on the NOTIFY of a
// decision instead of its next poll (core.ChangeWaiter).
func (db *DB) ChangedAfter(since int64) <-chan struct{} { return db.eng.ChangedAfter(since) }

// DataVersion returns PRAGMA data_version on a dedicated connection; the value
// changes when any other connection (in any process) commits.
//
// On PostgreSQL it is a counter bumped by each NOTIFY the registry's
// writers send in their transactions (postgres.Engine.DataVersion).
func (db *DB) DataVersion(ctx context.Context) (int64, error) { return db.eng.DataVersion(ctx) }

// mapErr turns SQLite and file-system errors into core's sentinels, keeping the
// original text. Errors already carrying a core sentinel pass through.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if e := postgres.MapErr(err); e != nil {
		return e
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%w (still locked after the busy timeout): %v", core.ErrBusy, err)
		case sqlite3.ErrReadonly:
			return fmt.Errorf("%w: %v", core.ErrReadOnly, err)
		case sqlite3.ErrCantOpen:
			return fmt.Errorf("cannot open database file: %v", err)
		case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
			return fmt.Errorf("database file is corrupt or not a clawpit registry: %v", err)
		case sqlite3.ErrFull:
			return fmt.Errorf("%w: %v", core.ErrDiskFull, err)
		}
		if se.SystemErrno == syscall.ENOSPC {
			return fmt.Errorf("%w: %v", core.ErrDiskFull, err)
		}
	}
	if errors.Is(err, os.ErrPermission) || strings.Contains(err.Error(), "read-only file system") {
		return fmt.Errorf("%w: %v", core.ErrReadOnly, err)
	}
	return err
}

// tx implements core.Tx over one *sql.Tx. Methods live in files named after
// what they hold (tasks.go, runs.go, ...).
type tx struct {
	ctx      context.Context
	tx       *sql.Tx
	readOnly bool
	stmts    map[string]*sql.Stmt // prepared on first use (stmt)
	db       *DB
	wrote    bool // a write ran: Update notifies listeners (PostgreSQL)
}
