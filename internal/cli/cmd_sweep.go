package cli

// Headless maintenance (docs/contract.md "Maintenance", README "Notifications", docs/contract.md "Commands: exit codes and JSON"): `clawpit --sweep-once` and its
// alias `clawpit sweep`, `clawpit daemon`, `clawpit notifications`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// thresholdFlag is one sweep threshold: flag name = config key.
type thresholdFlag struct {
	name  string
	usage string
	get   func(*core.Thresholds) *time.Duration
	conf  func(*SweepConfig) string
}

var thresholdFlags = []thresholdFlag{
	{"grace", "how long an unbacked active task may stay idle before it is marked lost",
		func(t *core.Thresholds) *time.Duration { return &t.Grace }, func(c *SweepConfig) string { return c.Grace }},
	{"silent-window", "how recently a task must have ended to be reported silent",
		func(t *core.Thresholds) *time.Duration { return &t.SilentWindow }, func(c *SweepConfig) string { return c.SilentWindow }},
	{"retention", "how long terminal tasks, ended runs, decided approvals and delivered notifications are kept",
		func(t *core.Thresholds) *time.Duration { return &t.Retention }, func(c *SweepConfig) string { return c.Retention }},
	{"lost-retention", "how long lost tasks are kept",
		func(t *core.Thresholds) *time.Duration { return &t.LostRetention }, func(c *SweepConfig) string { return c.LostRetention }},
	{"job-retention", "how long terminal jobs (and their logs) are kept",
		func(t *core.Thresholds) *time.Duration { return &t.JobRetention }, func(c *SweepConfig) string { return c.JobRetention }},
	{"stale-queued", "report (never change) tasks queued this long",
		func(t *core.Thresholds) *time.Duration { return &t.StaleQueued }, func(c *SweepConfig) string { return c.StaleQueued }},
	{"stale-running", "report (never change) tasks running this long without a running run or job",
		func(t *core.Thresholds) *time.Duration { return &t.StaleRunning }, func(c *SweepConfig) string { return c.StaleRunning }},
}

// addThresholdFlags adds the docs/contract.md "Maintenance" thresholds (--grace 5m, …) to fs, and
// the hidden --busy-timeout (tests: how long to wait for a locked registry;
// default the store's 5 s).
func addThresholdFlags(fs *pflag.FlagSet) {
	def := core.DefaultThresholds()
	for _, f := range thresholdFlags {
		fs.Duration(f.name, *f.get(&def), f.usage)
	}
	fs.Duration("busy-timeout", 0, "how long to wait for a locked registry (default 5s)")
	fs.MarkHidden("busy-timeout")
}

// sweepSettings are the sweep thresholds, intervals and notify command after
// the config file and the flags (flags win).
type sweepSettings struct {
	th               core.Thresholds
	sweepInterval    time.Duration // 0 disables periodic sweeps
	watchdogInterval time.Duration // 0 disables the watchdog
	notifyCmd        string
	busyTimeout      time.Duration // 0 = the store default
}

// schedule is the maintenance service's schedule of set (package
// maintain derives the sweeper's settings from it, the same way for the
// daemon, serve, the console and the demo).
func (set sweepSettings) schedule() maintain.Settings {
	return maintain.Settings{SweepInterval: set.sweepInterval, WatchdogInterval: set.watchdogInterval}
}

