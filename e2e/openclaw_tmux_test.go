package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/adapters/openclaw"
	"github.com/clawpit/clawpit/termtext"
)

// dirState is a directory's file names and each file's SHA-256.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+" "+hexSum(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestOpenclawConsoleTmux: the real binary's console on an OpenClaw registry
// (WAL mode, OpenClaw not running: no -shm) at 80×24, as a user drives it:
// the header says OPENCLAW and READ-ONLY, the panes show OpenClaw's rows, an
// action key only says which openclaw command resolves the approval, and
// the state directory is byte-for-byte the same afterwards (no -wal or -shm
// left behind).
func TestOpenclawConsoleTmux(t *testing.T) {
	stateDir := t.TempDir()
	db := filepath.Join(stateDir, "state", "openclaw.sqlite")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := openclaw.WriteFixture(context.Background(), db, openclaw.FixtureSpec{Now: time.Now(), Shapes: true, WAL: true}); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, filepath.Dir(db))
	tm := startTerm(t, 80, 24, []string{"CLAWPIT_HOME=" + t.TempDir()}, clawpitBin, "openclaw", "--state-dir", stateDir)
	s := tm.waitConsole()
	if !strings.Contains(s[1], "OPENCLAW") || !strings.Contains(s[1], "READ-ONLY") {
		t.Fatalf("header lacks the OPENCLAW and READ-ONLY badges:\n%s", strings.Join(s, "\n"))
	}
	tm.waitText("t-90444-subag") // the seed-000 shape: a subagent task running after its run ended
	tm.keys("3")
	tm.waitText("a-pending")
	tm.keys("a")
	tm.waitStatus("/approve a-pending allow-once")
	if st := tm.capture(); screenHas(st, "Approve") && screenHas(st, "scope") {
		t.Fatalf("an approve dialog opened on OpenClaw's registry:\n%s", strings.Join(st, "\n"))
	}
	tm.keys("5")
	tm.waitText("stale_running")
	tm.keys("q")
	time.Sleep(300 * time.Millisecond)
	if after := dirState(t, filepath.Dir(db)); after != before {
		t.Fatalf("the OpenClaw state directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

var tasksTabRe = regexp.MustCompile(`Tasks (?:\d[\d,]*/)?(\d[\d,]*)`)

// TestOpenclawConsoleLargeTmux: the console on an OpenClaw registry past the
// size it reads in windows (5,000 finished tasks and 30 orphans beside the
// hand-made shapes), at 120×40: the Tasks tab counts every row read, a
// filter finds one row deep in the list, G reaches the last row, s
// changes the sort, and the state directory is unchanged afterwards.
func TestOpenclawConsoleLargeTmux(t *testing.T) {
	stateDir := t.TempDir()
	db := filepath.Join(stateDir, "state", "openclaw.sqlite")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	spec := openclaw.FixtureSpec{Now: time.Now(), Shapes: true, Terminal: 5000, Orphans: 30, WAL: true}
	if err := openclaw.WriteFixture(context.Background(), db, spec); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, filepath.Dir(db))
	tm := startTerm(t, 120, 40, []string{"CLAWPIT_HOME=" + t.TempDir()}, clawpitBin, "openclaw", "--state-dir", stateDir)
	tm.waitConsole()
	s := tm.waitText("newest 5,000 finished rows")
	total := tabCount(t, s)
	if total < 5000+spec.Orphans {
		t.Fatalf("Tasks tab counts %d rows, want at least %d:\n%s", total, 5000+spec.Orphans, strings.Join(s, "\n"))
	}
	tm.selectRow("task-00004321")
	s = tm.waitText("job 4321")
	if !screenHas(s, "1 of "+termtext.Thousands(total)) {
		t.Fatalf("the filter's count is not 1 of %d:\n%s", total, strings.Join(s, "\n"))
	}
	tm.clearFilter()
	tm.keys("G")
	s = tm.waitFor("the cursor on the last row, a finished task", func(s []string) bool {
		for _, l := range s {
			if strings.HasPrefix(l, "▸ task-0000") {
				return true
			}
		}
		return false
	})
	if n := tabCount(t, s); n != total {
		t.Fatalf("the Tasks tab moved from %d to %d rows on G", total, n)
	}
	tm.keys("s")
	tm.waitText("sort: recent")
	tm.keys("q")
	time.Sleep(300 * time.Millisecond)
	if after := dirState(t, filepath.Dir(db)); after != before {
		t.Fatalf("the OpenClaw state directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// tabCount is the row count of the Tasks tab on screen s.
func tabCount(t *testing.T, s []string) int {
	t.Helper()
	for _, l := range s {
		if m := tasksTabRe.FindStringSubmatch(l); m != nil {
			n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("no Tasks tab count on screen:\n%s", strings.Join(s, "\n"))
	return 0
}
