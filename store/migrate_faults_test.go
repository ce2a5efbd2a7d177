package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/store/sqlite"
)

// TestMigrationHoldsWaitBackfill: a schema-2 registry upgraded to schema 3
// marks holds_wait on exactly the pending approvals the old timestamp rule
// counted in their run's pending_approval_waits (docs/contract.md "The inactivity watchdog pauses for approvals"), and its
// notifications start unclaimed.
func TestMigrationHoldsWaitBackfill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names[:2] {
		body, err := sqlite.MigrationSQL(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, q := range []string{
		"PRAGMA user_version = 2",
		`INSERT INTO runs (run_id, started_at, last_progress_at, inactivity_budget_ms, pending_approval_waits) VALUES ('live', 100, 100, 60000, 2)`,
		`INSERT INTO runs (run_id, started_at, last_progress_at, inactivity_budget_ms, pending_approval_waits, ended_at, outcome) VALUES ('ended', 100, 100, 60000, 1, 500, 'ok')`,
		`INSERT INTO approvals (id, session, run_id, tool, command, status, requested_at) VALUES
		  ('held-live', 's', 'live', 'Bash', 'ls', 'pending', 200),
		  ('held-live-same-ms-as-start', 's', 'live', 'Bash', 'ls', 'pending', 100),
		  ('before-run', 's', 'live', 'Bash', 'ls', 'pending', 50),
		  ('decided', 's', 'live', 'Bash', 'ls', 'approved', 300),
		  ('held-ended', 's', 'ended', 'Bash', 'ls', 'pending', 499),
		  ('at-end', 's', 'ended', 'Bash', 'ls', 'pending', 500),
		  ('unknown-run', 's', 'nope', 'Bash', 'ls', 'pending', 200)`,
		`INSERT INTO approvals (id, session, tool, command, status, requested_at) VALUES ('no-run', 's', 'Bash', 'ls', 'pending', 200)`,
		`INSERT INTO notifications (session, kind, subject_id, text, dedup_key, created_at) VALUES ('s', 'task_failed', 't', 'x', 'k', 1)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]bool{"held-live": true, "held-live-same-ms-as-start": true, "held-ended": true}
	rows, err := db.read.Query("SELECT id, holds_wait FROM approvals")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var holds bool
		if err := rows.Scan(&id, &holds); err != nil {
			t.Fatal(err)
		}
		n++
		if holds != want[id] {
			t.Errorf("approval %s: holds_wait %v, want %v", id, holds, want[id])
		}
	}
	if n != 8 {
		t.Errorf("%d approvals", n)
	}
	var by string
	var until sql.NullInt64
	if err := db.read.QueryRow("SELECT claimed_by, claim_until FROM notifications").Scan(&by, &until); err != nil || by != "" || until.Valid {
		t.Errorf("notification claim %q %v, err %v", by, until, err)
	}
}