// resolveSweepSettings merges the defaults, the config file's [sweep] table
// (cfg; nil is an empty file) and the flags of cmd that exist (thresholds;
// --sweep-interval, --watchdog-interval, --notify-cmd where defined), in
// that order. It is the one place sweep settings are resolved, for the
// sweep, the daemon, the console, the demo and serve. Errors wrap
// core.ErrInvalid (exit 2) and name the bad value.
func resolveSweepSettings(cmd *cobra.Command, cfg *Config) (sweepSettings, error) {
	set := sweepSettings{th: core.DefaultThresholds(), sweepInterval: 60 * time.Second, watchdogInterval: 5 * time.Second}
	if cfg == nil {
		cfg = &Config{}
	}
	fs := cmd.Flags()
	for _, f := range thresholdFlags {
		if d, ok, err := cfg.configDuration(f.name, f.conf(&cfg.Sweep), false); err != nil {
			return set, err
		} else if ok {
			*f.get(&set.th) = d
		}
		if fs.Lookup(f.name) != nil && fs.Changed(f.name) {
			d, _ := fs.GetDuration(f.name)
			if d <= 0 {
				return set, core.Invalidf("--%s %s: must be positive", f.name, d)
			}
			if err := checkDuration("--"+f.name, d, 0, false); err != nil {
				return set, err
			}
			*f.get(&set.th) = d
		}
	}
	for _, iv := range []struct {
		name string
		conf string
		dst  *time.Duration
	}{
		{"sweep-interval", cfg.Sweep.SweepInterval, &set.sweepInterval},
		{"watchdog-interval", cfg.Sweep.WatchdogInterval, &set.watchdogInterval},
	} {
		if d, ok, err := cfg.configDuration(iv.name, iv.conf, true); err != nil {
			return set, err
		} else if ok {
			*iv.dst = d
		}
		if fs.Lookup(iv.name) != nil && fs.Changed(iv.name) {
			d, _ := fs.GetDuration(iv.name)
			if d < 0 {
				return set, core.Invalidf("--%s %s: must not be negative (0 disables)", iv.name, d)
			}
			if err := checkDuration("--"+iv.name, d, 0, true); err != nil {
				return set, err
			}
			*iv.dst = d
		}
	}
	set.notifyCmd = cfg.Sweep.NotifyCmd
	if fs.Lookup("notify-cmd") != nil && fs.Changed("notify-cmd") {
		set.notifyCmd, _ = fs.GetString("notify-cmd")
	}
	if fs.Lookup("busy-timeout") != nil {
		set.busyTimeout, _ = fs.GetDuration("busy-timeout")
		if err := checkDuration("--busy-timeout", set.busyTimeout, 0, true); err != nil {
			return set, err
		}
	}
	return set, nil
}

// sweepThresholds resolves the thresholds for cmd (config, then its flags)
// into a.th, which the registry is opened with. The console calls it before
// opening the registry for its embedded sweeper.
func (a *app) sweepThresholds(cmd *cobra.Command) (sweepSettings, error) {
	cfg, err := a.config()
	if err != nil {
		return sweepSettings{}, err
	}
	set, err := resolveSweepSettings(cmd, cfg)
	if err != nil {
		return set, err
	}
	a.th = set.th
	return set, nil
}

// sweepCommands returns `sweep`, `daemon` and `notifications` (docs/contract.md "Maintenance", README "Notifications").
func sweepCommands(a *app) []*cobra.Command {
	return []*cobra.Command{sweepCmd(a), daemonCmd(a), notificationsCmd(a)}
}

// addRootSweepFlags adds --sweep-once, --dry-run and the thresholds to the root.
func addRootSweepFlags(root *cobra.Command, a *app) {
	root.Flags().Bool("sweep-once", false, "run one maintenance sweep and exit (0 on success, 1 on error)")
	root.Flags().Bool("dry-run", false, "with --sweep-once: print the plan, write nothing")
	addThresholdFlags(root.Flags())
}

func (a *app) sweepOnceFlag(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("sweep-once")
	return v
}

func sweepCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "sweep",
		Short: "Run one maintenance sweep and exit (same as --sweep-once)",
		Long: `Run one maintenance sweep and exit: job liveness → watchdog →
early lost → grace lost → approval expiry → silent tasks → retention stamp and
prune → audit. --dry-run prints the plan and writes nothing. Exit 0 on success,
1 on error (missing, corrupt or locked registry included).

Audit findings are reported, never fixed. Errors: delivery_failed,
inconsistent_timestamps, prune_failed. Warnings: stale_queued, stale_running,
missing_cleanup. Thresholds also come from the [sweep] table of
$XDG_CONFIG_HOME/clawpit/config.toml; flags win.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSweepOnce(cmd, a) },
	}
	c.Flags().Bool("dry-run", false, "print the plan, write nothing")
	addThresholdFlags(c.Flags())
	return c
}

// openHeadless opens an existing registry for the sweeper with a job
// supervisor front end (J8) and maps open errors to docs/contract.md "Commands: exit codes and JSON"'s messages:
// missing → "no registry database at <path>" (exit 1, not 4: a headless sweep
// on a typo'd path is a failure).
func (a *app) openHeadless(ctx context.Context, set sweepSettings) (*core.Registry, *supervisor.Jobs, error) {
	a.th = set.th
	reg, err := a.open(ctx, store.Options{MustExist: true, BusyTimeoutMs: int(set.busyTimeout.Milliseconds())})
	if err != nil {
		if errors.Is(err, core.ErrNotFound) {
			return nil, nil, &exitError{code: exitFailed, msg: "no registry database at " + sweepAbs(a.resolvedDBPath())}
		}
		return nil, nil, sweepErr(a, set, err)
	}
	jobs := supervisor.NewJobs(reg, a.jobsOptions())
	reg.SetJobController(jobs)
	return reg, jobs, nil
}

// sweepErr rewords a locked registry (docs/contract.md "Commands: exit codes and JSON": "a database that is locked
// past the timeout").
func sweepErr(a *app, set sweepSettings, err error) error {
	if errors.Is(err, core.ErrBusy) {
		busy := time.Duration(store.BusyTimeoutMs) * time.Millisecond
		if set.busyTimeout > 0 {
			busy = set.busyTimeout
		}
		return &exitError{code: exitFailed, msg: fmt.Sprintf("database is locked: another process held %s past the busy timeout (%s); nothing was changed by the failed step, try again (%v)",
			sweepAbs(a.resolvedDBPath()), busy, err)}
	}
	return err
}

// runSweepOnce runs one sweep for `clawpit --sweep-once` and `clawpit sweep`.
func runSweepOnce(cmd *cobra.Command, a *app) error {
	set, err := a.sweepThresholds(cmd)
	if err != nil {
		return err
	}
	dryRun, _ := cmd.Flags().GetBool("dry-run")
	reg, jobs, err := a.openHeadless(cmd.Context(), set)
	if err != nil {
		return err
	}
	if !dryRun {
		a.foldHookSpool(cmd.Context(), reg, 5*time.Second, func(l string) { fmt.Fprintln(a.stderr, "clawpit: "+l) })
	}
	// A one-shot sweep has no interval of its own: the zero schedule
	// (other hosts are judged by the default HostStaleAfter).
	rep, err := maintain.NewSweeper(reg, jobs, maintain.Settings{}).Sweep(cmd.Context(), dryRun)
	if rep != nil {
		if perr := a.printSweepReport(rep); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return sweepErr(a, set, err)
	}
	return nil
}

// sweepAbs is p made absolute for messages (p itself when that fails).
func sweepAbs(p string) string {
	if store.IsPostgresURL(p) {
		return store.RedactURL(p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func (a *app) printSweepReport(rep *sweep.Report) error {
	if a.jsonOut {
		return a.printJSON(rep)
	}
	_, err := fmt.Fprint(a.stdout, rep.Text())
	return err
}

func daemonCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "daemon",
		Short: "Run the sweeper, watchdog and notifier headless until SIGINT/SIGTERM",
		Long: `Run maintenance headless: a sweep at start and every --sweep-interval,
