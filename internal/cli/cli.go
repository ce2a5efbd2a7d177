// Package cli is clawpit's command line: commands and flags, output, config
// loading, and the wiring of store, core and tui (docs/architecture.md, docs/contract.md "Commands: exit codes and JSON"). The binary's
// main package hands os.Args to Run.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes of docs/contract.md "Commands: exit codes and JSON".
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitNotFound = 4
)

// app carries what every command shares: global flags, streams and the
// registry, opened lazily by the first command that needs it.
type app struct {
	dbPath string
	// gateBusy is the last "registry busy" error a gated hook's retries saw
	// (decideRetrying), so a hook that answers at its deadline says why.
	gateBusy atomic.Pointer[string]
	// listenDB is --listen-db (env CLAWPIT_LISTEN_DB): a direct PostgreSQL
	// connection for LISTEN when --db goes through a pooler.
	listenDB string
	jsonOut  bool
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer

	db  *store.DB
	reg *core.Registry
	th  core.Thresholds

	console consoleFlags // the console's flags (bound by addConsoleFlags)

	cfg    *Config // the config file, read once by config()
	cfgErr error

	abandonDB bool // a hook answered while a transaction may hang: exit without closing the registry
}

// Run executes the CLI with args (without the program name) and returns the
// process exit code of docs/contract.md "Commands: exit codes and JSON": 0 done, 1 failed, 2 bad usage or input, 4 not
// found or ambiguous, and a command's own codes (approval wait's 10/11/12).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, th: core.DefaultThresholds()}
	defer a.close()
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if st, ok := stoppedBy(ctx); ok && errors.Is(err, context.Canceled) {
		// A command a signal ended before it finished (a follow, a wait):
		// say so instead of "context canceled".
		fmt.Fprintln(stderr, "clawpit: interrupted ("+st.Error()+")")
		return st.ExitCode()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "clawpit: "+ee.msg)
		}
		return ee.code
	}
	// Errors quote untrusted values (ids, labels, paths): printed inert.
	fmt.Fprintln(stderr, "clawpit: "+termtext.Text(err.Error(), 8192))
	return exitCode(err)
}

// exitError carries an explicit exit code (approval wait's 10/11/12, say).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode maps an error to docs/contract.md "Commands: exit codes and JSON": 2 bad usage or invalid input, 4 not found
// or ambiguous prefix, 1 anything else.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, core.ErrInvalid), isUsageError(err):
		return exitUsage
	case errors.Is(err, core.ErrNotFound), errors.Is(err, core.ErrAmbiguous):
		return exitNotFound
	default:
		return exitFailed
	}
}

