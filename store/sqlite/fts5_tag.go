//go:build sqlite_fts5 && !libsqlite3

package sqlite

// fts5Compiled: go-sqlite3 compiles its SQLite with FTS5 under the
// sqlite_fts5 tag (its sqlite3_opt_fts5.go), so Open need not ask an
// in-memory database on every call (a cgo open and a query per command).
const fts5Compiled = true