the watchdog step every --watchdog-interval (so an inactivity budget is
enforced within seconds), and with --notify-cmd the delivery of every new
notification to CMD (run by 'sh -c' with the notification's JSON on stdin;
exit 0 marks it delivered, anything else is retried later). [budget] in the
config file and the --budget-* flags set the registry's budgets at start
(see 'clawpit budget'). Logs go to stderr
(--json: JSON lines). SIGINT/SIGTERM finish the sweep in progress, then exit 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDaemon(cmd, a) },
	}
	c.Flags().Duration("sweep-interval", 60*time.Second, "time between sweeps (0 disables)")
	c.Flags().Duration("watchdog-interval", 5*time.Second, "time between watchdog passes (0 disables)")
	c.Flags().String("notify-cmd", "", "shell command run once per new notification, its JSON on stdin")
	addThresholdFlags(c.Flags())
	addBudgetFlags(c.Flags(), "budget-")
	return c
}

// runDaemon is "clawpit daemon": it checks the thresholds and budgets
// (bad input: before the registry is opened), opens the registry (waiting
// for a registry server out of reach), publishes the budgets, starts the
// notifier, then sweeps and runs the watchdog at their intervals until ctx
// ends, finishing the work in progress first.
func runDaemon(cmd *cobra.Command, a *app) error {
	set, err := a.sweepThresholds(cmd)
	if err != nil {
		return err
	}
	if _, _, err := a.budgetSpec(cmd.Flags(), "budget-"); err != nil {
		return err // bad input: before the registry is opened
	}
	log := a.daemonLogger()
	ctx := cmd.Context()
	reg, jobs, err := a.openHeadlessWaiting(ctx, set, log)
	if err != nil || reg == nil {
		return err // reg nil: stopped while waiting
	}
	line, err := a.publishBudget(cmd, reg)
	if err != nil {
		return err
	}
	sched := set.schedule()
	sw := maintain.NewSweeper(reg, jobs, sched)
	log.Info("clawpit daemon started", "db", reg.Store().Path(), "host", jobs.Host(), "sweep_interval", set.sweepInterval.String(),
		"watchdog_interval", set.watchdogInterval.String(), "notify_cmd", set.notifyCmd,
		"grace", set.th.Grace.String(), "retention", set.th.Retention.String())
	if line != "" {
		log.Info(line)
	}
	notifierDone, err := startNotifier(ctx, reg, set.notifyCmd, log)
	if err != nil {
		return err
	}
	// Work already started finishes even after the signal: the service runs
	// each pass on a context the signal does not cancel, and checks ctx
	// between passes.
	d := &daemon{work: context.WithoutCancel(ctx), log: log, report: &daemonLog{log: log}}
	d.collector, _ = reg.Store().(labelCollector)
	svc := maintain.New(sw, sched)
	svc.BeforeSweep = func(ctx context.Context) {
		a.foldHookSpool(ctx, reg, 5*time.Second, func(l string) { log.Warn(l) })
	}
	svc.Report = d.pass
	svc.Run(ctx)
	<-notifierDone
	log.Info("clawpit daemon stopped")
	return nil
}

// daemonLogger is the daemon's log on stderr: text lines, or JSON lines
// with --json.
func (a *app) daemonLogger() *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(a.stderr, nil)
	if a.jsonOut {
		h = slog.NewJSONHandler(termtext.JSONWriter(a.stderr), nil)
	}
	return slog.New(h)
}

// openHeadlessWaiting opens the registry as openHeadless does, but waits
// for a registry server out of reach (PostgreSQL), with backoff from 1 s to
// 30 s, logging each attempt: the daemon outlives the database's restarts.
// Any other error is returned at once; when ctx ends while waiting it
// returns nil handles and no error.
func (a *app) openHeadlessWaiting(ctx context.Context, set sweepSettings, log *slog.Logger) (*core.Registry, *supervisor.Jobs, error) {
	reg, jobs, err := a.openHeadless(ctx, set)
	for wait := time.Second; err != nil && errors.Is(err, core.ErrUnavailable); wait = min(2*wait, 30*time.Second) {
		log.Error("registry unreachable, retrying", "db", sweepAbs(a.resolvedDBPath()), "in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil, nil, nil
		case <-time.After(wait):
		}
		reg, jobs, err = a.openHeadless(ctx, set)
	}
	return reg, jobs, err
}

