package hookkit

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// Marker ends every hook command clawpit installs, for every agent, so
// uninstall and status find exactly clawpit's entries and nothing else.
const Marker = "--installed-by clawpit"

// RegistryLocation reports whether db can stand in a hook command as the
// registry in force: an absolute SQLite path, or a PostgreSQL URL
// (postgres:// or postgresql://, store.IsPostgresURL's rule) that carries no
// password. A hook command is stored in a settings file that `hooks status`
// prints and users share, so the password stays out of it (the hook finds
// it as libpq does: PGPASSWORD, PGPASSFILE or ~/.pgpass).
func RegistryLocation(db string) bool {
	if !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
		return filepath.IsAbs(db)
	}
	u, err := url.Parse(db)
	if err != nil {
		return false
	}
	_, hasPassword := u.User.Password()
	return !hasPassword
}

// Target is what the install of an agent other than Claude Code is given
// alike (Codex CLI, Gemini CLI): the hook command's parts and the gate.
type Target struct {
	Agent           string        // the hook command's --agent: "codex", "gemini"
	Binary          string        // absolute path of the clawpit binary
	DB              string        // the registry: RegistryLocation
	ApprovalTimeout time.Duration // written as --approval-timeout (checked by the caller)
	RunInactivity   time.Duration // written as --inactivity when > 0
	Gate            string        // the gated event's matcher, a regular expression
}

// Check fills the gate's default and checks what every agent's install
// checks: the gate compiles, the binary is absolute, the registry is a
// RegistryLocation and file (fileWhat: "settings", "Codex home") is
// absolute. Errors wrap core.ErrInvalid; nothing is written before it.
func (t *Target) Check(defaultGate, fileWhat, file string) error {
	if t.Gate == "" {
		t.Gate = defaultGate
	}
	if _, err := regexp.Compile(t.Gate); err != nil {
		return core.Invalidf("gate %q is not a valid regular expression: %v", t.Gate, err)
	}
	if !filepath.IsAbs(t.Binary) || !RegistryLocation(t.DB) || !filepath.IsAbs(file) {
		return core.Invalidf("clawpit binary %q, registry %q (absolute, or a postgres:// URL without a password) and %s %q must be absolute paths",
			t.Binary, t.DB, fileWhat, file)
	}
	return nil
}

// Command is the command line of one clawpit hook: `exec` (the shell the
// agent starts becomes clawpit, so the signal that stops a hook reaches it
// and withdraws its approval), the binary and the registry shell-quoted,
// `hook --agent AGENT --approval-timeout T`, `--inactivity D` when set,
// flags as given (e.g. "--gated"), and Marker last.
func (t Target) Command(flags ...string) string {
	cmd := "exec " + termtext.ShellQuote(t.Binary) + " --db " + termtext.ShellQuote(t.DB) +
		" hook --agent " + t.Agent + " --approval-timeout " + termtext.FlagDuration(t.ApprovalTimeout)
	if t.RunInactivity > 0 {
		cmd += " --inactivity " + termtext.FlagDuration(t.RunInactivity)
	}
	for _, f := range flags {
		cmd += " " + f
	}
	return cmd + " " + Marker
}
