package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/clawpit/clawpit/supervisor"
)

// TestPGSweepReadsThroughIndexes is SQLite's query-plan test on PostgreSQL
// (docs/contract.md "Maintenance": every rule reads through an index): over a P1-shaped registry
// (bench/p1data, copied into PostgreSQL and analyzed), a dry-run sweep and
// a steady applied sweep scan no large table sequentially — PostgreSQL's
// own counters (pg_stat_user_tables.seq_scan) say so.
func TestPGSweepReadsThroughIndexes(t *testing.T) {
	base := os.Getenv(storetest.Env)
	if base == "" {
		t.Skip(storetest.Env + " is not set")
	}
	if testing.Short() {
		t.Skip("builds a 100,000-task registry")
	}
	ctx := context.Background()
	lite := filepath.Join(t.TempDir(), "registry.db")
	now := time.Now()
	if err := p1data.Build(ctx, lite, p1data.Shape{Terminal: 100_000, Active: 2_000, Due: 20, Now: now}); err != nil {
		t.Fatal(err)
	}
	u := storetest.Schema(t, base)
	src, err := store.Open(ctx, lite, store.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	dst, err := store.Open(ctx, u, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CopyToPostgres(ctx, src, dst, ""); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("ANALYZE"); err != nil {
		t.Fatal(err)
	}
	sweep := func(dry bool) {
		t.Helper()
		db, err := store.Open(ctx, u, store.Options{MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
		jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{Dir: t.TempDir()})
		reg.SetJobController(jobs)
		if _, err := sweep.New(reg, jobs).Sweep(ctx, dry); err != nil {
			t.Fatal(err)
		}
		db.Close() // a backend's table statistics are flushed when it exits
	}
	sweep(false) // the due work: marks and prunes write, as they should
	seq := func() map[string]int64 {
		t.Helper()
		time.Sleep(100 * time.Millisecond) // backends exit asynchronously
		if _, err := raw.Exec("SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		rows, err := raw.Query("SELECT relname, seq_scan, COALESCE(idx_scan, 0) FROM pg_stat_user_tables WHERE schemaname = current_schema()")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var name string
			var n, idx int64
			if err := rows.Scan(&name, &n, &idx); err != nil {
				t.Fatal(err)
			}
			out[name], out[name+"/idx"] = n, idx
		}
		return out
	}
	before := seq()
	sweep(true)
	sweep(false)
	after := seq()
	// The counters move at all (else this test could not fail).
	if after["tasks/idx"] == before["tasks/idx"] {
		t.Fatalf("no index scan of tasks counted during two sweeps: statistics not visible (%v → %v)", before, after)
	}
	for _, table := range []string{"tasks", "runs", "events", "notifications", "approvals", "jobs"} {
		if n := after[table] - before[table]; n != 0 {
			t.Errorf("table %s: %d sequential scan(s) during two sweeps", table, n)
		}
	}
}