// startNotifier runs the notifier of shell command notifyCmd until ctx ends;
// the channel it returns is closed when it has stopped (at once when
// notifyCmd is empty: no notifier).
func startNotifier(ctx context.Context, reg *core.Registry, notifyCmd string, log *slog.Logger) (<-chan struct{}, error) {
	done := make(chan struct{})
	if notifyCmd == "" {
		close(done)
		return done, nil
	}
	n, err := core.NewNotifier(reg, notifyCmd, supervisor.Shell{})
	if err != nil {
		return nil, err
	}
	n.Log = log
	go func() {
		defer close(done)
		n.Run(ctx)
	}()
	return done, nil
}

// daemon is the daemon's reporting of its maintenance passes on log,
// and the label order index it maintains after each sweep where the store
// keeps one (collector), on work (a context the signal does not cancel).
type daemon struct {
	work      context.Context
	log       *slog.Logger
	report    *daemonLog
	collector labelCollector // nil: the store keeps no label order index
	marked    int            // buckets the label index could not split, as last logged
}

// pass reports one pass of the maintenance service: every sweep (then the
// label order index is maintained), a watchdog pass only when it failed or
// acted.
func (d *daemon) pass(p maintain.Pass[*sweep.Report]) {
	if p.Kind == maintain.KindWatchdog {
		if p.Err != nil || len(p.Result.Actions) > 0 {
			d.report.report(p.Result, p.Err)
		}
		return
	}
	d.report.report(p.Result, p.Err)
	if d.collector != nil {
		d.maintainLabels()
	}
}

// maintainLabels indexes tasks other programs wrote and drops the keys of
// pruned tasks, outside the sweep's transactions, and says when the number
// of buckets the index could not split changes (not every sweep).
func (d *daemon) maintainLabels() {
	if indexed, removed, err := d.collector.MaintainLabels(d.work, daemonLabelRows); err != nil {
		d.log.Error("label index maintenance failed", "err", err)
	} else if indexed+removed > 0 {
		d.log.Info("label index maintained", "indexed", indexed, "removed", removed)
	}
	if n, err := d.collector.MarkedLabelBuckets(d.work); err == nil && n != d.marked {
		if n > 0 {
			d.log.Warn("label index: buckets that could not be split (labels keep arriving at one point); "+
				"filtering in label order reads more rows there", "buckets", n)
		}
		d.marked = n
	}
}

// labelCollector is a registry whose label order index is maintained
// between sweeps (store.DB.MaintainLabels, SQLite).
type labelCollector interface {
	MaintainLabels(ctx context.Context, max int) (indexed, removed int, err error)
	MarkedLabelBuckets(ctx context.Context) (int, error)
}

// daemonLabelRows is how many queued tasks the daemon indexes, and how many
// keys it checks, after each sweep: a registry of 10,000,000 tasks is
// checked whole in 40 sweeps.
const daemonLabelRows = 262_144

// daemonLog writes sweep reports as log lines: the summary, one line per
// action, and the audit findings only when they changed since the last sweep
// (they repeat every sweep until someone fixes them).
type daemonLog struct {
	log      *slog.Logger
	findings string
}

func (d *daemonLog) report(rep *sweep.Report, err error) {
	if err != nil {
		d.log.Error("sweep failed", "err", err)
	}
	if rep == nil {
		return
	}
	d.log.Info(rep.Summary())
	for _, x := range rep.Actions {
		d.log.Info("sweep action", "rule", x.Rule, "entity", x.Entity, "id", x.ID, "from", x.From, "to", x.To,
			"reason", x.Reason, "result", x.Result)
	}
	if rep.Step == "watchdog" {
		return
	}
	keys := make([]string, len(rep.Findings))
	for i, f := range rep.Findings {
		keys[i] = f.Kind + " " + f.Entity + " " + f.ID + " " + f.Detail
	}
	sort.Strings(keys)
	if k := strings.Join(keys, "\n"); k != d.findings {
		d.findings = k
		for _, f := range rep.Findings {
			lvl := slog.LevelWarn
			if f.Severity == sweep.SeverityError {
				lvl = slog.LevelError
			}
			d.log.Log(context.Background(), lvl, "audit finding", "kind", f.Kind, "entity", f.Entity, "id", f.ID, "detail", f.Detail)
		}
	}
}

