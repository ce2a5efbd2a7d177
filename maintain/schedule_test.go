package maintain

import (
	"testing"
	"time"
)

// TestSchedule: when each pass is due, step by step, on the console's and
// the service's one timetable.
func TestSchedule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		at    time.Duration // since t0
		op    string        // "start" (want: was it due) or "done"
		kind  Kind
		want  bool
		next  time.Duration // after the step, Next(kind) since t0 (checked when not running)
		label string
	}
	for _, tc := range []struct {
		name  string
		set   Settings
		steps []step
	}{
		{"sweep at start, then an interval after each start", Settings{SweepInterval: time.Minute}, []step{
			{0, "start", KindSweep, true, 0, "the first sweep is due at the start"},
			{0, "start", KindSweep, false, 0, "never two at once"},
			{2 * time.Second, "done", KindSweep, false, time.Minute, "next: a minute after it started"},
			{59 * time.Second, "start", KindSweep, false, time.Minute, "not before"},
			{time.Minute, "start", KindSweep, true, 0, "due"},
			{time.Minute, "done", KindSweep, false, 2 * time.Minute, ""},
		}},
		{"an overrun is followed by one pass at once, not the missed ones", Settings{SweepInterval: time.Minute}, []step{
			{0, "start", KindSweep, true, 0, ""},
			{150 * time.Second, "done", KindSweep, false, time.Minute, "due already"},
			{150 * time.Second, "start", KindSweep, true, 0, "at once"},
			{151 * time.Second, "done", KindSweep, false, 210 * time.Second, "then an interval after that start"},
			{151 * time.Second, "start", KindSweep, false, 210 * time.Second, "no catching up"},
		}},
		{"the watchdog's first pass an interval after the start", Settings{SweepInterval: time.Minute, WatchdogInterval: 5 * time.Second}, []step{
			{0, "start", KindWatchdog, false, 5 * time.Second, ""},
			{5 * time.Second, "start", KindWatchdog, true, 0, ""},
			{5 * time.Second, "done", KindWatchdog, false, 10 * time.Second, ""},
		}},
		{"disabled kinds are never due", Settings{}, []step{
			{0, "start", KindSweep, false, 0, ""},
			{time.Hour, "start", KindSweep, false, 0, ""},
			{time.Hour, "start", KindWatchdog, false, 0, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSchedule(tc.set, t0)
			for i, st := range tc.steps {
				now := t0.Add(st.at)
				switch st.op {
				case "start":
					if got := s.Start(st.kind, now); got != st.want {
						t.Fatalf("step %d (%s): Start(%s) at +%s = %v, want %v", i, st.label, st.kind, st.at, got, st.want)
					}
				case "done":
					s.Done(st.kind)
				}
				if !s.Running(st.kind) && tc.set != (Settings{}) {
					if got := s.Next(st.kind).Sub(t0); got != st.next {
						t.Fatalf("step %d (%s): Next(%s) +%s, want +%s", i, st.label, st.kind, got, st.next)
					}
				}
			}
		})
	}
}
