package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// The store source against a real SQLite registry: full load, journal
// deltas, prunes (no journal) caught by the row counts, detail with events.

type realReg struct {
	db  *store.DB
	reg *core.Registry
	clk *core.FakeClock
	src feed.Source
}

func openReal(t *testing.T) *realReg {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Location(t, "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := core.NewFakeClock(t0)
	return &realReg{db: db, reg: core.NewRegistry(db, clk, core.DefaultThresholds()), clk: clk, src: feed.NewStoreSource(db)}
}

// realHarness is the console over a real registry, ticks off.
func realHarness(t *testing.T, r *realReg, ro bool) *harness { return realHarnessOn(t, r, ro, r.src) }

// wholeOnly hides a source's windows: the console reads it through
// feed.MemoryWindow, as it reads a source that loads whole tables.
type wholeOnly struct{ feed.Source }

// realHarnessOn is realHarness reading src (r.src, or wholeOnly{r.src}).
func realHarnessOn(t *testing.T, r *realReg, ro bool, src feed.Source) *harness {
	hs := &harness{clk: r.clk}
	o := Options{Source: src, Actions: r.reg, Keys: testKeys(), Operator: "op@host", Clock: r.clk, ReadOnly: ro}
	if ro {
		o.Actions = nil
	}
	hs.opts = o
	hs.m = New(o)
	hs.m.ticks = false
	hs.send(teaSize(120, 40))
	hs.run(hs.m.Init())
	return hs
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStoreSourceLiveUpdates: the console over a real registry follows
// another process's writes and its own actions.
func TestStoreSourceLiveUpdates(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	check(t, func() error { _, _, err := r.reg.OpenSession(ctx, "sess-a", "", core.ActorRuntime); return err }())
	t1 := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "sess-a", Label: "first"}, core.ActorRuntime))
	hs := realHarness(t, r, false)
	if _, n := hs.m.tasks.Counts(); n != 1 {
		t.Fatalf("full load: %d tasks", n)
	}
	if hs.m.eventID == 0 {
		t.Fatal("full load did not set the journal cursor")
	}

	// Another "process" starts the task and adds one, and an approval waits.
	check(t, func() error { _, _, err := r.reg.StartTask(ctx, t1.ID, "go", core.ActorRuntime); return err }())
	t2 := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCron, Label: "second"}, core.ActorRuntime))
	ap := must[*core.Approval](t)(r.reg.RequestApproval(ctx, core.NewApproval{Session: "sess-a", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime))
	hs.send(tickMsg{})
	if _, n := hs.m.tasks.Counts(); n != 2 {
		t.Fatalf("after delta: %d tasks", n)
	}
	row := hs.m.tasks.rows[hs.m.tasks.ids[t1.ID]]
	if row.status != core.TaskRunning {
		t.Fatalf("task 1 status %s after delta", row.status)
	}
	if _, ok := hs.m.tasks.ids[t2.ID]; !ok {
		t.Fatal("new task not loaded by the delta")
	}
	if hs.m.counts.approvals != 1 || hs.m.counts.tasks != 1 {
		t.Fatalf("header counts %+v", hs.m.counts)
	}

	// Approve from the console: the real registry decides and journals it.
	hs.keys("3", "a", "right", "enter")
	if got := hs.m.StatusText(); !strings.HasPrefix(got, "approved "+ap.ID+" (session), grant ") {
		t.Fatalf("status %q", got)
	}
	a, evs := must2[*core.Approval, []core.Event](t)(r.reg.GetApproval(ctx, ap.ID))
	if a.Status != core.ApprovalApproved || a.DecidedBy != "op@host" {
		t.Fatalf("approval %+v", a)
	}
	if last := evs[len(evs)-1]; last.Actor != "op@host" {
		t.Fatalf("journal actor %q", last.Actor)
	}
	hs.send(tickMsg{})
	if hs.m.counts.approvals != 0 {
		t.Fatalf("pending approvals after approve: %d", hs.m.counts.approvals)
	}
	// Approving again: refused up front, no dialog.
	hs.keys("a")
	if got := hs.m.StatusText(); got != "approval "+ap.ID+" is already approved: nothing to decide" || hs.m.dialog != nil {
		t.Fatalf("second approve: %q (dialog %v)", got, hs.m.dialog != nil)
	}

	// Cancel the task from the console.
	hs.keys("1")
	for hs.selectedID() != t1.ID {
		hs.keys("down")
	}
	hs.keys("c", "y")
	if got := hs.m.StatusText(); !strings.HasPrefix(got, "cancelled task "+shortID(t1.ID)) {
		t.Fatalf("cancel: %q", got)
	}
	hs.send(tickMsg{})
	if s := hs.m.tasks.rows[hs.m.tasks.ids[t1.ID]].status; s != core.TaskCancelled {
		t.Fatalf("task after cancel: %s", s)
	}

	// Detail: every field and the journal with the operator.
	hs.keys("enter")
	hs.keys("G")
	scr := hs.screen()
	for _, want := range []string{"op@host", "running → cancelled", "Cancelled by operator."} {
		if !strings.Contains(scr, want) {
			t.Fatalf("detail lacks %q:\n%s", want, scr)
		}
	}
}

