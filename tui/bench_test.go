package tui

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
)

// bigSource is the fixture plus n generated tasks: most finished, some
// running and queued, labels and errors of realistic length.
func bigSource(n int) *fakeSource {
	s := fixture()
	rng := rand.New(rand.NewPCG(1, 2))
	verbs := []string{"summarise", "refactor", "review", "deploy", "index", "crawl", "triage", "draft", "test", "lint"}
	things := []string{"the incident reports", "the parser", "pull request", "staging", "docs site", "changelog", "flaky tests", "the billing service"}
	statuses := []core.TaskStatus{core.TaskSucceeded, core.TaskSucceeded, core.TaskSucceeded, core.TaskSucceeded, core.TaskSucceeded,
		core.TaskFailed, core.TaskCancelled, core.TaskLost, core.TaskTimedOut, core.TaskRunning, core.TaskQueued}
	tasks := make([]core.Task, 0, n+len(s.tasks))
	for i := 0; i < n; i++ {
		st := statuses[rng.IntN(len(statuses))]
		created := at(time.Duration(rng.Int64N(int64(7 * 24 * time.Hour))))
		t := core.Task{
			ID:             fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", uint32(created)>>8, i&0xffff, rng.IntN(0xfff), rng.IntN(0xfff), rng.Uint64()&0xffffffffffff),
			Runtime:        core.Runtimes[rng.IntN(len(core.Runtimes))],
			Kind:           "agent",
			Status:         st,
			DeliveryStatus: core.DeliveryDelivered,
			NotifyPolicy:   core.NotifyDoneOnly,
			OwnerSession:   fmt.Sprintf("sess-%04d", rng.IntN(500)),
			Label:          fmt.Sprintf("%s %s #%d", verbs[rng.IntN(len(verbs))], things[rng.IntN(len(things))], i),
			Task:           "do the thing described in the ticket, carefully, and report back",
			CreatedAt:      created,
			StartedAt:      created + 1000,
		}
		if st.Terminal() {
			t.EndedAt = created + core.Timestamp(rng.Int64N(3_600_000))
		}
		if st == core.TaskFailed || st == core.TaskLost {
			t.Error = "subagent run ended (error): exit status 1"
		}
		tasks = append(tasks, t)
	}
	s.tasks = append(tasks, s.tasks...)
	return s
}

func bigHarness(tb testing.TB, n int) *harness {
	hs := &harness{src: bigSource(n), act: &fakeActions{}, mt: &fakeMaint{plan: testPlan()}, clk: core.NewFakeClock(t0)}
	o := Options{Source: hs.src, Actions: hs.act, Jobs: hs.act, Maintenance: hs.mt, Keys: testKeys(),
		Operator: "op@host", Clock: hs.clk, SweepInterval: time.Minute, WatchdogInterval: 5 * time.Second}
	hs.opts = o
	hs.m = New(o)
	hs.m.ticks = false
	hs.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	hs.run(hs.m.Init())
	if _, total := hs.m.tasks.Counts(); total != n+7 {
		tb.Fatalf("loaded %d tasks", total)
	}
	return hs
}

// press is what the P6 target measures: a key message through Update, the
// window reads it starts (feed.MemoryWindow's, over the rows held in
// memory) and their messages, then the whole screen rendered by View.
func press(hs *harness, k tea.KeyPressMsg) {
	hs.send(k)
	_ = hs.m.View()
}

// BenchmarkKeyPress measures bench/README.md P6 with 100,000 tasks: one key press
// handled and rendered (< 5 ms each).
func BenchmarkKeyPress(b *testing.B) {
	hs := bigHarness(b, 100_000)
	down, up := keyMsg("down"), keyMsg("up")
	b.Run("move", func(b *testing.B) {
		for i := range b.N {
			if i%2 == 0 {
				press(hs, down)
			} else {
				press(hs, up)
			}
		}
	})
	b.Run("page", func(b *testing.B) {
		pd, pu := keyMsg("pgdown"), tea.KeyPressMsg{Code: tea.KeyPgUp}
		for i := range b.N {
			if i%64 < 32 {
				press(hs, pd)
			} else {
				press(hs, pu)
			}
		}
	})
	b.Run("switch_pane", func(b *testing.B) {
		keys := []tea.KeyPressMsg{keyMsg("2"), keyMsg("3"), keyMsg("4"), keyMsg("5"), keyMsg("1")}
		for i := range b.N {
			press(hs, keys[i%len(keys)])
		}
	})
	b.Run("switch_to_tasks", func(b *testing.B) {
		one, two := keyMsg("1"), keyMsg("2")
		for i := range b.N {
			if i%2 == 0 {
				press(hs, one)
			} else {
				press(hs, two)
			}
		}
	})
	press(hs, keyMsg("1"))
	// filter_keystroke: typing a query one key at a time ("refactor the p"),
	// each key narrowing the previous view; the first key scans all rows.
	b.Run("filter_keystroke", func(b *testing.B) {
		query := []rune("refactor the p")
		press(hs, keyMsg("/"))
		n := 0
		for range b.N {
			if n == len(query) {
				b.StopTimer()
				hs.send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
				n = 0
				b.StartTimer()
			}
			press(hs, tea.KeyPressMsg{Code: query[n], Text: string(query[n])})
			n++
		}
		b.StopTimer()
		press(hs, keyMsg("esc"))
	})
	// filter_first_key: the worst keystroke, a one-letter query over every row.
	b.Run("filter_first_key", func(b *testing.B) {
		press(hs, keyMsg("/"))
		for range b.N {
			press(hs, keyMsg("e"))
			b.StopTimer()
			hs.send(keyMsg("backspace"))
			b.StartTimer()
		}
		b.StopTimer()
		press(hs, keyMsg("esc"))
	})
	b.Run("filter_backspace_to_all", func(b *testing.B) {
		press(hs, keyMsg("/"))
		for range b.N {
			b.StopTimer()
			hs.send(keyMsg("e"))
			b.StartTimer()
			press(hs, keyMsg("backspace"))
		}
		b.StopTimer()
		press(hs, keyMsg("esc"))
	})
}

// BenchmarkHeap100k measures the heap the console holds with 100,000 tasks
// loaded (bench/README.md P6: resident memory < 200 MB), reported as heapMB (HeapInuse
// delta: the fake registry's own rows are measured before and subtracted)
// and rows. The target is read off the report (bench/README.md), not
// asserted: memory depends on the machine and the Go version.
func BenchmarkHeap100k(b *testing.B) {
	src := bigSource(100_000)
	var held int64
	var rows int
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		hs := &harness{src: src, act: &fakeActions{}, mt: &fakeMaint{}, clk: core.NewFakeClock(t0)}
		o := Options{Source: src, Keys: testKeys(), Operator: "op@host", Clock: hs.clk}
		hs.m = New(o)
		hs.m.ticks = false
		hs.send(tea.WindowSizeMsg{Width: 160, Height: 48})
		hs.run(hs.m.Init())
		press(hs, keyMsg("down"))
		runtime.GC()
		runtime.ReadMemStats(&after)
		held = max(held, int64(after.HeapInuse)-int64(before.HeapInuse))
		_, rows = hs.m.tasks.Counts()
		runtime.KeepAlive(hs.m)
	}
	b.ReportMetric(float64(held)/(1<<20), "heapMB")
	b.ReportMetric(float64(rows), "rows")
}
