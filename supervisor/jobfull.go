package supervisor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
)

// A full disk names itself (docs/contract.md "Background jobs: Rotation", bench/README.md Crashes). A supervisor whose
// registry or log sits on a full file system keeps draining the command's
// output (the pump discards what it cannot write), retries its final write
// with backoff for FinalRetry, and when it must give up leaves the cause in
// <log dir>/supervisor-error — reserved when the supervisor starts, so it
// can be written in place when nothing else can. `job show`, the sweep's
// lost reason and its job_lost notification read it and say "disk full"
// rather than "supervisor gone".

// SupervisorErrorFile is the name, in a job's log directory, of the file in
// which a supervisor that could not record its job's end says why.
const SupervisorErrorFile = "supervisor-error"

// supervisorErrorSize is the space reserved for it, in bytes; longer
// messages are cut.
const supervisorErrorSize = 4096

// isDiskFull reports whether err is a full file system (SQLITE_FULL, ENOSPC).
func isDiskFull(err error) bool {
	return errors.Is(err, core.ErrDiskFull) || errors.Is(err, syscall.ENOSPC)
}

// reserveSupervisorError creates <dir>/supervisor-error holding
// supervisorErrorSize spaces (real blocks, fsynced), so writing the message
// over them later needs no new space. Nil when it cannot.
func reserveSupervisorError(dir string) *os.File {
	f, err := os.OpenFile(filepath.Join(dir, SupervisorErrorFile), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
	if err != nil {
		return nil
	}
	if _, err := f.Write(bytes.Repeat([]byte{' '}, supervisorErrorSize)); err != nil || f.Sync() != nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	return f
}

// writeSupervisorError writes msg over the reserved file, in place.
func writeSupervisorError(f *os.File, msg string) error {
	b := []byte(msg + "\n")
	if len(b) > supervisorErrorSize {
		b = append(b[:supervisorErrorSize-4], "...\n"...)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return err
	}
	return f.Sync()
}

// ReadSupervisorError returns what the supervisor of the job logging to
// logPath wrote in SupervisorErrorFile when it gave up, or "" (no file, or
// only the reserved space).
func ReadSupervisorError(logPath string) string {
	if logPath == "" {
		return ""
	}
	f, err := os.Open(filepath.Join(filepath.Dir(logPath), SupervisorErrorFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, supervisorErrorSize))
	return string(bytes.TrimSpace(b))
}

// retryFinal runs fn in a write transaction like retryUpdate, and also
// retries a full disk (space may come back), for up to FinalRetry with
// backoff from 100 ms to 2 s. It returns the last error.
func (j *Jobs) retryFinal(ctx context.Context, fn func(core.Tx) error) error {
	delay := 100 * time.Millisecond
	deadline := time.Now().Add(j.opts.FinalRetry)
	for {
		err := j.reg.Store().Update(ctx, fn)
		if err == nil || !(errors.Is(err, core.ErrBusy) || errors.Is(err, core.ErrConflict) || isDiskFull(err)) ||
			time.Now().After(deadline) {
			return err
		}
		time.Sleep(delay)
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}

// giveUp leaves why the outcome (how) could not be recorded in the reserved
// SupervisorErrorFile, and returns the error for the supervisor's exit.
func (s *supervision) giveUp(how string, err error) error {
	cause := "registry write failed"
	if isDiskFull(err) {
		cause = "disk full"
	}
	msg := fmt.Sprintf("%s: the supervisor could not record the job's end (%s) after retrying for %s: %v",
		cause, how, s.j.opts.FinalRetry, err)
	if s.errFile != nil {
		if werr := writeSupervisorError(s.errFile, msg); werr != nil {
			return fmt.Errorf("%s; writing %s also failed: %w", msg, SupervisorErrorFile, werr)
		}
	}
	return errors.New(msg)
}
