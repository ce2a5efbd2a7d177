package p1data

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/store"
)

// TestReplicateRefuses: an override naming a column the table does not
// have (one a migration renamed or dropped) fails the build instead of
// being ignored, and so does a missing template.
func TestReplicateRefuses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"colour": "'red'"}, "table sessions has no column colour"},
		{map[string]string{"id": "'s-' || i"}, "template p1data-template-x: 0 rows in sessions, want 1"},
	} {
		tx, err := raw.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := replica{what: "x", table: "sessions", key: "id", count: 1, rows: "n", set: tc.set}
		err = r.replicate(ctx, tx, strings.NewReplacer())
		tx.Rollback()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("replicate %v: %v, want an error saying %q", tc.set, err, tc.want)
		}
	}
}
