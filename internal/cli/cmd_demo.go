package cli

// `clawpit demo` (README "clawpit demo"): the console on a fresh registry in a temporary
// directory (or --db), fed by the simulated runtime of package demo, which
// keeps every pane alive with real background jobs. The helper processes of
// those jobs are this binary under hidden subcommands (__demo-devserver,
// __demo-build, __demo-secrets), so the demo needs nothing but clawpit.
//
// Lifecycle: make the directory (0700) → open the registry with the demo's
// thresholds → start the simulator and its jobs → run the console in the
// foreground (or, with --headless, the sweeper and an activity log) → on quit,
// SIGINT, SIGTERM or SIGHUP stop the simulator, cancel every job it started,
// wait until none of their processes is left (SIGKILL after ~10 s) → remove the
// directory unless --keep.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/demo"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/spf13/cobra"
)

// Demo defaults that differ from the console's, so effects show within a
// minute: a sweep every 10 s and a 1 m grace window.
const (
	demoSweepInterval = 10 * time.Second
	demoGrace         = time.Minute
)

// demoOptions are the demo command's own flags.
type demoOptions struct {
	headless      bool
	duration      time.Duration
	keep          bool
	seed          uint64
	buildDuration time.Duration
}

// demoCommands returns `demo` and the hidden helper commands its jobs run.
func demoCommands(a *app) []*cobra.Command {
	return []*cobra.Command{demoCmd(a), demoDevServerCmd(), demoBuildCmd(), demoSecretsCmd()}
}

