package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A full disk names itself, end to end (issue 12): with the registry and the
// logs on a full file system (a small tmpfs, when this test may mount one),
// read commands still read, and `job show` says "disk full" where the
// supervisor left it.
func TestFaultFullDiskReads(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=2m,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); core's TestJobFaultDiskFull injects the full registry instead", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(disk, syscall.MNT_DETACH) })
	c.db = filepath.Join(disk, "registry.db")
	var run jobOut
	c.json(&run, "job", "run", "--session", "s", "--cwd", t.TempDir(), "--", "true")
	if run.Job == nil {
		t.Fatal("job run printed no job")
	}
	id := run.Job.ID
	deadline := time.Now().Add(15 * time.Second)
	// The status line, not the "completed_at:" field every job shows.
	done := regexp.MustCompile(`(?m)^status:\s+completed$`)
	for !done.MatchString(c.ok("job", "show", id)) {
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not complete", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// What a supervisor that gave up leaves beside the log (written before
	// the disk fills, as the reserved file makes possible).
	logDir := filepath.Join(disk, "jobs", id)
	if err := os.WriteFile(filepath.Join(logDir, "supervisor-error"), []byte("disk full: the supervisor could not record the job's end\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(disk, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	for _, args := range [][]string{{"job", "list"}, {"job", "show", id}, {"job", "tail", id}, {"task", "list"}, {"notifications"}} {
		o := c.run(args...)
		if o.code != 0 {
			t.Errorf("clawpit %v on a full disk: %s", args, o)
		}
		if len(args) > 1 && args[1] == "show" && !strings.Contains(o.stdout, "disk full") {
			t.Errorf("job show does not say disk full:\n%s", o.stdout)
		}
	}
	// A write that fails on the full disk says why (SQLite may still fit a
	// small write into WAL pages it already has: that is no failure).
	if o := c.run("session", "open", "s2"); o.code != 0 && !strings.Contains(o.stderr, "disk full") {
		t.Errorf("write on a full disk: %s", o)
	}
}
