package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
	"github.com/clawpit/clawpit/tailer"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// Background jobs on the command line (docs/contract.md "Background jobs", docs/contract.md "Commands: exit codes and JSON" `job …`) and the hidden
// supervisor command that `job run` starts.
//
// Log directory: <dir of the registry database>/jobs/<job-id>/ — that is
// $CLAWPIT_HOME/jobs for the default registry (docs/contract.md "Files"), and a "jobs"
// directory next to a --db / $CLAWPIT_DB file otherwise, so a registry and
// its logs always travel together.

// jobs opens the registry and returns the job supervisor over it, installed
// as the registry's JobController (so task cancel and session passivate/close
// signal job processes, docs/contract.md "Cancel always ends the task", docs/contract.md "Background jobs: Reaped").
func (a *app) jobs(ctx context.Context) (*supervisor.Jobs, error) {
	reg, err := a.registry(ctx)
	if err != nil {
		return nil, err
	}
	j := supervisor.NewJobs(reg, a.jobsOptions())
	reg.SetJobController(j)
	return j, nil
}

// getJob opens the job supervisor and reads job id with its event journal.
func (a *app) getJob(ctx context.Context, id string) (*supervisor.Jobs, *core.Job, []core.Event, error) {
	j, err := a.jobs(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	job, evs, err := j.GetJob(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	return j, job, evs, nil
}

// wireJobs installs the job supervisor as the JobController of an opened
// registry (a no-op before the registry is open). app.open calls it right
// after creating the registry.
func (a *app) wireJobs() {
	if a.reg != nil {
		a.reg.SetJobController(supervisor.NewJobs(a.reg, a.jobsOptions()))
	}
}

// jobsOptions are the job supervisor's options for the registry in force.
// A SQLite registry keeps core's defaults (logs beside the file). A
// PostgreSQL registry is shared by many hosts: logs stay on this host in
// $CLAWPIT_HOME/jobs, and the supervisor finds the registry through
// CLAWPIT_DB in its environment, not --db on its command line, so a
// password in the URL is not shown by ps.
func (a *app) jobsOptions() supervisor.JobsOptions {
	loc := a.resolvedDBPath()
	if !store.IsPostgresURL(loc) {
		return supervisor.JobsOptions{}
	}
	return supervisor.JobsOptions{
		Dir: filepath.Join(home(), "jobs"),
		SupervisorArgv: func(id string) ([]string, error) {
			exe, err := os.Executable()
			return []string{exe, supervisor.SuperviseCommand, id}, err
		},
		SupervisorEnv: []string{"CLAWPIT_DB=" + loc},
	}
}

// jobCommands returns `job …` and the hidden supervisor command (docs/contract.md "Background jobs").
func jobCommands(a *app) []*cobra.Command {
	job := &cobra.Command{
		Use:   "job",
		Short: "Run and control background jobs (detached processes with live logs)",
		Long: `Background jobs run as detached processes: 'job run' returns at once with the
job id and log path, and the job keeps running after the command, the console
and the SSH connection are gone. Output goes, line by line and redacted, to
<jobs dir>/<id>/output.log (rotated to output.1.log at 5 MiB). The jobs
directory is "jobs" beside the registry database ($CLAWPIT_HOME/jobs by default).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	job.AddCommand(jobRunCmd(a), jobStatusCmd(a), jobShowCmd(a), jobTailCmd(a), jobFollowCmd(a),
		jobCancelCmd(a), jobListCmd(a), jobReapCmd(a))
	return []*cobra.Command{job, superviseCmd(a)}
}

// superviseCmd is the hidden `clawpit __supervise --db P ID`: the body of a
// job's supervisor, started by `job run` in its own session.
func superviseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    supervisor.SuperviseCommand + " JOB_ID",
		Short:  "Supervise one background job (started by 'job run'; not for direct use)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := a.jobs(cmd.Context())
			if err != nil {
				return err
			}
			err = j.Supervise(cmd.Context(), args[0], a.stdin)
			if errors.Is(err, supervisor.ErrJobNotPending) {
				return nil
			}
			return err
		},
	}
}

// parseJobTimeout accepts a Go duration ("90s", "5m") or whole seconds ("30").
func parseJobTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, core.Invalidf("--timeout %q is negative", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, core.Invalidf("--timeout %q is not a duration (want e.g. 30s, 5m, 0 for no timer)", s)
	}
	if d < 0 {
		return 0, core.Invalidf("--timeout %q is negative", s)
	}
	return d, nil
}

func jobRunCmd(a *app) *cobra.Command {
	var session, cwd, timeout, rationale string
	c := &cobra.Command{
		Use:   "run --session S [--cwd D] [--timeout D] [--rationale R] -- CMD ARGS…",
		Short: "Start a background job; prints its id and log path at once",
		Long: `Start CMD as a background job owned by session S and return at once with the
job id and log path. There is no kill timer unless --timeout is given (a dev
server is a normal job). The job's stdin is closed; its stdout and stderr go to
the log, redacted, stderr lines prefixed "[stderr] ".`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" {
				return core.Invalidf("--session is required")
			}
			if len(args) == 0 || args[0] == "" {
				return core.Invalidf("empty command: give it after -- (job run --session S -- CMD ARGS…)")
			}
			d, err := parseJobTimeout(timeout)
			if err != nil {
				return err
			}
			// job run records work: it creates a missing registry.
			if _, err := a.registryCreate(cmd.Context()); err != nil {
				return err
			}
			j, err := a.jobs(cmd.Context())
			if err != nil {
				return err
			}
			job, err := j.Run(cmd.Context(), supervisor.JobSpec{
				Session: session, Cwd: cwd, Timeout: d, Rationale: rationale, Command: args,
			}, core.ActorRuntime)
			if err != nil {
				return err
			}
			if job.CaptureError != "" {
				// The job runs, but nothing will be logged (docs/contract.md "Background jobs: Rotation": the
				// child never blocks; capture_error says why).
				fmt.Fprintf(a.stderr, "clawpit: warning: job %s: output will not be captured: %s\n", job.ID, termtext.Exact(job.CaptureError, 500))
			}
			if err := a.printMutation(core.Result{Applied: true}, "job", job, "job "+job.ID, "started"); err != nil || a.jsonOut {
				return err
			}
			fmt.Fprintf(a.stdout, "log: %s\n", job.LogPath)
			return nil
		},
	}
	c.Flags().StringVar(&session, "session", "", "owning session (required)")
	c.Flags().StringVar(&cwd, "cwd", "", "working directory (must exist; default the current one)")
	c.Flags().StringVar(&timeout, "timeout", "", "kill timer, e.g. 30s or 10m (default: none)")
	c.Flags().StringVar(&rationale, "rationale", "", "why the job runs (shown in the console)")
	return c
}

// jobStatusLine is one line about a job: id, status, exit code, pid, age.
func jobStatusLine(j *core.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", j.ID, j.Status)
	if j.ExitCode != nil {
		fmt.Fprintf(&b, " (exit code %d)", *j.ExitCode)
	}
	if j.PID != 0 && j.Status == core.JobRunning {
		fmt.Fprintf(&b, " pid %d", j.PID)
	}
	d := core.JobDuration(j, core.TS(time.Now())).Round(time.Second)
	if j.Status.Active() {
		fmt.Fprintf(&b, " for %s", d)
	} else {
		fmt.Fprintf(&b, " after %s", d)
	}
	return b.String()
}

func jobStatusCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status ID",
		Short: "Print a job's status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, job, _, err := a.getJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(job)
			}
			fmt.Fprintln(a.stdout, jobStatusLine(job))
			return nil
		},
	}
}

func jobShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Print every field of a job and its event journal",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, job, evs, err := a.getJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if evs == nil {
				evs = []core.Event{}
			}
			if a.jsonOut {
				return a.printJSON(struct {
					*core.Job
					Events []core.Event `json:"events"`
				}{job, evs})
			}
			printJob(a.stdout, job, evs)
			return nil
		},
	}
}

// printJob prints every field of a job and its journal (`job show`).
func printJob(w io.Writer, j *core.Job, evs []core.Event) {
	now := time.Now()
	exit := "-"
	if j.ExitCode != nil {
		exit = strconv.Itoa(*j.ExitCode)
	}
	itoa := func(n int) string {
		if n == 0 {
			return "-"
		}
		return strconv.Itoa(n)
	}
	timeout := "none"
	if j.TimeoutS > 0 {
		timeout = (time.Duration(j.TimeoutS) * time.Second).String()
	}
	printKV(w, []kv{
		{"id", j.ID}, {"session", j.Session}, {"status", string(j.Status)},
		{"command", core.CommandLine(j.Command)}, {"cwd", j.Cwd}, {"rationale", j.Rationale},
		{"exit_code", exit}, {"timeout", timeout},
		{"pid", itoa(j.PID)}, {"pgid", itoa(j.PGID)},
		{"supervisor_pid", itoa(j.SupervisorPID)}, // supervisor_start (clock ticks) is in --json only
		{"process_tree", containmentText(j)},
		{"created_at", stamp(now, j.CreatedAt)}, {"started_at", stamp(now, j.StartedAt)},
		{"completed_at", stamp(now, j.CompletedAt)},
		{"duration", core.JobDuration(j, core.TS(now)).Round(100 * time.Millisecond).String()},
		{"log_path", j.LogPath}, {"capture_error", j.CaptureError},
		// What a supervisor that gave up (a full disk, say) left beside the log.
		{"supervisor_error", supervisor.ReadSupervisorError(j.LogPath)},
		{"surfaced_at", stamp(now, j.SurfacedAt)},
		{"cleanup_after", stamp(now, j.CleanupAfter)},
	})
	printEvents(w, now, evs)
}

// containmentText says how the job's whole process tree is held on this
// machine (`job show`), and what that means when its supervisor dies.
func containmentText(j *core.Job) string {
	switch j.Containment {
	case core.ContainCgroup:
		return "cgroup " + j.Cgroup + " (every descendant ends with the job)"
	case core.ContainSubreaper:
		return "subreaper (no writable cgroup here; descendants that leave the process group are ended by the supervisor, or by the sweep if they keep " + supervisor.EnvJobID + ")"
	case core.ContainGroup:
		return "process group only (no cgroup, no subreaper here; descendants that leave the group survive the job)"
	}
	return "-"
}

func jobTailCmd(a *app) *cobra.Command {
	var lines, nbytes int
	c := &cobra.Command{
		Use:   "tail ID [--lines N] [--bytes N]",
		Short: "Print the end of a job's log (redacted)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lines < 0 {
				return core.Invalidf("--lines %d: must not be negative", lines)
			}
			if nbytes < 0 {
				return core.Invalidf("--bytes %d: must not be negative", nbytes)
			}
			if nbytes > 0 && !cmd.Flags().Changed("lines") {
				lines = 0 // --bytes alone: no line limit
			}
			_, job, _, err := a.getJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			text, note, err := jobTail(filepath.Dir(job.LogPath), lines, nbytes)
			if err != nil {
				return err
			}
			// Job output never reaches the terminal raw (README "The console"); redacted
			// again once sanitised, because stripping escapes can join a
			// secret they split (docs/contract.md "Background jobs: Live, redacted log").
			text = redact.Default().Block(termtext.Text(text, 0))
			if a.jsonOut {
				return a.printJSON(struct {
					ID           string `json:"id"`
					Status       string `json:"status"`
					LogPath      string `json:"log_path"`
					CaptureError string `json:"capture_error"`
					Note         string `json:"note"`
					Text         string `json:"text"`
				}{job.ID, string(job.Status), job.LogPath, job.CaptureError, note, text})
			}
			if note != "" {
				fmt.Fprintln(a.stdout, note)
			}
			io.WriteString(a.stdout, text)
			if text != "" && !strings.HasSuffix(text, "\n") {
				fmt.Fprintln(a.stdout)
			}
			if job.CaptureError != "" {
				fmt.Fprintf(a.stdout, "[log incomplete: %s]\n", termtext.Exact(job.CaptureError, 500))
			}
			return nil
		},
	}
	c.Flags().IntVar(&lines, "lines", 50, "number of lines from the end (with --bytes alone: no line limit)")
	c.Flags().IntVar(&nbytes, "bytes", 0, "at most this many bytes (0: no byte limit)")
	return c
}

func jobFollowCmd(a *app) *cobra.Command {
	var lines int
	var fromStart bool
	c := &cobra.Command{
		Use:   "follow ID [--lines N] [--from-start]",
		Short: "Print a job's log as it grows, across rotations, until the job ends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, job, _, err := a.getJob(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return jobFollow(cmd.Context(), a, j, job, lines, fromStart)
		},
	}
	c.Flags().IntVar(&lines, "lines", 10, "start with this many lines from the end")
	c.Flags().BoolVar(&fromStart, "from-start", false, "start with everything on disk (output.1.log, then output.log)")
	return c
}

func jobCancelCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job: SIGTERM to its process group, SIGKILL after 5 s",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := a.jobs(cmd.Context())
			if err != nil {
				return err
			}
			job, res, err := j.CancelJob(cmd.Context(), args[0], core.OperatorActor())
			if err != nil && job == nil {
				return err
			}
			if perr := a.printMutation(res, "job", job, "job "+job.ID, "cancelled"); perr != nil {
				return perr
			}
			return err
		},
	}
}

func jobListCmd(a *app) *cobra.Command {
	var session, statuses string
	var limit int
	c := &cobra.Command{
		Use:   "list [--session S] [--status S,…]",
		Short: "List jobs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := core.JobFilter{Session: session, Limit: limit}
			for _, s := range strings.Split(statuses, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				st, err := core.ParseJobStatus(s)
				if err != nil {
					return err
				}
				f.Statuses = append(f.Statuses, st)
			}
			j, err := a.jobs(cmd.Context())
			if err != nil {
				return err
			}
			list, err := j.ListJobs(cmd.Context(), f)
			if err != nil {
				return err
			}
			if list == nil {
				list = []core.Job{}
			}
			if a.jsonOut {
				return a.printJSON(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stdout, "no jobs")
				return nil
			}
			now := time.Now()
			tw := newTable(a.stdout)
			row(tw, "ID", "STATUS", "EXIT", "SESSION", "AGE", "COMMAND")
			for i := range list {
				jb := &list[i]
				exit := "-"
				if jb.ExitCode != nil {
					exit = strconv.Itoa(*jb.ExitCode)
				}
				row(tw, jb.ID, string(jb.Status), exit, termtext.Exact(jb.Session, 40), age(now, jb.CreatedAt),
					termtext.Exact(core.CommandLine(jb.Command), 100))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&session, "session", "", "only jobs of this session")
	c.Flags().StringVar(&statuses, "status", "", "only these statuses (comma-separated)")
	c.Flags().IntVar(&limit, "limit", 0, "at most this many jobs (0: all)")
	return c
}

func jobReapCmd(a *app) *cobra.Command {
	var session string
	c := &cobra.Command{
		Use:   "reap --session S",
		Short: "Kill every pending or running job of a session and mark it reaped",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if session == "" {
				return core.Invalidf("--session is required")
			}
			j, err := a.jobs(cmd.Context())
			if err != nil {
				return err
			}
			rep, err := j.ReapSession(cmd.Context(), session, core.OperatorActor())
			if err != nil {
				return err
			}
			reason := ""
			if rep.TimedOut {
				reason = "some processes outlived the 5 s wait and got SIGKILL; the reap proceeded"
			}
			if rep.Reaped == nil {
				rep.Reaped = []core.Job{}
			}
			if a.jsonOut {
				return a.printJSON(struct {
					Applied bool   `json:"applied"`
					Reason  string `json:"reason"`
					core.ReapReport
				}{len(rep.Reaped) > 0, reason, rep})
			}
			if len(rep.Reaped) == 0 {
				fmt.Fprintf(a.stdout, "no pending or running jobs in session %s\n", termtext.Exact(session, 80))
				return nil
			}
			ids := make([]string, len(rep.Reaped))
			for i, jb := range rep.Reaped {
				ids[i] = jb.ID
			}
			fmt.Fprintf(a.stdout, "reaped %s of session %s: %s\n", count(len(ids), "job", "jobs"), termtext.Exact(session, 80), strings.Join(ids, ", "))
			if reason != "" {
				fmt.Fprintln(a.stdout, reason)
			}
			return nil
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session whose jobs to reap (required)")
	return c
}

// jobTail returns the end of the log in dir through tailer.Tail (bounded
// backward read, redacted again as one block, docs/contract.md "Background jobs: Tail and follow") as text, and the
// notice to print above it (earlier output rotated away, or no log at all).
func jobTail(dir string, lines, nbytes int) (string, string, error) {
	res, err := tailer.Tail(dir, tailer.TailOptions{Lines: lines, Bytes: int64(nbytes)})
	if errors.Is(err, fs.ErrNotExist) {
		return "", "[no log in " + dir + "]", nil
	}
	if err != nil {
		return "", "", err
	}
	if len(res.Lines) == 0 {
		return "", res.Notice, nil
	}
	return strings.Join(res.Lines, "\n") + "\n", res.Notice, nil
}

// jobFollow prints the job's log through tailer.Follow (across rotations,
// each line redacted again and sanitised), starting with the last backlog
// lines (or everything on disk with fromStart), until the job has ended and
// its supervisor is gone; then it drains what is left and returns. Ctrl-C
// stops it early. A line still being written is printed as the follower
// previews it ("[partial] progress 7%" after 200 ms of silence, each
// version once), then whole when it ends: stdout may be a pipe, so the
// preview is not erased (issue 26 item 13).
func jobFollow(ctx context.Context, a *app, j *supervisor.Jobs, job *core.Job, backlog int, fromStart bool) error {
	dir := filepath.Dir(job.LogPath)
	fl, err := tailer.Follow(ctx, dir, tailer.FollowOptions{Backlog: backlog, FromStart: fromStart})
	if err != nil {
		return fmt.Errorf("follow %s: %w", dir, err)
	}
	defer fl.Stop()
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-fl.Done():
				return
			case <-t.C:
			}
			cur, _, err := j.GetJob(ctx, job.ID)
			if err != nil {
				continue
			}
			if !cur.Status.Active() && (cur.SupervisorPID == 0 || !supervisor.ProcessAlive(cur.SupervisorPID, cur.SupervisorStart)) {
				fl.StopAtEOF() // the log is complete: drain it and stop
				return
			}
		}
	}()
	// Sanitised lines are redacted again (one LineRedactor for the stream,
	// so PEM state spans batches): stripping escapes can join a split secret.
	lr := redact.Default().NewLineRedactor()
	for batch := range fl.C() {
		var sb strings.Builder
		for _, l := range batch {
			text := termtext.Log(l.Text, 0)
			if l.Partial {
				// Redacted on its own: a preview must not disturb the
				// stream's state (its line comes again, whole).
				sb.WriteString(redact.Default().String(text))
			} else {
				sb.Write(lr.Line([]byte(text)))
			}
			sb.WriteByte('\n')
		}
		if _, err := io.WriteString(a.stdout, sb.String()); err != nil {
			return nil // stdout closed (a pipe to head): stop quietly
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := fl.Err(); err != nil {
		return err
	}
	// The log is complete: say how the job ended, on stderr, so that
	// stdout stays the log.
	if cur, _, err := j.GetJob(ctx, job.ID); err == nil && !cur.Status.Active() {
		fmt.Fprintln(a.stderr, followClosing(cur))
	}
	return nil
}

// followClosing is the line `job follow` ends with: "job <id> was cancelled
// after 12s", in the words of the job's notification (core.JobOutcome).
func followClosing(job *core.Job) string {
	d := core.JobDuration(job, job.CompletedAt)
	if d >= time.Second {
		d = d.Round(time.Second)
	} else {
		d = d.Round(10 * time.Millisecond)
	}
	return "job " + job.ID + " " + core.JobOutcome(job) + " after " + termtext.Duration(d)
}
