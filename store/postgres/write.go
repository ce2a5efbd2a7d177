package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	sqldriver "database/sql/driver"

	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// A write transaction on PostgreSQL: how it begins and ends (Begin,
// writeTx) and the policy that runs it again after a serialization
// failure (Update, retry).

// Update runs attempt (which begins its transaction with Begin) again
// after a serialization failure (retry); with Options.RegistryLock, once.
func (e *Engine) Update(ctx context.Context, attempt func() error) error {
	if e.registryLock {
		return attempt()
	}
	return e.retry(ctx, attempt)
}

// Begin opens a write transaction on a connection of the write pool: a
// REPEATABLE READ transaction with no registry-wide lock whose
// lock_timeout is the busy timeout (with Options.RegistryLock: READ
// COMMITTED holding the registry-wide advisory lock), READ ONLY with
// Options.ReadOnly. BEGIN and its SET LOCAL go in one round trip, and
// Commit sends the change notification with COMMIT in one more: a task
// write is then five round trips where it was nine (bench/pg -writers;
// every hook event of a fleet is one). Both are simple-protocol
// statements inside one transaction, so a pooler in transaction mode
// keeps them on one server connection. Errors: the database's, unmapped.
func (e *Engine) Begin(ctx context.Context) (driver.WriteTx, error) {
	// database/sql's BeginTx takes another connection when the one it
	// drew turns out broken (a server restart, a pooler's idle timeout);
	// so does Begin, a few times, before BEGIN has done anything.
	for try := 1; ; try++ {
		w, err := e.begin(ctx)
		if !errors.Is(err, sqldriver.ErrBadConn) || try == 3 {
			return w, err
		}
	}
}

// begin is one try of Begin.
func (e *Engine) begin(ctx context.Context) (driver.WriteTx, error) {
	c, err := e.write.Conn(ctx)
	if err != nil {
		return nil, err
	}
	mode := "ISOLATION LEVEL REPEATABLE READ"
	lock := ""
	if e.registryLock {
		mode = "ISOLATION LEVEL READ COMMITTED"
		lock = fmt.Sprintf("; SELECT pg_advisory_xact_lock(%d)", e.key)
	}
	if e.readOnly {
		mode += " READ ONLY"
	}
	// No arguments: pgx sends it as one simple query, statements in order,
	// the rest skipped after one fails.
	q := fmt.Sprintf("BEGIN %s; SET LOCAL lock_timeout = %s%s", mode, quoteLiteral(fmt.Sprintf("%dms", e.busyMs)), lock)
	w := &writeTx{conn: c, notify: "SELECT pg_notify(" + quoteLiteral(e.channel) + ", ''); COMMIT"}
	if _, err := c.ExecContext(ctx, q); err != nil {
		w.Rollback()
		return nil, err
	}
	return w, nil
}

// writeTx is a write transaction on one connection of the write pool,
// begun and ended by statements of its own (Begin), so that BEGIN carries
// its SET LOCAL and COMMIT its NOTIFY: database/sql's Tx sends each alone.
type writeTx struct {
	conn   *sql.Conn
	notify string // "SELECT pg_notify('<channel>', ''); COMMIT"
	done   bool
}

func (w *writeTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return w.conn.ExecContext(ctx, q, args...)
}

func (w *writeTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return w.conn.QueryContext(ctx, q, args...)
}

func (w *writeTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return w.conn.QueryRowContext(ctx, q, args...)
}

// PrepareContext refuses: a named prepared statement is session state,
// which a pooler in transaction mode does not keep (store sends unnamed
// statements on PostgreSQL). Errors: always.
func (w *writeTx) PrepareContext(context.Context, string) (*sql.Stmt, error) {
	return nil, errors.New("postgres: no named prepared statements in a write transaction (poolers in transaction mode do not keep them)")
}

// release returns the connection to the pool.
func (w *writeTx) release() error { return w.conn.Close() }

