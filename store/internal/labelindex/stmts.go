package labelindex

import (
	"context"
	"database/sql"
	"sync"
)

// StmtCache holds the label index's write statements prepared on the write
// pool (SQLite: one connection), so every transaction after the first runs
// them without preparing them again (Tx.StmtContext reuses a statement
// already prepared on the transaction's connection). A statement is
// prepared after the transaction that first ran it commits: the
// connection is busy before.
type StmtCache struct {
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	miss map[string]bool
}

// stmtCacheMax bounds the cache (the label index's statements number about
// twenty).
const stmtCacheMax = 64

// CachedTx runs Tx's statements through Cache: an Execer.
type CachedTx struct {
	Tx    *sql.Tx
	Cache *StmtCache
}

func (c CachedTx) stmt(ctx context.Context, q string) *sql.Stmt {
	c.Cache.mu.Lock()
	s := c.Cache.m[q]
	if s == nil {
		if c.Cache.miss == nil {
			c.Cache.miss = map[string]bool{}
		}
		c.Cache.miss[q] = true
	}
	c.Cache.mu.Unlock()
	if s == nil {
		return nil
	}
	return c.Tx.StmtContext(ctx, s)
}

func (c CachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s := c.stmt(ctx, q); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return c.Tx.ExecContext(ctx, q, args...)
}

func (c CachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s := c.stmt(ctx, q); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return c.Tx.QueryContext(ctx, q, args...)
}

func (c CachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if s := c.stmt(ctx, q); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return c.Tx.QueryRowContext(ctx, q, args...)
}

// Warm prepares the statements transactions missed, on db (call with no
// transaction of this process open on it, or it waits for one to end).
func (c *StmtCache) Warm(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	var qs []string
	for q := range c.miss {
		if len(c.m)+len(qs) < stmtCacheMax {
			qs = append(qs, q)
		}
	}
	clear(c.miss)
	c.mu.Unlock()
	for _, q := range qs {
		s, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue // runs unprepared, as before
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if old := c.m[q]; old != nil {
			old.Close()
		}
		c.m[q] = s
		c.mu.Unlock()
	}
}

// Close closes the prepared statements.
func (c *StmtCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		s.Close()
	}
	clear(c.m)
}
