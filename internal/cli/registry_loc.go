package cli

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"

	"github.com/clawpit/clawpit/store"
)

// hookRegistry is the registry in force as a hook command stores it
// (issue 30): a SQLite path made absolute, since the agent runs the hook
// from any directory; a PostgreSQL URL kept a URL, with its password
// removed, since hook commands live in settings files that `hooks status`
// prints and users share. hadPassword says one was removed: the hook then
// finds it as libpq does (PGPASSWORD, PGPASSFILE or ~/.pgpass).
func hookRegistry(p string) (loc string, hadPassword bool, err error) {
	if !store.IsPostgresURL(p) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", false, fmt.Errorf("registry path: %w", err)
		}
		return abs, false, nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", false, fmt.Errorf("registry URL %s: %w", store.RedactURL(p), err)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.User(u.User.Username())
		hadPassword = true
	}
	return u.String(), hadPassword, nil
}

// passwordNote is the warning `hooks install` prints when it left the
// registry URL's password out of the hook command (hookRegistry).
func passwordNote(settings string) string {
	return "the registry URL's password is not written into " + settings +
		"; the hook reads it from PGPASSWORD, PGPASSFILE or ~/.pgpass (add the line host:port:database:user:password there), or every gated tool call is denied"
}

// urlPassword matches the password of a postgres:// URL inside a longer
// text (a hook command written by hand or by an older clawpit).
var urlPassword = regexp.MustCompile(`(postgres(?:ql)?://[^:/@\s'"]*:)[^@\s'"]*@`)

// redactURLs replaces the password of every PostgreSQL URL in s by "xxxxx"
// (store.RedactURL's mark), for printing a hook command.
func redactURLs(s string) string {
	return urlPassword.ReplaceAllString(s, "${1}xxxxx@")
}
