package feed_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/clawpit/clawpit/view"
)

// ids records the ids a window sends, in order.
type ids struct{ got []string }

func (s *ids) Task(t *core.Task)         { s.got = append(s.got, t.ID) }
func (s *ids) Run(r *core.Run)           { s.got = append(s.got, r.RunID) }
func (s *ids) Approval(a *core.Approval) { s.got = append(s.got, a.ID) }
func (s *ids) Job(j *core.Job)           { s.got = append(s.got, j.ID) }
func (s *ids) Alert(n *core.Notification) {
	s.got = append(s.got, fmt.Sprint(n.ID))
}
func (s *ids) Gone(feed.Kind, string) {}

// varied fills a registry with tasks, approvals and notifications whose
// sort keys tie often (the id breaks them) and whose labels differ in case.
func varied(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Location(t, "registry.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clk := core.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
	reg := core.NewRegistry(db, clk, core.DefaultThresholds())
	if _, _, err := reg.OpenSession(ctx, "sess-a", "claude", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	labels := []string{"Deploy web", "build", "deploy docs", "", "Zeta", "alpha"}
	for i := range 24 {
		clk.Advance(time.Duration(i%3) * time.Second)
		tk := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "sess-a",
			Label: labels[i%len(labels)], Task: fmt.Sprintf("task number %d", i)}, core.ActorRuntime))
		switch i % 4 {
		case 1:
			// Started well after later tasks were created: "recent" and
			// "created" differ.
			clk.Advance(30 * time.Second)
			if _, _, err := reg.StartTask(ctx, tk.ID, "go", core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, _, err := reg.StartTask(ctx, tk.ID, "go", core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
			if _, _, err := reg.FinishTask(ctx, tk.ID, core.Finish{Status: core.TaskFailed, Error: fmt.Sprintf("exit %d", i)}, core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
		}
		if i%3 == 0 {
			if _, err := reg.RequestApproval(ctx, core.NewApproval{Session: "sess-a", Tool: []string{"Bash", "Edit"}[i%2],
				Command: fmt.Sprintf("rm %d", i)}, core.ActorRuntime); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Jobs run by a path and by a name: the command order reads the
	// program's base name first, then the stored arguments.
	commands := [][]string{{"make", "b"}, {"/usr/bin/make", "a"}, {"./deploy.sh"}, {"/opt/x/zz"}, {"make", "a"}, nil, {"Make"}}
	if err := db.Update(ctx, func(tx core.Tx) error {
		for i, c := range commands {
			j := &core.Job{ID: fmt.Sprintf("job%09d", i), Session: "sess-a", Command: c, Status: core.JobStatuses[i%len(core.JobStatuses)],
				CreatedAt: core.Timestamp(1_000 + i%3)}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestMemoryWindowAgreesWithStore: a MemoryWindow over a registry loaded
// whole answers every window (each kind, sort, filter, anchor and edge),
// count and header number as the store's own windows do.
func TestMemoryWindowAgreesWithStore(t *testing.T) {
	storetest.Each(t, testMemoryWindowAgreesWithStore)
}

func testMemoryWindowAgreesWithStore(t *testing.T) {
	ctx := context.Background()
	src := feed.NewStoreSource(varied(t))
	ws := src.(feed.WindowSource)
	mem := feed.NewMemoryWindow(src)
	res := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: true}, newRec()))
	if res.Windowed != ([feed.NumKinds]bool{}) {
		t.Fatalf("WindowOver 0 windowed %v", res.Windowed)
	}
	for k := range feed.NumKinds {
		for _, sort := range view.SortNames(k.Entity()) {
			for _, q := range []string{"", "deploy", "FAILED", "rm 1", "claude", "nothing at all"} {
				base := feed.WindowRequest{Kind: k, Sort: sort, Query: q, After: 100, Count: true}
				all := &ids{}
				want := must[feed.WindowResult](t)(ws.Window(ctx, base, all))
				got := &ids{}
				have := must[feed.WindowResult](t)(mem.Window(ctx, base, got))
				if !slices.Equal(got.got, all.got) || have.Total != want.Total || have.Matched != want.Matched {
					t.Fatalf("%v %s %q: memory %v (%d/%d), store %v (%d/%d)", k, sort, q, got.got, have.Matched, have.Total,
						all.got, want.Matched, want.Total)
				}
				gone := "gone"
				if k == feed.KindAlert {
					gone = "999999" // PostgreSQL rejects a notification id that is not a number
				}
				for _, a := range append(slices.Clone(all.got), gone) {
					for _, end := range []bool{false, true} {
						req := feed.WindowRequest{Kind: k, Sort: sort, Query: q, Anchor: a, Before: 2, After: 3}
						if end {
							req = feed.WindowRequest{Kind: k, Sort: sort, Query: q, End: true, After: 3}
						}
						s, m := &ids{}, &ids{}
						sp := must[feed.WindowResult](t)(ws.Window(ctx, req, s)).Page
						mp := must[feed.WindowResult](t)(mem.Window(ctx, req, m)).Page
						if !slices.Equal(s.got, m.got) || sp.Before != mp.Before || sp.MoreBefore != mp.MoreBefore ||
							sp.MoreAfter != mp.MoreAfter || (sp.FirstKey == "") != (mp.FirstKey == "") {
							t.Fatalf("%+v: memory %v %+v, store %v %+v", req, m.got, mp, s.got, sp)
						}
						if mp.FirstKey == "" {
							continue
						}
						again := &ids{}
						must[feed.WindowResult](t)(mem.Window(ctx, feed.WindowRequest{Kind: k, Sort: sort, Query: q,
							AnchorKey: mp.FirstKey, After: len(m.got)}, again))
						if !slices.Equal(again.got, m.got) {
							t.Fatalf("%+v at its FirstKey: %v, want %v", req, again.got, m.got)
						}
					}
				}
			}
		}
	}
	// The command order as the pane shows the command: by the program's
	// base name (bytewise), then the stored arguments; no program first.
	byCommand := &ids{}
	must[feed.WindowResult](t)(ws.Window(ctx, feed.WindowRequest{Kind: feed.KindJob, Sort: "command", After: 100}, byCommand))
	if want := []string{"job000000005", "job000000006", "job000000002", "job000000001", "job000000004", "job000000000",
		"job000000003"}; !slices.Equal(byCommand.got, want) {
		t.Fatalf("jobs by command: %v, want %v", byCommand.got, want)
	}
	since := core.Timestamp(0)
	if h, w := must[core.HeaderCounts](t)(mem.Header(ctx, since)), must[core.HeaderCounts](t)(ws.Header(ctx, since)); h != w {
		t.Fatalf("header: memory %+v, store %+v", h, w)
	}
}

// TestMemoryWindowWithholdsWindowedRows: a full load over WindowOver sends
// no rows of the large table; a delta then reports its changes (Touched,
// Changed, NewFailed) instead of sending them, and windows see them.
func TestMemoryWindowWithholdsWindowedRows(t *testing.T) {
	ctx := context.Background()
	db, reg := openRegistry(t)
	if _, _, err := reg.OpenSession(ctx, "sess-a", "", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "sess-a"}, core.ActorRuntime))
	}
	appr := must[*core.Approval](t)(reg.RequestApproval(ctx, core.NewApproval{Session: "sess-a", Tool: "Bash", Command: "ls"}, core.ActorRuntime))
	mem := feed.NewMemoryWindow(feed.NewStoreSource(db))
	full := newRec()
	res := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{Full: true, WindowOver: 2}, full))
	if !res.Windowed[feed.KindTask] || res.Windowed[feed.KindApproval] || len(full.tasks) != 0 || !slices.Equal(full.approvals, []string{appr.ID}) {
		t.Fatalf("full load over 2: %v, %d tasks, approvals %v", res.Windowed, len(full.tasks), full.approvals)
	}
	tk := must[*core.Task](t)(reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "sess-a", Label: "new one"}, core.ActorRuntime))
	if _, _, err := reg.StartTask(ctx, tk.ID, "go", core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reg.FinishTask(ctx, tk.ID, core.Finish{Status: core.TaskFailed, Error: "boom"}, core.ActorRuntime); err != nil {
		t.Fatal(err)
	}
	d := newRec()
	dres := must[feed.LoadResult](t)(mem.Load(ctx, feed.LoadRequest{AfterEventID: res.EventID, Windowed: res.Windowed}, d))
	if dres.Full || !dres.Touched[feed.KindTask] || len(d.tasks) != 0 || !slices.Equal(d.changed, []string{"task " + tk.ID}) || dres.NewFailed != 1 {
		t.Fatalf("delta: %+v, tasks %v, changed %v", dres, d.tasks, d.changed)
	}
	got := &ids{}
	wr := must[feed.WindowResult](t)(mem.Window(ctx, feed.WindowRequest{Kind: feed.KindTask, Query: "new one", After: 10, Count: true}, got))
	if !slices.Equal(got.got, []string{tk.ID}) || wr.Total != 4 || wr.Matched != 1 {
		t.Fatalf("window after the delta: %v, %+v", got.got, wr)
	}
}
