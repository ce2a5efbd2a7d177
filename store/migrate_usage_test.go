package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/sqlite"
)

// TestMigrationCarriesUsageOutsideWindows: a registry of schema v19 with a
// session last counted 10 minutes ago, migrated, keeps the session's
// lifetime total (every token counted, no --since) but puts none of it in
// the last hour: the total was spent at unknown times before counts had
// times, and in the rolling hour it would cross an hourly budget for
// everyone and inflate `usage --since 1h`.
func TestMigrationCarriesUsageOutsideWindows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "registry.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	const v19 = 19
	if !strings.HasPrefix(names[v19], "0020_") {
		t.Fatalf("migration %d is %s, want 0020_*", v19+1, names[v19])
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA application_id = %d", AppID)); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[:v19] {
		body, err := sqlite.MigrationSQL(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("migration %s: %v", n, err)
		}
	}
	tenMinutesAgo := time.Now().Add(-10 * time.Minute).UnixMilli()
	if _, err := raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO token_usage (scope, scope_id, model, input_tokens, counted_at) VALUES ('session', 's1', 'm', 5000000, %d)`,
		v19, tenMinutesAgo)); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	view(t, db, func(tx core.Tx) error {
		hour, err := tx.SumUsage(core.UsageFilter{Since: core.TS(time.Now().Add(-time.Hour))})
		if err != nil {
			return err
		}
		if len(hour) != 0 {
			t.Errorf("the last hour after the migration: %+v, want nothing", hour)
		}
		all, err := tx.SumUsage(core.UsageFilter{Scope: core.UsageSession})
		if err != nil {
			return err
		}
		if len(all) != 1 || all[0].Tokens.Input != 5000000 {
			t.Errorf("every count after the migration: %+v, want the session's 5000000 input tokens", all)
		}
		return nil
	})
}
