package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/themes"
	"github.com/clawpit/clawpit/tui"
	"github.com/spf13/cobra"
)

// consoleFlags are the console's flags (docs/contract.md "Commands: exit codes and JSON" first line; README "The console").
type consoleFlags struct {
	theme            string
	readOnly         bool
	sweepInterval    time.Duration
	watchdogInterval time.Duration
	notifyCmd        string
	attention        string // what rings the bell (parseAttention)
	quiet            bool   // no bell (also CLAWPIT_QUIET=1)
}

// consoleFPS caps the console's frame rate. The renderer wakes this often
// even when the screen does not change (Bubble Tea's default is 60); at 30
// a key's frame waits at most 33 ms, and an idle console wakes half as
// often (bench/idle).
const consoleFPS = 30

// Defaults of the console's intervals (docs/contract.md "Maintenance").
const (
	defaultSweepInterval    = 60 * time.Second
	defaultWatchdogInterval = 5 * time.Second
)

// addConsoleFlags adds the console's flags to the root (docs/contract.md "Commands: exit codes and JSON" first line).
func addConsoleFlags(root *cobra.Command, a *app) {
	f := root.Flags()
	f.StringVar(&a.console.theme, "theme", "", "console theme: "+joinNames(themes.Names())+" (default dark; NO_COLOR selects mono)")
	f.BoolVar(&a.console.readOnly, "readonly", false, "read-only console: no actions, no embedded sweeper; opens the registry read-only")
	f.DurationVar(&a.console.sweepInterval, "sweep-interval", defaultSweepInterval, "console: maintenance sweep every interval (0 disables)")
	f.DurationVar(&a.console.watchdogInterval, "watchdog-interval", defaultWatchdogInterval, "console: inactivity watchdog every interval (0 disables)")
	f.StringVar(&a.console.attention, "attention", "approvals,failures,budgets", "console: what rings the bell and highlights the header, a comma list: approvals, failures (a task failed or lost), budgets (a budget crossed), or none")
	f.BoolVar(&a.console.quiet, "quiet", false, "console: no bell or header highlight (also CLAWPIT_QUIET=1)")
	f.StringVar(&a.console.notifyCmd, "notify-cmd", "", "console: run this shell command once per new notification (JSON on stdin); exit 0 marks it delivered")
}

func joinNames(n []string) string {
	s := ""
	for i, x := range n {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// consoleSettings are the console's settings after flags (when given) and
// the config file (otherwise) and defaults.
type consoleSettings struct {
	theme            *themes.Theme
	keys             tui.KeyMap
	readOnly         bool
	sweepInterval    time.Duration
	watchdogInterval time.Duration
	notifyCmd        string
	attention        tui.Attention
}

// resolveConsole merges flags, the config file and the defaults. Errors
// wrap core.ErrInvalid (exit 2).
func resolveConsole(cmd *cobra.Command, a *app, cfg *Config, getenv func(string) string) (consoleSettings, error) {
	s := consoleSettings{readOnly: a.console.readOnly, sweepInterval: a.console.sweepInterval,
		watchdogInterval: a.console.watchdogInterval, notifyCmd: a.console.notifyCmd}
	changed := func(name string) bool { f := cmd.Flags().Lookup(name); return f != nil && f.Changed }
	name, from := a.console.theme, "--theme"
	if !changed("theme") && cfg != nil && cfg.Theme != "" {
		name, from = cfg.Theme, fmt.Sprintf("%s: key theme", cfg.Path)
	}
	th, err := themes.Resolve(name, getenv)
	if err != nil {
		return s, core.Invalidf("%s: %v", from, err)
	}
	s.theme = th
	if s.keys, err = consoleKeyMap(keyOverrides(cfg)); err != nil {
		return s, err
	}
	// Sweep and watchdog intervals and the notify command: the same
	// resolution as the daemon's (flags, then [sweep], then defaults).
	sw, err := resolveSweepSettings(cmd, cfg)
	if err != nil {
		return s, err
	}
	s.sweepInterval, s.watchdogInterval, s.notifyCmd = sw.sweepInterval, sw.watchdogInterval, sw.notifyCmd
	if s.attention, err = parseAttention(a.console.attention); err != nil {
		return s, err
	}
	if q := getenv("CLAWPIT_QUIET"); a.console.quiet || (q != "" && q != "0") {
		s.attention = tui.Attention{}
	}
	if s.sweepInterval < 0 {
		return s, core.Invalidf("--sweep-interval %s: must not be negative", s.sweepInterval)
	}
	if s.watchdogInterval < 0 {
		return s, core.Invalidf("--watchdog-interval %s: must not be negative", s.watchdogInterval)
	}
	return s, nil
}

// runConsole opens the console (README "The console"): the registry (read-only with
// --readonly), the job supervisor, the embedded sweeper, watchdog and
// notifier, and the Bubble Tea program on the terminal's alt screen.
func runConsole(cmd *cobra.Command, a *app) error {
	ctx := cmd.Context()
	cfg, err := a.config()
	if err != nil {
		return err
	}
	set, err := resolveConsole(cmd, a, cfg, os.Getenv)
	if err != nil {
		return err
	}
	// The embedded sweeper's thresholds (--grace … and [sweep]) go into
	// a.th, which the registry is opened with.
	if _, err := a.sweepThresholds(cmd); err != nil {
		return err
	}
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		return core.Invalidf("the console needs a terminal (over ssh use `ssh -t`); for scripts use a subcommand or --sweep-once")
	}
	opts, cleanup, err := a.consoleOptions(ctx, set)
	if err != nil {
		return err
	}
	defer cleanup()
	// ctx is cancelled on SIGINT and SIGTERM (main; the demo adds SIGHUP), which
	// stops the program. Bubble Tea's own handler of those signals is off: it
	// sends the quit message unconditionally, and when ctx was cancelled by
	// the same signal the event loop is gone and that send blocks shutdown
	// forever (seen as a demo that never exits after SIGTERM).
	p := tea.NewProgram(tui.New(opts), tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithFPS(consoleFPS))
	_, err = p.Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // SIGTERM / SIGINT: a normal exit
	}
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	return nil
}

