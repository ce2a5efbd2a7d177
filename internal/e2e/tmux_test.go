package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStartTermEndsWhatThePaneStarted: when a test ends, StartTerm's
// cleanup ends every process the pane started, even one in a session of
// its own that ignores the hang-up (as a real agent's background server
// does), before t.TempDir's cleanup runs: nothing writes under the test's
// temp dirs after they are removed.
func TestStartTermEndsWhatThePaneStarted(t *testing.T) {
	RequireTmux(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid (util-linux) to detach a process from the pane's session")
	}
	late := filepath.Join(t.TempDir(), "late")
	t.Run("pane", func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		// The detached writer: its own session (setsid), deaf to SIGHUP,
		// writing 3 s after it starts.
		script := "setsid sh -c 'trap \"\" HUP; touch " + ready + "; sleep 3; mkdir " + late + "' & sleep 60"
		StartTerm(t, 80, 24, nil, "sh", "-c", script)
		for deadline := time.Now().Add(UITimeout); !exists(ready); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the pane's detached process did not start")
			}
		}
	})
	time.Sleep(4 * time.Second) // past the writer's 3 s
	if exists(late) {
		t.Fatal("a process the pane started outlived the test and wrote after its cleanup")
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
