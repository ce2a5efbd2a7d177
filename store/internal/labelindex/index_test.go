package labelindex

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// migrationsDir holds the SQLite registry's schema, applied as the store
// applies it (Rebuild is migration 0014's backfill).
const migrationsDir = "../../sqlite/migrations"

// openSchema is a fresh SQLite registry (every migration applied) on one
// connection.
func openSchema(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "r.db")+"?_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	names, err := filepath.Glob(filepath.Join(migrationsDir, "*.sql"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations in %s (%v)", migrationsDir, err)
	}
	sort.Strings(names)
	ctx := context.Background()
	for _, n := range names {
		body, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if filepath.Base(n) == Migration {
			if err := Rebuild(ctx, db, Sizes{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return db
}

// small are sizes that split and renumber on a few dozen rows.
var small = Sizes{Bucket: 3, Split: 6, Rekeys: 4, Chunk: 4}

// inTx runs fn in one transaction and folds the queue before it commits,
// as the store's Update does.
func inTx(t *testing.T, db *sql.DB, s Sizes, fn func(tx *sql.Tx) error) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		t.Fatal(err)
	}
	if _, err := Fold(ctx, tx, s); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func insertTask(tx *sql.Tx, id, label string) error {
	_, err := tx.Exec(`INSERT INTO tasks (id, runtime, status, delivery_status, notify_policy, label, created_at, activity_at)
		VALUES (?, 'cli', 'running', 'pending', 'done_only', ?, 1, 1)`, id, label)
	return err
}

// TestIndexInvariantsRandom: random inserts, renames and deletes, each
// transaction folded as the store folds it, keep the index's invariants
// (Check) after every transaction; Maintain then settles it, and Search
// finds exactly the names LIKE finds.
func TestIndexInvariantsRandom(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			db := openSchema(t)
			r := rand.New(rand.NewPCG(seed, 7))
			words := []string{"alpha", "beta", "gamma", "delta", "zeta", "zzz", "aaa"}
			next := 0
			for step := range 80 {
				inTx(t, db, small, func(tx *sql.Tx) error {
					for range 1 + r.IntN(8) {
						var err error
						switch k := r.IntN(10); {
						case k < 6 || next == 0:
							err = insertTask(tx, fmt.Sprintf("t%05d", next), fmt.Sprintf("%s %d", words[r.IntN(len(words))], r.IntN(50)))
							next++
						case k < 9:
							_, err = tx.Exec(`UPDATE tasks SET label = ? WHERE id = ?`,
								fmt.Sprintf("%s %d", words[r.IntN(len(words))], r.IntN(50)), fmt.Sprintf("t%05d", r.IntN(next)))
						default:
							_, err = tx.Exec(`DELETE FROM tasks WHERE id = ?`, fmt.Sprintf("t%05d", r.IntN(next)))
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err := Check(ctx, db, false, small); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				// Fold indexed the transaction's tasks before it committed.
				var queued int
				if err := db.QueryRow(`SELECT count(*) FROM tasks_label_queue`).Scan(&queued); err != nil || queued != 0 {
					t.Fatalf("step %d: %d tasks still queued after the fold (%v)", step, queued, err)
				}
			}
			var c StmtCache
			defer c.Close()
			if _, _, err := Maintain(ctx, db, &c, small, 1<<20, true); err != nil {
				t.Fatal(err)
			}
			if err := Check(ctx, db, true, small); err != nil {
				t.Fatalf("after Maintain: %v", err)
			}
			for _, w := range words {
				got, err := Search(ctx, db, Query{Match: MatchAll(w), Like: "%" + w + "%", OrderBy: " ORDER BY t.win_name, t.id", Limit: 1 << 20}, small)
				if err != nil {
					t.Fatal(err)
				}
				var want int
				if err := db.QueryRow(`SELECT count(*) FROM tasks WHERE win_name LIKE ?`, "%"+w+"%").Scan(&want); err != nil {
					t.Fatal(err)
				}
				if len(got) != want {
					t.Errorf("Search(%q): %d rows, LIKE finds %d", w, len(got), want)
				}
			}
		})
	}
}

// TestCheckCatchesABrokenIndex: Check is no test that cannot fail — a key
// moved to the wrong bucket, or a key missing from the trigram index, is
// reported.
func TestCheckCatchesABrokenIndex(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	inTx(t, db, small, func(tx *sql.Tx) error {
		for i := range 30 {
			if err := insertTask(tx, fmt.Sprintf("t%05d", i), fmt.Sprintf("label %05d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := Check(ctx, db, true, small); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE tasks_label_keys SET key = key + (1 << 33) WHERE task = (SELECT max(task) FROM tasks_label_keys)`); err != nil {
		t.Fatal(err)
	}
	if err := Check(ctx, db, false, small); err == nil {
		t.Fatal("Check passed a key in the wrong bucket")
	}
}

// TestRespreadCapMarkedNeighbours: marked neighbours in a renumbering's
// run count by their size too (a reviewer's case, the marks set by hand),
// so a writer does not renumber past its cap.
func TestRespreadCapMarkedNeighbours(t *testing.T) {
	ctx := context.Background()
	db := openSchema(t)
	s := Sizes{Bucket: 3, Split: 6}
	inTx(t, db, s, func(tx *sql.Tx) error {
		for i := range 60 {
			if err := insertTask(tx, fmt.Sprintf("t%05d", i), fmt.Sprintf("l%05d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	bs, err := sqlColumn(ctx, tx, `SELECT b FROM tasks_label_buckets ORDER BY b`)
	if err != nil {
		t.Fatal(err)
	}
	b, left := bs[len(bs)/2], bs[len(bs)/2-1]
	// Neighbours marked as Maintain's backlog: n = -held.
	if _, err := tx.Exec(`UPDATE tasks_label_buckets SET n = -(SELECT count(*) FROM tasks_label_keys WHERE key >> ? = b) WHERE b != ? AND ? = ?`,
		Shift, b, left, left); err != nil {
		t.Fatal(err)
	}
	var held int64
	if err := tx.QueryRow(`SELECT count(*) FROM tasks_label_keys`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	_, ok, err := respread(ctx, tx, b, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Fatalf("renumbered a run holding at least %d tasks under a cap of 3", held)
	}
}

func sqlColumn(ctx context.Context, x Execer, q string) ([]int64, error) {
	rows, err := x.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
