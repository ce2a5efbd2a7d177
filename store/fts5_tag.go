//go:build !sqlite_fts5 && !fts5

package store

// The registry's task filter index is an SQLite FTS5 table (migration
// 0009), and go-sqlite3 compiles FTS5 only under the sqlite_fts5 build tag.
// A build without it would open registries whose triggers it cannot run,
// so it fails here, at compile time, naming the fix:
//
//	go build -tags sqlite_fts5 .
var _ = clawpit_needs_build_tag_sqlite_fts5
