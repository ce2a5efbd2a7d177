package tui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/feed"

	"github.com/charmbracelet/x/exp/teatest/v2"
)

// hintedSource is the fixture with change hints (HintSource), as a store
// that watches its files gives them.
type hintedSource struct {
	*fakeSource
	hints chan struct{}
	mu    sync.Mutex
	subs  int // ChangeHints calls
}

func (s *hintedSource) ChangeHints() (<-chan struct{}, func(), bool) {
	s.mu.Lock()
	s.subs++
	s.mu.Unlock()
	return s.hints, func() {}, true
}

// counts reads the source's DataVersion and Load calls so far.
func (s *fakeSource) counts() (polls, loads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls, s.loads
}

// idleRun runs the console for real (teatest, ticks included) on src with
// opts, waits for the first screen, and returns it with its probe.
func idleRun(t *testing.T, src feed.Source, opts ...hopt) (*teatest.TestModel, *viewProbe) {
	t.Helper()
	hs := newHarness(t, 120, 40, opts...)
	o := hs.opts
	o.Source = src
	m := New(o)
	m.probe = &viewProbe{}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitScreen(t, m.probe, "7 rows")
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, m.probe
}

// quiet: no sweeper, no watchdog, a fast poll (so polling would show).
func quiet(o *Options) {
	o.SweepInterval, o.WatchdogInterval, o.PollInterval = 0, 0, 20*time.Millisecond
}

// TestIdleConsoleWaitsForHints: on a source with change hints the idle
// console reads data_version only when hinted (and at the 5 s safety net),
// not every PollInterval, and a hinted change is on screen at once; on a
// source without hints it polls every PollInterval as before.
func TestIdleConsoleWaitsForHints(t *testing.T) {
	src := &hintedSource{fakeSource: fixture(), hints: make(chan struct{}, 1)}
	_, probe := idleRun(t, src, quiet)
	time.Sleep(200 * time.Millisecond) // the first load settles
	p0, l0 := src.counts()
	time.Sleep(time.Second) // 50 poll intervals
	if p, l := src.counts(); p != p0 || l != l0 {
		t.Fatalf("idle second with hints: %d data_version reads and %d loads, want 0 and 0", p-p0, l-l0)
	}
	src.mutate(func(s *fakeSource) []change {
		s.tasks[0].Label = "relabelled while idle"
		return []change{{feed.KindTask, s.tasks[0].ID}}
	})
	src.hints <- struct{}{}
	waitScreen(t, probe, "relabelled while idle")
	src.mu.Lock()
	subs := src.subs
	src.mu.Unlock()
	if subs != 1 {
		t.Errorf("ChangeHints called %d times, want once", subs)
	}

	plain := fixture()
	idleRun(t, plain, quiet)
	time.Sleep(200 * time.Millisecond)
	p0, _ = plain.counts()
	time.Sleep(time.Second)
	if p, _ := plain.counts(); p-p0 < 10 {
		t.Fatalf("idle second without hints at a 20 ms poll: %d data_version reads, want about 50", p-p0)
	}
}

// TestIdleSessionDoesNotLoad: a console whose changes are pushed (NoPoll,
// a `clawpit serve` session) loads nothing while idle, even as its ticks
// come (the fixture's ages in seconds tick it every second). A tick used
// to poll, and the poll's busy check scheduled the next tick a second
// later: every session ticked and read the registry every second forever.
func TestIdleSessionDoesNotLoad(t *testing.T) {
	src := fixture()
	idleRun(t, src, func(o *Options) { quiet(o); o.NoPoll = true })
	time.Sleep(300 * time.Millisecond)
	p0, l0 := src.counts()
	time.Sleep(2500 * time.Millisecond)
	if p, l := src.counts(); p != p0 || l != l0 {
		t.Fatalf("idle 2.5 s with pushed changes: %d data_version reads and %d loads, want none", p-p0, l-l0)
	}
}

// TestRefreshDuringLoad: a change pushed (RefreshMsg) while a load is in
// flight — a load that read the version before the change — is loaded
// once that load is done, not dropped.
func TestRefreshDuringLoad(t *testing.T) {
	hs := newHarness(t, 120, 40, func(o *Options) { o.NoPoll = true })
	load := hs.m.startLoad(false) // in flight: not run yet
	stale := load()               // it reads the version before the change
	hs.src.mutate(func(s *fakeSource) []change {
		s.tasks[0].Label = "changed during a load"
		return []change{{feed.KindTask, s.tasks[0].ID}}
	})
	hs.send(RefreshMsg{}) // arrives while loading
	hs.send(stale)        // the stale load lands
	if !strings.Contains(hs.screen(), "changed during a load") {
		t.Fatalf("a change pushed during a load never loaded:\n%s", hs.screen())
	}
}

// TestHintBurstLoadsAtPollRate: a burst of writes, each hinted, reloads
// the console at most once per PollInterval (200 ms here), as the poll
// did, not once per write.
func TestHintBurstLoadsAtPollRate(t *testing.T) {
	src := &hintedSource{fakeSource: fixture(), hints: make(chan struct{}, 1)}
	idleRun(t, src, func(o *Options) {
		o.SweepInterval, o.WatchdogInterval, o.PollInterval = 0, 0, 200*time.Millisecond
	})
	time.Sleep(200 * time.Millisecond)
	_, l0 := src.counts()
	start := time.Now()
	for time.Since(start) < time.Second { // a write every 5 ms, each hinted
		src.mutate(func(s *fakeSource) []change {
			s.tasks[0].Label = "burst " + time.Now().Format("15:04:05.000")
			return []change{{feed.KindTask, s.tasks[0].ID}}
		})
		select {
		case src.hints <- struct{}{}:
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	_, l1 := src.counts()
	if n, most := l1-l0, int(elapsed/(200*time.Millisecond))+2; n < 2 || n > most {
		t.Fatalf("%d loads during a %s burst of hinted writes, want 2 to %d (one per 200 ms)", n, elapsed.Round(time.Millisecond), most)
	}
}

// TestHintBeforeCommitVisible: a hint can come before its commit is
// visible (the first of a commit's writes); the console reads again
// shortly after (HintFollowUp), so the change shows within half a second,
// not at the 5 s safety net.
func TestHintBeforeCommitVisible(t *testing.T) {
	src := &hintedSource{fakeSource: fixture(), hints: make(chan struct{}, 1)}
	_, probe := idleRun(t, src, quiet)
	time.Sleep(200 * time.Millisecond)
	src.hints <- struct{}{} // the write is seen...
	time.Sleep(25 * time.Millisecond)
	src.mutate(func(s *fakeSource) []change { // ...before its commit is
		s.tasks[0].Label = "visible after its hint"
		return []change{{feed.KindTask, s.tasks[0].ID}}
	})
	start := time.Now()
	waitScreen(t, probe, "visible after its hint")
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the change showed %s after its commit, want well within half a second", d.Round(time.Millisecond))
	}
}
