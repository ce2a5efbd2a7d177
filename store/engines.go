package store

import (
	"context"

	"github.com/clawpit/clawpit/core"

	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/clawpit/clawpit/store/postgres"
)

// ChangeMode is how a registry handle learns of other processes' writes
// (DB.ChangeMode): the console's header shows the PostgreSQL ones.
type ChangeMode = driver.ChangeMode

const (
	// ChangeData is SQLite's PRAGMA data_version, polled (one host).
	ChangeData = driver.ChangeData
	// ChangeLive is PostgreSQL's LISTEN/NOTIFY: a write on any host is
	// heard within milliseconds.
	ChangeLive = driver.ChangeLive
	// ChangePolling is PostgreSQL without a working LISTEN (the registry is
	// reached through a pooler in transaction mode and no --listen-db names
	// a direct connection, or LISTEN failed): DataVersion moves every
	// PollInterval whether or not anything changed, so readers re-read.
	ChangePolling = driver.ChangePolling
)

// PollInterval is how often DataVersion moves on a PostgreSQL registry
// without a working LISTEN (ChangePolling).
const PollInterval = postgres.PollInterval

// ErrUnreachable wraps errors of a PostgreSQL registry that cannot be
// reached (connection refused or lost): the command fails with exit 1 and
// this sentence; the daemon and the console retry.
var ErrUnreachable = core.ErrUnavailable

// IsPostgresURL reports whether a --db value names a PostgreSQL registry
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(s string) bool { return postgres.IsPostgresURL(s) }

// RedactURL returns a PostgreSQL URL with its password replaced by "xxxxx",
// for messages and DB.Path; anything unparsable is returned as "postgres://…".
func RedactURL(s string) string { return postgres.RedactURL(s) }

// PGSchemaVersion is the PostgreSQL schema version this build writes.
func PGSchemaVersion() int { return postgres.SchemaVersion() }

// openPG opens the PostgreSQL registry at rawURL (postgres.Open): the
// same *DB over the postgres engine, its change hints fed by the
// engine's listener.
func openPG(ctx context.Context, rawURL string, opt Options) (*DB, error) {
	busy := BusyTimeoutMs
	if opt.BusyTimeoutMs > 0 {
		busy = opt.BusyTimeoutMs
	}
	db := &DB{}
	e, err := postgres.Open(ctx, rawURL, postgres.Options{
		MustExist: opt.MustExist, ReadOnly: opt.ReadOnly, ListenURL: opt.ListenURL,
		BusyTimeoutMs: busy, RegistryLock: opt.PGRegistryLock, OnChange: db.hints.broadcast,
	})
	if err != nil {
		return nil, err
	}
	db.eng, db.pg, db.path = e, e, e.Name()
	db.dialect = e.Dialect()
	db.write, db.read = e.Write(), e.Read()
	db.pgTrgm = e.Trigram()
	return db, nil
}
