// Package postgres is the PostgreSQL storage engine under package store
// (README "Many hosts: PostgreSQL"): opening a registry (its own
// migrations, in migrations/), the write transactions' policy (REPEATABLE
// READ, retried after a serialization failure), change detection through
// LISTEN/NOTIFY, and PostgreSQL's errors mapped to core's sentinels. The
// queries themselves are store's, written once and rewritten for
// PostgreSQL there; this package runs none of them.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// What differs from SQLite:
//
//   - Update is REPEATABLE READ, with no registry-wide lock (issue 30):
//     writers of different rows run in parallel; a transaction that writes
//     a row another committed since its snapshot fails (40001) and runs
//     again on a new snapshot (retry), so no write is decided on a stale
//     row. lock_timeout is the busy timeout. Only migrations take an
//     (advisory, transaction-scoped) lock. docs/architecture.md argues it.
//   - View is REPEATABLE READ READ ONLY: one snapshot, as SQLite's.
//   - Change detection is LISTEN/NOTIFY: an Update that wrote sends one
//     NOTIFY in its own transaction (delivered only if it commits); a
//     dedicated connection listens and DataVersion counts what it heard.

//go:embed migrations/*.sql
var migrationFS embed.FS

// pgVersionTable holds the schema version (PostgreSQL has no user_version).
const pgVersionTable = "clawpit_schema_version"

// IsPostgresURL reports whether a --db value names a PostgreSQL registry
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactURL returns a PostgreSQL URL with its password replaced by "xxxxx",
// for messages and Engine.Name; anything unparsable is returned as "postgres://…".
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://…"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Options tune Open; store.Options carries them.
type Options struct {
	// MustExist refuses a database that holds no clawpit schema.
	MustExist bool
	// ReadOnly makes every write transaction READ ONLY and migrates nothing.
	ReadOnly bool
	// ListenURL is a direct connection for LISTEN ("" : the registry's URL).
	ListenURL string
	// BusyTimeoutMs is the lock timeout and the retry bound, in
	// milliseconds (must be positive).
	BusyTimeoutMs int
	// RegistryLock makes every write transaction take the registry-wide
	// advisory lock (writers serialised, READ COMMITTED): bench/pg's
	// "before".
	RegistryLock bool
	// OnChange is called (from the listener's goroutine) after each change
	// heard and each change of the listener's connection; nil: nothing.
	OnChange func()
}

// Engine is an open PostgreSQL registry (driver.Engine). Safe for
// concurrent use.
type Engine struct {
	name  string // the password-redacted URL
	write *sql.DB
	read  *sql.DB
	key   int64 // advisory lock key of this registry (database + schema)
	// channel is the registry's NOTIFY channel.
	channel string
	busyMs  int
	// registryLock: Update takes the advisory lock (Options.RegistryLock).
	registryLock bool
	// trgm: the registry has the task filter's trigram index (migration
	// 0011 skips it where pg_trgm cannot be created).
	trgm bool

	// readOnly: Options.ReadOnly; every Update transaction is READ ONLY
	// (a startup parameter would do it once, but poolers refuse those).
	readOnly bool
	// listenCfg is where the listener connects: Options.ListenURL, else
	// the registry's own URL.
	listenCfg *pgx.ConnConfig
	// probe is how long the first dataVersion waits for its own probe
	// notification before deciding LISTEN does not work there (a pooler).
	probe time.Duration
	// pollEvery is polling's period when LISTEN does not work.
	pollEvery time.Duration

	mu       sync.Mutex
	version  int64
	lostErr  error // set while the listener is disconnected
	started  bool
	mode     driver.ChangeMode
	changed  chan struct{} // closed and replaced when version moves (live mode)
	stop     context.CancelFunc
	done     chan struct{}
	listenFn func(ctx context.Context) (*pgx.Conn, error)
	// notifyFn sends the registry's notification with payload outside
	// any transaction of the caller (the probe); the write pool's.
	notifyFn func(ctx context.Context, payload string) error
	// pingFn checks that the registry itself (the write pool) answers.
	pingFn func(ctx context.Context) error
	// onChange is Options.OnChange: told of every version bump.
	onChange func()
}

