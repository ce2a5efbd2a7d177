//go:build !sqlite_fts5 || libsqlite3

package sqlite

// fts5Compiled is false without the sqlite_fts5 tag, or with a system
// SQLite (libsqlite3), whose options only the library knows: Open asks it
// (checkFTS5).
const fts5Compiled = false
