package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// AppID is the SQLite application_id (PRAGMA application_id, the 32-bit
// big-endian integer at offset 68 of the database header) that marks a
// clawpit registry: ASCII "CLAW". Every writable open stamps it; a
// database carrying another mark is not opened.
const AppID = 0x434C4157

// sqliteMagic begins every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// clawpitTables are tables every clawpit registry has had since schema v1:
// an unmarked database with all of them and a user_version of 1 or more is
// a registry made before registries were marked.
var clawpitTables = []string{"sessions", "tasks", "runs", "approvals", "grants", "jobs", "notifications", "events"}

// fileClass is what checkSQLiteFile found at a registry path.
type fileClass int

const (
	fileEmpty   fileClass = iota // 0 bytes, or a database with no schema and user_version 0
	fileClawpit                  // marked with AppID, or an unmarked registry from before the mark
	fileForeign                  // another program's database: never opened for writing, never changed
	fileNotDB                    // no SQLite header: left to SQLite, which refuses it unchanged
)

// checkSQLiteFile classifies the existing regular file abs of size bytes
// without changing it: the header is read directly and, when that is not
// enough, the schema through a read-only connection (immutable=1 when no
// -wal file exists beside it, so not even a lock or a -shm file is made).
// why says, for a foreign file, what gave it away. Errors: reading the
// file failed.
func checkSQLiteFile(ctx context.Context, abs string, size int64) (c fileClass, why string, err error) {
	if size == 0 {
		return fileEmpty, "", nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return 0, "", fmt.Errorf("read registry %s: %w", abs, mapErr(err))
	}
	hdr := make([]byte, 100)
	n, err := io.ReadFull(f, hdr)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, "", fmt.Errorf("read registry %s: %w", abs, mapErr(err))
	}
	if n < len(hdr) || !bytes.HasPrefix(hdr, []byte(sqliteMagic)) {
		// Not an SQLite database at all (perhaps a registry damaged):
		// SQLite refuses it on the first read, writing nothing, and the
		// caller says "corrupt or not a clawpit registry" (exit 1).
		return fileNotDB, "", nil
	}
	switch id := binary.BigEndian.Uint32(hdr[68:72]); {
	case id == AppID:
		return fileClawpit, "", nil
	case id != 0:
		return fileForeign, fmt.Sprintf("it is marked as another program's (application_id %#x)", id), nil
	}
	return probeSQLiteFile(ctx, abs)
}

// probeSQLiteFile is checkSQLiteFile for an unmarked SQLite database: it
// reads the application_id (fresher than the header when a WAL holds
// changes), user_version and the schema's table names.
func probeSQLiteFile(ctx context.Context, abs string) (fileClass, string, error) {
	dsn := "file:" + abs + "?mode=ro"
	if _, err := os.Stat(abs + "-wal"); errors.Is(err, os.ErrNotExist) {
		dsn += "&immutable=1"
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return 0, "", fmt.Errorf("read registry %s: %w", abs, err)
	}
	defer db.Close()
	var appID, version, objects int64
	if err := db.QueryRowContext(ctx, "SELECT (SELECT application_id FROM pragma_application_id), "+
		"(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)").
		Scan(&appID, &version, &objects); err != nil {
		return fileForeign, "it cannot be read as an SQLite database (" + mapErr(err).Error() + ")", nil
	}
	switch {
	case appID == AppID:
		return fileClawpit, "", nil
	case appID != 0:
		return fileForeign, fmt.Sprintf("it is marked as another program's (application_id %#x)", uint32(appID)), nil
	case objects == 0 && version == 0:
		return fileEmpty, "", nil
	}
	missing, err := missingTables(ctx, db, clawpitTables)
	if err != nil {
		return fileForeign, "its schema cannot be read (" + mapErr(err).Error() + ")", nil
	}
	if version >= 1 && len(missing) == 0 {
		return fileClawpit, "", nil // a registry from before the mark
	}
	switch {
	case len(missing) == len(clawpitTables):
		return fileForeign, fmt.Sprintf("it is another program's SQLite database (%d schema object(s), none of clawpit's tables; user_version %d)",
			objects, version), nil
	case len(missing) > 0:
		return fileForeign, fmt.Sprintf("it lacks clawpit's tables %s (user_version %d)", strings.Join(missing, ", "), version), nil
	}
	return fileForeign, fmt.Sprintf("it has clawpit's table names but user_version %d", version), nil
}

// missingTables returns the names of want that db's schema has no table of.
func missingTables(ctx context.Context, db *sql.DB, want []string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		have[n] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
		}
	}
	return missing, nil
}

// refuseForeign is Open's error for a database that is not clawpit's:
// bad input (core.ErrInvalid, exit 2) naming the file, saying nothing was
// changed.
func refuseForeign(abs, why string) error {
	return core.Invalidf("%s is not a clawpit registry: %s; clawpit opened it for reading only and changed nothing "+
		"(give --db a clawpit registry, or a path where one may be created)", abs, why)
}

// stampAppID marks the registry with AppID (PRAGMA application_id) when it
// is not yet: a new registry, or one made before registries were marked.
func (e *Engine) stampAppID(ctx context.Context) error {
	var id int64
	if err := e.write.QueryRowContext(ctx, "PRAGMA application_id").Scan(&id); err != nil {
		return mapErr(err)
	}
	if id == AppID {
		return nil
	}
	if _, err := e.write.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", AppID)); err != nil {
		return fmt.Errorf("mark the registry (application_id): %w", mapErr(err))
	}
	return nil
}
