package core

import "context"

// The process liveness the maintenance rules ask of the job supervisor
// (package supervisor implements both on *supervisor.Jobs; the rules, in
// package maintain/sweep, call them). They live here, below both, so that
// neither room imports the other.

// JobLiveness finds and marks background jobs whose supervisor is gone (docs/contract.md "Background jobs: Lost"). *supervisor.Jobs implements it.
type JobLiveness interface {
	// LostJobs lists pending/running jobs whose supervisor is gone (pid dead,
	// or pid reused: start time differs). Read-only.
	LostJobs(ctx context.Context) ([]Job, error)
	// MarkJobLost marks j lost if it is still active with the same Rev
	// (conditional update + journal, actor sweeper), kills any process group
	// it left behind, raises one job_lost notification naming the log path.
	// Returns false (nil error) when it raced (row changed since LostJobs).
	MarkJobLost(ctx context.Context, j Job, reason string) (bool, error)
}

// WaiterLiveness is the optional part of a JobLiveness that judges
// approval waiters, processes on this host (*supervisor.Jobs has it, from
// Linux's /proc). A sweep whose JobLiveness lacks it, or is nil, leaves
// every waiter alone, as one where /proc does not say: core itself reads
// no process table.
type WaiterLiveness interface {
	// Namespace names the boot and pid namespace of the calling process,
	// "<boot_id> pid:[<inode>]": two processes see the same pids exactly
	// when theirs are equal. ok is false when it cannot be told.
	Namespace() (ns string, ok bool)
	// WaiterGone reports whether w, a waiter in this namespace, has
	// exited: no process has its pid, the one that has is a zombie, or it
	// started at another time than w.Start (the pid was reused). A process
	// that cannot be inspected for another reason is not gone.
	WaiterGone(w Waiter) bool
}
