package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
)

// The steps of Supervise, in the order it takes them. Each is a piece of one
// supervisor's life; none is used elsewhere.

// decodeArgv reads the real argv a supervisor gets on its stdin: a JSON array
// of base64 byte strings, at most maxArgvPayload bytes. It returns nil when r
// is nil, empty, unreadable or not such an array, so that Supervise falls back
// to the stored (redacted) command; an element may be "".
func decodeArgv(r io.Reader) []string {
	if r == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxArgvPayload))
	if err != nil || len(b) == 0 {
		return nil
	}
	var raw [][]byte
	if json.Unmarshal(b, &raw) != nil {
		return nil
	}
	var argv []string
	for _, a := range raw {
		argv = append(argv, string(a))
	}
	return argv
}

// claimPending records this process as job id's supervisor (supervisor_pid
// and supervisor_start, with a journal entry) and returns the job as read in
// that transaction. It returns ErrJobNotPending when the job is no longer
// pending (cancelled, reaped or lost before the supervisor started), the
// store's error when the job cannot be read, or a wrapped write error.
func (j *Jobs) claimPending(ctx context.Context, id string) (*core.Job, error) {
	self := os.Getpid()
	selfStart, _ := ProcStartTime(self)
	var job *core.Job
	err := j.retryUpdate(ctx, func(tx core.Tx) error {
		var err error
		if job, err = tx.GetJob(id); err != nil {
			return err
		}
		if job.Status != core.JobPending {
			return ErrJobNotPending
		}
		job.SupervisorPID, job.SupervisorStart = self, selfStart
		if err := tx.UpdateJob(job); err != nil {
			return core.WrapWrite("job", id, err)
		}
		return core.Journal(tx, j.now(), core.EntityJob, id, string(core.JobPending), string(core.JobPending), core.ActorSupervisor,
			fmt.Sprintf("supervisor started (pid %d)", self), true)
	})
	if err != nil {
		return nil, err
	}
	return job, nil
}

// openLog opens the job's rotating log in s.dir and reserves its
// SupervisorErrorFile. s.log stays nil when there is no log: the command then
// runs uncaptured, its pipes drained (docs/contract.md "Background jobs:
// Rotation"), and capture_error says why.
func (s *supervision) openLog(job *core.Job) {
	if job.CaptureError != "" {
		// Only Run writes capture_error on a pending job: it could not
		// create the log.
		s.addCaptureError(job.CaptureError)
		return
	}
	log, err := tailer.OpenWriter(s.dir, tailer.WriterOptions{MaxBytes: s.j.opts.RotateBytes})
	if err != nil {
		s.addCaptureError("cannot open log: " + err.Error())
		return
	}
	s.log = log
	s.errFile = reserveSupervisorError(s.dir)
}

// startFailed records a command that could not be started: a redacted line in
// the log (when there is one), then failed with exit code 127 when the
// program or a path was not found and 126 otherwise, as a shell reports them.
// It returns record's error.
func (s *supervision) startFailed(argv []string, startErr error) error {
	if s.log != nil {
		red := redact.Default()
		_ = s.log.WriteLine([]byte("[clawpit] cannot start " + red.Block(core.CommandLine(argv)) + ": " + red.Block(startErr.Error())))
	}
	code := 126
	if errors.Is(startErr, exec.ErrNotFound) || errors.Is(startErr, os.ErrNotExist) {
		code = 127
	}
	s.finishLog()
	return s.record(code, "cannot start: "+startErr.Error())
}

// pauseAfterStart is a test hook: with EnvJobPauseAfterStart set to a path it
// writes the command's pid there and waits, polling every 10 ms, for
// path+".release" to exist, so a test can kill or cancel the supervisor
// between start and record. Without the variable it returns at once.
func pauseAfterStart(pid int) {
	p := os.Getenv(EnvJobPauseAfterStart)
	if p == "" {
		return
	}
	_ = os.WriteFile(p, []byte(strconv.Itoa(pid)), 0o600)
	for {
		if _, err := os.Stat(p + ".release"); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startPumps copies the command's stdout and stderr (lines prefixed
// redact.StderrPrefix) through redaction into s.log, or discards them when
// there is no log so the command never blocks on a full pipe. The returned
// channel is closed once both pipes reach EOF or are closed.
func (s *supervision) startPumps(outR, errR io.Reader) <-chan struct{} {
	var pumps sync.WaitGroup
	pumps.Add(2)
	pump := func(r io.Reader, prefix string) {
		defer pumps.Done()
		if s.log == nil {
			_, _ = io.Copy(io.Discard, r)
			return
		}
		_, _ = tailer.Pump(r, s.log, prefix)
	}
	go pump(outR, "")
	go pump(errR, redact.StderrPrefix)
	pumpsDone := make(chan struct{})
	go func() { pumps.Wait(); close(pumpsDone) }()
	return pumpsDone
}

// endAfterExit runs once the command has exited: it drains what the command
// left in its pipes for up to DrainAfterExit, SIGKILLs what is left of its
// process group and tree (a job ends with its command, setsid escapes
// included), waits up to 1 s more for the pumps — closing the pipes when a
// process outside the tree holds them open, which capture_error records — and
// kills the job's cgroup, if any.
func (s *supervision) endAfterExit(pumpsDone <-chan struct{}, outR, errR io.Closer) {
	select {
	case <-pumpsDone:
	case <-time.After(s.j.opts.DrainAfterExit):
	}
	if GroupAlive(s.pgid) {
		_ = SignalGroup(s.pgid, syscall.SIGKILL)
	}
	// The job is its whole tree: end what left the group (setsid) too.
	s.killTree()
	select {
	case <-pumpsDone:
	case <-time.After(time.Second):
		// Something outside the job's tree holds the pipes open.
		outR.Close()
		errR.Close()
		<-pumpsDone
		s.addCaptureError("stopped reading: the output pipes were held open by a process outside the job's process tree")
	}
	outR.Close()
	errR.Close()
	if s.cgroup != "" {
		if err := KillCgroup(s.cgroup, time.Second); err != nil {
			s.addCaptureError(err.Error())
		}
	}
}
