package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/serve"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/themes"
	"github.com/clawpit/clawpit/tui"
	"github.com/spf13/cobra"
)

// serveFlags are `clawpit serve`'s flags (README "Serve the console over SSH").
type serveFlags struct {
	listen      string
	hostKey     string
	maxSessions int
	maxStartups string
	loginGrace  time.Duration
	idleTimeout time.Duration
	attention   string
	theme       string
	logJSON     bool
}

// serveCommand is `clawpit serve`: the console over SSH for registered
// operators.
func serveCommand(a *app) *cobra.Command {
	var f serveFlags
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the console over SSH to registered operators (see `clawpit operator`)",
		Long: `Serve the console over SSH. Every operator registered with ` + "`clawpit operator add`" + `
connects with their own key (ssh -p PORT HOST), gets a private console with
their terminal's size, and is journaled by name and address. Readonly
operators can watch but every action is refused by the server. Unknown keys
are refused before anything is drawn.

A client may send NO_COLOR (mono theme) and CLAWPIT_QUIET=1 (no bell) with
ssh -o SendEnv=NO_COLOR,CLAWPIT_QUIET. SIGTERM closes every session with a
message and exits within 5 seconds.

Connections are limited like sshd's: one that has not logged in within
--login-grace-time is closed, and so is a logged-in one that holds no
session for that long. --max-startups start:rate:full caps connections not
logged in yet (sshd's MaxStartups): from start on, a new one is refused with
probability rate percent, rising to every one at full; a refused connection
is closed at once, before the SSH handshake. Logged-in connections count
toward --max-sessions whether or not they open a session. While the cap is
refusing, an operator is refused too until the waiting connections log in or
time out: keep the listen address on loopback or behind a firewall or VPN.

[budget] in the config file and the --budget-* flags set the registry's
budgets at start (see 'clawpit budget').`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, a, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.listen, "listen", serve.DefaultListen, "address to listen on (host:port)")
	fl.StringVar(&f.hostKey, "host-key", "", "SSH host key file, created (ed25519, mode 0600) when missing (default $CLAWPIT_HOME/serve_host_ed25519)")
	fl.IntVar(&f.maxSessions, "max-sessions", serve.DefaultMaxSessions, "most concurrent sessions, and most logged-in connections (with or without a session); more are told to try later")
	fl.StringVar(&f.maxStartups, "max-startups", serve.DefaultStartups.String(), "cap on connections not logged in yet, start:rate:full like sshd's MaxStartups (or N: refuse beyond N); refused ones are closed before the SSH handshake")
	fl.DurationVar(&f.loginGrace, "login-grace-time", serve.DefaultLoginGraceTime, "close a connection not logged in within this time, and a logged-in one holding no session for this long")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", serve.DefaultIdleTimeout, "close a session after this long without a key press (0 never)")
	fl.StringVar(&f.attention, "attention", "approvals,failures,budgets", "what rings the bell and highlights the header, a comma list: approvals, failures (a task failed or lost), budgets (a budget crossed), or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: "+joinNames(themes.Names())+" (default dark; a client's NO_COLOR selects mono)")
	fl.Duration("sweep-interval", defaultSweepInterval, "maintenance sweep every interval, once for the server (0 disables; or [sweep] in the config file)")
	fl.Duration("watchdog-interval", defaultWatchdogInterval, "inactivity watchdog every interval, once for the server (0 disables; or [sweep] in the config file)")
	fl.BoolVar(&f.logJSON, "log-json", false, "log as JSON lines instead of text")
	addThresholdFlags(fl)
	addBudgetFlags(fl, "budget-")
	return c
}

// parseAttention reads --attention: a comma list of approvals, failures
// and budgets, or none. Errors wrap ErrInvalid.
func parseAttention(s string) (tui.Attention, error) {
	var at tui.Attention
	for _, p := range strings.Split(s, ",") {
		switch strings.TrimSpace(p) {
		case "approvals":
			at.Approvals = true
		case "failures":
			at.Failures = true
		case "budgets":
			at.Budgets = true
		case "none", "":
		default:
			return at, core.Invalidf("--attention %q: want approvals, failures, budgets or none", p)
		}
	}
	return at, nil
}