func notificationsCmd(a *app) *cobra.Command {
	var follow, ack, all bool
	var session string
	c := &cobra.Command{
		Use:   "notifications",
		Short: "Print undelivered notifications (--follow for new ones, --ack to mark them delivered)",
		Long: `Print the notifications not yet delivered, oldest first (--all: delivered ones
too). --follow keeps printing new notifications as they are created (polling
the registry every 200 ms) until interrupted. --ack marks every printed
notification delivered. --json prints an array, or with --follow one JSON
object per line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNotifications(cmd.Context(), a, follow, ack, all, session)
		},
	}
	c.Flags().BoolVar(&follow, "follow", false, "keep printing new notifications until interrupted")
	c.Flags().BoolVar(&ack, "ack", false, "mark printed notifications delivered")
	c.Flags().BoolVar(&all, "all", false, "include delivered notifications")
	c.Flags().StringVar(&session, "session", "", "only notifications of this session")
	return c
}

func runNotifications(ctx context.Context, a *app, follow, ack, all bool, session string) error {
	reg, err := a.registry(ctx)
	if err != nil {
		return err
	}
	// The cursor is taken first, so nothing created while the backlog prints
	// is missed or printed twice.
	cursor, err := core.LastNotificationID(ctx, reg.Store())
	if err != nil {
		return err
	}
	var backlog []core.Notification
	for after := int64(0); ; {
		page, err := reg.ListNotifications(ctx, core.NotificationFilter{UndeliveredOnly: !all, Session: session, AfterID: after, Limit: 1000})
		if err != nil {
			return err
		}
		for _, n := range page {
			if n.ID <= cursor {
				backlog = append(backlog, n)
			}
		}
		if len(page) < 1000 {
			break
		}
		after = page[len(page)-1].ID
	}
	emit := func(n core.Notification) error {
		if err := a.printNotification(n, follow); err != nil {
			return err
		}
		if ack && n.DeliveredAt == 0 {
			if _, err := reg.AckNotification(context.WithoutCancel(ctx), n.ID); err != nil {
				return fmt.Errorf("ack notification %d: %w", n.ID, err)
			}
		}
		return nil
	}
	if a.jsonOut && !follow {
		if backlog == nil {
			backlog = []core.Notification{}
		}
		if err := a.printJSON(backlog); err != nil {
			return err
		}
		if ack {
			for _, n := range backlog {
				if n.DeliveredAt == 0 {
					if _, err := reg.AckNotification(ctx, n.ID); err != nil {
						return fmt.Errorf("ack notification %d: %w", n.ID, err)
					}
				}
			}
		}
		return nil
	}
	for _, n := range backlog {
		if err := emit(n); err != nil {
			return err
		}
	}
	if !follow {
		return nil
	}
	return core.FollowNotifications(ctx, reg.Store(), cursor, session, 200*time.Millisecond, emit)
}

// printNotification prints one notification: with --json a compact JSON
// line when following, else "#<id> <created> <kind> [<session>] <text>".
func (a *app) printNotification(n core.Notification, follow bool) error {
	if a.jsonOut {
		b, err := json.Marshal(n)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", termtext.EscapeJSON(b))
		return err
	}
	sess := n.Session
	if sess == "" {
		sess = "-"
	}
	mark := ""
	if n.DeliveredAt != 0 {
		mark = " (delivered)"
	}
	_, err := fmt.Fprintf(a.stdout, "#%d %s %s [%s] %s%s\n", n.ID, n.CreatedAt, n.Kind, termtext.Exact(sess, 80), termtext.Exact(n.Text, 4000), mark)
	return err
}