var _ driver.Engine = (*Engine)(nil)

// PollInterval is how often DataVersion moves on a PostgreSQL registry
// without a working LISTEN (driver.driver.ChangePolling).
const PollInterval = time.Second

// Open opens the PostgreSQL registry at rawURL, migrating its schema
// forward unless opt.ReadOnly. Errors: core.ErrInvalid for a URL pgx
// cannot parse, core.ErrNotFound when MustExist or ReadOnly and the
// database holds no clawpit schema, core.ErrNewerSchema, core.ErrReadOnly,
// and a wrapped error naming the (password-redacted) URL when the server
// cannot be reached.
func Open(ctx context.Context, rawURL string, opt Options) (*Engine, error) {
	name := RedactURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, core.Invalidf("PostgreSQL URL %s: %v", name, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	listenCfg, err := parseListenURL(cfg, opt.ListenURL)
	if err != nil {
		return nil, err
	}
	// pgx prepares and caches statements by default; after five runs
	// PostgreSQL may plan a cached one once for any parameters, and the
	// filter's plans hang on them (a rare text through an index, a common
	// one by the pane's order): a generic plan read a whole table for `zz`
	// (374 ms at 1,000,000 tasks, against 0.2 ms). An unnamed statement,
	// described each time, is planned with its parameters on every run. Not
	// a startup parameter (plan_cache_mode), which poolers such as
	// PgBouncer refuse. A URL that sets default_query_exec_mode wins.
	if !strings.Contains(rawURL, "default_query_exec_mode") {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
	}
	// The write pool sends each statement in one round trip (exec mode:
	// an unnamed statement, its parameter types taken from the Go values,
	// planned with them; no named prepared statement, so poolers in
	// transaction mode hold). A write is about eight statements, and the
	// describe step doubled their round trips (bench/pg -writers: 16
	// writers 746–1,281 writes/s against 688–926 before it, on a loaded
	// 2-core VM; issue 30).
	wcfg := cfg.Copy()
	if !strings.Contains(rawURL, "default_query_exec_mode") {
		wcfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	write := stdlib.OpenDB(*wcfg)
	write.SetMaxOpenConns(4)
	write.SetMaxIdleConns(2)
	read := stdlib.OpenDB(*cfg)
	read.SetMaxOpenConns(4)
	read.SetMaxIdleConns(2)
	e := &Engine{name: name, write: write, read: read, busyMs: opt.BusyTimeoutMs, registryLock: opt.RegistryLock,
		readOnly: opt.ReadOnly, listenCfg: listenCfg, probe: listenProbe, pollEvery: PollInterval, onChange: opt.OnChange}
	e.listenFn = e.connectListener
	e.notifyFn = func(ctx context.Context, payload string) error {
		_, err := write.ExecContext(ctx, "SELECT pg_notify($1, $2)", e.channel, payload)
		return err
	}
	e.pingFn = write.PingContext
	if err := e.init(ctx, opt); err != nil {
		e.Close()
		return nil, fmt.Errorf("open registry %s: %w", name, mapErr(err))
	}
	return e, nil
}

// parseListenURL is the listener's configuration: listenURL's, or cfg
// when listenURL is "". Errors: core.ErrInvalid naming --listen-db.
func parseListenURL(cfg *pgx.ConnConfig, listenURL string) (*pgx.ConnConfig, error) {
	if listenURL == "" {
		return cfg, nil
	}
	if !IsPostgresURL(listenURL) {
		return nil, core.Invalidf("--listen-db %s: not a PostgreSQL URL (postgres://…)", RedactURL(listenURL))
	}
	lc, err := pgx.ParseConfig(listenURL)
	if err != nil {
		return nil, core.Invalidf("--listen-db %s: %v", RedactURL(listenURL), err)
	}
	if lc.ConnectTimeout == 0 {
		lc.ConnectTimeout = 10 * time.Second
	}
	return lc, nil
}

// init reads the registry's schema and lock key, migrates, and learns
// whether the trigram index exists.
func (e *Engine) init(ctx context.Context, opt Options) error {
	var schema sql.NullString
	if err := e.write.QueryRowContext(ctx,
		"SELECT current_schema(), hashtextextended('clawpit:' || current_database() || '.' || COALESCE(current_schema(), ''), 0)").
		Scan(&schema, &e.key); err != nil {
		return err
	}
	if !schema.Valid {
		return core.NotFoundf("no schema of the search_path exists in %s", e.name)
	}
	e.channel = pgChannel(schema.String)
	if err := e.migrate(ctx, opt); err != nil {
		return err
	}
	// The trigram index exists only where the role could create pg_trgm
	// (migration 0011): without it a rare text is not read through one.
	return e.write.QueryRowContext(ctx, "SELECT to_regclass('tasks_filter_trgm') IS NOT NULL").Scan(&e.trgm)
}

// Name is the password-redacted URL.
func (e *Engine) Name() string { return e.name }

// Dialect is driver.Postgres.
func (e *Engine) Dialect() driver.Dialect { return driver.Postgres }

// Write is the write pool: four connections, statements sent in exec mode.
func (e *Engine) Write() *sql.DB { return e.write }

// Read is the read pool: four connections, statements described then run.
func (e *Engine) Read() *sql.DB { return e.read }

// Trigram reports whether the registry has the task filter's trigram
// index (tasks_filter_trgm; absent where pg_trgm could not be created).
func (e *Engine) Trigram() bool { return e.trgm }

// Channel is the registry's NOTIFY channel (pgChannel).
func (e *Engine) Channel() string { return e.channel }

// ViewOptions: REPEATABLE READ READ ONLY, one snapshot for the whole
// View, as SQLite's read transaction.
func (e *Engine) ViewOptions() *sql.TxOptions {
	return &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}
}

// DataVersion is the number of change notifications heard (dataVersion).
func (e *Engine) DataVersion(ctx context.Context) (int64, error) { return e.dataVersion(ctx) }

// ChangedAfter returns a channel closed once the version is past since;
// nil unless the handle listens (driver.driver.ChangeLive).
func (e *Engine) ChangedAfter(since int64) <-chan struct{} { return e.changedAfter(since) }

// Close stops the listener and closes both pools.
func (e *Engine) Close() error {
	e.close()
	return errors.Join(e.write.Close(), e.read.Close())
}

// pgChannel is the NOTIFY channel of the registry in schema: one per schema,
// so registries side by side in one database (tests) do not wake each
// other. At most 63 bytes (PostgreSQL's identifier limit).
func pgChannel(schema string) string {
	c := "clawpit_changes"
	if schema != "public" {
		c = "clawpit_" + schema
	}
	if len(c) > 63 {
		// At a character's boundary, as PostgreSQL cuts identifiers: a
		// cut inside one is not UTF-8, which pg_notify refuses.
		c = c[:63]
		for !utf8.ValidString(c) {
			c = c[:len(c)-1]
		}
	}
	return c
}

// SchemaVersion is the PostgreSQL schema version this build writes.
func SchemaVersion() int {
	n, _ := Migrations()
	return len(n)
}

// Migrations lists this engine's migration files in the order they
// apply; store checks each has its SQLite twin.
func Migrations() ([]string, error) { return driver.MigrationNames(migrationFS, "migrations") }

// migrate refuses a newer schema and applies forward-only migrations, each
// in its own transaction under the registry's writer lock (so hosts
// starting at once migrate exactly once).
func (e *Engine) migrate(ctx context.Context, opt Options) error {
	names, err := Migrations()
	if err != nil {
		return err
	}
	// Fast path, one round trip: the schema is current (every open but the
	// first after an upgrade). Otherwise migrate under the writer lock.
	var v sql.NullInt64
	err = e.write.QueryRowContext(ctx, "SELECT version FROM "+pgVersionTable).Scan(&v)
	switch {
	case Code(err) == "42P01": // undefined_table: a database without clawpit
		v.Valid = false
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if !v.Valid && (opt.MustExist || opt.ReadOnly) {
		return core.NotFoundf("no clawpit registry in %s (no %s table)", e.name, pgVersionTable)
	}
	if v.Valid && int(v.Int64) == len(names) {
		return nil
	}
	for {
		done, err := e.migrateOne(ctx, names, opt.ReadOnly)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration, if any; done when the schema is
// current.
func (e *Engine) migrateOne(ctx context.Context, names []string, readOnly bool) (done bool, err error) {
	tx, err := e.write.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := e.LockWriter(ctx, tx); err != nil {
		return false, err
	}
	if !readOnly {
		if err := refuseForeignPG(ctx, tx, e.name); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+pgVersionTable+" (version INTEGER NOT NULL)"); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+pgVersionTable+" (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "+pgVersionTable+")"); err != nil {
			return false, err
		}
	}
	var v int
	if err := tx.QueryRowContext(ctx, "SELECT version FROM "+pgVersionTable).Scan(&v); err != nil {
		return false, err
	}
	if v > len(names) {
		return false, fmt.Errorf("%w: schema version %d, this build knows up to %d; upgrade clawpit", core.ErrNewerSchema, v, len(names))
	}
	if v == len(names) {
		return true, tx.Commit()
	}
	if readOnly {
		return false, fmt.Errorf("%w: schema version %d needs migrating to %d, which a read-only open cannot do", core.ErrReadOnly, v, len(names))
	}
	body, err := migrationFS.ReadFile("migrations/" + names[v])
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return false, fmt.Errorf("migration %s: %w", names[v], err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+pgVersionTable+" SET version = $1", v+1); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// LockWriter serialises migrations of one registry (hosts starting at once
// migrate exactly once): a transaction-scoped advisory lock, released at
// commit, so it holds through a pooler in transaction mode. It waits at most
// the busy timeout (lock_timeout), then fails with SQLSTATE 55P03, which
// MapErr turns into core.ErrBusy. Update takes no such lock (retry).
func (e *Engine) LockWriter(ctx context.Context, tx *sql.Tx) error {
	// One round trip: set_config(…, true) is SET LOCAL, evaluated before
	// the lock is requested (left to right in a one-row SELECT list).
	_, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)",
		fmt.Sprintf("%dms", e.busyMs), e.key)
	return err
}

// Notify queues the registry's change notification in tx: listeners hear
// it when, and only if, tx commits.
func (e *Engine) Notify(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_notify($1, '')", e.channel)
	return err
}

// connectListener opens a connection to listenCfg and LISTENs on the
// registry's channel.
func (e *Engine) connectListener(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, e.listenCfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{e.channel}.Sanitize()); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return c, nil
}

