package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// A registry made before registries were marked (application_id 0, every
// clawpit table present) is classed as clawpit's, not as a foreign file.
func TestUnmarkedRegistryIsClawpit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	e, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	plain, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Exec("PRAGMA application_id = 0"); err != nil {
		t.Fatal(err)
	}
	plain.Close()
	class, why, err := checkSQLiteFile(ctx, path, 1)
	if err != nil || class != fileClawpit {
		t.Fatalf("an unmarked registry is classed %d (%s), %v", class, why, err)
	}
}

// The engine's own contract: a file it opened is stamped AppID, 0600,
// at the current schema version; its DataVersion moves when another
// connection commits; MustExist refuses a missing file, creating nothing.
func TestEngineOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "r.db")
	if _, err := Open(ctx, path, Options{MustExist: true}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("MustExist on a missing file: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused open created %s", filepath.Dir(path))
	}
	e, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("registry file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	var id, v int64
	if err := e.Read().QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil || id != AppID {
		t.Fatalf("application_id %#x (%v), want %#x", id, err, AppID)
	}
	if err := e.Read().QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || int(v) != SchemaVersion() {
		t.Fatalf("user_version %d (%v), want %d", v, err, SchemaVersion())
	}
	v0, err := e.DataVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Write().ExecContext(ctx, "INSERT INTO sessions (id, state, created_at) VALUES ('s1', 'active', 1)"); err != nil {
		t.Fatal(err)
	}
	if v1, err := e.DataVersion(ctx); err != nil || v1 == v0 {
		t.Fatalf("DataVersion %d after another connection committed (was %d), %v", v1, v0, err)
	}
}
