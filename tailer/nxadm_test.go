package tailer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nxadm/tail"
)

// TestNxadmRotationLoss is the measurement behind Follow not being built on
// github.com/nxadm/tail (see follow.go). It runs the same writer (300,000
// lines, 256 KiB rotation, 300,000 lines/s, no sync) against nxadm/tail with
// inotify, nxadm/tail with Poll, and Follow, and logs lines lost/repeated.
// Slow and load-dependent, so it runs only with CLAWPIT_NXADM_EXPERIMENT=1:
//
//	CLAWPIT_NXADM_EXPERIMENT=1 go test -run NxadmRotationLoss -v ./tailer/
func TestNxadmRotationLoss(t *testing.T) {
	if os.Getenv("CLAWPIT_NXADM_EXPERIMENT") == "" {
		t.Skip("set CLAWPIT_NXADM_EXPERIMENT=1 to run the nxadm/tail comparison")
	}
	const n = 300_000
	check := func(name string, texts <-chan string, rotations int) {
		next, lost, dup := 0, 0, 0
		timeout := time.After(30 * time.Second)
	loop:
		for next < n {
			select {
			case s, ok := <-texts:
				if !ok {
					break loop
				}
				k, err := strconv.Atoi(strings.Fields(s + " x")[0])
				if err != nil {
					continue
				}
				switch {
				case k > next:
					lost += k - next
				case k < next:
					dup++
					continue
				}
				next = k + 1
			case <-timeout:
				break loop
			}
		}
		lost += n - next
		t.Logf("%-14s rotations=%d lost=%d repeated=%d", name, rotations, lost, dup)
	}
	for _, poll := range []bool{false, true} {
		dir := t.TempDir()
		tl, err := tail.TailFile(filepath.Join(dir, CurrentLog), tail.Config{
			Follow: true, ReOpen: true, MustExist: false, Poll: poll, CompleteLines: true,
			Logger: tail.DiscardingLogger,
		})
		if err != nil {
			t.Fatal(err)
		}
		done := testWriter(t, dir, 0, n, 256<<10, "some output of a job", 300_000, nil)
		texts := make(chan string, 1024)
		go func() {
			defer close(texts)
			for l := range tl.Lines {
				if l.Err == nil {
					texts <- l.Text
				}
			}
		}()
		name := "nxadm inotify"
		if poll {
			name = "nxadm poll"
		}
		rot := <-done
		check(name, texts, rot)
		t.Logf("%-14s tail error: %v", name, tl.Err())
		tl.Stop()
		tl.Cleanup()
	}
	dir := t.TempDir()
	f, err := Follow(context.Background(), dir, FollowOptions{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	done := testWriter(t, dir, 0, n, 256<<10, "some output of a job", 300_000, nil)
	texts := make(chan string, 1024)
	go func() {
		defer close(texts)
		for b := range f.C() {
			for _, l := range b {
				texts <- l.Text
			}
		}
	}()
	go func() { <-done; f.StopAtEOF() }()
	check("tailer.Follow", texts, -1)
	f.Stop()
}
