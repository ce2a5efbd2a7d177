package core

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
	"github.com/clawpit/clawpit/termtext"
)

// jobHeadline is the first line of a job's notification (docs/contract.md#background-jobs):
// "[Background job <id> <JobOutcome>]".
func jobHeadline(job *Job) string {
	return "[Background job " + job.ID + " " + JobOutcome(job) + "]"
}

// JobOutcome says how job ended, in the words of its notification and of
// `job follow`'s closing line: "completed successfully", "failed with exit
// code N", "timed out", "was cancelled", "was lost", "was reaped"; a job
// still active "is running" (or "is pending").
func JobOutcome(job *Job) string {
	switch job.Status {
	case JobCompleted:
		return "completed successfully"
	case JobFailed:
		if job.ExitCode != nil {
			return fmt.Sprintf("failed with exit code %d", *job.ExitCode)
		}
		return "failed"
	case JobTimedOut:
		return "timed out"
	case JobCancelled:
		return "was cancelled"
	case JobLost:
		return "was lost"
	case JobReaped:
		return "was reaped"
	}
	return "is " + string(job.Status)
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

// jobNoticeText is the text of a job's finish or lost notification (docs/contract.md "Background jobs: Alerts on finish"):
// the headline, the command, the duration, the redacted tail (last 2,000
// characters) and the full log path. Each line of its own starts with a
// label ("Command: ", "Output …:"); what came from outside is a value
// inside one: the command, the capture error and the log path are shown
// exactly (termtext.Exact: a '\n' in an argument is ␊, a '\r' ␍), so an
// argument cannot add a line, and every line of the output tail is
// indented by two spaces, so none can pass for one of clawpit's.
func jobNoticeText(job *Job, extra string) string {
	var b strings.Builder
	b.WriteString(jobHeadline(job))
	b.WriteString("\nCommand: ")
	b.WriteString(termtext.Exact(redact.Default().Block(CommandLine(job.Command)), 0))
	fmt.Fprintf(&b, "\nDuration: %s", JobDuration(job, job.CompletedAt).Round(100*time.Millisecond))
	if extra != "" {
		b.WriteString("\n" + termtext.Exact(extra, 0))
	}
	if job.CaptureError != "" {
		b.WriteString("\nLog incomplete: " + termtext.Exact(job.CaptureError, 0))
	}
	tail, err := tailer.TailChars(filepath.Dir(job.LogPath), JobNotifyTailChars)
	switch {
	case err != nil:
		b.WriteString("\nOutput: (unreadable: " + termtext.Exact(err.Error(), 0) + ")")
	case tail == "":
		b.WriteString("\nOutput: (none)")
	default:
		fmt.Fprintf(&b, "\nOutput (last %d characters):\n", JobNotifyTailChars)
		lines := strings.Split(strings.TrimRight(termtext.Text(tail, 0), "\n"), "\n")
		b.WriteString("  " + strings.Join(lines, "\n  "))
	}
	b.WriteString("\nFull log: " + termtext.Exact(job.LogPath, 0))
	// The tail was cleaned above so that trimming sees its real end; the
	// whole is cleaned once more for anything else. Redact once more after
	// stripping: an escape sequence inside a token hid it from the
	// redaction of the raw text.
	return redact.Default().Block(termtext.Text(b.String(), 0))
}

// notifyJob raises the notification for a job that has just become terminal
// (docs/contract.md "Background jobs: Alerts on finish") inside tx: job_finished for completed, failed, timed_out and
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
