package feed_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

// The store feed against a real registry (SQLite, and PostgreSQL too when
// CLAWPIT_TEST_POSTGRES is set: storetest.Each), through feed's exported contract only: what
// any console, or a test of one, can rely on without the screen.

// rec records what a load sends.
type rec struct {
	tasks     map[string]core.Task
	approvals []string
	gone      []string
	changed   []string
}

func newRec() *rec { return &rec{tasks: map[string]core.Task{}} }

func (r *rec) Task(t *core.Task)           { r.tasks[t.ID] = *t }
func (r *rec) Run(*core.Run)               {}
func (r *rec) Approval(a *core.Approval)   { r.approvals = append(r.approvals, a.ID) }
func (r *rec) Job(*core.Job)               {}
func (r *rec) Alert(*core.Notification)    {}
func (r *rec) Gone(k feed.Kind, id string) { r.gone = append(r.gone, k.String()+" "+id) }

// Changed makes rec a feed.ChangeSink.
func (r *rec) Changed(k feed.Kind, id string) { r.changed = append(r.changed, k.String()+" "+id) }

func openRegistry(t *testing.T) (*store.DB, *core.Registry) {
	t.Helper()
	db, err := store.Open(context.Background(), storetest.Location(t, "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := core.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	return db, core.NewRegistry(db, clk, core.DefaultThresholds())
}

// must fails the test on a call's error: must[T](t)(call()).
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestStoreFeedFullThenDelta: a full load sends every row and the journal
// cursor; a delta from that cursor sends only the rows written since, with
// the table sizes; a gap larger than MaxEvents loads everything again.
func TestStoreFeedFullThenDelta(t *testing.T) { storetest.Each(t, testStoreFeedFullThenDelta) }

func testStoreFeedFullThenDelta(t *testing.T) {
	ctx := context.Background()
	db, reg := openRegistry(t)
	src := feed.NewStoreSource(db)
	if _, _, err := reg.OpenSession(ctx, "sess-a", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	t1 := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "sess-a", Label: "first"}, core.ActorRuntime))
	t2 := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCron, Label: "second"}, core.ActorRuntime))

	full := newRec()
	res := must[feed.LoadResult](t)(src.Load(ctx, feed.LoadRequest{Full: true}, full))
	if !res.Full || res.EventID == 0 || len(full.tasks) != 2 {
		t.Fatalf("full load: %+v, %d tasks", res, len(full.tasks))
	}

	if _, _, err := reg.StartTask(ctx, t1.ID, "go", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	ap := must[*core.Approval](t)(reg.RequestApproval(ctx, core.NewApproval{Session: "sess-a", Tool: "Bash", Command: "make deploy"}, core.ActorRuntime))
	delta := newRec()
	dres := must[feed.LoadResult](t)(src.Load(ctx, feed.LoadRequest{AfterEventID: res.EventID}, delta))
	if dres.Full || dres.EventID <= res.EventID {
		t.Fatalf("delta: %+v after cursor %d", dres, res.EventID)
	}
	if _, sent := delta.tasks[t2.ID]; sent || delta.tasks[t1.ID].Status != core.TaskRunning || len(delta.tasks) != 1 {
		t.Fatalf("delta sent tasks %v, want only %s running", delta.tasks, t1.ID)
	}
	if !slices.Equal(delta.approvals, []string{ap.ID}) {
		t.Fatalf("delta sent approvals %v, want %s", delta.approvals, ap.ID)
	}
	if dres.Counts == nil || dres.Counts.Tasks != 2 || dres.Counts.Approvals != 1 {
		t.Fatalf("delta counts %+v", dres.Counts)
	}

	// Two journal rows since the cursor, at most one replayed: everything.
	again := newRec()
	gres := must[feed.LoadResult](t)(src.Load(ctx, feed.LoadRequest{AfterEventID: res.EventID, MaxEvents: 1}, again))
	if !gres.Full || len(again.tasks) != 2 {
		t.Fatalf("gap over MaxEvents: %+v, %d tasks", gres, len(again.tasks))
	}
}

// TestStoreFeedWindowedDelta: a delta sends no row of a windowed kind, only
// its id to a ChangeSink and the kind in Touched, and counts a task that
// became failed, timed out or lost for the attention bell.
func TestStoreFeedWindowedDelta(t *testing.T) { storetest.Each(t, testStoreFeedWindowedDelta) }

