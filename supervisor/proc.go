package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
)

// Process helpers for the job supervisor (docs/contract.md "Background jobs: Detached", docs/contract.md "Background jobs: Ending"–J8). They read Linux's
// /proc directly: clawpit's job supervision is Linux-only.

// procStat is the part of /proc/<pid>/stat the supervisor needs.
type procStat struct {
	State     byte  // field 3: R, S, D, Z, T, ...
	PPID      int   // field 4
	PGID      int   // field 5
	StartTime int64 // field 22: start time in clock ticks since boot
}

// readProcStat parses /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("invalid pid %d", pid)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procStat{}, errors.New("malformed /proc stat: no command name")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed /proc stat: too few fields")
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat ppid: %w", err)
	}
	pgid, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat pgrp: %w", err)
	}
	start, err := strconv.ParseInt(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat starttime: %w", err)
	}
	return procStat{State: f[0][0], PPID: ppid, PGID: pgid, StartTime: start}, nil
}

// ProcStartTime returns the start time of process pid in clock ticks since
// boot (/proc/<pid>/stat field 22). Together with the pid it names one
// process: a pid reused by a later process has a different start time
// (docs/contract.md "Background jobs: Lost"). Errors wrap os.ErrNotExist when the process does not exist.
func ProcStartTime(pid int) (int64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	return st.StartTime, nil
}

// ProcessAlive reports whether pid is a live process and, when start is not
// 0, whether it is the same process that started at start (clock ticks since
// boot) rather than a later one that reused the pid. A zombie (exited, not yet
// reaped by its parent) counts as dead.
func ProcessAlive(pid int, start int64) bool {
	st, err := readProcStat(pid)
	if err != nil {
		return false
	}
	if st.State == 'Z' || st.State == 'X' {
		return false
	}
	return start == 0 || st.StartTime == start
}

// GroupMembers returns the live (non-zombie) processes of process group pgid,
// found by scanning /proc. Empty when the group is gone. Its cost grows with
// the number of processes on the machine, not with any job history.
func GroupMembers(pgid int) []int {
	if pgid <= 0 {
		return nil
	}
	var out []int
	eachLiveProc(func(pid int, st procStat) {
		if st.PGID == pgid {
			out = append(out, pid)
		}
	})
	return out
}

// eachLiveProc calls fn for every live (non-zombie) process in /proc with its
// stat line; processes that vanish mid-scan are skipped. Nothing is called
// when /proc cannot be read.
func eachLiveProc(fn func(pid int, st procStat)) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.State == 'Z' || st.State == 'X' {
			continue
		}
		fn(pid, st)
	}
}

// GroupAlive reports whether process group pgid still has a live member.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	// kill(-pgid, 0) is cheap, but it succeeds on zombies; confirm with /proc
	// only when it says the group exists.
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return len(GroupMembers(pgid)) > 0
}

// SignalGroup sends sig to every process of group pgid. A group that no longer
// exists is not an error.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
}

// KillGroups ends the process groups pgids (docs/contract.md "Background jobs: Ending"): SIGTERM to each, a
// wait of at most grace for all of them to exit, then SIGKILL to whatever is
// left. It returns the groups that were still alive after grace (and got
// SIGKILL), and waits up to one more second for those to go. Groups <= 1 are
// skipped.
func KillGroups(pgids []int, grace time.Duration) (survivors []int) {
	var live []int
	for _, g := range pgids {
		if g > 1 {
			_ = SignalGroup(g, syscall.SIGTERM)
			live = append(live, g)
		}
	}
	live = waitGroups(live, grace)
	if len(live) == 0 {
		return nil
	}
	for _, g := range live {
		_ = SignalGroup(g, syscall.SIGKILL)
	}
	waitGroups(live, time.Second)
	return live
}

// waitGroups polls until every group in pgids is gone or d elapses, and
// returns the groups still alive.
func waitGroups(pgids []int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		var live []int
		for _, g := range pgids {
			if GroupAlive(g) {
				live = append(live, g)
			}
		}
		if len(live) == 0 || !time.Now().Before(deadline) {
			return live
		}
		pgids = live
		time.Sleep(25 * time.Millisecond)
	}
}

// ThisProcess is the Waiter naming the calling process: HostName, its pid,
// start time and namespace (ProcNamespace). ok is false where /proc cannot
// give them (not Linux): a sweep could not judge such a waiter, so none is
// recorded.
func ThisProcess() (w core.Waiter, ok bool) {
	pid := os.Getpid()
	start, err := ProcStartTime(pid)
	if err != nil {
		return core.Waiter{}, false
	}
	ns, ok := ProcNamespace()
	if !ok {
		return core.Waiter{}, false
	}
	return core.Waiter{Host: core.HostName(), PID: pid, Start: start, NS: ns}, true
}

// ProcNamespace names the boot and pid namespace of the calling process:
// "<boot_id> pid:[<inode>]" (/proc/sys/kernel/random/boot_id and the
// /proc/self/ns/pid link); two processes see the same pids exactly when
// theirs are equal. ok is false when /proc does not say.
func ProcNamespace() (string, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", false
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", false
	}
	b := strings.TrimSpace(string(boot))
	if b == "" || ns == "" {
		return "", false
	}
	return b + " " + ns, true
}

// WaiterGone reports whether w, a waiter in this process's namespace, has
// exited: no process has its pid, the one that has is a zombie, or it
// started at another time (the pid was reused). A /proc entry that cannot
// be read for another reason (permissions, hidepid) says nothing: not gone.
// With Namespace it makes *Jobs a core.WaiterLiveness, the sweep's judge of
// approval waiters on this host.
func (j *Jobs) WaiterGone(w core.Waiter) bool {
	st, err := readProcStat(w.PID)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	if st.State == 'Z' || st.State == 'X' {
		return true
	}
	return w.Start != 0 && st.StartTime != w.Start
}

// Namespace is ProcNamespace, for core.WaiterLiveness.
func (j *Jobs) Namespace() (string, bool) { return ProcNamespace() }

var _ core.WaiterLiveness = (*Jobs)(nil)
