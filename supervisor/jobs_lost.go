package supervisor

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/clawpit/clawpit/core"
)

var _ core.JobLiveness = (*Jobs)(nil)

// JobLostReason says why an active job's supervisor is considered gone (docs/contract.md "Background jobs: Lost"), or "" when the job is not lost: a recorded supervisor whose pid is dead
// (a zombie counts as dead; when it left SupervisorErrorFile, its message is
// the reason: "… gave up: disk full: …") or now belongs to a process with another start
// time; or a pending job whose supervisor never recorded itself within
// LostGrace of its creation (measured on the registry clock).
func (j *Jobs) JobLostReason(job *core.Job, now core.Timestamp) string {
	if !job.Status.Active() {
		return ""
	}
	if job.SupervisorPID == 0 {
		if now.Sub(job.CreatedAt) < j.opts.LostGrace {
			return ""
		}
		return fmt.Sprintf("supervisor never started (pending for %s)", now.Sub(job.CreatedAt).Round(1e9))
	}
	st, err := readProcStat(job.SupervisorPID)
	switch {
	case err != nil, st.State == 'Z', st.State == 'X':
		if msg := ReadSupervisorError(job.LogPath); msg != "" {
			// It gave up and said why (a full disk, say): that is the cause.
			return fmt.Sprintf("supervisor pid %d gave up: %s", job.SupervisorPID, msg)
		}
		return fmt.Sprintf("supervisor pid %d is gone", job.SupervisorPID)
	case job.SupervisorStart != 0 && st.StartTime != job.SupervisorStart:
		return fmt.Sprintf("supervisor pid %d was reused by another process", job.SupervisorPID)
	}
	return ""
}

// LostJobs lists this host's pending and running jobs whose supervisor is
// gone (docs/contract.md "Background jobs: Lost"; see JobLostReason); other hosts' jobs are theirs to judge. Read-only: the sweeper plans with it and applies
// each with MarkJobLost. Its cost grows with the number of active jobs only.
func (j *Jobs) LostJobs(ctx context.Context) ([]core.Job, error) {
	active, err := j.ListJobs(ctx, core.JobFilter{Statuses: []core.JobStatus{core.JobPending, core.JobRunning}})
	if err != nil {
		return nil, err
	}
	now := j.now()
	var out []core.Job
	for _, job := range active {
		// Another host's supervisor pid means nothing here (README "Many hosts: PostgreSQL").
		if j.local(&job) && j.JobLostReason(&job, now) != "" {
			out = append(out, job)
		}
	}
	return out, nil
}

// MarkJobLost marks j lost if its row is still active with the same Rev
// (conditional update + journal, actor sweeper; docs/contract.md "Background jobs: Lost"), kills with SIGKILL
// whatever is left in its process group and the rest of its tree
// (KillJobTreeOf: its cgroup, or the processes carrying its EnvJobID marker
// — the only trace of a dead subreaper's orphans), and raises one job_lost notification
// naming the log path (dedup "job_lost:<id>"). reason defaults to
// JobLostReason. It returns false and no error when it raced: the row changed
// since LostJobs read it, or the supervisor turned out to be alive after all.
func (j *Jobs) MarkJobLost(ctx context.Context, job core.Job, reason string) (bool, error) {
	var (
		marked bool
		cur    *core.Job
	)
	err := j.reg.Store().Update(ctx, func(tx core.Tx) error {
		marked = false
		var err error
		cur, err = tx.GetJob(job.ID)
		if errors.Is(err, core.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now := j.now()
		if cur.Rev != job.Rev || !cur.Status.Active() || !j.local(cur) {
			return nil
		}
		why := j.JobLostReason(cur, now)
		if why == "" {
			return nil // the supervisor is alive (or still within its grace)
		}
		if reason == "" {
			reason = why
		}
		res, err := j.endJob(tx, cur, core.JobLost, core.ActorSweeper, reason, now)
		if err != nil || !res.Applied {
			return err
		}
		marked = true
		return j.notifyJob(tx, cur, "Reason: "+reason, now)
	})
	if err != nil || !marked {
		return false, err
	}
	if cur.PGID > 1 && GroupAlive(cur.PGID) {
		if err := SignalGroup(cur.PGID, syscall.SIGKILL); err != nil {
			return true, fmt.Errorf("job %s marked lost, but killing its process group failed: %w", cur.ID, err)
		}
	}
	// Descendants that left the group: by cgroup, or by the job's marker
	// (a subreaper's orphans went to init when it died).
	if err := KillJobTreeOf(cur); err != nil {
		return true, fmt.Errorf("job %s marked lost, but killing its process tree failed: %w", cur.ID, err)
	}
	return true, nil
}