// Commit commits, queuing the registry's change notification in the same
// round trip when wrote (listeners hear it when, and only if, the
// transaction commits). Errors: the server's; pgx.ErrTxCommitRollback when
// the server answered COMMIT with ROLLBACK (the transaction had failed).
func (w *writeTx) Commit(ctx context.Context, wrote bool) error {
	if w.done {
		return sql.ErrTxDone
	}
	q := "COMMIT"
	if wrote {
		q = w.notify
	}
	err := w.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: write connection is a %T, not pgx's", dc)
		}
		tag, err := c.Conn().Exec(ctx, q)
		if err == nil && tag.String() == "ROLLBACK" { // as pgx's own Tx.Commit
			err = pgx.ErrTxCommitRollback
		}
		return err
	})
	if err != nil {
		// A failed statement left the transaction open (a COMMIT that
		// never ran) or the connection broken; Rollback ends either.
		w.Rollback()
		return err
	}
	w.done = true
	// Committed: what returning the connection says is not the write's.
	w.release()
	return nil
}

// Rollback rolls the transaction back and returns the connection to the
// pool; a connection that cannot roll back is closed, not reused (pgx's
// ResetSession refuses one still in a transaction). Nothing after Commit.
func (w *writeTx) Rollback() error {
	if w.done {
		return nil
	}
	w.done = true
	// Not the caller's context: a cancelled one must still end the
	// transaction on the server.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := w.conn.ExecContext(ctx, "ROLLBACK")
	return errors.Join(err, w.release())
}

// quoteLiteral quotes s as a PostgreSQL escape string literal (E'…',
// backslashes and quotes doubled), which reads the same whatever
// standard_conforming_strings says: a schema name, and so the channel,
// may hold either (a plain '…' literal with a backslash in it, read with
// that setting off, ended early and ran what followed).
func quoteLiteral(s string) string {
	return "E'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
}

// retry runs attempt until it succeeds, fails with anything but a
// serialization failure or deadlock (isSerializationFailure: the attempt
// was rolled back, so running it again is safe), or the busy timeout (ms)
// has passed; then the last failure is returned, and MapErr reports it as
// core.ErrBusy, as SQLite's busy timeout is. Between runs it sleeps a
// random 0..d, d doubling from 2 ms to 100 ms, so writers that collided do
// not collide again in step. The bound is time, not a count of runs: with
// many writers of one hot row (a run's heartbeat from eight hooks) a writer
// can lose a dozen rounds in a row in under a second, and each round some
// writer commits, so waiting on is progress, not a livelock.
func (e *Engine) retry(ctx context.Context, attempt func() error) error {
	deadline := time.Now().Add(time.Duration(e.busyMs) * time.Millisecond)
	d := 2 * time.Millisecond
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || !isSerializationFailure(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (after %d serialization failures)", ctx.Err(), n)
		case <-time.After(rand.N(d + 1)):
		}
		d = min(2*d, 100*time.Millisecond)
	}
}

// isSerializationFailure reports whether err is PostgreSQL's
// serialization_failure (40001: a row this transaction read was changed
// since its snapshot), deadlock_detected (40P01), or in_failed_sql_transaction
// (25P02: a statement failed inside fn and fn carried on; under REPEATABLE
// READ that failure is a serialization one, which a use case took for a
// refusal), or a COMMIT that PostgreSQL turned into a rollback for the
// same reason (pgx.ErrTxCommitRollback). Also when a caller wrapped it with
// %v: pgx writes the code as "(SQLSTATE 40001)".
func isSerializationFailure(err error) bool {
	if errors.Is(err, pgx.ErrTxCommitRollback) {
		return true
	}
	switch Code(err) {
	case "40001", "40P01", "25P02":
		return true
	}
	s := err.Error()
	for _, code := range []string{"40001", "40P01", "25P02"} {
		if strings.Contains(s, "(SQLSTATE "+code+")") {
			return true
		}
	}
	return false
}
