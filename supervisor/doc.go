// Package supervisor runs background jobs (docs/contract.md "Background
// jobs") and is the home of process control below the commands: core,
// which holds the rules and the registry, starts, signals and inspects no
// process, and asks this package through interfaces it declares. It makes
// system calls (syscall, golang.org/x/sys/unix) and reads Linux's /proc.
//
// It holds the jobs front end (Jobs: Run, Supervise, CancelJob,
// ReapSession, and the liveness the sweep asks through core.JobLiveness and
// core.WaiterLiveness), the supervisor process each job runs under, the
// exec shim that starts the command (RunExecShim, ExecShimCommand), the
// containment of a job's process tree (cgroup v2, a subreaper, or its
// process group), the process helpers (ProcessAlive, GroupAlive,
// KillGroups, ThisProcess, ProcNamespace) and the Shell that runs
// `--notify-cmd` for core.Notifier.
//
// The rules stay in core: a job's status changes only as
// core.CanTransitionJob allows, and its rows are written with core's write
// primitives (core.Journal, core.Refuse, core.Notify), so that a job's
// journal reads like every other entity's. Job supervision is Linux-only.
package supervisor