// consoleOptions opens what the console needs and returns its options and
// a cleanup that stops the background notifier.
func (a *app) consoleOptions(ctx context.Context, set consoleSettings) (tui.Options, func(), error) {
	opts := tui.Options{
		Theme: set.theme, Keys: set.keys, ReadOnly: set.readOnly, Operator: core.OperatorActor(),
		SweepInterval: set.sweepInterval, WatchdogInterval: set.watchdogInterval,
		Attention: set.attention,
	}
	prices, err := a.prices() // the SPENT column's and the detail views' (What it costs)
	if err != nil {
		return opts, nil, err
	}
	if set.readOnly {
		reg, err := a.open(ctx, store.Options{ReadOnly: true})
		if err != nil {
			return opts, nil, err
		}
		opts.Source = feed.NewPricedStoreSource(reg.Store(), prices)
		return opts, func() {}, nil
	}
	// The read-write console creates a missing registry (a first run).
	if _, err := a.registryCreate(ctx); err != nil {
		return opts, nil, err
	}
	jobs, err := a.jobs(ctx)
	if err != nil {
		return opts, nil, err
	}
	reg := jobs.Registry()
	opts.Source = feed.NewPricedStoreSource(reg.Store(), prices)
	opts.Actions = reg
	opts.Jobs = jobs
	// The console's model runs the passes on maintain.Schedule, the
	// timetable of every process; its sweeper is configured from the same
	// schedule (docs/architecture.md "Maintenance").
	sw := maintain.NewSweeper(reg, jobs, maintain.Settings{SweepInterval: set.sweepInterval, WatchdogInterval: set.watchdogInterval})
	// Hook events spooled while the registry was busy go in before the
	// first load, and before each periodic sweep.
	a.foldHookSpool(ctx, reg, time.Second, nil)
	opts.Maintenance = foldingMaintenance{tui.SweeperMaintenance(sw), func(ctx context.Context) { a.foldHookSpool(ctx, reg, time.Second, nil) }}
	stop := func() {}
	if set.notifyCmd != "" {
		n, err := core.NewNotifier(reg, set.notifyCmd, supervisor.Shell{})
		if err != nil {
			return opts, nil, err
		}
		nctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = n.Run(nctx) }()
		stop = func() { cancel(); <-done }
	}
	return opts, stop, nil
}
