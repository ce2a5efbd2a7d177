package store

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

	"github.com/clawpit/clawpit/core"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL registry (README "Many hosts: PostgreSQL"): the same *DB, the same queries (rewritten
// by pgSQL), its own migrations. What differs from SQLite:
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

//go:embed pgmigrations/*.sql
var pgMigrationFS embed.FS

// pgVersionTable holds the schema version (PostgreSQL has no user_version).
const pgVersionTable = "clawpit_schema_version"

// IsPostgresURL reports whether a --db value names a PostgreSQL registry
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactURL returns a PostgreSQL URL with its password replaced by "xxxxx",
// for messages and DB.Path; anything unparsable is returned as "postgres://…".
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

// pgState is what a PostgreSQL DB has beyond the shared pools.
type pgState struct {
	cfg     *pgx.ConnConfig
	key     int64  // advisory lock key of this registry (database + schema)
	channel string // NOTIFY channel of this registry
	busyMs  int
	// registryLock: Update takes the advisory lock (Options.PGRegistryLock).
	registryLock bool

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
	mode     ChangeMode
	changed  chan struct{} // closed and replaced when version moves (live mode)
	stop     context.CancelFunc
	done     chan struct{}
	listenFn func(ctx context.Context) (*pgx.Conn, error)
	// notifyFn sends the registry's notification with payload outside
	// any transaction of the caller (the probe); the write pool's.
	notifyFn func(ctx context.Context, payload string) error
	// pingFn checks that the registry itself (the write pool) answers.
	pingFn func(ctx context.Context) error
	hints  *hintHub // the DB's: told of every version bump (ChangeHints)
}

// ChangeMode is how a registry handle learns of other processes' writes
// (DB.ChangeMode): the console's header shows the PostgreSQL ones.
type ChangeMode string

const (
	// ChangeData is SQLite's PRAGMA data_version, polled (one host).
	ChangeData ChangeMode = "data_version"
	// ChangeLive is PostgreSQL's LISTEN/NOTIFY: a write on any host is
	// heard within milliseconds.
	ChangeLive ChangeMode = "live"
	// ChangePolling is PostgreSQL without a working LISTEN (the registry is
	// reached through a pooler in transaction mode and no --listen-db names
	// a direct connection, or LISTEN failed): DataVersion moves every
	// PollInterval whether or not anything changed, so readers re-read.
	ChangePolling ChangeMode = "polling"
)

// PollInterval is how often DataVersion moves on a PostgreSQL registry
// without a working LISTEN (ChangePolling).
const PollInterval = time.Second

// openPG opens the PostgreSQL registry at rawURL. Errors: core.ErrInvalid
// for a URL pgx cannot parse, core.ErrNotFound when MustExist or ReadOnly
// and the database holds no clawpit schema, core.ErrNewerSchema,
// core.ErrReadOnly, and a wrapped error naming the (password-redacted) URL
// when the server cannot be reached.
func openPG(ctx context.Context, rawURL string, opt Options) (*DB, error) {
	name := RedactURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, core.Invalidf("PostgreSQL URL %s: %v", name, err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	listenCfg := cfg
	if opt.ListenURL != "" {
		if !IsPostgresURL(opt.ListenURL) {
			return nil, core.Invalidf("--listen-db %s: not a PostgreSQL URL (postgres://…)", RedactURL(opt.ListenURL))
		}
		if listenCfg, err = pgx.ParseConfig(opt.ListenURL); err != nil {
			return nil, core.Invalidf("--listen-db %s: %v", RedactURL(opt.ListenURL), err)
		}
		if listenCfg.ConnectTimeout == 0 {
			listenCfg.ConnectTimeout = 10 * time.Second
		}
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
	busy := BusyTimeoutMs
	if opt.BusyTimeoutMs > 0 {
		busy = opt.BusyTimeoutMs
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
	db := &DB{path: name, write: write, read: read, dialect: dialectPostgres}
	fail := func(err error) (*DB, error) {
		db.Close()
		return nil, fmt.Errorf("open registry %s: %w", name, mapErr(err))
	}
	var schema sql.NullString
	var key int64
	if err := write.QueryRowContext(ctx,
		"SELECT current_schema(), hashtextextended('clawpit:' || current_database() || '.' || COALESCE(current_schema(), ''), 0)").
		Scan(&schema, &key); err != nil {
		return fail(err)
	}
	if !schema.Valid {
		return fail(core.NotFoundf("no schema of the search_path exists in %s", name))
	}
	st := &pgState{cfg: cfg, key: key, channel: pgChannel(schema.String), busyMs: busy, registryLock: opt.PGRegistryLock,
		readOnly: opt.ReadOnly, listenCfg: listenCfg, probe: listenProbe, pollEvery: PollInterval, hints: &db.hints}
	st.listenFn = st.connectListener
	st.notifyFn = func(ctx context.Context, payload string) error {
		_, err := write.ExecContext(ctx, "SELECT pg_notify($1, $2)", st.channel, payload)
		return err
	}
	st.pingFn = write.PingContext
	db.pg = st
	if err := db.initPG(ctx, opt); err != nil {
		return fail(err)
	}
	// The trigram index exists only where the role could create pg_trgm
	// (pgmigrations 0011): without it a rare text is not read through one.
	if err := write.QueryRowContext(ctx, "SELECT to_regclass('tasks_filter_trgm') IS NOT NULL").Scan(&db.pgTrgm); err != nil {
		return fail(err)
	}
	return db, nil
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
		c = c[:63]
	}
	return c
}

// PGSchemaVersion is the PostgreSQL schema version this build writes.
func PGSchemaVersion() int {
	n, _ := pgMigrations()
	return len(n)
}

func pgMigrations() ([]string, error) { return migrationNames(pgMigrationFS, "pgmigrations") }

// initPG refuses a newer schema and applies forward-only migrations, each
// in its own transaction under the registry's writer lock (so hosts
// starting at once migrate exactly once).
func (db *DB) initPG(ctx context.Context, opt Options) error {
	names, err := pgMigrations()
	if err != nil {
		return err
	}
	// Fast path, one round trip: the schema is current (every open but the
	// first after an upgrade). Otherwise migrate under the writer lock.
	var v sql.NullInt64
	err = db.write.QueryRowContext(ctx, "SELECT version FROM "+pgVersionTable).Scan(&v)
	switch {
	case pgCode(err) == "42P01": // undefined_table: a database without clawpit
		v.Valid = false
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if !v.Valid && (opt.MustExist || opt.ReadOnly) {
		return core.NotFoundf("no clawpit registry in %s (no %s table)", db.path, pgVersionTable)
	}
	if v.Valid && int(v.Int64) == len(names) {
		return nil
	}
	for {
		done, err := db.migrateOnePG(ctx, names, opt.ReadOnly)
		if err != nil || done {
			return err
		}
	}
}

// migrateOnePG applies the next migration, if any; done when the schema is
// current.
func (db *DB) migrateOnePG(ctx context.Context, names []string, readOnly bool) (done bool, err error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := db.pg.lockWriter(ctx, tx); err != nil {
		return false, err
	}
	if !readOnly {
		if err := refuseForeignPG(ctx, tx, db.path); err != nil {
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
	body, err := pgMigrationFS.ReadFile("pgmigrations/" + names[v])
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

// lockWriter serialises migrations of one registry (hosts starting at once
// migrate exactly once): a transaction-scoped advisory lock, released at
// commit, so it holds through a pooler in transaction mode. It waits at most
// the busy timeout (lock_timeout), then fails with SQLSTATE 55P03, which
// mapErr turns into core.ErrBusy. Update takes no such lock (retry).
func (p *pgState) lockWriter(ctx context.Context, tx *sql.Tx) error {
	// One round trip: set_config(…, true) is SET LOCAL, evaluated before
	// the lock is requested (left to right in a one-row SELECT list).
	_, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)",
		fmt.Sprintf("%dms", p.busyMs), p.key)
	return err
}

// setBusy makes the busy timeout tx's lock_timeout: a row lock another
// writer holds is waited for at most that long (SET LOCAL: it ends with
// the transaction, so it holds through a pooler in transaction mode).
func (p *pgState) setBusy(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT set_config('lock_timeout', $1, true)", fmt.Sprintf("%dms", p.busyMs))
	return err
}

// retry runs attempt until it succeeds, fails with anything but a
// serialization failure or deadlock (isSerializationFailure: the attempt
// was rolled back, so running it again is safe), or the busy timeout (ms)
// has passed; then the last failure is returned, and mapErr reports it as
// core.ErrBusy, as SQLite's busy timeout is. Between runs it sleeps a
// random 0..d, d doubling from 2 ms to 100 ms, so writers that collided do
// not collide again in step. The bound is time, not a count of runs: with
// many writers of one hot row (a run's heartbeat from eight hooks) a writer
// can lose a dozen rounds in a row in under a second, and each round some
// writer commits, so waiting on is progress, not a livelock.
func (p *pgState) retry(ctx context.Context, attempt func() error) error {
	deadline := time.Now().Add(time.Duration(p.busyMs) * time.Millisecond)
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
	switch pgCode(err) {
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

// notify queues the registry's change notification in tx: listeners hear
// it when, and only if, tx commits.
func (p *pgState) notify(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_notify($1, '')", p.channel)
	return err
}

// connectListener opens a connection to listenCfg and LISTENs on the
// registry's channel.
func (p *pgState) connectListener(ctx context.Context) (*pgx.Conn, error) {
	c, err := pgx.ConnectConfig(ctx, p.listenCfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := c.Exec(ctx, "LISTEN "+pgx.Identifier{p.channel}.Sanitize()); err != nil {
		c.Close(context.Background())
		return nil, err
	}
	return c, nil
}

// listenProbe bounds the first dataVersion's wait for its probe: a direct
// connection hears it in milliseconds.
const listenProbe = 2 * time.Second

// probeListener reports whether c, just LISTENing, hears a notification
// sent from another connection (the write pool), within p.probe. Through a
// pooler in transaction mode the LISTEN ran on a server connection that
// went back to the pool when it returned, so nothing reaches c: false.
func (p *pgState) probeListener(ctx context.Context, c *pgx.Conn) bool {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte('a' + rand.N(26))
	}
	token := "probe:" + string(b)
	if err := p.notifyFn(ctx, token); err != nil {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, p.probe)
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
// (ChangeLive; synchronously: a change committed after it returns is
// counted). When the listener cannot connect or LISTEN fails while the
// registry answers, or the probe is not heard (a pooler), the handle polls
// instead for good (ChangePolling): the version moves every pollEvery. When
// the registry itself does not answer, it returns the error (wrapping
// core.ErrUnavailable) and decides at a later call. Later calls return at
// once. While a live listener is disconnected it returns the error, and the
// listener reconnects with backoff (100 ms doubling to 5 s); each
// reconnection counts as a change, since notifications sent meanwhile were
// lost.
func (p *pgState) dataVersion(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		c, err := p.listenFn(ctx)
		if err != nil && (ctx.Err() != nil || p.pingFn(ctx) != nil) {
			// The registry itself is out of reach (or the caller gave
			// up): say so, and decide at a later call.
			return 0, fmt.Errorf("listen for registry changes: %w", mapErr(err))
		}
		heard := err == nil && p.probeListener(ctx, c)
		if err == nil && !heard && ctx.Err() != nil {
			c.Close(context.Background())
			return 0, fmt.Errorf("listen for registry changes: %w", ctx.Err())
		}
		switch {
		case heard:
			lctx, cancel := context.WithCancel(context.Background())
			p.mode, p.stop, p.done = ChangeLive, cancel, make(chan struct{})
			p.changed = make(chan struct{})
			go p.listen(lctx, c)
		default:
			if c != nil {
				// UNLISTEN: the pooled server connection that ran LISTEN
				// must not keep receiving notifications for other clients.
				c.Exec(ctx, "UNLISTEN *")
				c.Close(context.Background())
			}
			p.mode = ChangePolling
		}
		p.started = true
	}
	if p.mode == ChangePolling {
		return time.Now().UnixNano() / int64(p.pollEvery), nil
	}
	return p.version, p.lostErr
}

// changeMode returns the mode the first dataVersion chose ("" before it).
func (p *pgState) changeMode() ChangeMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// changedAfter returns a channel closed once the version is past since; nil
// unless the handle listens (ChangeLive).
func (p *pgState) changedAfter(since int64) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != ChangeLive {
		return nil
	}
	if p.version != since {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.changed
}

// bump counts one change and wakes changedAfter's waiters; p.mu held.
func (p *pgState) bump() {
	p.version++
	if p.changed != nil {
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

// listen counts notifications on c until ctx ends, reconnecting when the
// connection drops.
func (p *pgState) listen(ctx context.Context, c *pgx.Conn) {
	defer close(p.done)
	backoff := 100 * time.Millisecond
	for {
		if c == nil {
			var err error
			c, err = p.listenFn(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				p.setLost(err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			p.mu.Lock()
			p.bump()
			p.lostErr = nil
			p.mu.Unlock()
			p.hint()
		}
		n, err := c.WaitForNotification(ctx)
		if err == nil && strings.HasPrefix(n.Payload, "probe:") {
			continue // another handle's probe (probeListener), not a change
		}
		if err == nil {
			p.mu.Lock()
			p.bump()
			p.mu.Unlock()
			p.hint()
			continue
		}
		c.Close(context.Background())
		c = nil
		if ctx.Err() != nil {
			return
		}
		p.setLost(err)
	}
}

// hint tells ChangeHints' subscribers the version moved or the
// connection changed (nil hub in tests that build a pgState by hand).
func (p *pgState) hint() {
	if p.hints != nil {
		p.hints.broadcast()
	}
}

func (p *pgState) setLost(err error) {
	p.mu.Lock()
	p.lostErr = fmt.Errorf("%w: lost the connection to the PostgreSQL registry, reconnecting: %v", core.ErrUnavailable, err)
	p.mu.Unlock()
	p.hint()
}

// close stops the listener and waits for it.
func (p *pgState) close() {
	p.mu.Lock()
	stop, done := p.stop, p.done
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// ErrUnreachable wraps errors of a PostgreSQL registry that cannot be
// reached (connection refused or lost): the command fails with exit 1 and
// this sentence; the daemon and the console retry.
var ErrUnreachable = core.ErrUnavailable

// pgCode is the SQLSTATE of a PostgreSQL error, "" for anything else.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// mapPGErr maps PostgreSQL errors to core's sentinels; nil when err is not
// one (mapErr goes on with SQLite's).
func mapPGErr(err error) error {
	if errors.Is(err, core.ErrBusy) || errors.Is(err, core.ErrReadOnly) || errors.Is(err, ErrUnreachable) {
		return err // mapped already
	}
	switch pgCode(err) {
	case "":
	case "55P03", "40P01", "40001": // lock_not_available, deadlock, serialization
		// %w twice: retry finds the SQLSTATE through a caller's wrapping.
		return fmt.Errorf("%w (still locked, or conflicting, after the busy timeout): %w", core.ErrBusy, err)
	case "25006": // read_only_sql_transaction
		return fmt.Errorf("%w: %v", core.ErrReadOnly, err)
	default:
		return nil
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) {
		return fmt.Errorf("%w (PostgreSQL): %w", ErrUnreachable, err)
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

// changeNote is the console header's word for the mode (tui.ChangeNoter).
func (p *pgState) changeNote() string {
	switch p.changeMode() {
	case ChangeLive:
		return "live"
	case ChangePolling:
		return "polling " + p.pollEvery.String()
	}
	return ""
}
