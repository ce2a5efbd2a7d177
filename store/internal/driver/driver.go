// Package driver is the lower room under package store: what store and its
// storage engines (store/sqlite, store/postgres) both need, so neither
// imports the other (the shape of River's riverdriver). It holds the
// Engine interface store runs its shared SQL through, the change modes an
// engine reports, and the migration listing both engines use.
package driver

import (
	"context"
	"database/sql"
	"embed"
	"sort"
)

// Dialect is the SQL an engine speaks. Every statement of package store is
// written once in SQLite's dialect; store rewrites it for PostgreSQL.
type Dialect int

const (
	// SQLite is SQLite's dialect (the statements as written).
	SQLite Dialect = iota
	// Postgres is PostgreSQL's ("$n" placeholders, no INDEXED BY).
	Postgres
)

// ChangeMode is how a registry handle learns of other processes' writes
// (store.DB.ChangeMode): the console's header shows the PostgreSQL ones.
type ChangeMode string

const (
	// ChangeData is SQLite's PRAGMA data_version, polled (one host).
	ChangeData ChangeMode = "data_version"
	// ChangeLive is PostgreSQL's LISTEN/NOTIFY: a write on any host is
	// heard within milliseconds.
	ChangeLive ChangeMode = "live"
	// ChangePolling is PostgreSQL without a working LISTEN (the registry is
	// reached through a pooler in transaction mode and no --listen-db names
	// a direct connection, or LISTEN failed): DataVersion moves every poll
	// interval whether or not anything changed, so readers re-read.
	ChangePolling ChangeMode = "polling"
)

// Engine is one open registry as its storage engine sees it: the two
// connection pools store's shared statements run on, and what differs per
// engine around a transaction (retry, per-transaction settings, what runs
// before COMMIT) and in change detection. Implementations are safe for
// concurrent use.
type Engine interface {
	// Name names the registry in messages and store.DB.Path: the
	// absolute file path (SQLite) or the password-redacted URL.
	Name() string
	// Dialect is the SQL the pools speak.
	Dialect() Dialect
	// Write is the pool write transactions begin on; Read the pool of
	// read-only transactions.
	Write() *sql.DB
	Read() *sql.DB
	// Update runs attempt, which begins (Begin), runs and commits one
	// write transaction, under the engine's policy: once (SQLite: BEGIN
	// IMMEDIATE, the single writer), or again after a serialization
	// failure until the busy timeout (PostgreSQL), so attempt may run more
	// than once. Errors: attempt's last.
	Update(ctx context.Context, attempt func() error) error
	// Begin opens one write transaction on the write pool with the
	// engine's per-transaction settings applied (a lock timeout, an
	// advisory lock). Errors: the database's, unmapped.
	Begin(ctx context.Context) (WriteTx, error)
	// ViewOptions are the options of a read transaction: read only, one
	// snapshot for the whole transaction.
	ViewOptions() *sql.TxOptions
	// DataVersion is a number that moves when another connection (in any
	// process) committed (see store.DB.DataVersion).
	DataVersion(ctx context.Context) (int64, error)
	// ChangeMode is how DataVersion learns of changes ("" while the
	// engine has not decided yet).
	ChangeMode() ChangeMode
	// ChangeNote is the console header's word for ChangeMode; "" when
	// there is nothing to say (one host).
	ChangeNote() string
	// ChangedAfter is a channel closed once DataVersion has moved past
	// since; nil when the engine does not listen (poll instead).
	ChangedAfter(since int64) <-chan struct{}
	// Close stops the engine's goroutines and closes both pools.
	Close() error
}

// WriteTx is one write transaction an Engine began: store's statements run
// on it, then Commit or Rollback ends it (Rollback after Commit, or a
// second time, does nothing).
type WriteTx interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	// PrepareContext prepares q for the rest of the transaction; the
	// statement is closed when the transaction ends.
	PrepareContext(ctx context.Context, q string) (*sql.Stmt, error)
	// Commit runs what the engine does before COMMIT (wrote: a statement
	// wrote; PostgreSQL queues its change notification, SQLite folds new
	// task names into its label index), then commits. Errors: the
	// database's, unmapped; PostgreSQL's pgx.ErrTxCommitRollback when the
	// server rolled back instead.
	Commit(ctx context.Context, wrote bool) error
	// Rollback ends the transaction without committing.
	Rollback() error
}

// MigrationNames lists the migration files of dir in fsys, in the order
// they apply (their names sort by version). Errors: fsys's.
func MigrationNames(fsys embed.FS, dir string) ([]string, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}
