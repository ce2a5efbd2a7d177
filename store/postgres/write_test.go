package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// A write transaction's own BEGIN and COMMIT (Begin, writeTx): the
// settings BEGIN carries, the notification COMMIT carries (heard only when
// it commits and wrote), and a connection that goes back to the pool never
// still inside a transaction, whatever failed.
func TestPGWriteTx(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	app := fmt.Sprintf("clawpit_wtx_%d", time.Now().UnixNano())
	u += "&application_name=" + app
	e, err := Open(ctx, u, Options{BusyTimeoutMs: 1234})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Row 1 exists: inserting it again fails a statement.
	if _, err := e.Write().ExecContext(ctx, "CREATE TABLE wtx_probe (id INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO wtx_probe VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	listen, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer listen.Close(ctx)
	if _, err := listen.Exec(ctx, "LISTEN "+pgx.Identifier{e.Channel()}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	heard := func() bool {
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := listen.WaitForNotification(wctx)
		return err == nil
	}

	for i, tc := range []struct {
		name       string
		work       func(w *writeTx) error // statements inside the transaction
		wrote      bool
		rollback   bool // Rollback instead of Commit
		wantErr    func(error) bool
		wantRow    bool
		wantNotify bool
	}{
		{name: "a write commits and notifies", wrote: true, wantRow: true, wantNotify: true,
			work: func(w *writeTx) error { return nil }},
		{name: "a read-only commit is silent", wrote: false,
			work: func(w *writeTx) error { return w.QueryRowContext(ctx, "SELECT 1").Scan(new(int)) }},
		{name: "a rollback writes nothing and is silent", wrote: true, rollback: true,
			work: func(w *writeTx) error { return insert(w, 3) }},
		{name: "a failed statement fails the notifying commit", wrote: true,
			work:    func(w *writeTx) error { insert(w, 1); return insert(w, 4) }, // duplicate key first
			wantErr: isSerializationFailure},                                      // 25P02: the transaction had failed
		{name: "a failed statement turns a silent commit into rollback", wrote: false,
			work:    func(w *writeTx) error { insert(w, 1); return nil },
			wantErr: func(err error) bool { return errors.Is(err, pgx.ErrTxCommitRollback) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// More rounds than the pool has connections: a connection
			// returned inside a transaction would show below.
			for round := range 6 {
				id := 100*(i+1) + round
				wtx, err := e.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer wtx.Rollback()
				w := wtx.(*writeTx)
				var iso, lt string
				if err := w.QueryRowContext(ctx, "SELECT current_setting('transaction_isolation'), current_setting('lock_timeout')").Scan(&iso, &lt); err != nil {
					t.Fatal(err)
				}
				if iso != "repeatable read" || lt != "1234ms" {
					t.Fatalf("transaction_isolation %q, lock_timeout %q; want repeatable read, 1234ms", iso, lt)
				}
				werr := tc.work(w)
				if tc.wantRow {
					werr = errors.Join(werr, insert(w, id))
				}
				if werr != nil && tc.wantErr == nil {
					t.Fatal(werr)
				}
				if tc.rollback {
					err = wtx.Rollback()
				} else {
					err = wtx.Commit(ctx, tc.wrote)
				}
				if tc.wantErr == nil && err != nil || tc.wantErr != nil && !tc.wantErr(err) {
					t.Fatalf("round %d: end: %v", round, err)
				}
				if err := wtx.Rollback(); err != nil { // after the end: nothing
					t.Fatalf("Rollback after the end: %v", err)
				}
				var n int
				if err := e.Read().QueryRowContext(ctx, "SELECT count(*) FROM wtx_probe WHERE id = $1", id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if (n == 1) != tc.wantRow {
					t.Fatalf("round %d: row %d present %v, want %v", round, id, n == 1, tc.wantRow)
				}
				if got := heard(); got != tc.wantNotify {
					t.Fatalf("round %d: notification heard %v, want %v", round, got, tc.wantNotify)
				}
			}
			var inTx int
			if err := e.Read().QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'", app).Scan(&inTx); err != nil {
				t.Fatal(err)
			}
			if inTx != 0 {
				t.Fatalf("%d connection(s) left idle in a transaction", inTx)
			}
		})
	}
}

func insert(w *writeTx, id int) error {
	_, err := w.ExecContext(context.Background(), "INSERT INTO wtx_probe (id, v) VALUES ($1, 0)", id)
	return err
}

// With Options.RegistryLock (bench/pg's "before"), BEGIN also takes the
// registry-wide advisory lock, at READ COMMITTED.
func TestPGWriteTxRegistryLock(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	e, err := Open(ctx, u, Options{BusyTimeoutMs: 5000, RegistryLock: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	wtx, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer wtx.Rollback()
	var iso string
	var held bool
	if err := wtx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation'),
		EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted)`).Scan(&iso, &held); err != nil {
		t.Fatal(err)
	}
	if iso != "read committed" || !held {
		t.Fatalf("isolation %q, advisory lock held %v; want read committed, true", iso, held)
	}
}

// quoteLiteral's literal reads back as the text itself whether
// standard_conforming_strings is on or off (off, a plain '…' literal with
// a backslash ended early: what followed ran as SQL).
func TestPGQuoteLiteral(t *testing.T) {
	u := pgOnly(t)
	ctx := context.Background()
	for _, scs := range []string{"on", "off"} {
		c, err := pgx.Connect(ctx, u+"&options=-c%20standard_conforming_strings%3D"+scs)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"clawpit_changes", `team\a`, `x\', $$$$); CREATE TABLE pwned(i int); COMMIT; --`, `a''b\\`, "é'\\"} {
			// The wire protocol's simple query, as Begin and Commit send
			// theirs (pgx's own simple mode refuses to run with the
			// setting off).
			var got string
			res, err := c.PgConn().Exec(ctx, "SELECT "+quoteLiteral(s)).ReadAll()
			if err == nil && len(res) == 1 && len(res[0].Rows) == 1 {
				got = string(res[0].Rows[0][0])
			}
			if err != nil || got != s {
				t.Errorf("standard_conforming_strings %s: %s read back %q, %v; want %q", scs, quoteLiteral(s), got, err, s)
			}
		}
		var pwned bool
		c.QueryRow(ctx, "SELECT to_regclass('pwned') IS NOT NULL").Scan(&pwned)
		c.Close(ctx)
		if pwned {
			t.Fatalf("standard_conforming_strings %s: a quoted text ran as SQL", scs)
		}
	}
}

// The registry's channel is cut at 63 bytes on a character's boundary,
// as PostgreSQL cuts identifiers: pg_notify refuses a name that is not
// UTF-8.
func TestPGChannelCutsWholeCharacters(t *testing.T) {
	for _, schema := range []string{"public", "t_0123", strings.Repeat("é", 28), strings.Repeat("x", 60)} {
		c := pgChannel(schema)
		if len(c) > 63 || !utf8.ValidString(c) || !strings.HasPrefix(c, "clawpit_") {
			t.Errorf("pgChannel(%q) = %q (%d bytes)", schema, c, len(c))
		}
	}
}
