package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/storetest"
)

func TestOpenCreatesPrivateFileWithPragmas(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "clawpit")
	path := filepath.Join(dir, "registry.db")
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", p, got, want)
		}
	}
	for name, pool := range map[string]*sql.DB{"write": db.write, "read": db.read} {
		var mode string
		var busy, fk int
		if err := pool.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow("PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" || busy < 5000 || fk != 1 {
			t.Errorf("%s pool: journal_mode=%s busy_timeout=%d foreign_keys=%d; want wal, >=5000, 1", name, mode, busy, fk)
		}
	}
	var v int
	if err := db.write.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion() || v < 1 {
		t.Errorf("user_version = %d, want %d", v, SchemaVersion())
	}
}

func TestOpenMustExist(t *testing.T) {
	_, err := Open(context.Background(), filepath.Join(t.TempDir(), "missing.db"), Options{MustExist: true})
	if !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// A directory, fifo or device is bad input named in one sentence, whatever
// the options, and opening never blocks (SQLite would on a fifo).
func TestOpenRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{dir, "a directory"},
		{fifo, "a named pipe (fifo)"},
		{"/dev/null", "a device"},
	} {
		for _, opt := range []Options{{}, {MustExist: true}, {ReadOnly: true}} {
			_, err := Open(context.Background(), c.path, opt)
			want := "registry path " + c.path + " is " + c.kind + ", not a database file"
			if !errors.Is(err, core.ErrInvalid) || !strings.HasSuffix(err.Error(), ": "+want) {
				t.Errorf("%s %+v: err = %v, want ErrInvalid %q", c.path, opt, err, want)
			}
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// A newer clawpit's registry: marked as clawpit's, a later version.
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = 99", AppID)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = Open(context.Background(), path, Options{})
	if !errors.Is(err, core.ErrNewerSchema) {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "99") || !strings.Contains(msg, fmt.Sprint(SchemaVersion())) {
		t.Errorf("message %q should name version 99 and %d", msg, SchemaVersion())
	}
}

func TestOpenMigratesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.write.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion() {
		t.Errorf("user_version = %d, want %d", v, SchemaVersion())
	}
	update(t, db, func(tx core.Tx) error {
		return tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
	})
	// Reopening an up-to-date database is a no-op.
	db2, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
}

func TestOpenRejectsGarbageFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not sqlite ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want an error naming %s", err, path)
	}
}

func TestReadOnlyOpen(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		path := freshLocation(t)
		rw, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		update(t, rw, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s1", Label: "before", State: core.SessionActive, CreatedAt: 1})
		})

		ro, err := Open(context.Background(), path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		err = ro.Update(context.Background(), func(tx core.Tx) error {
			s, err := tx.GetSession("s1")
			if err != nil {
				return err
			}
			s.Label = "after"
			return tx.UpdateSession(s)
		})
		if !errors.Is(err, core.ErrReadOnly) {
			t.Fatalf("write through a read-only open: err = %v, want ErrReadOnly", err)
		}
		view(t, ro, func(tx core.Tx) error {
			s, err := tx.GetSession("s1")
			if err != nil {
				return err
			}
			if s.Label != "before" || s.Rev != 1 {
				t.Errorf("row changed through a read-only open: %+v", s)
			}
			return nil
		})
		rw.Close()

		// A read-only open of a missing file does not create it.
		if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "nope.db"), Options{ReadOnly: true}); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("read-only open of a missing file: err = %v, want ErrNotFound", err)
		}
	})
}

func TestWritesInsideViewFail(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		update(t, db, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
		})
		writes := map[string]func(core.Tx) error{
			"InsertSession": func(tx core.Tx) error {
				return tx.InsertSession(&core.Session{ID: "s2", State: core.SessionActive, CreatedAt: 1})
			},
			"UpdateSession": func(tx core.Tx) error {
				return tx.UpdateSession(&core.Session{ID: "s1", State: core.SessionClosed, CreatedAt: 1, Rev: 1})
			},
			"AppendEvent": func(tx core.Tx) error {
				return tx.AppendEvent(core.Event{At: 1, Entity: "session", EntityID: "s1", Actor: core.ActorRuntime})
			},
			"DeleteGrant": func(tx core.Tx) error { return tx.DeleteGrant("g1") },
			"InsertNotification": func(tx core.Tx) error {
				_, err := tx.InsertNotification(&core.Notification{Kind: core.NotifyJobFinished, Text: "x", DedupKey: "k", CreatedAt: 1})
				return err
			},
			"MarkNotificationDelivered": func(tx core.Tx) error {
				_, err := tx.MarkNotificationDelivered(1, 5)
				return err
			},
		}
		for name, fn := range writes {
			t.Run(name, func(t *testing.T) {
				if err := db.View(context.Background(), fn); !errors.Is(err, core.ErrReadOnly) {
					t.Errorf("err = %v, want ErrReadOnly", err)
				}
			})
		}
		view(t, db, func(tx core.Tx) error {
			s, err := tx.GetSession("s1")
			if err != nil {
				return err
			}
			if s.State != core.SessionActive || s.Rev != 1 {
				t.Errorf("session changed inside View: %+v", s)
			}
			return nil
		})
	})
}

