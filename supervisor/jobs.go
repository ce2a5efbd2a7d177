package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
)

// Background jobs (docs/contract.md "Background jobs" J1–J9). A job is a command run as a detached
// process: `job run` records it `pending`, creates its log and starts a
// supervisor — the clawpit binary itself, in its own session (setsid) — and
// returns at once. The supervisor runs the command in its own process group
// with stdin closed, pumps its output into a live, redacted, rotating log
// (J2–J4), and records the outcome (J6, J9). Cancel (J6), reap (J7) and the
// sweeper's lost inference (J8) work from any process through the registry
// and signals to the job's process group.
//
// Status changes are conditional updates, each journaled: whoever writes a
// terminal status first wins. Cancel, reap and the timeout write their status
// *before* signalling, so the supervisor, when the process finally exits,
// finds the job terminal and only fills in exit_code and completed_at: a
// cancelled job ends `cancelled`, never `failed` with exit code 143.

// Job supervision defaults (docs/contract.md "Background jobs: Rotation", docs/contract.md "Background jobs: Ending", docs/contract.md "Background jobs: Lost").
const (
	// SuperviseCommand is the hidden clawpit subcommand that runs a job's
	// supervisor: `clawpit __supervise --db <registry> <job-id>`.
	SuperviseCommand = "__supervise"
	// JobKillGrace is how long SIGTERM has before SIGKILL (docs/contract.md "Background jobs: Ending", docs/contract.md "Background jobs: Reaped").
	JobKillGrace = 5 * time.Second
	// DefaultJobLostGrace is how long a pending job may go without its
	// supervisor recording itself before a sweep calls it lost (docs/contract.md "Background jobs: Lost"), so
	// a sweep right after `job run` does not kill a job that is starting.
	DefaultJobLostGrace = 30 * time.Second
	// JobNotifyTailChars is how much of the log a finish notification quotes
	// (docs/contract.md "Background jobs: Alerts on finish"): the last 2,000 characters.
	JobNotifyTailChars = 2000
	// EnvJobRotateBytes, when set to a positive integer, overrides the
	// rotation threshold of supervisors started from this environment (a
	// hidden knob for tests and benchmarks).
	EnvJobRotateBytes = "CLAWPIT_JOB_ROTATE_BYTES"
)

// JobsOptions configure NewJobs. Zero values select the defaults.
type JobsOptions struct {
	// Dir is the jobs directory; a job's log lives in <Dir>/<job-id>/. Default:
	// "jobs" beside the registry database — $CLAWPIT_HOME/jobs for the default
	// database (docs/contract.md "Files"), and a directory next to a --db file otherwise, so a
	// registry and its logs always travel together.
	Dir string
	// SupervisorArgv returns the command line that supervises job id. Default:
	// [os.Executable(), SuperviseCommand, "--db", <registry path>, id].
	SupervisorArgv func(id string) ([]string, error)
	// SupervisorEnv is appended to the supervisor's environment (which the
	// job inherits).
	SupervisorEnv []string
	// RotateBytes is the rotation threshold of the job log in bytes
	// (default tailer.DefaultMaxBytes, 5 MiB, or
	// $CLAWPIT_JOB_ROTATE_BYTES).
	RotateBytes int64
	// KillGrace is the SIGTERM → SIGKILL delay (default 5 s).
	KillGrace time.Duration
	// LostGrace is how long a pending job may lack a supervisor (default 30 s).
	LostGrace time.Duration
	// PollInterval is how often a supervisor re-reads its job to notice a
	// cancel or reap written by another process (default 500 ms).
	PollInterval time.Duration
	// Host is the host jobs run on and are signalled from (default
	// HostName()): Run records it on each job; liveness, reaping and cancel
	// signal only this host's jobs (README "Many hosts: PostgreSQL").
	Host string
	// ExecShim is the argv prefix of the start shim (docs/contract.md "Background jobs: Lost": no command
	// outlives a dead supervisor unrecorded): the supervisor runs
	// ExecShim + ["--", path, argv…] and releases it once the pid is
	// recorded (see RunExecShim). Default: [os.Executable(), ExecShimCommand].
	ExecShim []string
	// FinalRetry bounds how long a supervisor retries its final write (the
	// job's outcome) while the registry is locked or its disk is full, with
	// backoff from 100 ms to 2 s, before it gives up and leaves the cause in
	// <log dir>/supervisor-error (default 1 min).
	FinalRetry time.Duration
	// DrainAfterExit is how long a supervisor keeps reading output after the
	// command exits before it kills what is left of its process group
	// (default 2 s).
	DrainAfterExit time.Duration
}

// Jobs runs and controls background jobs. It implements JobController (for the
// registry) and JobLiveness (for the sweeper). Safe for concurrent use.
type Jobs struct {
	reg  *core.Registry
	opts JobsOptions
}

var _ core.JobController = (*Jobs)(nil)

// NewJobs returns the job supervisor front end over reg.
func NewJobs(reg *core.Registry, opts JobsOptions) *Jobs {
	if opts.Dir == "" {
		opts.Dir = filepath.Join(filepath.Dir(reg.Store().Path()), "jobs")
	}
	if opts.Host == "" {
		opts.Host = core.HostName()
	}
	if opts.RotateBytes <= 0 {
		opts.RotateBytes = tailer.DefaultMaxBytes
		var n int64
		if _, err := fmt.Sscan(os.Getenv(EnvJobRotateBytes), &n); err == nil && n > 0 {
			opts.RotateBytes = n
		}
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = JobKillGrace
	}
	if opts.LostGrace <= 0 {
		opts.LostGrace = DefaultJobLostGrace
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.FinalRetry <= 0 {
		opts.FinalRetry = time.Minute
	}
	if opts.DrainAfterExit <= 0 {
		opts.DrainAfterExit = 2 * time.Second
	}
	return &Jobs{reg: reg, opts: opts}
}

// Dir returns the jobs directory.
func (j *Jobs) Dir() string { return j.opts.Dir }

// Registry returns the registry the jobs are recorded in.
func (j *Jobs) Registry() *core.Registry { return j.reg }

// JobSpec is the input of Run (docs/contract.md "Commands: exit codes and JSON" `job run`).
type JobSpec struct {
	Session   string        // owning session (required)
	Cwd       string        // working directory; default the caller's; must exist
	Timeout   time.Duration // kill timer; 0 = none (docs/contract.md "Background jobs: Ending": no default timer); rounded up to whole seconds
	Rationale string
	Command   []string // argv (required, argv[0] non-empty)
}

// Run starts a background job (docs/contract.md "Background jobs: Detached") and returns it `pending` at once; the
// supervisor moves it to running. Nothing is written when the input is bad:
// ErrInvalid for an empty command, a missing session, a negative timeout,
// a cwd that does not exist (the message carries a `mkdir -p -- '<dir>'`
// hint), or a command that cannot start (checkCommand). The log directory (0700) and an empty output.log (0600) exist before
// the command starts. When they cannot be created (an unwritable or
// misplaced jobs directory) the job still runs: it is recorded with
// capture_error saying why, and its supervisor drains the command's output
// without writing it (docs/contract.md "Background jobs: Rotation": the child never blocks); the caller should
// warn. The registry stores the command with J4 secrets redacted; the real argv reaches the supervisor through a pipe on its stdin.
// When the supervisor cannot be started the job is recorded `failed` with
// capture_error saying why, and the error is returned with it.
func (j *Jobs) Run(ctx context.Context, spec JobSpec, actor core.Actor) (*core.Job, error) {
	if strings.TrimSpace(spec.Session) == "" {
		return nil, core.Invalidf("a job needs a session (--session)")
	}
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, core.Invalidf("empty command: give it after -- (job run --session S -- CMD ARGS…)")
	}
	if spec.Timeout < 0 {
		return nil, core.Invalidf("negative timeout %s", spec.Timeout)
	}
	cwd := spec.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("current directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, core.Invalidf("cwd %q: %v", spec.Cwd, err)
	}
	if st, err := os.Stat(cwd); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, core.Invalidf("cwd %s does not exist (create it with: mkdir -p -- '%s')", cwd, strings.ReplaceAll(cwd, "'", `'\''`))
		}
		return nil, core.Invalidf("cwd %s: %v", cwd, err)
	} else if !st.IsDir() {
		return nil, core.Invalidf("cwd %s is not a directory", cwd)
	}
	if err := checkCommand(spec.Command[0], cwd); err != nil {
		return nil, err
	}
	timeoutS := int64((spec.Timeout + time.Second - 1) / time.Second)

	id := core.NewShortID()
	dir := filepath.Join(j.opts.Dir, id)
	logPath := filepath.Join(dir, tailer.CurrentLog)
	madeDir, captureErr := createJobLog(j.opts.Dir, dir, logPath)
	removeDir := func() {
		if madeDir {
			os.RemoveAll(dir)
		}
	}

	stored := make([]string, len(spec.Command))
	for i, a := range spec.Command {
		stored[i] = redact.Default().Block(a)
	}
	job := &core.Job{
		ID: id, Session: spec.Session, Command: stored, Cwd: cwd, Rationale: redact.Default().Block(spec.Rationale),
		Status: core.JobPending, TimeoutS: timeoutS, LogPath: logPath, CaptureError: captureErr,
		Host: j.opts.Host,
	}
	err = j.reg.Store().Update(ctx, func(tx core.Tx) error {
		if s, err := tx.GetSession(spec.Session); err == nil && s.State == core.SessionClosed {
			return core.Invalidf("session %s is closed", spec.Session)
		} else if err != nil && !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("session %s: %w", spec.Session, err)
		}
		job.CreatedAt = j.now()
		if err := tx.InsertJob(job); err != nil {
			return core.WrapWrite("job", id, err)
		}
		reason := "job run: " + core.CommandLine(stored)
		if timeoutS > 0 {
			reason += fmt.Sprintf(" (timeout %ds)", timeoutS)
		}
		if captureErr != "" {
			reason += "; output will not be captured: " + captureErr
		}
		return core.Journal(tx, job.CreatedAt, core.EntityJob, id, "", string(core.JobPending), actor, reason, true)
	})
	if err != nil {
		removeDir()
		return nil, err
	}
	if err := j.spawnSupervisor(job, spec.Command); err != nil {
		failed, ferr := j.failToStart(ctx, id, "start supervisor: "+err.Error())
		if ferr != nil {
			return job, errors.Join(err, ferr)
		}
		return failed, fmt.Errorf("job %s: start supervisor: %w", id, err)
	}
	return job, nil
}

// createJobLog creates the jobs directory, the job's log directory dir
// (0700) and an empty log at logPath (0600). It reports whether it created
// dir and, when something failed, why — as capture_error text: a log that
// cannot be created does not stop the job (docs/contract.md "Background jobs: Rotation"), it runs uncaptured.
func createJobLog(jobsDir, dir, logPath string) (madeDir bool, captureErr string) {
	if err := os.MkdirAll(jobsDir, 0o700); err != nil {
		return false, "cannot create the log: create jobs directory: " + err.Error()
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return false, "cannot create the log: create job log directory: " + err.Error()
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return true, "cannot create the log: " + err.Error()
	}
	f.Close()
	return true, ""
}

// spawnSupervisor starts the supervisor of job in its own session with
// stdout/stderr on /dev/null and the argv as JSON on its stdin, and does not
// wait for it: a goroutine reaps it if this process outlives it (the console,
// the demo); a CLI process simply exits and the supervisor is re-parented.
func (j *Jobs) spawnSupervisor(job *core.Job, argv []string) error {
	var sargv []string
	var err error
	if j.opts.SupervisorArgv != nil {
		sargv, err = j.opts.SupervisorArgv(job.ID)
	} else {
		var exe string
		exe, err = os.Executable()
		sargv = []string{exe, SuperviseCommand, "--db", j.reg.Store().Path(), job.ID}
	}
	if err != nil {
		return err
	}
	// Each argument travels as bytes (base64 in JSON) so non-UTF-8 arguments
	// reach the command unchanged; a JSON string would turn them into U+FFFD.
	raw := make([][]byte, len(argv))
	for i, a := range argv {
		raw[i] = []byte(a)
	}
	payload, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        sargv[0],
		Args:        sargv,
		Dir:         job.Cwd,
		Env:         append(os.Environ(), j.opts.SupervisorEnv...),
		Stdin:       pr,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	pr.Close()
	go cmd.Wait()
	// A pipe holds 64 KiB; a larger argv waits for the supervisor to read it.
	_, werr := pw.Write(payload)
	pw.Close()
	if werr != nil {
		return fmt.Errorf("pass the command to the supervisor: %w", werr)
	}
	return nil
}

// failToStart records a job whose supervisor could not start as failed.
func (j *Jobs) failToStart(ctx context.Context, id, why string) (*core.Job, error) {
	var out *core.Job
	err := j.reg.Store().Update(ctx, func(tx core.Tx) error {
		job, err := tx.GetJob(id)
		if err != nil {
			return err
		}
		out = job
		if !job.Status.Active() {
			return nil
		}
		now := j.now()
		from := job.Status
		job.Status = core.JobFailed
		job.CaptureError = why
		job.CompletedAt = now
		job.CleanupAfter = now.Add(j.reg.Thresholds().JobRetention)
		if err := tx.UpdateJob(job); err != nil {
			return core.WrapWrite("job", id, err)
		}
		return core.Journal(tx, now, core.EntityJob, id, string(from), string(core.JobFailed), core.ActorSupervisor, why, true)
	})
	return out, err
}

// GetJob returns a job by id or unique prefix (≥ 4 characters) with its
// journal. Errors: ErrNotFound, *AmbiguousError, ErrInvalid.
func (j *Jobs) GetJob(ctx context.Context, id string) (*core.Job, []core.Event, error) {
	var (
		job *core.Job
		evs []core.Event
	)
	err := j.reg.Store().View(ctx, func(tx core.Tx) error {
		full, err := core.ResolveID(tx, core.EntityJob, id, j.reg.IDMatch())
		if err != nil {
			return err
		}
		if job, err = tx.GetJob(full); err != nil {
			return err
		}
		evs, err = tx.Events(core.EntityJob, full)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return job, evs, nil
}

// ListJobs returns the jobs matching f, newest first.
func (j *Jobs) ListJobs(ctx context.Context, f core.JobFilter) ([]core.Job, error) {
	var out []core.Job
	err := j.reg.Store().View(ctx, func(tx core.Tx) (err error) {
		out, err = tx.ListJobs(f)
		return err
	})
	return out, err
}

// endJob moves job to the terminal status to (conditionally, journaled) inside
// tx, stamping completed_at and cleanup_after (docs/contract.md "Retention": terminal jobs are kept
// 24 h). A refused transition is journaled as ignored and reported.
func (j *Jobs) endJob(tx core.Tx, job *core.Job, to core.JobStatus, actor core.Actor, reason string, now core.Timestamp) (core.Result, error) {
	from := job.Status
	if ok, why := core.CanTransitionJob(from, to, actor); !ok {
		return core.Refuse(tx, now, core.EntityJob, job.ID, string(from), string(to), actor, why)
	}
	job.Status = to
	job.CompletedAt = now
	job.CleanupAfter = now.Add(j.reg.Thresholds().JobRetention)
	if err := tx.UpdateJob(job); err != nil {
		return core.Result{}, core.WrapWrite("job", job.ID, err)
	}
	return core.Applied(""), core.Journal(tx, now, core.EntityJob, job.ID, string(from), string(to), actor, reason, true)
}

// CancelJob ends a job as cancelled (docs/contract.md "Background jobs: Ending"): it writes `cancelled` first
// (conditional, journaled), then sends SIGTERM to the job's process group and
// SIGKILL after 5 s if anything is left, waiting for that, then ends what is
// left of the job's tree outside the group (KillJobTreeOf). A terminal job
// answers Result{false, "already <status>"} and nothing is signalled. A job
// still pending (no process group yet) is killed by its supervisor, which
// re-checks the status before and after starting the command. When no live
// supervisor will report the end, CancelJob raises the job_finished
// notification itself (J9).
func (j *Jobs) CancelJob(ctx context.Context, id string, actor core.Actor) (*core.Job, core.Result, error) {
	var (
		job *core.Job
		res core.Result
	)
	err := j.reg.Store().Update(ctx, func(tx core.Tx) error {
		full, err := core.ResolveID(tx, core.EntityJob, id, j.reg.IDMatch())
		if err != nil {
			return err
		}
		if job, err = tx.GetJob(full); err != nil {
			return err
		}
		if !job.Status.Active() {
			res, err = core.Refuse(tx, j.now(), core.EntityJob, job.ID, string(job.Status), string(core.JobCancelled), actor, "already "+string(job.Status))
			return err
		}
		reason := "cancel"
		switch {
		case !j.local(job):
			reason = "cancel: the supervisor on host " + job.Host + " stops the command"
		case job.PGID > 1:
			reason = fmt.Sprintf("cancel: SIGTERM to process group %d, SIGKILL after %s", job.PGID, j.opts.KillGrace)
		}
		res, err = j.endJob(tx, job, core.JobCancelled, actor, reason, j.now())
		return err
	})
	if err != nil || !res.Applied {
		return job, res, err
	}
	if !j.local(job) {
		// Its pids mean nothing here: the supervisor on its host sees the
		// status within its poll interval, stops the command and reports.
		res.Reason = "the supervisor on host " + job.Host + " stops the command"
		return job, res, nil
	}
	superAlive := job.SupervisorPID != 0 && ProcessAlive(job.SupervisorPID, job.SupervisorStart)
	switch {
	case job.PGID > 1:
		survivors := KillGroups([]int{job.PGID}, j.opts.KillGrace)
		if len(survivors) > 0 {
			res.Reason = fmt.Sprintf("SIGTERM to process group %d; SIGKILL after %s", job.PGID, j.opts.KillGrace)
		} else {
			res.Reason = fmt.Sprintf("SIGTERM to process group %d", job.PGID)
		}
		// The job is its whole tree: what left the group goes too.
		if err := KillJobTreeOf(job); err != nil {
			res.Reason += "; " + err.Error()
		}
	case superAlive:
		res.Reason = "the supervisor stops the command as it starts"
	default:
		res.Reason = "no process was running"
	}
	if !superAlive {
		if err := j.notifyFinished(ctx, job.ID); err != nil {
			return job, res, err
		}
	}
	return job, res, nil
}

// ReapSession kills every pending or running job of session and marks it
// reaped (docs/contract.md "Background jobs: Reaped"): the statuses are written first in one transaction (each a
// conditional, journaled change), then every job's process group gets SIGTERM;
// after at most 5 s in total whatever is left gets SIGKILL and the reap
// proceeds anyway, saying so in ReapReport.TimedOut; then what is left of each
// job's tree outside its group is killed (KillJobTreeOf). Reaped jobs raise no
// job_finished notification. Idempotent: a second call reaps nothing.
func (j *Jobs) ReapSession(ctx context.Context, session string, actor core.Actor) (core.ReapReport, error) {
	if session == "" {
		return core.ReapReport{}, core.Invalidf("reap needs a session")
	}
	var rep core.ReapReport
	err := j.reg.Store().Update(ctx, func(tx core.Tx) error {
		rep.Reaped = nil
		active, err := tx.ListJobs(core.JobFilter{Statuses: []core.JobStatus{core.JobPending, core.JobRunning}, Session: session})
		if err != nil {
			return fmt.Errorf("jobs of session %s: %w", session, err)
		}
		now := j.now()
		for i := range active {
			job := &active[i]
			reason := "session " + session + " reaped"
			if job.PGID > 1 {
				reason += fmt.Sprintf(": SIGTERM to process group %d, SIGKILL after %s", job.PGID, j.opts.KillGrace)
			}
			res, err := j.endJob(tx, job, core.JobReaped, actor, reason, now)
			if err != nil {
				return err
			}
			if res.Applied {
				rep.Reaped = append(rep.Reaped, *job)
			}
		}
		return nil
	})
	if err != nil {
		return core.ReapReport{}, err
	}
	var groups []int
	for _, job := range rep.Reaped {
		// Another host's job is stopped by its own supervisor, which sees
		// the reaped status within its poll interval.
		if job.PGID > 1 && j.local(&job) {
			groups = append(groups, job.PGID)
		}
	}
	if len(groups) > 0 {
		rep.TimedOut = len(KillGroups(groups, j.opts.KillGrace)) > 0
	}
	for i := range rep.Reaped {
		_ = KillJobTreeOf(&rep.Reaped[i]) // the supervisor retries what fails here
	}
	return rep, nil
}

// now is the registry clock's current time (ms).
func (j *Jobs) now() core.Timestamp { return core.TS(j.reg.Clock().Now()) }

// Host is the host this supervisor front end runs jobs on and signals.
func (j *Jobs) Host() string { return j.opts.Host }

// local reports whether job's processes live on this host: its host is
// this one, or unrecorded (a job from before hosts, on the single host).
func (j *Jobs) local(job *core.Job) bool {
	return job.Host == "" || job.Host == j.opts.Host
}
