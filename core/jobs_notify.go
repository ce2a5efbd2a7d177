package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/clawpit/clawpit/termtext"
)

// jobHeadline is the first line of a job's notification (SPEC J9).
func jobHeadline(job *Job) string {
	var what string
	switch job.Status {
	case JobCompleted:
		what = "completed successfully"
	case JobFailed:
		if job.ExitCode != nil {
			what = fmt.Sprintf("failed with exit code %d", *job.ExitCode)
		} else {
			what = "failed"
		}
	case JobTimedOut:
		what = "timed out"
	case JobCancelled:
		what = "was cancelled"
	case JobLost:
		what = "was lost"
	case JobReaped:
		what = "was reaped"
	default:
		what = "is " + string(job.Status)
	}
	return "[Background job " + job.ID + " " + what + "]"
}

// JobDuration is how long a job ran: completed_at (or now, while it runs)
// minus started_at (or created_at when it never started).
func JobDuration(job *Job, now Timestamp) time.Duration {
	end := job.CompletedAt
	if end == 0 {
		end = now
	}
	d := end.Sub(Coalesce(job.StartedAt, job.CreatedAt))
	if d < 0 {
		return 0
	}
	return d
}

// jobNoticeText is the text of a job's finish or lost notification (SPEC J9):
// the headline, the command, the duration, the redacted tail (last 2,000
// characters) and the full log path.
func jobNoticeText(job *Job, extra string) string {
	var b strings.Builder
	b.WriteString(jobHeadline(job))
	b.WriteString("\nCommand: ")
	b.WriteString(redactBlock(CommandLine(job.Command)))
	fmt.Fprintf(&b, "\nDuration: %s", JobDuration(job, job.CompletedAt).Round(100*time.Millisecond))
	if extra != "" {
		b.WriteString("\n" + extra)
	}
	if job.CaptureError != "" {
		b.WriteString("\nLog incomplete: " + job.CaptureError)
	}
	tail, err := ReadJobLogTail(filepath.Dir(job.LogPath), JobNotifyTailChars)
	switch {
	case err != nil:
		b.WriteString("\nOutput: (unreadable: " + err.Error() + ")")
	case tail == "":
		b.WriteString("\nOutput: (none)")
	default:
		fmt.Fprintf(&b, "\nOutput (last %d characters):\n%s", JobNotifyTailChars, strings.TrimRight(termtext.Text(tail, 0), "\n"))
	}
	b.WriteString("\nFull log: " + job.LogPath)
	// The command, paths and capture errors can carry control bytes too (the
	// tail was cleaned above so that trimming sees its real end). Redact once
	// more after stripping: an escape sequence inside a token hid it from
	// the redaction of the raw text.
	return redactBlock(termtext.Text(b.String(), 0))
}

// ReadJobLogTail returns the last n characters of the job log in dir —
// output.log, preceded by output.1.log when output.log is shorter — redacted
// as one block (SPEC J4, J9). It reads at most about 4n+8 KiB bytes from the
// end of each file, whatever their size. A missing log gives "" and no error.
func ReadJobLogTail(dir string, n int) (string, error) {
	want := int64(4*n + 8<<10)
	cur, err := readFileTail(filepath.Join(dir, LogName), want)
	if err != nil {
		return "", err
	}
	if int64(len(cur)) < want {
		prev, err := readFileTail(filepath.Join(dir, RotatedLogName), want-int64(len(cur)))
		if err != nil {
			return "", err
		}
		cur = append(prev, cur...)
	}
	s := redactBlock(strings.ToValidUTF8(string(cur), "\uFFFD"))
	if utf8.RuneCountInString(s) <= n {
		return s, nil
	}
	// Keep the last n characters.
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:], nil
}

// readFileTail returns the last max bytes of path; nil when it does not exist.
func readFileTail(path string, max int64) ([]byte, error) {
	if max <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
		// ENOTDIR: the jobs directory is a file, so the log was never
		// created (capture_error says so).
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	k, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:k], nil
}

// notifyJob raises the notification for a job that has just become terminal
// (SPEC J9) inside tx: job_finished for completed, failed, timed_out and
// cancelled (dedup "job_finished:<id>"), job_lost for lost (dedup
// "job_lost:<id>"), none for reaped (J7).
func (j *Jobs) notifyJob(tx Tx, job *Job, extra string, now Timestamp) error {
	kind, key := NotifyJobFinished, "job_finished:"+job.ID
	switch job.Status {
	case JobReaped, JobPending, JobRunning:
		return nil
	case JobLost:
		kind, key = NotifyJobLost, "job_lost:"+job.ID
	}
	return notify(tx, &Notification{
		Session: job.Session, Kind: kind, SubjectID: job.ID,
		Text: jobNoticeText(job, extra), DedupKey: key, CreatedAt: now,
	})
}

// notifyFinished raises the finish notification of job id when it is
// terminal (used when no live supervisor will).
func (j *Jobs) notifyFinished(ctx context.Context, id string) error {
	return j.reg.store.Update(ctx, func(tx Tx) error {
		job, err := tx.GetJob(id)
		if err != nil {
			return err
		}
		return j.notifyJob(tx, job, "", j.reg.now())
	})
}
