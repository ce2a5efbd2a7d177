package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
	"golang.org/x/sys/unix"
)

// A job is its whole process tree (docs/contract.md "Background jobs: Ending" to "Lost"): cancel, timeout, reap and
// the lost path end every descendant of the command, including ones that
// left its process group or session (setsid). How a tree is held depends on
// the machine, measured when the command starts:
//
//   - core.ContainCgroup: the command is cloned into a cgroup v2 of its own
//     (<the supervisor's cgroup>/clawpit-job-<id>, needs a writable cgroup2
//     mount and cgroup.kill, Linux ≥ 5.14); cgroup.kill ends every process in
//     it, from the supervisor or from a sweep after the supervisor died.
//   - core.ContainSubreaper: no writable cgroup. The supervisor is a child
//     subreaper (PR_SET_CHILD_SUBREAPER), so descendants that leave the group
//     re-parent to it; it kills its descendants that carry the job's
//     EnvJobID marker. After the supervisor died, a sweep finds them by that
//     marker alone (a process that cleared its environment escapes).
//   - core.ContainGroup: neither; only the process group is signalled.

// EnvJobID is set in a job command's environment to the job id: the marker by
// which the supervisor and a sweep recognise the job's descendants.
const EnvJobID = "CLAWPIT_JOB_ID"

// ExecShimCommand is the hidden clawpit subcommand that starts a job's
// command only once its supervisor has recorded the pid (the start
// handshake): `clawpit __exec-after-fd -- PATH ARGV0 ARGS…`. main dispatches
// it to RunExecShim before anything else.
const ExecShimCommand = "__exec-after-fd"

// EnvJobPauseAfterStart, for tests only: when set to a file path, a
// supervisor writes the started shim's pid there and then waits, between
// starting the command and recording its pid, until <path>.release exists
// (polled every 10 ms), so a test can kill or cancel it inside that window
// (in place of strace fault injection).
const EnvJobPauseAfterStart = "CLAWPIT_TEST_JOB_PAUSE_AFTER_START"

// EnvJobContainment, when set to core.ContainSubreaper or core.ContainGroup, caps the
// containment of jobs started by supervisors in this environment (a hidden
// knob for tests and for machines whose cgroups misbehave); unset or
// core.ContainCgroup means the strongest available.
const EnvJobContainment = "CLAWPIT_JOB_CONTAINMENT"

// KillJobTreeOf ends what may be left of job's tree outside its process
// group, from any process (cancel, reap, the lost path): cgroup.kill on its
// cgroup, else SIGKILL to every process on the machine carrying its EnvJobID
// marker. A job contained only by its process group is left alone.
func KillJobTreeOf(job *core.Job) error {
	switch {
	case job.Cgroup != "":
		return KillCgroup(job.Cgroup, 2*time.Second)
	case job.Containment == core.ContainSubreaper:
		KillJobTree(0, job.ID, 0, 2*time.Second)
	case job.Containment == "":
		// Never recorded running: a supervisor that died in the start
		// window may have left the cgroup it made (beside this process's
		// own cgroup when both run in the same one).
		if parent, err := ownCgroupDir(); err == nil {
			return KillCgroup(filepath.Join(parent, "clawpit-job-"+job.ID), time.Second)
		}
	}
	return nil
}

// shimFD is the handshake pipe's read end in the shim (ExtraFiles[0]).
const shimFD = 3

// shimGo is the byte the supervisor writes once the pid is recorded.
const shimGo = 'g'

// RunExecShim is the body of ExecShimCommand (args are what follows the
// subcommand: "--", the resolved path, then the command's argv). It blocks
// reading fd 3 until the supervisor writes the go byte, then execs the
// command in place (same pid, group and cgroup). When fd 3 reaches EOF
// without it — the supervisor died, or refused the job, before recording
// the pid — it exits 125 and the command never runs. It returns only an
// exit code for a failed exec (126, 127 when the file is missing), having
// printed why to stderr, which the supervisor logs.
func RunExecShim(args []string) int {
	if len(args) < 3 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "usage: "+ExecShimCommand+" -- PATH ARGV0 [ARGS…]")
		return 2
	}
	f := os.NewFile(shimFD, "handshake")
	var b [1]byte
	n, _ := io.ReadFull(f, b[:])
	f.Close()
	if n != 1 || b[0] != shimGo {
		return 125
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "[clawpit] cannot start %s: %v\n", args[1], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}