// usageError marks cobra flag/argument errors.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "clawpit",
		Short: "The operator's console for AI-agent runtimes",
		Long: `clawpit records an agent runtime's work (tasks, sub-agent runs, approvals,
background jobs) in a SQLite registry, repairs stuck work with a maintenance
sweeper, supervises background jobs as detached processes, and opens a terminal
console to watch and act on all of it.

Run without a command to open the console.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.sweepOnceFlag(cmd) {
				return runSweepOnce(cmd, a)
			}
			return runConsole(cmd, a)
		},
	}
	root.PersistentFlags().StringVar(&a.dbPath, "db", "", "registry database path (env CLAWPIT_DB; default $CLAWPIT_HOME/registry.db)")
	root.PersistentFlags().StringVar(&a.listenDB, "listen-db", "", "PostgreSQL: a direct URL (not through a pooler) for LISTEN, so writes on other hosts show at once; without it, or when LISTEN fails there, the console polls every second (env CLAWPIT_LISTEN_DB)")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "machine-readable JSON output")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		err = plainFlagValueError(err)
		if why := misplacedRootFlag(root, cmd, err); why != "" {
			return usageError{fmt.Errorf("%w: %s", err, why)}
		}
		return usageError{fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())}
	})
	addRootSweepFlags(root, a)
	addConsoleFlags(root, a)
	for _, group := range [][]*cobra.Command{
		registryCommands(a),
		jobCommands(a),
		sweepCommands(a),
		demoCommands(a),
		hooksCommands(a),
		{migrateCmd(a)},
		openclawCommands(a),
		{serveCommand(a), operatorCommand(a)},
		{usageCommand(a), budgetCommand(a)},
	} {
		for _, c := range group {
			root.AddCommand(c)
		}
	}
	// Unknown subcommands and bad positional args are usage errors (exit 2).
	walk(root, func(c *cobra.Command) {
		if c.Args == nil {
			return
		}
		inner := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := inner(cmd, args); err != nil {
				return usageError{fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())}
			}
			return nil
		}
	})
	setRootUsageLazily(root)
	return root
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walk(s, fn)
	}
}

// home returns CLAWPIT_HOME (docs/contract.md "Files"): $CLAWPIT_HOME, else
// $XDG_STATE_HOME/clawpit, else ~/.local/state/clawpit.
func home() string {
	if h := os.Getenv("CLAWPIT_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "clawpit")
	}
	if u, err := os.UserHomeDir(); err == nil {
		return filepath.Join(u, ".local", "state", "clawpit")
	}
	return filepath.Join(os.TempDir(), "clawpit")
}

// resolvedDBPath is --db, else $CLAWPIT_DB, else $CLAWPIT_HOME/registry.db.
func (a *app) resolvedDBPath() string {
	if a.dbPath != "" {
		return a.dbPath
	}
	if p := os.Getenv("CLAWPIT_DB"); p != "" {
		return p
	}
	return filepath.Join(home(), "registry.db")
}

// resolvedListenDB is --listen-db, else $CLAWPIT_LISTEN_DB ("" for none).
func (a *app) resolvedListenDB() string {
	if a.listenDB != "" {
		return a.listenDB
	}
	return os.Getenv("CLAWPIT_LISTEN_DB")
}

// open returns the registry, opening it on first use.
func (a *app) open(ctx context.Context, opt store.Options) (*core.Registry, error) {
	if a.reg != nil {
		return a.reg, nil
	}
	opt.ListenURL = a.resolvedListenDB()
	db, err := store.Open(ctx, a.resolvedDBPath(), opt)
	if err != nil {
		return nil, err
	}
	a.db = db
	a.reg = core.NewRegistry(db, core.SystemClock{}, a.th)
	// Task cancel (R3) and session passivate/close (J7) act on jobs through
	// the supervisor.
	a.wireJobs()
	return a.reg, nil
}

// registry opens an existing registry read-write: the commands that read,
// or change recorded work by id, refuse a missing database (exit 4, naming
// the path) instead of creating an empty one at a mistyped --db.
func (a *app) registry(ctx context.Context) (*core.Registry, error) {
	reg, err := a.open(ctx, store.Options{MustExist: true})
	if errors.Is(err, core.ErrNotFound) && a.reg == nil {
		return nil, core.NotFoundf("no registry database at %s (check --db and CLAWPIT_DB; commands that record work, such as `clawpit session open`, create it)", sweepAbs(a.resolvedDBPath()))
	}
	return reg, err
}

// registryCreate opens the registry read-write, creating it when missing:
// for the commands that record new work (session open, task create and
// track, run register, approval request, job run) and the console.
func (a *app) registryCreate(ctx context.Context) (*core.Registry, error) {
	return a.open(ctx, store.Options{})
}

func (a *app) close() {
	if !a.abandonDB && a.db != nil {
		a.db.Close()
	}
}

// printJSON writes v as indented JSON to stdout, with the characters that
// hide or reorder text escaped as \uXXXX (termtext.EscapeJSON).
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(termtext.JSONWriter(a.stdout))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// plainFlagValueError says what a number or boolean flag wanted, in place of
// Go's parser message: `--cost "abc": want a number` rather than
// `invalid argument "abc" for "--cost" flag: strconv.ParseFloat: parsing
// "abc": invalid syntax`. Other errors come back as they are.
func plainFlagValueError(err error) error {
	var ive *pflag.InvalidValueError
	var ne *strconv.NumError
	if !errors.As(err, &ive) || !errors.As(err, &ne) {
		return err
	}
	want := "a number"
	switch ive.GetFlag().Value.Type() {
	case "int", "int64", "int32", "uint", "uint64", "uint32", "count":
		want = "a whole number"
	case "bool":
		want = "true or false"
	}
	if errors.Is(ne.Err, strconv.ErrRange) {
		want += " in range"
	}
	return fmt.Errorf("--%s %q: want %s", ive.GetFlag().Name, ive.GetValue(), want)
}