func demoCmd(a *app) *cobra.Command {
	var o demoOptions
	c := &cobra.Command{
		Use:   "demo [--headless [--duration D]] [--keep] [--seed N]",
		Short: "Open the console on a live simulated agent runtime (a throwaway registry)",
		Long: `Open the console on a fresh registry in a temporary directory (or --db PATH),
fed by a simulated agent runtime that keeps every pane alive with real
processes: a dev server job serving HTTP on a loopback port (the demo sends it
requests, so its log scrolls), a build that fails, a deploy script that prints
fake secrets (shown redacted), sub-agent runs that progress, wait for
approvals, get killed or go quiet, a kill racing a late completion, a
scheduled task that ends silently, an approval that expires.

The demo sweeps every 10 s with a 1 m grace window (flags override). When the
console quits, or on SIGINT/SIGTERM/SIGHUP, the demo cancels every job it
started, checks that none of their processes is left, and removes the
temporary directory unless --keep. It never uses $CLAWPIT_DB or the default
registry: only a temporary one or the --db you name.

--headless runs the simulator and the sweeper without the console, printing an
activity log, for --duration (0: until interrupted), then a summary.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDemo(cmd, a, &o) },
	}
	f := c.Flags()
	f.BoolVar(&o.headless, "headless", false, "run the simulator and sweeper without the console, printing an activity log")
	f.DurationVar(&o.duration, "duration", 0, "with --headless: stop after this long (0: until interrupted)")
	f.BoolVar(&o.keep, "keep", false, "keep the temporary directory (registry and job logs) and print where it is")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the simulated runtime (same seed, same scenario)")
	f.String("theme", "", "console theme: dark, light, high-contrast, mono")
	f.Duration("sweep-interval", demoSweepInterval, "how often the embedded sweeper runs (0 disables)")
	f.Duration("watchdog-interval", 5*time.Second, "how often the inactivity watchdog runs (0 disables)")
	f.String("notify-cmd", "", "run this shell command once per new notification (default none: the config file's notify-cmd is not used by the demo)")
	addThresholdFlags(f)
	if g := f.Lookup("grace"); g != nil {
		g.Value.Set(demoGrace.String())
		g.DefValue = demoGrace.String()
	}
	f.DurationVar(&o.buildDuration, "build-duration", 0, "how long the demo build runs (default 20–40 s)")
	f.MarkHidden("build-duration")
	return c
}

// forceDemoDefaults marks the demo's own defaults as set, so they win over the
// config file when the shared settings code (flags changed > config >
// defaults) reads them; a flag the user gave is left alone. The theme is not
// forced: the config file's theme applies unless --theme is given.
func forceDemoDefaults(cmd *cobra.Command) {
	fs := cmd.Flags()
	for _, name := range []string{"sweep-interval", "watchdog-interval", "grace", "notify-cmd"} {
		if fl := fs.Lookup(name); fl != nil && !fl.Changed {
			fs.Set(name, fl.Value.String())
		}
	}
}

// setDemoConsoleFlags hands the demo's console flags to the console, which
// reads its values from a.console (bound to the root's flags, not parsed
// when the command is `demo`) and asks cmd only whether a flag was given.
func setDemoConsoleFlags(cmd *cobra.Command, a *app) {
	fs := cmd.Flags()
	a.console.theme, _ = fs.GetString("theme")
	a.console.sweepInterval, _ = fs.GetDuration("sweep-interval")
	a.console.watchdogInterval, _ = fs.GetDuration("watchdog-interval")
	a.console.notifyCmd, _ = fs.GetString("notify-cmd")
	a.console.readOnly = false
}

// checkDemoOptions refuses bad demo flags (ErrInvalid) before anything is
// created: a negative or out-of-range duration, --duration without
// --headless, and the console without a terminal on stdin and stdout.
func checkDemoOptions(o *demoOptions) error {
	if o.duration < 0 {
		return core.Invalidf("--duration %s is negative", o.duration)
	}
	if err := checkDuration("--duration", o.duration, 0, true); err != nil {
		return err
	}
	if err := checkDuration("--build-duration", o.buildDuration, 0, true); err != nil {
		return err
	}
	if o.duration > 0 && !o.headless {
		return core.Invalidf("--duration needs --headless (the console runs until you quit it)")
	}
	if !o.headless && (!term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd())) {
		return core.Invalidf("the demo console needs a terminal (over ssh use `ssh -t`); for scripts use `clawpit demo --headless`")
	}
	return nil
}

// demoDir picks the demo's working directory and sets a.dbPath: a fresh
// 0700 temporary directory (tempDir true) holding registry.db unless --db
// names a registry; with a SQLite --db, the directory beside it. $CLAWPIT_DB
// and the default registry are deliberately ignored: a demo must never write
// into the operator's real registry by accident.
func demoDir(a *app) (dir string, tempDir bool, err error) {
	if a.dbPath != "" && !store.IsPostgresURL(a.dbPath) {
		abs, err := filepath.Abs(a.dbPath)
		if err != nil {
			return "", false, core.Invalidf("--db %q: %v", a.dbPath, err)
		}
		a.dbPath = abs
		return filepath.Dir(abs), false, nil
	}
	// A PostgreSQL registry stays a URL (issue 30); the demo's working
	// directory is then a temporary one, as without --db.
	d, err := os.MkdirTemp("", "clawpit-demo-")
	if err != nil {
		return "", false, fmt.Errorf("create the demo directory: %w", err)
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.RemoveAll(d)
		return "", false, err
	}
	if a.dbPath == "" {
		a.dbPath = filepath.Join(d, "registry.db")
	}
	return d, true, nil
}

// printDemoStop reports the demo's shutdown on stderr: jobs cancelled, how
// many needed SIGKILL, and each process that survived.
func printDemoStop(w io.Writer, rep demo.StopReport) {
	msg := "demo stopped: " + count(len(rep.Cancelled), "job", "jobs") + " cancelled"
	if len(rep.Killed) > 0 {
		msg += fmt.Sprintf(", %d needed SIGKILL", len(rep.Killed))
	}
	if len(rep.Leftovers) == 0 {
		msg += "; no demo process left"
	}
	fmt.Fprintln(w, msg)
	for _, l := range rep.Leftovers {
		fmt.Fprintln(w, "demo: still running: "+l)
	}
}

// runDemo is "clawpit demo": a simulated runtime (demo.Sim) writing to a
// registry (a fresh temporary one unless --db names one), shown in the
// console or, headless, logged with the embedded sweeper's actions, until
// the operator quits, a signal or --duration; then every demo process is
// stopped and the temporary directory removed (kept with --keep). A demo
// process that survives the shutdown is an error.
func runDemo(cmd *cobra.Command, a *app, o *demoOptions) error {
	if err := checkDemoOptions(o); err != nil {
		return err
	}
	ctx, stopSignals := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stopSignals()

	forceDemoDefaults(cmd)
	set, err := a.sweepThresholds(cmd)
	if err != nil {
		return err
	}

	// The registry: a fresh temporary one unless --db names one.
	dir, tempDir, err := demoDir(a)
	if err != nil {
		return err
	}
	removeDir := func() { a.closeDemoDir(dir, tempDir, o.keep) }
	reg, err := a.registryCreate(ctx)
	if err != nil {
		removeDir()
		return err
	}
	exeName, cleanupExe := demoExecutable(dir, tempDir)
	defer cleanupExe()
	jobs := demoJobs(reg)
	logw, logFile := a.demoActivityLog(o.headless, dir)
	sim, err := demo.New(demo.Config{
		Registry: reg, Jobs: jobs, Cwd: dir, Seed: o.seed, Log: logw, BuildDuration: o.buildDuration, Exe: exeName,
	})
	if err != nil {
		removeDir()
		return err
	}
	if o.headless {
		fmt.Fprintf(a.stdout, "clawpit demo (headless): registry %s, seed %d, sweep every %s, grace %s\n",
			sweepAbs(a.dbPath), o.seed, set.sweepInterval, set.th.Grace)
	}

	startErr, err := a.runDemoSim(ctx, cmd, o, set, sim, reg, jobs)
	rep := a.stopDemo(o.headless, sim, reg, jobs)
	if logFile != nil {
		logFile.Close()
	}
	printDemoStop(a.stderr, rep)
	removeDir()
	if startErr != nil {
		return startErr
	}
	if err == nil && len(rep.Leftovers) > 0 {
		err = fmt.Errorf("%s survived the shutdown", count(len(rep.Leftovers), "demo process", "demo processes"))
	}
	return err
}

// closeDemoDir closes the demo's registry and removes its directory when
// the demo made it (tempDir), unless keep: then it says where it is.
func (a *app) closeDemoDir(dir string, tempDir, keep bool) {
	a.close()
	a.db, a.reg = nil, nil
	if !tempDir {
		return
	}
	if keep {
		fmt.Fprintf(a.stderr, "demo: kept %s (registry %s)\n", dir, sweepAbs(a.dbPath))
		return
	}
	os.RemoveAll(dir)
}

// demoJobs is the demo's job supervisor on reg; its supervisors carry the
// demo's owner mark in their environment (demo.OwnerEnv), so a leftover
// demo process can be told apart.
func demoJobs(reg *core.Registry) *supervisor.Jobs {
	var jopts supervisor.JobsOptions
	if env := demo.OwnerEnv(); env != "" {
		jopts.SupervisorEnv = append(jopts.SupervisorEnv, env)
	}
	jobs := supervisor.NewJobs(reg, jopts)
	reg.SetJobController(jobs)
	return jobs
}

// demoActivityLog is where the simulation logs what it does: stdout when
// headless, else demo.log in dir (the console owns the terminal), returned
// as the file too, for the caller to close; nil, nil when that file cannot
// be opened (no activity log).
func (a *app) demoActivityLog(headless bool, dir string) (io.Writer, *os.File) {
	if headless {
		return a.stdout, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "demo.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil
	}
	return f, f
}

// runDemoSim starts the simulation and runs it beside the console (or,
// headless, the embedded sweeper) until that ends; it returns the error of
// starting the simulation (then nothing ran) and the console's or headless
// run's error.
func (a *app) runDemoSim(ctx context.Context, cmd *cobra.Command, o *demoOptions, set sweepSettings, sim *demo.Sim,
	reg *core.Registry, jobs *supervisor.Jobs) (startErr, err error) {
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	if startErr = sim.Start(runCtx); startErr != nil {
		return startErr, nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sim.Run(runCtx, 0)
	}()
	if o.headless {
		fmt.Fprintf(a.stdout, "dev server: http://127.0.0.1:%d  jobs: %s\n", sim.DevServerPort(), jobs.Dir())
		err = runDemoHeadless(ctx, a, o, set, reg, jobs)
	} else {
		setDemoConsoleFlags(cmd, a)
		// The console runs on the signal context: SIGHUP (the terminal
		// closed, SSH dropped) or SIGTERM stops it like `q`, and the
		// cleanup below runs. On cmd's own context it would keep running
		// on a dead terminal, the demo's processes with it.
		cmd.SetContext(ctx)
		err = runConsole(cmd, a)
	}
	stopRun()
	wg.Wait()
	return nil, err
}

// stopDemo stops every demo process (within 30 s, on a fresh context: the
// command's may already be cancelled) and, headless, prints the registry's
// final state.
func (a *app) stopDemo(headless bool, sim *demo.Sim, reg *core.Registry, jobs *supervisor.Jobs) demo.StopReport {
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := sim.Stop(stopCtx)
	if headless {
		if sum, serr := demo.Summarise(stopCtx, reg, jobs); serr == nil {
			fmt.Fprint(a.stdout, "\nfinal state:\n"+sum.String())
		}
	}
	return rep
}

// demoExecutable makes the demo's jobs read as the user would type them —
// `clawpit __demo-build …` in the Jobs pane and in alerts, not the binary's
// absolute (often `go run` temporary) path: it links this executable as
// "clawpit" in a bin directory (inside the demo directory, or a temporary one
// beside a --db registry) and puts that first on this process's $PATH, which
// the job supervisors inherit. It returns the command name and a cleanup
// that restores $PATH and removes a directory it made. When anything fails
// it falls back to the absolute path (the jobs still run).
func demoExecutable(dir string, tempDir bool) (string, func()) {
	exe, err := os.Executable()
	if err != nil {
		return "", func() {}
	}
	bin, made := filepath.Join(dir, "bin"), false
	if !tempDir {
		if bin, err = os.MkdirTemp("", "clawpit-bin-"); err != nil {
			return exe, func() {}
		}
		made = true
	} else if err := os.Mkdir(bin, 0o700); err != nil {
		return exe, func() {}
	}
	drop := func() {
		if made {
			os.RemoveAll(bin)
		}
	}
	if err := os.Symlink(exe, filepath.Join(bin, "clawpit")); err != nil {
		drop()
		return exe, func() {}
	}
	oldPath := os.Getenv("PATH")
	os.Setenv("PATH", bin+string(os.PathListSeparator)+oldPath)
	return "clawpit", func() { os.Setenv("PATH", oldPath); drop() }
}

// runDemoHeadless runs the maintenance service (maintain.Service: a sweep
// at once, then the demo's sweep and watchdog intervals) until ctx is done
// or --duration has passed, printing every pass that changed something.
func runDemoHeadless(ctx context.Context, a *app, o *demoOptions, set sweepSettings, reg *core.Registry, jobs *supervisor.Jobs) error {
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	if set.notifyCmd != "" {
		n, err := core.NewNotifier(reg, set.notifyCmd, supervisor.Shell{})
		if err != nil {
			return err
		}
		nctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); n.Run(nctx) }()
		defer func() { cancel(); <-done }()
	}
	began := time.Now()
	svc := maintain.New(maintain.NewSweeper(reg, jobs, set.schedule()), set.schedule())
	svc.Report = func(p maintain.Pass[*sweep.Report]) {
		rep, err := p.Result, p.Err
		el := time.Since(began).Seconds()
		switch {
		case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
			fmt.Fprintf(a.stdout, "%7.1fs  sweep error: %v\n", el, err)
		case rep != nil && len(rep.Actions) > 0:
			fmt.Fprintf(a.stdout, "%7.1fs  %s\n", el, rep.Summary())
			for _, act := range rep.Actions {
				if act.Rule == sweep.RuleStamp {
					continue
				}
				fmt.Fprintf(a.stdout, "          %s %s %s: %s → %s  %s\n", act.Rule, act.Entity, act.ID, act.From, act.To, act.Reason)
			}
		}
	}
	svc.Run(ctx)
	return nil
}

// helperContext is the context of a helper process: cancelled by SIGINT or
// SIGTERM (main's) and when the demo that owns it is gone.
func helperContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return demo.WatchOwner(cmd.Context(), os.Getenv(demo.EnvOwner), time.Second)
}

func demoDevServerCmd() *cobra.Command {
	var port int
	c := &cobra.Command{
		Use:    demo.DevServerCommand + " --port N",
		Short:  "Demo helper: an HTTP dev server on 127.0.0.1 that logs each request",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if port <= 0 || port > 65535 {
				return core.Invalidf("--port %d: want 1–65535", port)
			}
			ctx, cancel := helperContext(cmd)
			defer cancel()
			return demo.DevServer(ctx, port, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.Flags().IntVar(&port, "port", 0, "loopback port to listen on")
	return c
}

func demoBuildCmd() *cobra.Command {
	var o demo.BuildOptions
	var test bool
	c := &cobra.Command{
		Use:    demo.BuildCommand + " [--target T] [--duration D] [--test]",
		Short:  "Demo helper: a build that prints progress and fails with exit code 2 (--test: tests that pass)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDuration("--duration", o.Duration, 0, true); err != nil {
				return err
			}
			ctx, cancel := helperContext(cmd)
			defer cancel()
			if test {
				o.ExitCode = 0
			}
			if o.Duration == 0 {
				o.Duration = time.Duration(20+o.Seed*7%21) * time.Second
			}
			if code := demo.Build(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr()); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.Target, "target", "./cmd/api", "what is built (display only)")
	c.Flags().DurationVar(&o.Duration, "duration", 0, "about how long the build runs (default 20–40 s by seed)")
	c.Flags().IntVar(&o.ExitCode, "exit-code", 2, "exit code of the failing build")
	c.Flags().BoolVar(&test, "test", false, "run a passing test suite instead (exit code 0)")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "varies package timing")
	return c
}

func demoSecretsCmd() *cobra.Command {
	var heartbeat time.Duration
	c := &cobra.Command{
		Use:    demo.SecretsCommand,
		Short:  "Demo helper: a deploy script that prints fake secrets, then a heartbeat",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDuration("--heartbeat", heartbeat, time.Millisecond, false); err != nil {
				return err
			}
			ctx, cancel := helperContext(cmd)
			defer cancel()
			demo.Secrets(ctx, heartbeat, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return nil
		},
	}
	c.Flags().DurationVar(&heartbeat, "heartbeat", 2*time.Second, "interval of the rollout heartbeat")
	return c
}