func testStoreFeedWindowedDelta(t *testing.T) {
	ctx := context.Background()
	db, reg := openRegistry(t)
	src := feed.NewStoreSource(db)
	t1 := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "doomed"}, core.ActorRuntime))
	res := must[feed.LoadResult](t)(src.Load(ctx, feed.LoadRequest{Full: true, WindowOver: -1}, newRec()))
	if !res.Windowed[feed.KindTask] {
		t.Fatalf("WindowOver -1: tasks not windowed: %+v", res.Windowed)
	}
	if _, _, err := reg.StartTask(ctx, t1.ID, "go", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.FinishTask(ctx, t1.ID, core.Finish{Status: core.TaskFailed, Error: "boom"}, core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	d := newRec()
	dres := must[feed.LoadResult](t)(src.Load(ctx, feed.LoadRequest{AfterEventID: res.EventID, Windowed: res.Windowed}, d))
	if len(d.tasks) != 0 || !dres.Touched[feed.KindTask] || !slices.Equal(d.changed, []string{"task " + t1.ID}) {
		t.Fatalf("windowed delta: tasks %v, touched %v, changed %v", d.tasks, dres.Touched, d.changed)
	}
	if dres.NewFailed != 1 || dres.NewPending != 0 {
		t.Fatalf("news: %d failed, %d pending; want 1, 0", dres.NewFailed, dres.NewPending)
	}
}

// TestStoreFeedDetail: a detail lists the entity's fields (its agent just
// after its session) and its journal; a missing one is core.ErrNotFound.
func TestStoreFeedDetail(t *testing.T) { storetest.Each(t, testStoreFeedDetail) }

func testStoreFeedDetail(t *testing.T) {
	ctx := context.Background()
	db, reg := openRegistry(t)
	src := feed.NewStoreSource(db)
	t1 := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "look"}, core.ActorRuntime))
	if _, _, err := reg.StartTask(ctx, t1.ID, "go", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	d := must[*feed.Detail](t)(src.Detail(ctx, feed.KindTask, t1.ID))
	var names []string
	for _, f := range d.Fields {
		names = append(names, f.Name)
	}
	i := slices.Index(names, "owner_session")
	if i < 0 || i+1 >= len(names) || names[i+1] != "agent" || d.Fields[i+1].Value != "-" {
		t.Fatalf("fields %v: want agent \"-\" after owner_session", names)
	}
	if len(d.Events) != 2 || d.Events[1].To != string(core.TaskRunning) {
		t.Fatalf("journal %+v: want created, then started", d.Events)
	}
	if _, err := src.Detail(ctx, feed.KindTask, "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("detail of a missing task: %v, want not found", err)
	}
}

// TestStoreWindowUniqueIDs: a window of tasks holding ids longer than the
// console shows whole (an older registry's UUIDv7s) says each one's
// shortest prefix no other task of the table shares, in or out of the
// window; a window of short ids reads nothing for it (Unique nil).
func TestStoreWindowUniqueIDs(t *testing.T) { storetest.Each(t, testStoreWindowUniqueIDs) }

func testStoreWindowUniqueIDs(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Location(t, "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	src := feed.NewStoreSource(db).(feed.WindowSource)
	insert := func(ids ...string) {
		t.Helper()
		if err := db.Update(ctx, func(tx core.Tx) error {
			for i, id := range ids {
				k := &core.Task{ID: id, Runtime: core.RuntimeCLI, Status: core.TaskQueued, DeliveryStatus: core.DeliveryPending,
					NotifyPolicy: core.NotifyDoneOnly, Label: id, CreatedAt: core.Timestamp(1000 + i)}
				if err := tx.InsertTask(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	window := func(after int) ([]string, []int) {
		t.Helper()
		got := &ids{}
		res := must[feed.WindowResult](t)(src.Window(ctx, feed.WindowRequest{Kind: feed.KindTask, Sort: "label", After: after}, got))
		return got.got, res.Unique
	}
	insert("abcdefghijk1", "abcdefghijk2")
	if _, u := window(10); u != nil {
		t.Fatalf("short ids: unique %v, want none read", u)
	}
	insert("0190aaaa-0001-7abc-8000-000000000001", "0190aaaa-0001-7abd-8000-000000000002", "0190aaaa-0002-7000-8000-000000000003")
	// Label order: the three long ids first; a window of the first two
	// still knows the third.
	got, u := window(2)
	want := map[string]int{"0190aaaa-0001-7abc-8000-000000000001": 18, "0190aaaa-0001-7abd-8000-000000000002": 18}
	if len(got) != 2 || len(u) != 2 {
		t.Fatalf("window %v, unique %v", got, u)
	}
	for i, id := range got {
		if u[i] != want[id] {
			t.Errorf("%s: unique prefix %d, want %d", id, u[i], want[id])
		}
	}
	got, u = window(10)
	for i, id := range got {
		if id == "0190aaaa-0002-7000-8000-000000000003" && u[i] != 13 || id == "abcdefghijk1" && u[i] != 12 {
			t.Errorf("%s: unique prefix %d", id, u[i])
		}
	}
}