func TestUpdateRollsBackOnError(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		boom := errors.New("boom")
		err := db.Update(context.Background(), func(tx core.Tx) error {
			if err := tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		func() {
			defer func() { recover() }()
			db.Update(context.Background(), func(tx core.Tx) error { panic("fn panics") })
		}()
		// The single write connection is free again after the panic.
		update(t, db, func(tx core.Tx) error {
			if _, err := tx.GetSession("s1"); !errors.Is(err, core.ErrNotFound) {
				t.Errorf("rolled-back insert is visible: err = %v", err)
			}
			return nil
		})
	})
}

func TestDataVersionSeesOtherConnections(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		path := freshLocation(t)
		// Through a pooler the watcher listens on its direct URL (--listen-db).
		watcher, err := Open(context.Background(), path, Options{ListenURL: storetest.ListenLocation(t, path)})
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Close()
		other, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		ctx := context.Background()

		v0, err := watcher.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Reads do not change it.
		view(t, other, func(tx core.Tx) error { _, err := tx.ListTasks(core.TaskFilter{}); return err })
		if v, _ := watcher.DataVersion(ctx); v != v0 {
			t.Errorf("data_version changed without a write: %d → %d", v0, v)
		}
		update(t, other, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
		})
		// PostgreSQL delivers the change notification just after the
		// commit: wait for it (SQLite's data_version has changed already).
		v1 := waitDataVersion(t, watcher, v0)
		if v1 == v0 {
			t.Errorf("data_version did not change after another connection's commit (%d)", v0)
		}
		// A write through the watcher's own handle uses another connection, so it shows too.
		update(t, watcher, func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s2", State: core.SessionActive, CreatedAt: 1})
		})
		if v2 := waitDataVersion(t, watcher, v1); v2 == v1 {
			t.Errorf("data_version did not change after the handle's own commit")
		}
	})
}

// TestConcurrentWritersAcrossHandles simulates several processes: goroutines
// increment one row through two separate *DB handles. The busy timeout must
// serialise them without a "database is locked" error, and no increment may
// be lost.
func TestConcurrentWritersAcrossHandles(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		path := freshLocation(t)
		var dbs [2]*DB
		for i := range dbs {
			db, err := Open(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		update(t, dbs[0], func(tx core.Tx) error {
			return tx.InsertRun(&core.Run{RunID: "r1", StartedAt: 1, LastProgressAt: 1, InactivityBudgetMs: 1})
		})
		const workers, perWorker = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, workers*perWorker)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(db *DB) {
				defer wg.Done()
				for i := 0; i < perWorker; i++ {
					err := db.Update(context.Background(), func(tx core.Tx) error {
						r, err := tx.GetRun("r1")
						if err != nil {
							return err
						}
						r.PendingApprovalWaits++
						if err := tx.UpdateRun(r); err != nil {
							return err
						}
						return tx.AppendEvent(core.Event{At: 1, Entity: core.EntityRun, EntityID: "r1", Actor: core.ActorRuntime, Applied: true})
					})
					if err != nil {
						errs <- err
					}
					// Readers run alongside the writers.
					if err := db.View(context.Background(), func(tx core.Tx) error { _, err := tx.GetRun("r1"); return err }); err != nil {
						errs <- err
					}
				}
			}(dbs[w%2])
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent write: %v", err)
		}
		view(t, dbs[1], func(tx core.Tx) error {
			r, err := tx.GetRun("r1")
			if err != nil {
				return err
			}
			if r.PendingApprovalWaits != workers*perWorker || r.Rev != workers*perWorker+1 {
				t.Errorf("waits=%d rev=%d, want %d and %d", r.PendingApprovalWaits, r.Rev, workers*perWorker, workers*perWorker+1)
			}
			return nil
		})
	})
}

func TestMapErr(t *testing.T) {
	if mapErr(nil) != nil {
		t.Error("mapErr(nil) != nil")
	}
	if err := mapErr(os.ErrPermission); !errors.Is(err, core.ErrReadOnly) {
		t.Errorf("permission error: %v, want ErrReadOnly", err)
	}
	if err := mapErr(core.ErrConflict); !errors.Is(err, core.ErrConflict) {
		t.Errorf("sentinel did not pass through: %v", err)
	}
}

