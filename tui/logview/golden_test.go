package logview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/clawpit/clawpit/core"
)

// app embeds the log view the way the console does: it sizes it from
// WindowSizeMsg, forwards every message, and reports each ingested batch so
// the test knows when the asynchronous reader has delivered everything.
type app struct {
	lv       Model
	ingested chan<- int
}

func (a app) Init() tea.Cmd { return a.lv.Init() }

func (a app) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		a.lv.SetSize(ws.Width, ws.Height)
	}
	var cmd tea.Cmd
	a.lv, cmd = a.lv.Update(msg)
	if _, ok := msg.(LinesMsg); ok {
		a.ingested <- a.lv.Total()
	}
	return a, cmd
}

func (a app) View() tea.View { return tea.NewView(a.lv.View()) }

// goldenLines is a fixed log: numbered request lines, a long line, a
// stderr line, a redacted secret and terminal escapes that must be inert.
func goldenLines() []string {
	var out []string
	for i := range 60 {
		out = append(out, fmt.Sprintf("2026-11-22T10:%02d:%02d.000Z INFO GET /api/items/%d 200 %dms", i/60, i%60, i, 3+i%17))
		if i%15 == 7 {
			out = append(out, "[stderr] warning: slow query on table items (took 812ms) "+strings.Repeat("·detail", 20))
		}
	}
	out = append(out,
		"export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz0123456789",
		"\x1b]0;owned title\x07\x1b[2Jcolour \x1b[31mred\x1b[0m and a bell\x07 end",
		"\tindented\twith tabs",
		"ERROR build failed: exit status 2",
	)
	return out
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			src := newFakeSource(4)
			lines := goldenLines()
			src.ch <- lines[:30]
			src.ch <- lines[30:]
			ingested := make(chan int, 16)
			lv := New(Options{Title: "job 3fa2c1d4e5f6 · npm run build", Source: src, Styles: DefaultStyles()})
			t.Cleanup(lv.Close)
			tm := teatest.NewTestModel(t, app{lv: lv, ingested: ingested}, teatest.WithInitialTermSize(size[0], size[1]))
			for n := 0; n < len(lines); {
				select {
				case n = <-ingested:
				case <-time.After(10 * time.Second):
					t.Fatalf("only %d of %d lines ingested", n, len(lines))
				}
			}
			exit := 2
			tm.Send(JobEndedMsg{Status: core.JobFailed, ExitCode: &exit, At: time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)})
			for _, k := range []string{"k", "k", "/"} {
				tm.Send(keyMsg(k))
			}
			tm.Type("items/5")
			tm.Send(keyMsg("enter"))
			tm.Send(keyMsg("n"))
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(app)
			view := final.lv.View()
			if got := len(strings.Split(view, "\n")); got != size[1] {
				t.Fatalf("%d rows, want %d", got, size[1])
			}
			teatest.RequireEqualOutput(t, []byte(ansi.Strip(view)))
		})
	}
}
