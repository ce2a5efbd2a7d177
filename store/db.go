// Package store is clawpit's persistence (docs/architecture.md): queries
// written once for every engine, atomic conditional transitions, the event
// journal, the console's windows and change hints. It implements
// core.Store; it knows no screen. Each storage engine's own opening,
// migrations, write policy and change detection live in its package
// (store/sqlite, store/postgres) behind store/internal/driver.Engine.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/clawpit/clawpit/store/internal/sqlq"
	"github.com/clawpit/clawpit/store/postgres"
	"github.com/clawpit/clawpit/store/sqlite"
)

// BusyTimeoutMs is how long a connection waits for a lock before giving up
// (docs/contract.md "Files": at least 5 s).
const BusyTimeoutMs = sqlite.BusyTimeoutMs

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
}

// DB is an open registry. It implements core.Store. Safe for concurrent use.
//
// The SQL is this package's, written once; what differs per storage
// engine (opening, the write transactions' policy, change detection) is
// eng's: store/sqlite or store/postgres.
type DB struct {
	eng   driver.Engine
	path  string
	write *sql.DB // SQLite: one connection, BEGIN IMMEDIATE transactions
	read  *sql.DB // a few connections, deferred read transactions
	// full: opened for reading only because the disk is full; Update
	// returns core.ErrDiskFull.
	full bool

	hints hintHub // ChangeHints' subscribers and, for SQLite, its file system watch

	dialect   dialect          // eng.Dialect(): the SQL the pools speak
	rewritten sync.Map         // SQLite-dialect statement → its PostgreSQL text
	pg        *postgres.Engine // PostgreSQL only: the writer lock and notification (copy)
	lite      *sqlite.Engine   // SQLite only: the label index's statements
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
// 0600, WAL, busy_timeout, foreign keys, and migrates an older schema forward
// (sqlite.Open). A registry is marked with application_id AppID on every
// writable open. An existing file that is neither empty nor a clawpit
// registry (another program's SQLite database, or no database) is refused
// before any connection writes to it: core.ErrInvalid naming the file,
// which is left byte for byte as it was; an empty (0-byte) file becomes a
// registry with mode 0600. Errors: core.ErrNewerSchema for a database
// written by a newer clawpit, core.ErrNotFound when MustExist and the file
// is missing, core.ErrInvalid when path is a directory, fifo, device or
// socket, core.ErrReadOnly, core.ErrBusy, ErrNoFTS5, and a wrapped error
// naming the path for anything else (corrupt file, not a database).
//
// A path starting with postgres:// or postgresql:// opens a PostgreSQL
// registry instead (README "Many hosts: PostgreSQL", see openPG).
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	if IsPostgresURL(path) {
		return openPG(ctx, path, opt)
	}
	db := &DB{}
	e, err := sqlite.Open(ctx, path, sqlite.Options{MustExist: opt.MustExist, ReadOnly: opt.ReadOnly,
		BusyTimeoutMs: opt.BusyTimeoutMs, LabelSizes: db.labelSizes})
	if err != nil {
		return nil, err
	}
	db.eng, db.lite, db.path, db.full = e, e, e.Path(), e.Full()
	db.dialect = e.Dialect()
	db.write, db.read = e.Write(), e.Read()
	return db, nil
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
const BuildTags = sqlite.BuildTags

// ErrNoFTS5 is returned by Open for an SQLite registry when this binary was
// built without SQLite's FTS5 (the sqlite_fts5 build tag): the registry's
// triggers write the task filter's trigram index, so such a build could not
// record a task.
var ErrNoFTS5 = sqlite.ErrNoFTS5

// AppID is the SQLite application_id that marks a clawpit registry: ASCII
// "CLAW" (sqlite.AppID).
const AppID = sqlite.AppID

// SchemaVersion is the schema version this build writes (PRAGMA user_version).
func SchemaVersion() int { return sqlite.SchemaVersion() }

func migrations() ([]string, error) { return sqlite.Migrations() }

// Update runs fn in one write transaction (docs/contract.md "Files"): BEGIN IMMEDIATE on
// SQLite, the registry's single writer; on PostgreSQL a REPEATABLE READ
// transaction with no registry-wide lock, run again after a serialization
// failure (postgres.Engine.Update), so fn may run more than once (core.Store).
func (db *DB) Update(ctx context.Context, fn func(core.Tx) error) error {
	if db.full {
		return fmt.Errorf("%w: the registry's file system had no space left when it was opened (opened for reading only)", core.ErrDiskFull)
	}
	return db.eng.Update(ctx, func() error { return db.update(ctx, fn) })
}

// update is one attempt of Update, in a transaction the engine begins.
func (db *DB) update(ctx context.Context, fn func(core.Tx) error) error {
	wtx, err := db.eng.Begin(ctx)
	if err != nil {
		return mapErr(err)
	}
	// Roll back on every path that does not commit, a panic in fn included:
	// the write pool is small (SQLite: one connection), so a leaked
	// transaction would block later Updates of this process.
	defer wtx.Rollback()
	t := &tx{ctx: ctx, tx: wtx, db: db}
	if err := fn(t); err != nil {
		return mapErr(err)
	}
	return mapErr(wtx.Commit(ctx, t.wrote))
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

// mapErr turns PostgreSQL, SQLite and file-system errors into core's
// sentinels, keeping the original text (postgres.MapErr, sqlite.MapErr).
// Errors already carrying a core sentinel pass through.
func mapErr(err error) error {
	if e := postgres.MapErr(err); e != nil {
		return e
	}
	return sqlite.MapErr(err)
}

// txConn is what tx runs its statements on: a write transaction an engine
// began (driver.WriteTx) or a read-only *sql.Tx.
type txConn interface {
	sqlq.Execer
	PrepareContext(ctx context.Context, q string) (*sql.Stmt, error)
}

// tx implements core.Tx over one transaction (a write one the engine
// began, or a read-only *sql.Tx). Methods live in files named after
// what they hold (tasks.go, runs.go, ...).
type tx struct {
	ctx      context.Context
	tx       txConn // a driver.WriteTx, or a read-only *sql.Tx
	readOnly bool
	stmts    map[string]*sql.Stmt // prepared on first use (stmt)
	db       *DB
	wrote    bool // a write ran: Update notifies listeners (PostgreSQL)
}