func runServe(cmd *cobra.Command, a *app, f *serveFlags) error {
	ctx := cmd.Context()
	switch {
	case f.maxSessions < 1:
		return core.Invalidf("--max-sessions %d: must be at least 1", f.maxSessions)
	case f.idleTimeout < 0:
		return core.Invalidf("--idle-timeout %s: must not be negative", f.idleTimeout)
	case f.idleTimeout > maxFlagDuration:
		return checkDuration("--idle-timeout", f.idleTimeout, 0, true)
	case f.loginGrace <= 0:
		return core.Invalidf("--login-grace-time %s: must be positive", f.loginGrace)
	case f.loginGrace > maxFlagDuration:
		return checkDuration("--login-grace-time", f.loginGrace, 0, true)
	}
	startups, err := serve.ParseStartups(f.maxStartups)
	if err != nil {
		return err
	}
	// The embedded sweeper's thresholds and intervals: config [sweep], then
	// flags; the thresholds go into a.th, which the registry is opened with.
	sweep, err := a.sweepThresholds(cmd)
	if err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(f.listen); err != nil {
		return core.Invalidf("--listen %q: %v", f.listen, err)
	}
	att, err := parseAttention(f.attention)
	if err != nil {
		return err
	}
	if _, _, err := a.budgetSpec(cmd.Flags(), "budget-"); err != nil {
		return err // bad input: before the registry is opened
	}
	if _, err := themes.Get(orDefault(f.theme, themes.Default)); err != nil {
		return core.Invalidf("--theme: %v", err)
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	keys, err := consoleKeyMap(keyOverrides(cfg))
	if err != nil {
		return err
	}
	keyPath := f.hostKey
	if keyPath == "" {
		keyPath = filepath.Join(home(), "serve_host_ed25519")
	}
	hk, err := serve.LoadOrCreateHostKey(keyPath)
	if err != nil {
		return err
	}
	jobs, err := a.jobs(ctx)
	if err != nil {
		return err
	}
	reg := jobs.Registry()
	budgets, err := a.publishBudget(cmd, reg)
	if err != nil {
		return err
	}
	var h slog.Handler = slog.NewTextHandler(a.stderr, nil)
	if f.logJSON {
		h = slog.NewJSONHandler(a.stderr, nil)
	}
	idle := f.idleTimeout
	if idle == 0 {
		idle = -1 // never
	}
	srv, err := serve.New(reg, jobs, tui.SweeperMaintenance(maintain.NewSweeper(reg, jobs, sweep.schedule())), serve.Config{
		HostKey: hk, MaxSessions: f.maxSessions, IdleTimeout: idle,
		MaxStartups: startups, LoginGraceTime: f.loginGrace,
		SweepInterval: sweep.sweepInterval, WatchdogInterval: sweep.watchdogInterval,
		Theme: f.theme, Keys: keys, Attention: att, Logger: slog.New(h), Prices: cfg.Prices,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	state := "host key"
	if hk.Created {
		state = "new host key"
	}
	fmt.Fprintf(a.stdout, "%s %s (%s)\nlistening on %s (registry %s)\n", state, hk.Fingerprint, keyPath, ln.Addr(), reg.Store().Path())
	if budgets != "" {
		fmt.Fprintln(a.stdout, budgets)
	}
	if ops, err := reg.ListOperators(ctx); err == nil && len(ops) == 0 {
		fmt.Fprintln(a.stderr, "clawpit: warning: no operators are registered, so every key is refused; add one with `clawpit operator add NAME --role operator --key ~/.ssh/id_ed25519.pub`")
	}
	if err := srv.Serve(ctx, ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
