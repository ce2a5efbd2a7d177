package store

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/store/internal/driver"
)

// dialect is the SQL engine behind a DB. Every query of this package is
// written once, in SQLite's dialect with "?" placeholders; pgSQL rewrites
// it for PostgreSQL, so both stores run the very same statements and keep
// the same semantics by construction (one executor, two drivers — the shape
// of River's riverdriver, without a second copy of every query).
type dialect = driver.Dialect

const (
	dialectSQLite   = driver.SQLite
	dialectPostgres = driver.Postgres
)

// indexedBy matches SQLite's "INDEXED BY name" planner hint, which
// PostgreSQL does not have (its planner uses statistics instead).
var indexedBy = regexp.MustCompile(`\s+INDEXED BY\s+[A-Za-z_][A-Za-z0-9_]*`)

// pgSQL rewrites one SQLite-dialect statement for PostgreSQL:
//   - "INDEXED BY x" hints are dropped;
//   - "LIMIT ?" becomes "LIMIT NULLIF($n, -1)": callers pass -1 for "no
//     limit" (SQLite's convention) and PostgreSQL reads LIMIT NULL as none;
//   - each "?" outside a quoted literal or identifier becomes $1, $2, …;
//     a numbered "?NNN" becomes "$NNN" (a statement uses one style or the
//     other, as SQLite requires for a consistent numbering).
//
// It knows nothing else: a statement that needs more (PRAGMA, last insert
// id) branches on the dialect where it is issued. A new query runs on both
// stores when it keeps to: "?" placeholders; LIMIT ? with -1 for none;
// CAST(? AS type) inside a VALUES list used as a table (typedRowsOf);
// functions both engines have (COALESCE, MAX, ||; not printf, IIF or JSON
// functions); 0/1 for booleans; RETURNING instead of LastInsertId; partial
// index predicates repeated verbatim. The conformance suite
// (store/storetest) runs every store test on both.
func pgSQL(q string) string {
	q = indexedBy.ReplaceAllString(q, "")
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			// "?NNN", SQLite's numbered parameter, is PostgreSQL's "$NNN".
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteString("$" + q[i+1:j])
			i = j - 1
		case c == '?':
			n++
			ph := "$" + strconv.Itoa(n)
			if endsWithLimit(b.String()) {
				ph = "NULLIF(" + ph + "::bigint, -1)"
			}
			b.WriteString(ph)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// endsWithLimit reports whether s ends with the keyword LIMIT and
// whitespace (it looks back only over that much).
func endsWithLimit(s string) bool {
	i := len(s)
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n') {
		i--
	}
	return strings.HasSuffix(s[:i], "LIMIT")
}

// dialectSQL returns q (SQLite dialect) in db's dialect.
func (db *DB) dialectSQL(q string) string {
	if db.dialect != dialectPostgres {
		return q
	}
	return pgSQL(q)
}