// TestMapErrUnreachableIsPostgreSQLs: only an error of the PostgreSQL
// driver or of the network is "cannot reach the registry database
// (PostgreSQL)"; a context deadline on a SQLite registry stays the
// deadline (it implements net.Error, which once made it PostgreSQL's).
// The errors are the real ones each engine returns.
func TestMapErrUnreachableIsPostgreSQLs(t *testing.T) {
	// endless never finishes on either engine: its deadline cuts it.
	const endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	for _, tc := range []struct {
		name        string
		pg          bool // needs storetest.Env's server
		err         func(t *testing.T) error
		unreachable bool // want core.ErrUnavailable, "(PostgreSQL)"
	}{
		{name: "sqlite deadline mid-query", err: func(t *testing.T) error {
			db := openAt(t, filepath.Join(t.TempDir(), "registry.db"))
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			var n int64
			return db.read.QueryRowContext(ctx, endless).Scan(&n)
		}},
		{name: "sqlite deadline before the transaction", err: func(t *testing.T) error {
			db := openAt(t, filepath.Join(t.TempDir(), "registry.db"))
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			return db.Update(ctx, func(tx core.Tx) error { return nil })
		}},
		{name: "postgres connect refused", unreachable: true, err: func(t *testing.T) error {
			conn, err := sql.Open("pgx", "postgres://clawpit@"+closedPort(t)+"/clawpit?sslmode=disable&connect_timeout=5")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			return conn.PingContext(context.Background())
		}},
		{name: "postgres deadline mid-query", pg: true, unreachable: true, err: func(t *testing.T) error {
			db := openAt(t, freshPGSchema(t, os.Getenv(storetest.Env)))
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var n int64
			return db.read.QueryRowContext(ctx, "SELECT 1 FROM pg_sleep(10)").Scan(&n)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pg && os.Getenv(storetest.Env) == "" {
				t.Skip(storetest.Env + " is not set")
			}
			raw := tc.err(t)
			if raw == nil {
				t.Fatal("no error")
			}
			err := mapErr(raw)
			pgText := strings.Contains(err.Error(), "PostgreSQL")
			if errors.Is(err, core.ErrUnavailable) != tc.unreachable || pgText != tc.unreachable {
				t.Fatalf("mapErr(%v) = %v; want unreachable (PostgreSQL): %v", raw, err, tc.unreachable)
			}
			if !tc.unreachable && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("mapErr(%v) = %v; want the context's deadline kept", raw, err)
			}
		})
	}
}

// openAt opens the registry at loc, closed when t ends.
func openAt(t *testing.T, loc string) *DB {
	t.Helper()
	db, err := Open(context.Background(), loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// closedPort is host:port of a local TCP port nothing listens on (it
// listened a moment ago), so a connect there is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestBusyPastTimeout: a writer that holds the lock longer than another
// handle's busy timeout makes that handle's Update fail with core.ErrBusy.
func TestBusyPastTimeout(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		path := freshLocation(t)
		holder, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		impatient, err := Open(context.Background(), path, Options{BusyTimeoutMs: 20})
		if err != nil {
			t.Fatal(err)
		}
		defer impatient.Close()

		locked, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- holder.Update(context.Background(), func(tx core.Tx) error {
				// The same row as impatient's: PostgreSQL has no
				// registry-wide lock (issue 30), only the rows'.
				err := tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
				close(locked)
				<-release
				return err
			})
		}()
		<-locked
		err = impatient.Update(context.Background(), func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
		})
		// Readers are not blocked by a writer in WAL mode.
		view(t, impatient, func(tx core.Tx) error { _, err := tx.ListSessions(core.SessionFilter{}); return err })
		close(release)
		if !errors.Is(err, core.ErrBusy) {
			t.Errorf("err = %v, want ErrBusy", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// waitDataVersion polls db's DataVersion until it differs from old, for at
// most 2 s, and returns the last value read.
func waitDataVersion(t *testing.T, db *DB, old int64) int64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		v, err := db.DataVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v != old || time.Now().After(deadline) {
			return v
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// On PostgreSQL, writers of different rows do not wait for each other
// (issue 30: every Update took one registry-wide advisory lock): while one
// transaction holds its row, another with a 20 ms busy timeout commits.
func TestPGWritersOfDifferentRowsInParallel(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		if !storetest.OnPostgres(t) {
			t.Skip("SQLite has one writer by design")
		}
		path := freshLocation(t)
		holder, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		other, err := Open(context.Background(), path, Options{BusyTimeoutMs: 20})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		locked, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- holder.Update(context.Background(), func(tx core.Tx) error {
				err := tx.InsertSession(&core.Session{ID: "s1", State: core.SessionActive, CreatedAt: 1})
				close(locked)
				<-release
				return err
			})
		}()
		<-locked
		err = other.Update(context.Background(), func(tx core.Tx) error {
			return tx.InsertSession(&core.Session{ID: "s2", State: core.SessionActive, CreatedAt: 1})
		})
		close(release)
		if err != nil {
			t.Errorf("a writer of another row while one is held: %v, want it committed", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
