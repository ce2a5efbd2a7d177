// Package sqlite is the SQLite storage engine under package store (the
// default registry, one host): opening a registry file (refusing another
// program's database, creating a new one 0600, WAL, busy timeout, its own
// migrations in migrations/), the single writer's transactions, PRAGMA
// data_version for change detection, the label order's name index
// (store/internal/labelindex) folded into every write, and SQLite's errors
// mapped to core's sentinels. The queries themselves are store's.
package sqlite

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
	sqlite3 "github.com/mattn/go-sqlite3"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// BusyTimeoutMs is how long a connection waits for a lock before giving up
// (docs/contract.md "Files": at least 5 s).
const BusyTimeoutMs = 5000

// Options tune Open; store.Options carries them.
type Options struct {
	// MustExist refuses to create a missing database (core.ErrNotFound).
	MustExist bool
	// ReadOnly opens the database for reading only.
	ReadOnly bool
	// BusyTimeoutMs overrides BusyTimeoutMs when positive (tests).
	BusyTimeoutMs int
	// Immutable opens with SQLite's immutable=1 (the full-disk fallback
	// when even a read-only WAL open cannot create its -shm file).
	Immutable bool
	// LabelSizes are the label index's sizes, asked at each write (tests
	// shrink them); nil: the defaults.
	LabelSizes func() labelindex.Sizes
}

// Engine is an open SQLite registry (driver.Engine): one writer (BEGIN
// IMMEDIATE, run once), PRAGMA data_version for change detection, and the
// label order's name index folded in before each commit. Safe for
// concurrent use.
type Engine struct {
	path  string
	write *sql.DB // one connection, BEGIN IMMEDIATE transactions
	read  *sql.DB // a few connections, deferred read transactions
	// full: opened for reading only because the disk is full.
	full  bool
	sizes func() labelindex.Sizes

	dvMu   sync.Mutex
	dvConn *sql.Conn // dedicated connection for PRAGMA data_version
	dvStmt *sql.Stmt // PRAGMA data_version prepared on dvConn (read at every change hint, or polled)

	// stmts are the label index's write statements, prepared once.
	stmts labelindex.StmtCache
	// commits counts the committed writes: the label statements are
	// prepared after the second, so a one-shot command (a hook, `task
	// progress`) never prepares statements it will not run again.
	commits atomic.Int64
}

