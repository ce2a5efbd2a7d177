package supervisor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/redact"
	"github.com/clawpit/clawpit/tailer"
	"github.com/clawpit/clawpit/termtext"
)

// jobHeadline is the first line of a job's notification (docs/contract.md#background-jobs):
// "[Background job <id> <JobOutcome>]".
func jobHeadline(job *core.Job) string {
	return "[Background job " + job.ID + " " + core.JobOutcome(job) + "]"
}

// jobNoticeText is the text of a job's finish or lost notification (docs/contract.md "Background jobs: Alerts on finish"):
// the headline, the command, the duration, the redacted tail (last 2,000
// characters) and the full log path. Each line of its own starts with a
// label ("Command: ", "Output …:"); what came from outside is a value
// inside one: the command, the capture error and the log path are shown
// exactly (termtext.Exact: a '\n' in an argument is ␊, a '\r' ␍), so an
// argument cannot add a line, and every line of the output tail is
// indented by two spaces, so none can pass for one of clawpit's.
func jobNoticeText(job *core.Job, extra string) string {
	var b strings.Builder
	b.WriteString(jobHeadline(job))
	b.WriteString("\nCommand: ")
	b.WriteString(termtext.Exact(redact.Default().Block(core.CommandLine(job.Command)), 0))
	fmt.Fprintf(&b, "\nDuration: %s", core.JobDuration(job, job.CompletedAt).Round(100*time.Millisecond))
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
func (j *Jobs) notifyJob(tx core.Tx, job *core.Job, extra string, now core.Timestamp) error {
	kind, key := core.NotifyJobFinished, "job_finished:"+job.ID
	switch job.Status {
	case core.JobReaped, core.JobPending, core.JobRunning:
		return nil
	case core.JobLost:
		kind, key = core.NotifyJobLost, "job_lost:"+job.ID
	}
	return core.Notify(tx, &core.Notification{
		Session: job.Session, Kind: kind, SubjectID: job.ID,
		Text: jobNoticeText(job, extra), DedupKey: key, CreatedAt: now,
	})
}

// notifyFinished raises the finish notification of job id when it is
// terminal (used when no live supervisor will).
func (j *Jobs) notifyFinished(ctx context.Context, id string) error {
	return j.reg.Store().Update(ctx, func(tx core.Tx) error {
		job, err := tx.GetJob(id)
		if err != nil {
			return err
		}
		return j.notifyJob(tx, job, "", j.now())
	})
}