func must2[A, B any](t *testing.T) func(A, B, error) (A, B) {
	return func(a A, b B, err error) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

// TestStoreSourcePruneForcesFullReload: rows pruned by another process,
// which leaves no journal: the panes reread their windows and counts.
func TestStoreSourcePruneForcesFullReload(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	tk := must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "old"}, core.ActorRuntime))
	check(t, func() error {
		_, _, err := r.reg.FinishTask(ctx, tk.ID, core.Finish{Status: core.TaskSucceeded}, core.ActorRuntime)
		return err
	}())
	must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "kept"}, core.ActorRuntime))
	hs := realHarness(t, r, false)
	if _, n := hs.m.tasks.Counts(); n != 2 {
		t.Fatalf("loaded %d", n)
	}
	// Past retention, a sweep (another process, say) prunes the finished
	// task with its journal: no event tells the console.
	r.clk.Advance(8 * 24 * time.Hour)
	rep := must[*sweep.Report](t)(sweep.New(r.reg, nil).Sweep(ctx, false))
	if rep.Counts.Pruned == 0 {
		t.Fatalf("nothing pruned: %s", rep.Text())
	}
	tickAfterWrite(t, hs, r.src)
	if _, n := hs.m.tasks.Counts(); n != 1 {
		t.Fatalf("after the prune the console holds %d tasks, want 1", n)
	}
	if _, ok := hs.m.tasks.ids[tk.ID]; ok {
		t.Fatal("pruned task still shown")
	}
}

func TestStoreSourceReadOnly(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "x"}, core.ActorRuntime))
	ro, err := store.Open(ctx, r.db.Path(), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	rr := &realReg{db: ro, clk: r.clk, src: feed.NewStoreSource(ro)}
	hs := realHarness(t, rr, true)
	if _, n := hs.m.tasks.Counts(); n != 1 {
		t.Fatalf("read-only load: %d tasks", n)
	}
	hs.keys("c")
	if hs.m.StatusText() != "read-only console: cancel is disabled" {
		t.Fatalf("status %q", hs.m.StatusText())
	}
	// Writes by others still show up.
	must[*core.Task](t)(r.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "y"}, core.ActorRuntime))
	tickAfterWrite(t, hs, rr.src)
	if _, n := hs.m.tasks.Counts(); n != 2 {
		t.Fatalf("read-only console after an external write: %d tasks", n)
	}
}

// tickAfterWrite sends the poll tick once the source has noticed the write
// just made: at once on SQLite (data_version), on PostgreSQL when the
// change notification has arrived (asynchronously, within 5 s).
func tickAfterWrite(t *testing.T, hs *harness, src feed.Source) {
	t.Helper()
	awaitWrite(t, hs, src)
	hs.send(tickMsg{})
}

// awaitWrite waits until the source has noticed the write just made (its
// DataVersion differs from the model's), at most 5 s.
func awaitWrite(t *testing.T, hs *harness, src feed.Source) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := src.DataVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v != hs.m.version || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}
