package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// foreignSQLite writes an SQLite database at path by running stmts through
// a plain connection (rollback journal).
func foreignSQLite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=DELETE")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestOpenRefusesForeignSQLite: a database that is not empty and not
// clawpit's is refused by every kind of open (ErrInvalid naming the file)
// and left byte for byte as it was, with no -wal, -shm or -journal beside
// it; an empty database or 0-byte file becomes a marked registry (0600).
func TestOpenRefusesForeignSQLite(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		stmts  []string
		refuse string // "" when accepted
	}{
		{"another program's table", []string{"CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
			"INSERT INTO notes (body) VALUES ('a'), ('b')", "PRAGMA user_version = 7"}, "none of clawpit's tables"},
		{"another program's mark", []string{"PRAGMA application_id = 1179011410"}, "application_id 0x46464952"},
		{"a view only", []string{"CREATE VIEW v AS SELECT 1"}, "another program's SQLite database"},
		{"some of clawpit's tables", []string{"CREATE TABLE sessions (id TEXT)", "CREATE TABLE tasks (id TEXT)",
			"PRAGMA user_version = 3"}, "lacks clawpit's tables runs"},
		{"clawpit's table names, user_version 0", func() []string {
			var s []string
			for _, n := range []string{"sessions", "tasks", "runs", "approvals", "grants", "jobs", "notifications", "events"} {
				s = append(s, "CREATE TABLE "+n+" (id TEXT)")
			}
			return s
		}(), "user_version 0"},
		{"user_version only", []string{"PRAGMA user_version = 7"}, "user_version 7"},
		{"empty database", []string{"PRAGMA user_version = 0", "VACUUM"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "app.db")
			foreignSQLite(t, path, c.stmts...)
			before := fileSum(t, path)
			for _, opt := range []Options{{}, {MustExist: true}, {ReadOnly: true}} {
				db, err := Open(ctx, path, opt)
				if c.refuse == "" {
					if opt.ReadOnly {
						continue // an unmigrated file cannot be opened read-only
					}
					if err != nil {
						t.Fatalf("Open(%+v): %v", opt, err)
					}
					db.Close()
					continue
				}
				if err == nil {
					db.Close()
					t.Fatalf("Open(%+v) accepted it", opt)
				}
				if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("Open(%+v): %v; want invalid naming %s and %q", opt, err, path, c.refuse)
				}
				if fileSum(t, path) != before {
					t.Fatalf("Open(%+v) changed the file", opt)
				}
				for _, ext := range []string{"-wal", "-shm", "-journal"} {
					if _, err := os.Stat(path + ext); err == nil {
						t.Fatalf("Open(%+v) left %s", opt, ext)
					}
				}
			}
			if c.refuse == "" {
				assertMarked(t, path)
			}
		})
	}
}

func assertMarked(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	if err := db.QueryRow("PRAGMA application_id").Scan(&id); err != nil || id != AppID {
		t.Fatalf("application_id %#x, %v; want %#x", id, err, AppID)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Fatalf("mode %#o, want 0600", m)
	}
}

// TestOpenEmptyFileAndFresh: a 0-byte file (mode 0644) and a missing path
// both become registries marked with AppID, mode 0600.
func TestOpenEmptyFileAndFresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(empty, 0o644)
	fresh := filepath.Join(dir, "sub", "fresh.db")
	for _, p := range []string{empty, fresh} {
		db, err := Open(ctx, p, Options{})
		if err != nil {
			t.Fatalf("Open(%s): %v", p, err)
		}
		db.Close()
		assertMarked(t, p)
	}
}

// TestOpenStampsUnmarkedRegistry: a registry made before registries were
// marked (clawpit's tables, user_version, application_id 0) is opened,
// not refused, and marked; a read-only open leaves it unmarked.
func TestOpenStampsUnmarkedRegistry(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Unmark it as a registry from before the mark was (WAL mode kept).
	plain, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Exec("PRAGMA application_id = 0"); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of an unmarked registry: %v", err)
	}
	ro.Close()
	var id int64
	foreignRead(t, path, "PRAGMA application_id", &id)
	if id != 0 {
		t.Fatalf("a read-only open marked the registry (%#x)", id)
	}
	db, err = Open(ctx, path, Options{MustExist: true})
	if err != nil {
		t.Fatalf("open of an unmarked registry: %v", err)
	}
	db.Close()
	assertMarked(t, path)
}

func foreignRead(t *testing.T, path, q string, v any) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(q).Scan(v); err != nil {
		t.Fatal(err)
	}
}

// TestPGOpenRefusesForeignSchema: a PostgreSQL schema that holds tables but
// no clawpit version table is refused and left as it was; an empty one
// becomes a registry.
func TestPGOpenRefusesForeignSchema(t *testing.T) {
	u := pgOnly(t)
	raw, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), u, Options{})
	if !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "not a clawpit registry") {
		t.Fatalf("Open of another program's schema: %v, want invalid", err)
	}
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the refused open changed the schema: %d tables, %v", n, err)
	}
	if _, err := raw.Exec("DROP TABLE notes"); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), u, Options{})
	if err != nil {
		t.Fatalf("Open of the emptied schema: %v", err)
	}
	db.Close()
}

// FuzzOpenForeignFile: whatever bytes a file at the registry path holds
// (but clawpit's mark), an Open that fails leaves them exactly as they
// were, and an Open that succeeds leaves a marked registry.
func FuzzOpenForeignFile(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.db")
	foreignSQLite(&testing.T{}, seed, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
		"INSERT INTO notes (body) VALUES ('a')", "PRAGMA user_version = 7")
	if b, err := os.ReadFile(seed); err == nil {
		f.Add(b)
		hdr := append([]byte(nil), b[:100]...)
		f.Add(hdr)
	}
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte("not a database at all"))
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) == 0 {
			return // an empty file becomes a registry (TestOpenEmptyFileAndFresh)
		}
		if len(content) >= 72 && string(content[:16]) == "SQLite format 3\x00" && string(content[68:72]) == "CLAW" {
			return // marked as clawpit's: opened as a registry, as it claims
		}
		path := filepath.Join(t.TempDir(), "r.db")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := Open(context.Background(), path, Options{BusyTimeoutMs: 100})
		if err == nil {
			db.Close()
			assertMarked(t, path)
			return
		}
		got, rerr := os.ReadFile(path)
		if rerr != nil || string(got) != string(content) {
			t.Fatalf("a refused open (%v) changed the file", err)
		}
	})
}
