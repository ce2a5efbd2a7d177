package e2e

// `clawpit demo` with its console in a real terminal (tmux): closing the
// terminal (SIGHUP), a SIGHUP or a SIGTERM stops the demo and cleans up
// exactly as `q` does — no process of its tree survives, the temporary
// directory is gone.

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processTree returns root and every live descendant of it (by the parent
// pid in /proc/<pid>/stat). The job supervisors start their own sessions but
// stay the demo's children, so they and their commands are in the tree.
func processTree(t *testing.T, root int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may contain spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// TestDemoConsoleHangupCleansUp runs `clawpit demo` (the console) in tmux,
// then closes the terminal (tmux kill-server: SIGHUP to the demo), sends it
// SIGHUP, or sends it SIGTERM; every process of the demo's tree, the jobs'
// processes and the demo directory must be gone.
func TestDemoConsoleHangupCleansUp(t *testing.T) {
	requireTmux(t)
	for _, how := range []string{"terminal closed", "SIGHUP", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			tm := startTerm(t, 120, 40, []string{"TMPDIR=" + tmp, "CLAWPIT_HOME=" + filepath.Join(tmp, "home"),
				"XDG_CONFIG_HOME=" + filepath.Join(tmp, "config")}, clawpitBin, "demo")
			tm.waitFor("the demo console with its jobs", func(s []string) bool {
				return len(s) > 3 && isHeader(s[0]) && strings.Contains(s[2], "4 Jobs 3")
			})
			demoPID, err := strconv.Atoi(tm.display("#{pane_pid}"))
			if err != nil {
				t.Fatal(err)
			}
			dirs, _ := filepath.Glob(filepath.Join(tmp, "clawpit-demo-*"))
			if len(dirs) != 1 {
				t.Fatalf("want one demo directory, got %v", dirs)
			}
			// Wait for the job commands (dev server, build, secrets) to be
			// running under their supervisors: 1 demo + 3 supervisors + 3 commands.
			var tree []int
			deadline := time.Now().Add(uiTimeout)
			for {
				tree = processTree(t, demoPID)
				if len(tree) >= 7 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(tree) < 7 {
				t.Fatalf("demo process tree %v: want the demo, 3 supervisors and their commands", tree)
			}
			jobs := listAllJobs(t, filepath.Join(dirs[0], "registry.db"))
			if len(jobs) < 3 {
				t.Fatalf("%d jobs, want the dev server, the build and the secrets job", len(jobs))
			}
			// Alerts and the Jobs pane name the command as a user would
			// type it, not the binary's temporary absolute path.
			for _, j := range jobs {
				if len(j.Command) < 2 || j.Command[0] != "clawpit" || !strings.HasPrefix(j.Command[1], "__demo-") {
					t.Errorf("demo job %s command %q, want clawpit __demo-…", j.ID, j.Command)
				}
			}

			switch how {
			case "terminal closed":
				tm.must("kill-server")
			case "SIGHUP":
				syscall.Kill(demoPID, syscall.SIGHUP)
			case "SIGTERM":
				syscall.Kill(demoPID, syscall.SIGTERM)
			}
			var left []int
			deadline = time.Now().Add(30 * time.Second)
			for {
				left = left[:0]
				for _, pid := range tree {
					if processAlive(pid) {
						left = append(left, pid)
					}
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("%s: processes of the demo's tree still alive after 30 s: %v (tree %v)", how, left, tree)
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if alive := waitGone(t, jobs, 2*time.Second); len(alive) > 0 {
				t.Errorf("%s: job processes left: %v", how, alive)
			}
			if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: demo directory %s not removed: %v", how, dirs[0], err)
			}
		})
	}
}