var _ driver.Engine = (*Engine)(nil)

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
// On a full disk the registry is opened for reading only (Full reports
// it): a full disk still reads.
func Open(ctx context.Context, path string, opt Options) (*Engine, error) {
	if path == "" {
		return nil, core.Invalidf("empty database path")
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
	if opt.Immutable {
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
	e := &Engine{path: abs, write: write, read: read, sizes: opt.LabelSizes}
	if err := e.init(ctx, opt.ReadOnly); err != nil {
		e.Close()
		if errors.Is(mapErr(err), core.ErrDiskFull) && !opt.ReadOnly && !opt.Immutable {
			// A full disk still reads (issue 12): open for reading only,
			// and say "disk full" to whoever tries to write.
			ro := opt
			ro.ReadOnly = true
			rdb, rerr := Open(ctx, path, ro)
			if rerr != nil {
				// Read-only WAL access needs -shm, which cannot be created
				// on a full disk when no one has the database open: read
				// the file as it is (no writer can commit meanwhile).
				ro.Immutable = true
				rdb, rerr = Open(ctx, path, ro)
			}
			if rerr == nil {
				rdb.full = true
				return rdb, nil
			}
		}
		return nil, fmt.Errorf("open registry %s: %w", abs, err)
	}
	return e, nil
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

// Migrations lists this engine's migration files in the order they apply
// (store checks each has its PostgreSQL twin).
func Migrations() ([]string, error) { return driver.MigrationNames(migrationFS, "migrations") }

// MigrationSQL is the text of migration name (one of Migrations). Errors:
// no such migration.
func MigrationSQL(name string) ([]byte, error) { return migrationFS.ReadFile("migrations/" + name) }

func migrations() ([]string, error) { return Migrations() }

// init checks the file is a database, refuses a newer schema and applies
// forward-only migrations, each in its own BEGIN IMMEDIATE transaction.
func (e *Engine) init(ctx context.Context, readOnly bool) error {
	names, err := migrations()
	if err != nil {
		return err
	}
	var v int
	if err := e.write.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
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
		tx, err := e.write.BeginTx(ctx, nil)
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
			if err := labelindex.Rebuild(ctx, tx, e.labelSizes()); err != nil {
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
	return e.stampAppID(ctx)
}

// Name is the registry file's absolute path.
func (e *Engine) Name() string { return e.path }

// Dialect is driver.SQLite: store's statements run as written.
func (e *Engine) Dialect() driver.Dialect { return driver.SQLite }

// Write is the write pool: one connection, BEGIN IMMEDIATE transactions.
func (e *Engine) Write() *sql.DB { return e.write }

// Read is the read pool: four connections, deferred transactions.
func (e *Engine) Read() *sql.DB { return e.read }

// ChangeMode is always driver.ChangeData (PRAGMA data_version).
func (e *Engine) ChangeMode() driver.ChangeMode { return driver.ChangeData }

// ChangeNote is "": one host, nothing for the console's header to say.
func (e *Engine) ChangeNote() string { return "" }

// ViewOptions: a read-only deferred transaction, one snapshot (WAL).
func (e *Engine) ViewOptions() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

// ChangedAfter is nil: nothing is pushed; a waiter polls DataVersion
// (or waits for store's file-system hints).
func (e *Engine) ChangedAfter(int64) <-chan struct{} { return nil }

// Update runs attempt once: the write pool's single connection begins
// IMMEDIATE transactions, so writers wait for the lock (the busy timeout)
// instead of failing on a stale snapshot.
func (e *Engine) Update(ctx context.Context, attempt func() error) error {
	return attempt()
}

// Begin begins an IMMEDIATE transaction (the write pool's connections
// are opened with _txlock=immediate): it holds the registry's write lock,
// waiting for it up to the busy timeout. Errors: SQLite's, unmapped.
func (e *Engine) Begin(ctx context.Context) (driver.WriteTx, error) {
	tx, err := e.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &writeTx{Tx: tx, e: e}, nil
}

// writeTx is a write transaction of the single writer.
type writeTx struct {
	*sql.Tx
	e *Engine
}

// Commit indexes the tasks this transaction inserted or renamed in the
// label order's name index (migration 0014), before the commit makes them
// visible, then commits; after the second commit it prepares the label
// index's statements.
func (w *writeTx) Commit(ctx context.Context, wrote bool) error {
	if _, err := labelindex.Fold(ctx, labelindex.CachedTx{Tx: w.Tx, Cache: &w.e.stmts}, w.e.labelSizes()); err != nil {
		return err
	}
	if err := w.Tx.Commit(); err != nil {
		return err
	}
	if w.e.commits.Add(1) > 1 {
		w.e.stmts.Warm(ctx, w.e.write)
	}
	return nil
}

// Rollback rolls back; nothing after Commit.
func (w *writeTx) Rollback() error {
	if err := w.Tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

// DataVersion returns PRAGMA data_version on a dedicated connection.
func (e *Engine) DataVersion(ctx context.Context) (int64, error) {
	e.dvMu.Lock()
	defer e.dvMu.Unlock()
	if e.dvConn == nil {
		c, err := e.read.Conn(ctx)
		if err != nil {
			return 0, mapErr(err)
		}
		st, err := c.PrepareContext(ctx, "PRAGMA data_version")
		if err != nil {
			c.Close()
			return 0, mapErr(err)
		}
		e.dvConn, e.dvStmt = c, st
	}
	var v int64
	if err := e.dvStmt.QueryRowContext(ctx).Scan(&v); err != nil {
		e.closeDV()
		return 0, mapErr(err)
	}
	return v, nil
}

// closeDV closes DataVersion's statement and connection (dvMu held).
func (e *Engine) closeDV() {
	if e.dvStmt != nil {
		e.dvStmt.Close()
		e.dvStmt = nil
	}
	if e.dvConn != nil {
		e.dvConn.Close()
		e.dvConn = nil
	}
}

// LabelStmts are the label index's cached write statements.
func (e *Engine) LabelStmts() *labelindex.StmtCache { return &e.stmts }

// Full reports that the registry was opened for reading only because its
// disk is full (a write would fail: store's Update refuses at once).
func (e *Engine) Full() bool { return e.full }

// Path is the registry file's absolute path.
func (e *Engine) Path() string { return e.path }

// labelSizes are Options.LabelSizes', or the defaults.
func (e *Engine) labelSizes() labelindex.Sizes {
	if e.sizes == nil {
		return labelindex.Sizes{}
	}
	return e.sizes()
}

// Close closes DataVersion's connection, the label statements and both pools.
func (e *Engine) Close() error {
	e.dvMu.Lock()
	e.closeDV()
	e.dvMu.Unlock()
	e.stmts.Close()
	return errors.Join(e.write.Close(), e.read.Close())
}

// MapErr turns SQLite and file-system errors into core's sentinels,
// keeping the original text: a lock held past the busy timeout is
// core.ErrBusy, a read-only file or file system core.ErrReadOnly, a full
// disk core.ErrDiskFull. Anything else is returned as it is; nil is nil.
func MapErr(err error) error {
	if err == nil {
		return nil
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

func mapErr(err error) error { return MapErr(err) }