// listenProbe bounds the first dataVersion's wait for its probe: a direct
// connection hears it in milliseconds.
const listenProbe = 2 * time.Second

// probeListener reports whether c, just LISTENing, hears a notification
// sent from another connection (the write pool), within e.probe. Through a
// pooler in transaction mode the LISTEN ran on a server connection that
// went back to the pool when it returned, so nothing reaches c: false.
func (e *Engine) probeListener(ctx context.Context, c *pgx.Conn) bool {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte('a' + rand.N(26))
	}
	token := "probe:" + string(b)
	if err := e.notifyFn(ctx, token); err != nil {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, e.probe)
	defer cancel()
	for {
		n, err := c.WaitForNotification(wctx)
		if err != nil {
			return false
		}
		if n.Payload == token {
			return true
		}
	}
}

// dataVersion returns the number of change notifications heard. The first
// call decides the mode: it connects the listener (to Options.ListenURL,
// else the registry's URL) and checks that it hears a probe notification
// (driver.ChangeLive; synchronously: a change committed after it returns is
// counted). When the listener cannot connect or LISTEN fails while the
// registry answers, or the probe is not heard (a pooler), the handle polls
// instead for good (driver.ChangePolling): the version moves every pollEvery. When
// the registry itself does not answer, it returns the error (wrapping
// core.ErrUnavailable) and decides at a later call. Later calls return at
// once. While a live listener is disconnected it returns the error, and the
// listener reconnects with backoff (100 ms doubling to 5 s); each
// reconnection counts as a change, since notifications sent meanwhile were
// lost.
func (e *Engine) dataVersion(ctx context.Context) (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started {
		c, err := e.listenFn(ctx)
		if err != nil && (ctx.Err() != nil || e.pingFn(ctx) != nil) {
			// The registry itself is out of reach (or the caller gave
			// up): say so, and decide at a later call.
			return 0, fmt.Errorf("listen for registry changes: %w", mapErr(err))
		}
		heard := err == nil && e.probeListener(ctx, c)
		if err == nil && !heard && ctx.Err() != nil {
			c.Close(context.Background())
			return 0, fmt.Errorf("listen for registry changes: %w", ctx.Err())
		}
		switch {
		case heard:
			lctx, cancel := context.WithCancel(context.Background())
			e.mode, e.stop, e.done = driver.ChangeLive, cancel, make(chan struct{})
			e.changed = make(chan struct{})
			go e.listen(lctx, c)
		default:
			if c != nil {
				// UNLISTEN: the pooled server connection that ran LISTEN
				// must not keep receiving notifications for other clients.
				c.Exec(ctx, "UNLISTEN *")
				c.Close(context.Background())
			}
			e.mode = driver.ChangePolling
		}
		e.started = true
	}
	if e.mode == driver.ChangePolling {
		return time.Now().UnixNano() / int64(e.pollEvery), nil
	}
	return e.version, e.lostErr
}

