package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/clawpit/clawpit/store/internal/labelindex"
)

// sqliteEngine is the SQLite storage engine (driver.Engine): one writer
// (BEGIN IMMEDIATE, run once), PRAGMA data_version for change detection,
// and the label order's name index folded in before each commit.
type sqliteEngine struct {
	db *DB

	// stmts are the label index's write statements, prepared once.
	stmts labelindex.StmtCache
	// commits counts the committed Updates: the label statements are
	// prepared after the second, so a one-shot command (a hook, `task
	// progress`) never prepares statements it will not run again.
	commits atomic.Int64

	dvMu   sync.Mutex
	dvConn *sql.Conn // dedicated connection for PRAGMA data_version
	dvStmt *sql.Stmt // PRAGMA data_version prepared on dvConn (read at every change hint, or polled)
}

var _ driver.Engine = (*sqliteEngine)(nil)

func (e *sqliteEngine) Name() string                         { return e.db.path }
func (e *sqliteEngine) Dialect() driver.Dialect              { return driver.SQLite }
func (e *sqliteEngine) Write() *sql.DB                       { return e.db.write }
func (e *sqliteEngine) Read() *sql.DB                        { return e.db.read }
func (e *sqliteEngine) ChangeMode() ChangeMode               { return ChangeData }
func (e *sqliteEngine) ChangeNote() string                   { return "" }
func (e *sqliteEngine) ViewOptions() *sql.TxOptions          { return &sql.TxOptions{ReadOnly: true} }
func (e *sqliteEngine) ChangedAfter(int64) <-chan struct{}   { return nil }
func (e *sqliteEngine) Began(context.Context, *sql.Tx) error { return nil }

// Update runs attempt once: the write pool's single connection begins
// IMMEDIATE transactions, so writers wait for the lock (the busy timeout)
// instead of failing on a stale snapshot.
func (e *sqliteEngine) Update(ctx context.Context, attempt func(*sql.TxOptions) error) error {
	return attempt(nil)
}

// Committing indexes the tasks this transaction inserted or renamed in the
// label order's name index (migration 0014), before the commit makes them
// visible.
func (e *sqliteEngine) Committing(ctx context.Context, tx *sql.Tx, wrote bool) error {
	_, err := labelindex.Fold(ctx, labelindex.CachedTx{Tx: tx, Cache: &e.stmts}, e.db.labelSizes())
	return err
}

// Committed prepares the label index's statements after the second commit.
func (e *sqliteEngine) Committed(ctx context.Context) {
	if e.commits.Add(1) > 1 {
		e.stmts.Warm(ctx, e.db.write)
	}
}

// DataVersion returns PRAGMA data_version on a dedicated connection.
func (e *sqliteEngine) DataVersion(ctx context.Context) (int64, error) {
	e.dvMu.Lock()
	defer e.dvMu.Unlock()
	if e.dvConn == nil {
		c, err := e.db.read.Conn(ctx)
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
func (e *sqliteEngine) closeDV() {
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
func (e *sqliteEngine) LabelStmts() *labelindex.StmtCache { return &e.stmts }

// Close closes DataVersion's connection, the label statements and both pools.
func (e *sqliteEngine) Close() error {
	e.dvMu.Lock()
	e.closeDV()
	e.dvMu.Unlock()
	e.stmts.Close()
	return errors.Join(e.db.write.Close(), e.db.read.Close())
}