// ownCgroupDir is the cgroup v2 directory of this process: the cgroup2 mount
// point (from /proc/self/mountinfo) joined with the "0::" line of
// /proc/self/cgroup.
func ownCgroupDir() (string, error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	rel := ""
	found := false
	for _, l := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found {
		return "", errors.New("no cgroup v2 membership")
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// "id parent maj:min root mountpoint opts ... - fstype source opts"
		l := sc.Text()
		i := strings.Index(l, " - ")
		if i < 0 {
			continue
		}
		post := strings.Fields(l[i+3:])
		pre := strings.Fields(l[:i])
		if len(post) < 1 || post[0] != "cgroup2" || len(pre) < 5 || pre[3] != "/" {
			continue
		}
		return filepath.Join(pre[4], rel), nil
	}
	return "", errors.New("no cgroup2 mount")
}

// newJobCgroup creates the job's cgroup and opens it for CLONE_INTO_CGROUP.
// The caller closes the file. Errors say why cgroup containment is not
// available here.
func newJobCgroup(id string) (string, *os.File, error) {
	parent, err := ownCgroupDir()
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(parent, "clawpit-job-"+id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		os.Remove(dir)
		return "", nil, errors.New("the kernel has no cgroup.kill")
	}
	f, err := os.Open(dir)
	if err != nil {
		os.Remove(dir)
		return "", nil, err
	}
	return dir, f, nil
}

// cgroupProcs lists the pids in cgroup dir (nil when it is gone).
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if p, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// KillCgroup ends every process in the job cgroup dir with cgroup.kill,
// waits up to wait for it to empty, and removes it. A cgroup that is
// already gone is not an error; dir must name a clawpit job cgroup.
func KillCgroup(dir string, wait time.Duration) error {
	if dir == "" || !strings.HasPrefix(filepath.Base(dir), "clawpit-job-") {
		return fmt.Errorf("refusing to kill cgroup %q", dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("kill cgroup %s: %w", dir, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("cgroup %s still holds %v: %w", dir, cgroupProcs(dir), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// setSubreaper makes this process a child subreaper: orphaned descendants
// re-parent to it instead of init.
func setSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// hasJobMarker reports whether pid's environment (as it was at exec) carries
// EnvJobID=id.
func hasJobMarker(pid int, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(EnvJobID + "=" + id)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// allProcs maps every live pid to its parent pid, from /proc.
func allProcs() map[int]int {
	out := make(map[int]int)
	eachLiveProc(func(pid int, st procStat) { out[pid] = st.PPID })
	return out
}

// jobTreePids lists the live processes of job id: descendants of root (0:
// any process) that carry its EnvJobID marker. A marked process whose marked
// parent cleared nothing is found either way; one that cleared its
// environment is found only through a marked ancestor when root != 0.
func jobTreePids(root int, id string) []int {
	procs := allProcs()
	self := os.Getpid()
	var out []int
	for pid := range procs {
		if pid == self || pid == root {
			continue
		}
		if root != 0 && !descendsFrom(procs, pid, root) {
			continue
		}
		if hasJobMarker(pid, id) {
			out = append(out, pid)
		}
	}
	return out
}

// descendsFrom reports whether pid's parent chain reaches root.
func descendsFrom(procs map[int]int, pid, root int) bool {
	for i := 0; i < 4096 && pid > 1; i++ {
		pp, ok := procs[pid]
		if !ok {
			return false
		}
		if pp == root {
			return true
		}
		pid = pp
	}
	return false
}

// KillJobTree SIGKILLs every process marked as job id's (EnvJobID) that
// descends from root (0: anywhere on the machine) and reaps those that are
// this process's children, except skip (a child os/exec still waits for).
// It repeats until none is left or wait elapses (a dying parent may fork),
// and returns how many it killed.
func KillJobTree(root int, id string, skip int, wait time.Duration) int {
	killed := map[int]bool{}
	deadline := time.Now().Add(wait)
	self := os.Getpid()
	for {
		pids := jobTreePids(root, id)
		for _, p := range pids {
			if p == skip {
				continue
			}
			if syscall.Kill(p, syscall.SIGKILL) == nil {
				killed[p] = true
			}
		}
		// Reap the ones that re-parented to us (we are their subreaper), by
		// pid: wait4(-1) would steal os/exec's child.
		for p := range killed {
			if p == skip {
				continue
			}
			if st, err := readProcStat(p); err == nil && st.PPID == self {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(p, &ws, syscall.WNOHANG, nil)
			}
		}
		live := 0
		for _, p := range pids {
			if p != skip && ProcessAlive(p, 0) {
				live++
			}
		}
		if live == 0 || !time.Now().Before(deadline) {
			return len(killed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lookCommand resolves argv[0] as os/exec would for a command run in cwd.
func lookCommand(argv []string, cwd string) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New("empty command")
	}
	c := exec.Command(argv[0])
	if c.Err != nil && !errors.Is(c.Err, exec.ErrDot) {
		return "", c.Err
	}
	p := c.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return p, nil
}