// ChangeMode returns the mode the first dataVersion chose ("" before it).
func (e *Engine) ChangeMode() driver.ChangeMode {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.mode
}

// changedAfter returns a channel closed once the version is past since; nil
// unless the handle listens (driver.ChangeLive).
func (e *Engine) changedAfter(since int64) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mode != driver.ChangeLive {
		return nil
	}
	if e.version != since {
		c := make(chan struct{})
		close(c)
		return c
	}
	return e.changed
}

// bump counts one change and wakes changedAfter's waiters; e.mu held.
func (e *Engine) bump() {
	e.version++
	if e.changed != nil {
		close(e.changed)
		e.changed = make(chan struct{})
	}
}

// listen counts notifications on c until ctx ends, reconnecting when the
// connection drops.
func (e *Engine) listen(ctx context.Context, c *pgx.Conn) {
	defer close(e.done)
	backoff := 100 * time.Millisecond
	for {
		if c == nil {
			var err error
			c, err = e.listenFn(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				e.setLost(err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			e.mu.Lock()
			e.bump()
			e.lostErr = nil
			e.mu.Unlock()
			e.hint()
		}
		n, err := c.WaitForNotification(ctx)
		if err == nil && strings.HasPrefix(n.Payload, "probe:") {
			continue // another handle's probe (probeListener), not a change
		}
		if err == nil {
			e.mu.Lock()
			e.bump()
			e.mu.Unlock()
			e.hint()
			continue
		}
		c.Close(context.Background())
		c = nil
		if ctx.Err() != nil {
			return
		}
		e.setLost(err)
	}
}

// hint tells ChangeHints' subscribers the version moved or the
// connection changed (Options.OnChange; nil in tests that build an
// Engine by hand).
func (e *Engine) hint() {
	if e.onChange != nil {
		e.onChange()
	}
}

func (e *Engine) setLost(err error) {
	e.mu.Lock()
	e.lostErr = fmt.Errorf("%w: lost the connection to the PostgreSQL registry, reconnecting: %v", core.ErrUnavailable, err)
	e.mu.Unlock()
	e.hint()
}

// close stops the listener and waits for it.
func (e *Engine) close() {
	e.mu.Lock()
	stop, done := e.stop, e.done
	e.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// Code is the SQLSTATE of a PostgreSQL error ("23505"), "" for anything else.
func Code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// MapErr maps PostgreSQL errors to core's sentinels, keeping the original
// text: lock and serialization failures to core.ErrBusy, a write in a read
// only transaction to core.ErrReadOnly, text PostgreSQL cannot hold (a NUL
// byte, bytes that are not UTF-8) to core.ErrInvalid, an unreachable server to
// core.ErrUnavailable. nil when err is not one of those (store goes on with
// SQLite's).
//
// Unreachable is what only the PostgreSQL driver or the network reports: a
// failed connect (*pgconn.ConnectError: refused, unknown host, a
// handshake cut short by the deadline), a failed network operation
// (*net.OpError: reset, broken pipe), a server that did not answer before
// the context's deadline (pgconn.Timeout), or an error pgconn calls safe
// to retry (nothing was sent). A bare context.DeadlineExceeded is none of
// those: it implements net.Error, but database/sql and SQLite return it
// too (a SQLite registry's deadline is not a PostgreSQL server out of
// reach), so it is left as it is.
func MapErr(err error) error {
	if errors.Is(err, core.ErrBusy) || errors.Is(err, core.ErrReadOnly) || errors.Is(err, core.ErrUnavailable) {
		return err // mapped already
	}
	switch Code(err) {
	case "":
	case "55P03", "40P01", "40001": // lock_not_available, deadlock, serialization
		// %w twice: retry finds the SQLSTATE through a caller's wrapping.
		return fmt.Errorf("%w (still locked, or conflicting, after the busy timeout): %w", core.ErrBusy, err)
	case "25006": // read_only_sql_transaction
		return fmt.Errorf("%w: %v", core.ErrReadOnly, err)
	case "22021", "22P05": // character_not_in_repertoire, untranslatable_character
		// SQLite stores any bytes; PostgreSQL's text holds valid UTF-8
		// without NUL, so such a value (a tool call's input from a hook's
		// JSON may carry \u0000) is refused rather than altered: the
		// operator decides on exact text or not at all.
		return fmt.Errorf("%w: text holding a NUL byte (\\x00) or bytes that are not UTF-8 cannot be stored in a PostgreSQL registry, and clawpit does not alter it: %v", core.ErrInvalid, err)
	default:
		return nil
	}
	var ce *pgconn.ConnectError
	var oe *net.OpError
	if errors.As(err, &ce) || errors.As(err, &oe) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return fmt.Errorf("%w (PostgreSQL): %w", core.ErrUnavailable, err)
	}
	return nil
}

// refuseForeignPG refuses (core.ErrInvalid, nothing created) to make a
// registry in a schema that has no clawpit version table (pgVersionTable,
// clawpit's mark on PostgreSQL) but already holds tables, views or
// sequences: another program's schema. An empty schema becomes a registry.
func refuseForeignPG(ctx context.Context, tx *sql.Tx, name string) error {
	var marked bool
	var schema string
	var objects int64
	err := tx.QueryRowContext(ctx, `SELECT to_regclass('`+pgVersionTable+`') IS NOT NULL, current_schema(),
		(SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S'))`).Scan(&marked, &schema, &objects)
	if err != nil {
		return err
	}
	if marked || objects == 0 {
		return nil
	}
	return core.Invalidf("%s is not a clawpit registry: schema %q holds %d table(s), view(s) or sequence(s) but no %s table; "+
		"clawpit changed nothing (give --db a database or schema of its own)", name, schema, objects, pgVersionTable)
}

// ChangeNote is the console header's word for the mode (tui.ChangeNoter).
func (e *Engine) ChangeNote() string {
	switch e.ChangeMode() {
	case driver.ChangeLive:
		return "live"
	case driver.ChangePolling:
		return "polling " + e.pollEvery.String()
	}
	return ""
}

// mapErr is MapErr, or err itself when MapErr has nothing to say.
func mapErr(err error) error {
	if e := MapErr(err); e != nil {
		return e
	}
	return err
}
