package serve

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawpit/clawpit/tui"
)

// countingMaint counts the server's passes; its sweeps write, its
// watchdog passes fail.
type countingMaint struct{ sweeps, watchdogs atomic.Int32 }

func (m *countingMaint) Plan(context.Context) (*tui.Plan, error) { return &tui.Plan{Empty: true}, nil }
func (m *countingMaint) Apply(context.Context, *tui.Plan) (tui.SweepResult, error) {
	return tui.SweepResult{}, nil
}
func (m *countingMaint) Sweep(context.Context) (tui.SweepResult, error) {
	m.sweeps.Add(1)
	return tui.SweepResult{Short: "2 lost", Wrote: true}, nil
}
func (m *countingMaint) Watchdog(context.Context) (tui.SweepResult, error) {
	m.watchdogs.Add(1)
	return tui.SweepResult{}, errors.New("database is locked")
}

// TestServerSweepsAtStart: the server's maintenance runs on the
// maintenance service's schedule: the first sweep as the server starts
// (not an interval later, here an hour), the watchdog every interval, and
// both logged as before (a sweep that wrote, a pass that failed).
func TestServerSweepsAtStart(t *testing.T) {
	m := &countingMaint{}
	f := newFixture(t, Config{SweepInterval: time.Hour, WatchdogInterval: 20 * time.Millisecond}, func(s *Server) { s.maint = m })
	deadline := time.Now().Add(5 * time.Second)
	for m.sweeps.Load() < 1 || m.watchdogs.Load() < 2 || !strings.Contains(f.logs.String(), "watchdog failed") {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %d sweeps, %d watchdog passes; log:\n%s", m.sweeps.Load(), m.watchdogs.Load(), f.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.stop()
	if n := m.sweeps.Load(); n != 1 {
		t.Errorf("%d sweeps within the first hour, want 1 (at start)", n)
	}
	logs := f.logs.String()
	for _, want := range []string{`msg=swept result="2 lost"`, `msg="watchdog failed" err="database is locked"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
