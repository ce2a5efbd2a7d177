package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clawpit/clawpit/termtext"
)

// Sentinel errors. Callers test them with errors.Is; main maps them to the
// exit codes of docs/contract.md "Commands: exit codes and JSON".
var (
	// ErrNotFound: no row matches the id or prefix (exit 4).
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: an id prefix matches more than one row (exit 4).
	ErrAmbiguous = errors.New("ambiguous id prefix")
	// ErrInvalid: bad input — unknown status, malformed value, missing field (exit 2).
	ErrInvalid = errors.New("invalid input")
	// ErrConflict: a conditional update lost a race; the caller may re-read and retry.
	ErrConflict = errors.New("conflict: row changed concurrently")
	// ErrNewerSchema: the database was written by a newer clawpit (exit 1).
	ErrNewerSchema = errors.New("database schema is newer than this clawpit")
	// ErrBusy: the database stayed locked past the busy timeout (exit 1).
	ErrBusy = errors.New("database is locked")
	// ErrReadOnly: the database or its directory cannot be written (exit 1).
	ErrReadOnly = errors.New("database is read-only")
	// ErrUnavailable: a registry server (PostgreSQL) cannot be reached or
	// the connection was lost (exit 1; the console and daemon retry).
	ErrUnavailable = errors.New("cannot reach the registry database")
	// ErrDiskFull: a write found no space left on the file system (SQLITE_FULL,
	// ENOSPC; exit 1).
	ErrDiskFull = errors.New("disk full")
)

// Invalidf returns an error wrapping ErrInvalid with a message that names the bad value.
func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// NotFoundf returns an error wrapping ErrNotFound.
func NotFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotFound, fmt.Sprintf(format, args...))
}

// Conflictf returns an error that is ErrConflict (exit 1) but reads as the
// message alone: for a refusal because a row already exists, which
// "row changed concurrently" would misdescribe.
func Conflictf(format string, args ...any) error {
	return &conflictError{msg: fmt.Sprintf(format, args...)}
}

type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }
func (e *conflictError) Unwrap() error { return ErrConflict }

// AmbiguousError reports an id prefix that matches several rows.
type AmbiguousError struct {
	Entity  string   // "task", "run", "approval", "job", ...
	Prefix  string   // what the user typed
	Matches []string // some of the matching ids (at most a handful)
	Count   int      // how many ids match in all (≥ len(Matches))
}

// Error says how many ids match and lists some of them: `task id prefix
// "ab12" is ambiguous: 7 tasks match (ab12…, ab13…, …); type more characters`.
func (e *AmbiguousError) Error() string {
	// The prefix and the ids are untrusted: printed inert, on one line.
	n := max(e.Count, len(e.Matches))
	m := make([]string, len(e.Matches))
	for i, id := range e.Matches {
		m[i] = termtext.Line(id, 2*termtext.MaxID)
	}
	list := strings.Join(m, ", ")
	if n > len(e.Matches) {
		list += ", …"
	}
	return fmt.Sprintf("%s id prefix %q is ambiguous: %d %ss match (%s); type more characters", e.Entity, termtext.Line(e.Prefix, 2*termtext.MaxID), n, e.Entity, list)
}

// Unwrap makes errors.Is(err, ErrAmbiguous) true.
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }
