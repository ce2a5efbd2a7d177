package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tailer"
	"golang.org/x/sys/unix"
)

// ErrJobNotPending is returned by Supervise when the job is no longer pending
// when its supervisor starts (cancelled, reaped or marked lost meanwhile):
// the command is not run.
var ErrJobNotPending = errors.New("job is no longer pending")

// maxArgvPayload bounds the argv JSON a supervisor reads from its stdin.
const maxArgvPayload = 16 << 20

// Supervise is the body of a job's supervisor process (`clawpit __supervise`,
// docs/contract.md "Background jobs: Detached" to "Rotation", J6, J9), started by Run in its own session. argvIn carries the
// command's real argv as a JSON array of base64 byte strings (the registry stores it redacted); nil
// or unreadable input falls back to the stored command.
//
// It records itself (supervisor_pid, supervisor_start), runs the command in
// its own process group with stdin on /dev/null, the job's cwd and the
// inherited environment, marks the job running (pid, pgid, started_at), and
// pumps stdout and stderr ("[stderr] " lines) through redaction into the
// rotating log. It arms the kill timer when the job has a timeout (then writes
// timed_out, SIGTERM, SIGKILL after 5 s), and re-reads the job every
// PollInterval so a cancel or reap written by another process stops the
// command even if that process died before signalling. When the command
// exits it keeps draining its output for up to DrainAfterExit, SIGKILLs what
// is left of its process group (a job ends with its command), fsyncs the log
// and records the outcome: exit 0 → completed, otherwise failed with exit_code
// (a command killed by signal N has exit code 128+N). A status written
// meanwhile by cancel, reap or the timer is kept (only exit_code,
// completed_at and capture_error are filled in); `lost` yields to this
// authoritative result. Then it raises the job_finished notification (none
// for reaped).
//
// The supervisor lives as long as its command: when ctx ends (SIGTERM or
// SIGINT to the supervisor, say at shutdown) it stops the command like a
// cancel — SIGTERM to its group, SIGKILL after KillGrace — and still records
// how it ended; its own database work ignores ctx. It returns ErrJobNotPending when the job had already ended before it
// started; any other error means the outcome could not be recorded.
func (j *Jobs) Supervise(ctx context.Context, id string, argvIn io.Reader) error {
	stopped := ctx.Done()
	ctx = context.WithoutCancel(ctx)
	argv := decodeArgv(argvIn)

	job, err := j.claimPending(ctx, id)
	if err != nil {
		return err
	}
	if len(argv) == 0 || argv[0] == "" {
		argv = job.Command
	}

	s := &supervision{j: j, ctx: ctx, id: id, dir: filepath.Dir(job.LogPath)}
	s.openLog(job)

	js, startErr := j.startJobCommand(id, argv, job.Cwd)
	if startErr != nil {
		return s.startFailed(argv, startErr)
	}
	cmd, outR, errR := js.cmd, js.outR, js.errR
	s.pgid = cmd.Process.Pid
	s.cgroup = js.cgroup
	s.subreaper = js.containment == core.ContainSubreaper
	pauseAfterStart(cmd.Process.Pid)
	pumpsDone := s.startPumps(outR, errR)

	// pending → running, unless a cancel or reap got there first; only then
	// may the command run (the start handshake).
	if ok, err := s.markRunning(cmd.Process.Pid, js); ok && err == nil {
		js.release()
	} else {
		js.abort() // the shim exits 125: the command never runs unrecorded
		s.kill()
	}
	exited := make(chan struct{})
	if job.TimeoutS > 0 {
		t := time.AfterFunc(time.Duration(job.TimeoutS)*time.Second, s.timeout)
		defer t.Stop()
	}
	go s.watch(exited)
	go func() {
		select {
		case <-stopped:
			s.kill()
		case <-exited:
		}
	}()

	werr := cmd.Wait()
	close(exited)
	code := exitCodeOf(cmd, werr)
	s.endAfterExit(pumpsDone, outR, errR)
	s.finishLog()
	return s.record(code, describeExit(cmd, werr))
}

// jobStart is a job command started behind its start shim: it runs only
// once release is called.
type jobStart struct {
	cmd         *exec.Cmd
	outR, errR  *os.File
	hs          *os.File // the handshake pipe's write end; nil once used
	containment string   // core.ContainCgroup, core.ContainSubreaper or core.ContainGroup
	cgroup      string   // the job's cgroup directory (core.ContainCgroup)
	why         string   // why a stronger containment was not used, or ""
}

// release lets the shim exec the command.
func (js *jobStart) release() {
	if js.hs != nil {
		_, _ = js.hs.Write([]byte{shimGo})
		js.hs.Close()
		js.hs = nil
	}
}

// abort makes the shim exit 125 without running the command.
func (js *jobStart) abort() {
	if js.hs != nil {
		js.hs.Close()
		js.hs = nil
	}
}

// startJobCommand starts the start shim for argv in cwd (see RunExecShim) in
// a new process group, with stdin on /dev/null, stdout/stderr on fresh pipes
// (the read ends are returned), EnvJobID=id in its environment, and in the
// strongest containment this machine allows (see core.ContainCgroup). The shim
// holds the command until release; if this process dies first, the shim sees
// EOF and exits. Errors: exec.ErrNotFound when argv[0] is not on PATH, or the
// shim could not start.
func (j *Jobs) startJobCommand(id string, argv []string, cwd string) (*jobStart, error) {
	path, err := lookCommand(argv, cwd)
	if err != nil {
		return nil, err
	}
	shim := j.opts.ExecShim
	if len(shim) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("start shim: %w", err)
		}
		shim = []string{exe, ExecShimCommand}
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvJobID+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, EnvJobID+"="+id)
	args := append(append(append([]string{}, shim...), "--", path), argv...)

	js := &jobStart{containment: core.ContainGroup}
	capped := os.Getenv(EnvJobContainment)
	switch err := setSubreaper(); {
	case capped == core.ContainGroup:
		js.why = EnvJobContainment + "=" + capped
	case err != nil:
		js.why = "not a subreaper: " + err.Error()
	default:
		js.containment = core.ContainSubreaper
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	hsR, hsW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, err
	}
	defer func() {
		outW.Close()
		errW.Close()
		hsR.Close()
	}()
	start := func(cg *os.File) (*exec.Cmd, error) {
		cmd := &exec.Cmd{Path: shim[0], Args: args, Dir: cwd, Env: env, Stdout: outW, Stderr: errW,
			ExtraFiles: []*os.File{hsR}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
		if cg != nil {
			cmd.SysProcAttr.UseCgroupFD = true
			cmd.SysProcAttr.CgroupFD = int(cg.Fd())
		}
		return cmd, cmd.Start()
	}
	var cmd *exec.Cmd
	dir, cg, cgErr := "", (*os.File)(nil), errors.New(EnvJobContainment+"="+capped)
	if capped == "" || capped == core.ContainCgroup {
		dir, cg, cgErr = newJobCgroup(id)
	}
	if cgErr == nil {
		cmd, err = start(cg)
		cg.Close()
		if err == nil {
			js.containment, js.cgroup = core.ContainCgroup, dir
		} else {
			os.Remove(dir)
			cgErr = err
		}
	}
	if cgErr != nil {
		js.why = strings.TrimPrefix(js.why+"; ", "; ") + "no cgroup: " + cgErr.Error()
		cmd, err = start(nil)
	}
	if err != nil {
		outR.Close()
		errR.Close()
		hsW.Close()
		return nil, err
	}
	js.cmd, js.outR, js.errR, js.hs = cmd, outR, errR, hsW
	return js, nil
}

// exitCodeOf is the command's exit status, 128+N when killed by signal N.
func exitCodeOf(cmd *exec.Cmd, werr error) int {
	if cmd.ProcessState == nil {
		return 1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// describeExit is the journal reason for the command's end.
func describeExit(cmd *exec.Cmd, werr error) string {
	if cmd.ProcessState == nil {
		return "wait failed: " + fmt.Sprint(werr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = strconv.Itoa(int(ws.Signal()))
		}
		return fmt.Sprintf("killed by signal %s (exit code %d)", name, 128+int(ws.Signal()))
	}
	return fmt.Sprintf("exited with code %d", cmd.ProcessState.ExitCode())
}

// supervision is the state of one Supervise call shared by its goroutines.
type supervision struct {
	j    *Jobs
	ctx  context.Context
	id   string
	dir  string                 // the job's log directory
	log  *tailer.RotatingWriter // nil: no log, output discarded
	pgid int
	// errFile is the reserved SupervisorErrorFile (nil without a log dir).
	errFile *os.File
	// cgroup is the job's cgroup directory, "" when not contained by one;
	// subreaper says this process is the tree's subreaper.
	cgroup    string
	subreaper bool

	mu          sync.Mutex
	captureErrs []string
	timedOut    bool
	closed      bool // the log is closed: its Err no longer means a write failed
	killOnce    sync.Once
}

func (s *supervision) addCaptureError(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.captureErrs {
		if m == msg {
			return
		}
	}
	s.captureErrs = append(s.captureErrs, msg)
}

// captureError is capture_error as it stands: the errors noted so far plus
// the log's sticky write error and last failed rotation.
func (s *supervision) captureError() string {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if s.log != nil && !closed {
		if err := s.log.Err(); err != nil {
			s.addCaptureError("log write failed, output after this point was discarded: " + err.Error())
		}
		if err := s.log.RotateErr(); err != nil {
			s.addCaptureError("log rotation failed (capture continued on " + tailer.CurrentLog + "): " + err.Error())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.captureErrs, "; ")
}

// kill ends the command's process tree: SIGTERM to its group, SIGKILL after
// KillGrace, then SIGKILL to every descendant left (killTree). Only the first
// call acts; it returns at once.
func (s *supervision) kill() {
	s.killOnce.Do(func() {
		if s.pgid > 1 {
			go func() {
				KillGroups([]int{s.pgid}, s.j.opts.KillGrace)
				s.killTree()
			}()
		}
	})
}

// killTree SIGKILLs what is left of the job's tree outside its process
// group: everything in its cgroup, or the marked descendants this
// subreaper inherited (the main command, which os/exec waits for, is
// left to the group kill).
func (s *supervision) killTree() {
	switch {
	case s.cgroup != "":
		_ = os.WriteFile(filepath.Join(s.cgroup, "cgroup.kill"), []byte("1"), 0)
	case s.subreaper:
		KillJobTree(os.Getpid(), s.id, s.pgid, 2*time.Second)
	}
}

// markRunning moves the job pending → running with pid, pgid and how its tree
// is contained, and reports whether it did. When the job was cancelled or
// reaped meanwhile it reports false: the caller must not release the command.
func (s *supervision) markRunning(pid int, js *jobStart) (bool, error) {
	stop := false
	err := s.j.retryUpdate(s.ctx, func(tx core.Tx) error {
		stop = false
		job, err := tx.GetJob(s.id)
		if err != nil {
			return err
		}
		now := s.j.now()
		if job.Status != core.JobPending {
			stop = true
			return core.Journal(tx, now, core.EntityJob, s.id, string(job.Status), string(job.Status), core.ActorSupervisor,
				fmt.Sprintf("command started (pid %d) after the job became %s: stopping it", pid, job.Status), true)
		}
		job.Status, job.PID, job.PGID, job.StartedAt = core.JobRunning, pid, pid, now
		job.Containment, job.Cgroup = js.containment, js.cgroup
		if err := tx.UpdateJob(job); err != nil {
			return core.WrapWrite("job", s.id, err)
		}
		how := "contained by " + js.containment
		if js.cgroup != "" {
			how += " " + js.cgroup
		}
		if js.why != "" {
			how += " (" + js.why + ")"
		}
		return core.Journal(tx, now, core.EntityJob, s.id, string(core.JobPending), string(core.JobRunning), core.ActorSupervisor,
			fmt.Sprintf("started (pid %d, process group %d, %s)", pid, pid, how), true)
	})
	return err == nil && !stop, err
}

// timeout is the kill timer (docs/contract.md "Background jobs: Ending"): write timed_out, then kill.
func (s *supervision) timeout() {
	s.mu.Lock()
	s.timedOut = true
	s.mu.Unlock()
	_ = s.j.retryUpdate(s.ctx, func(tx core.Tx) error {
		job, err := tx.GetJob(s.id)
		if err != nil || !job.Status.Active() {
			return err
		}
		_, err = s.j.endJob(tx, job, core.JobTimedOut, core.ActorSupervisor,
			fmt.Sprintf("timeout after %ds", job.TimeoutS), s.j.now())
		return err
	})
	s.kill()
}

// watch re-reads the job every PollInterval until the command exits: a
// terminal status written by another process (cancel, reap, lost) stops the
// command, and a new capture error is written to the row as it happens.
func (s *supervision) watch(exited <-chan struct{}) {
	t := time.NewTicker(s.j.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-exited:
			return
		case <-t.C:
		}
		var job *core.Job
		err := s.j.reg.Store().View(s.ctx, func(tx core.Tx) (err error) {
			job, err = tx.GetJob(s.id)
			return err
		})
		if err != nil {
			continue
		}
		if !job.Status.Active() {
			s.kill()
		}
		if ce := s.captureError(); ce != "" && ce != job.CaptureError {
			_ = s.j.retryUpdate(s.ctx, func(tx core.Tx) error {
				job, err := tx.GetJob(s.id)
				if err != nil {
					return err
				}
				job.CaptureError = ce
				if err := tx.UpdateJob(job); err != nil {
					return err
				}
				return core.Journal(tx, s.j.now(), core.EntityJob, s.id, string(job.Status), string(job.Status),
					core.ActorSupervisor, "capture error: "+ce, true)
			})
		}
	}
}

// finishLog closes the log and fsyncs both files so a crash after the outcome
// is recorded loses no line.
func (s *supervision) finishLog() {
	s.captureError() // note the log's errors before Close makes them "closed"
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.log != nil {
		werr := s.log.Err()
		if err := s.log.Close(); err != nil && werr == nil {
			s.addCaptureError("closing the log failed: " + err.Error())
		}
	}
	for _, name := range []string{tailer.CurrentLog, tailer.RotatedLog} {
		if f, err := os.OpenFile(filepath.Join(s.dir, name), os.O_RDONLY, 0); err == nil {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				_ = f.Sync()
			}
			f.Close()
		}
	}
}

// record writes the outcome (see Supervise) and raises the notification,
// retrying for FinalRetry; when it must give up, the cause goes to
// SupervisorErrorFile (see giveUp).
func (s *supervision) record(code int, how string) error {
	err := s.recordOnce(code, how)
	if s.errFile != nil {
		defer func() {
			s.errFile.Close()
			if err == nil {
				os.Remove(s.errFile.Name())
			}
		}()
	}
	if err != nil {
		err = s.giveUp(how, err)
	}
	return err
}

func (s *supervision) recordOnce(code int, how string) error {
	ce := s.captureError()
	s.mu.Lock()
	timedOut := s.timedOut
	s.mu.Unlock()
	return s.j.retryFinal(s.ctx, func(tx core.Tx) error {
		job, err := tx.GetJob(s.id)
		if err != nil {
			return err
		}
		now := s.j.now()
		c := code
		job.ExitCode = &c
		job.CaptureError = ce
		from := job.Status
		switch from {
		case core.JobPending, core.JobRunning, core.JobLost:
			to := core.JobCompleted
			switch {
			case timedOut:
				to = core.JobTimedOut
			case code != 0:
				to = core.JobFailed
			}
			res, err := s.j.endJob(tx, job, to, core.ActorSupervisor, how, now)
			if err != nil || !res.Applied {
				return err
			}
		case core.JobCancelled, core.JobReaped, core.JobTimedOut:
			job.CompletedAt = now
			job.CleanupAfter = now.Add(s.j.reg.Thresholds().JobRetention)
			if err := tx.UpdateJob(job); err != nil {
				return core.WrapWrite("job", s.id, err)
			}
			if err := core.Journal(tx, now, core.EntityJob, s.id, string(from), string(from), core.ActorSupervisor, how, true); err != nil {
				return err
			}
		default:
			return core.Journal(tx, now, core.EntityJob, s.id, string(from), string(from), core.ActorSupervisor,
				"late report ignored ("+string(from)+" is final): "+how, false)
		}
		return s.j.notifyJob(tx, job, "", now)
	})
}

// retryUpdate runs fn in a write transaction, retrying for up to about a
// minute while the database is busy: a supervisor must not lose a job's
// outcome to a momentary lock.
func (j *Jobs) retryUpdate(ctx context.Context, fn func(core.Tx) error) error {
	delay := 100 * time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		err := j.reg.Store().Update(ctx, fn)
		if err == nil || !(errors.Is(err, core.ErrBusy) || errors.Is(err, core.ErrConflict)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}
