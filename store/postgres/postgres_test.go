package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/internal/driver"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgOnly skips t unless storetest.Env names a server and returns a URL of
// a fresh, empty schema there.
func pgOnly(t *testing.T) string {
	t.Helper()
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set")
	}
	return storetest.Schema(t, base)
}

// Update on PostgreSQL runs a transaction again after a serialization
// failure or deadlock (PostgreSQL rolled it back), until the busy timeout
// has passed; any other error, or success, ends it at once.
func TestPGRetry(t *testing.T) {
	serial := &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
	for _, tc := range []struct {
		name     string
		fails    int   // attempts that fail before one succeeds
		err      error // what a failing attempt returns
		runs     int   // -1: more than one, until the busy timeout
		wantFail bool
	}{
		{"success", 0, serial, 1, false},
		{"two serialization failures", 2, serial, 3, false},
		{"deadlock", 1, &pgconn.PgError{Code: "40P01"}, 2, false},
		{"a failure fn carried on from", 1, &pgconn.PgError{Code: "25P02"}, 2, false},
		{"a commit turned rollback", 1, fmt.Errorf("commit: %w", pgx.ErrTxCommitRollback), 2, false},
		{"wrapped by a caller with %v", 1, fmt.Errorf("task t1: %v", serial), 2, false},
		{"always failing", 1 << 30, serial, -1, true},
		{"another error", 1000, &pgconn.PgError{Code: "23505"}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Engine{busyMs: 60_000}
			if tc.runs < 0 {
				p.busyMs = 300
			}
			runs := 0
			start := time.Now()
			err := p.retry(context.Background(), func() error {
				runs++
				if runs <= tc.fails {
					return tc.err
				}
				return nil
			})
			if tc.runs < 0 && time.Since(start) < 300*time.Millisecond {
				t.Errorf("gave up after %v, before the 300 ms busy timeout", time.Since(start))
			}
			if (tc.runs >= 0 && runs != tc.runs) || (tc.runs < 0 && runs < 2) || (err != nil) != tc.wantFail {
				t.Errorf("ran %d times, err %v; want %d runs, failure %v", runs, err, tc.runs, tc.wantFail)
			}
		})
	}
}

// The registry in force, as the console header, serve's banner and the
// daemon's log print it (DB.Path), is the URL without its password
// (issue 30).
// A handle that cannot listen because the registry's server itself is out
// of reach reports it (the console's DISCONNECTED) and decides later; only a
// listener failing while the registry answers makes it poll.
func TestPGListenFailsWhileServerDown(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	db, err := Open(ctx, u, Options{BusyTimeoutMs: 5000})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	down := errors.New("connection refused")
	db.listenFn = func(context.Context) (*pgx.Conn, error) { return nil, &pgconn.ConnectError{} }
	db.pingFn = func(context.Context) error { return down }
	if _, err := db.DataVersion(ctx); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("DataVersion with the server down: err = %v, want ErrUnavailable", err)
	}
	if m := db.ChangeMode(); m != "" {
		t.Fatalf("mode decided with the server down: %q", m)
	}
	db.pingFn = func(context.Context) error { return nil } // the registry is back, the listener is not
	if _, err := db.DataVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if m := db.ChangeMode(); m != driver.ChangePolling {
		t.Fatalf("mode = %q, want %q", m, driver.ChangePolling)
	}
}
