package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Golden screens: the console runs in a real tea.Program (teatest) over the
// fixed fixture and a fixed clock; the final screen is compared with
// testdata/<test name>.golden (escape sequences stripped, except for the
// theme goldens, which keep them). `go test ./tui -run Golden -update`
// rewrites them.

// goldenRun runs the console at w×h, presses keys (waiting after each step
// until the screen contains its marker) and returns the final screen.
func goldenRun(t *testing.T, w, h int, steps []step, opts ...hopt) string {
	t.Helper()
	hs := newHarness(t, w, h, opts...)
	m := New(hs.opts) // a fresh model: teatest drives it for real, ticks included
	m.probe = &viewProbe{}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	waitScreen(t, m.probe, "7 rows")
	if o := hs.opts; o.Maintenance != nil && o.SweepInterval > 0 && !o.ReadOnly && o.SweepNote == "" {
		waitScreen(t, m.probe, "swept just now") // the sweep as the console opens
	}
	for _, s := range steps {
		for _, k := range s.keys {
			tm.Send(keyMsg(k))
		}
		if s.text != "" {
			tm.Type(s.text)
		}
		waitScreen(t, m.probe, s.wait)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	return fm.render()
}

type step struct {
	keys []string
	text string
	wait string // the screen contains this once the step is done
}

func waitScreen(t *testing.T, p *viewProbe, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(stripANSI(p.get()), marker) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("screen never showed %q; last screen:\n%s", marker, stripANSI(p.get()))
}

var goldenScreens = []struct {
	name  string
	steps []step
}{
	{"tasks", nil},
	{"runs", []step{{keys: []string{"2"}, wait: "run-9d21"}}},
	{"approvals", []step{{keys: []string{"3"}, wait: "TOOL"}}},
	{"jobs", []step{{keys: []string{"4"}, wait: "EXIT"}}},
	{"alerts", []step{{keys: []string{"5"}, wait: "KIND"}}},
	{"detail", []step{{keys: []string{"enter"}, wait: "expects_output"}}},
	{"help", []step{{keys: []string{"?"}, wait: "Keys — Tasks pane"}}},
	{"filter", []step{{keys: []string{"/"}, text: "run", wait: "3 of 7"}}},
	{"dialog_approve", []step{{keys: []string{"3"}, wait: "ap2beef00002"}, {keys: []string{"a", "right"}, wait: "[session]"}}},
	{"dialog_deny", []step{{keys: []string{"3"}, wait: "ap2beef00002"}, {keys: []string{"d"}, text: "not on prod", wait: "not on prod"}}},
	{"dialog_cancel", []step{{keys: []string{"c"}, wait: "Cancel task"}}},
	// An action waits for its pane's rows: each pane reads its window after
	// the first screen's.
	{"dialog_kill", []step{{keys: []string{"2"}, wait: "run-7f3a"}, {keys: []string{"down", "k"}, wait: "Kill run run-7f3a"}}},
	{"dialog_reap", []step{{keys: []string{"4"}, wait: "npm run dev"}, {keys: []string{"r"}, wait: "Kills the"}}},
	{"dialog_maintenance", []step{{keys: []string{"m"}, wait: "enter apply"}}},
	{"log", []step{{keys: []string{"4"}, wait: "npm run dev"}, {keys: []string{"enter"}, wait: "log of job"}}},
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, sc := range goldenScreens {
			name := sc.name + "_" + itoa(size[0]) + "x" + itoa(size[1])
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				screen := goldenRun(t, size[0], size[1], sc.steps)
				golden.RequireEqual(t, stripANSI(screen))
			})
		}
	}
}

// TestGoldenReadOnly: the READ-ONLY badge, no action keys in help, and the
// refusal of an action key.
func TestGoldenReadOnly(t *testing.T) {
	screen := goldenRun(t, 80, 24, []step{{keys: []string{"3", "a"}, wait: "read-only console: approve is disabled"}}, readOnly)
	golden.RequireEqual(t, stripANSI(screen))
}

// TestGoldenTheme keeps the escape sequences: the themes differ only in them.
func TestGoldenTheme(t *testing.T) {
	for _, name := range []string{"dark", "light", "high-contrast", "mono"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			screen := goldenRun(t, 80, 24, []step{{keys: []string{"3"}, wait: "TOOL"}}, withTheme(name))
			golden.RequireEqual(t, screen)
		})
	}
}

var _ tea.Model = (*Model)(nil)
