package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/termtext"
)

// The rules and words of background jobs, shared by the supervisor that
// runs them (package supervisor) and every reader that shows them.

// Containment values recorded in Job.Containment: how the supervisor holds
// a job's process tree on its machine (package supervisor says how each
// works).
const (
	ContainCgroup    = "cgroup"
	ContainSubreaper = "subreaper"
	ContainGroup     = "process group"
)

// CanTransitionJob is the job status rule. Pending → running is the
// supervisor's; only maintenance infers lost; cancelled, reaped, completed,
// failed and timed_out are final; lost (an inference) yields to the
// supervisor's authoritative completed, failed or timed_out — a supervisor the
// sweeper wrongly believed dead reports what really happened. It returns
// whether from → to is allowed and, when not, the reason journaled.
func CanTransitionJob(from, to JobStatus, actor Actor) (bool, string) {
	if from == to {
		return false, "already " + string(from)
	}
	switch from {
	case JobPending, JobRunning:
		switch to {
		case JobPending:
			return false, "a started job cannot return to pending"
		case JobRunning:
			if from != JobPending || actor != ActorSupervisor {
				return false, "only the supervisor starts a job"
			}
		case JobLost:
			if !actor.IsMaintenance() {
				return false, "only maintenance may mark a job lost"
			}
		}
		return true, ""
	case JobLost:
		switch to {
		case JobCompleted, JobFailed, JobTimedOut:
			if actor == ActorSupervisor {
				return true, ""
			}
		}
		return false, "lost is final except for the supervisor's own report"
	case JobCompleted, JobFailed, JobCancelled, JobTimedOut, JobReaped:
		return false, string(from) + " is final"
	}
	return false, "unknown status " + string(from)
}

// CommandLine renders argv as one shell-quoted line for display.
func CommandLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = termtext.ShellQuote(a)
	}
	return strings.Join(q, " ")
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
