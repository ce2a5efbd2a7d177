package tui

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/store/storetest"
	"github.com/clawpit/clawpit/view"
)

// Search parity (view.Fields): a term matches a row in a pane's own
// filter (in memory) exactly when it matches in the store's windows (SQL),
// for every pane, on SQLite and on PostgreSQL.

// parityFixture records rows of every entity in every status, with fields
// of distinct texts (ASCII: SQLite's LIKE folds ASCII case only), in
// sessions of two agents and one without. It returns every text it
// recorded, as the registry holds it (searched fields or not, before the
// console sanitises, clips or joins them).
func parityFixture(t *testing.T, r *realReg) (raw []string) {
	t.Helper()
	defer func() {
		for _, st := range core.TaskStatuses {
			raw = append(raw, string(st))
		}
		for _, o := range core.RunOutcomes {
			raw = append(raw, string(o))
		}
		for _, st := range core.JobStatuses {
			raw = append(raw, string(st))
		}
		for _, st := range core.ApprovalStatuses {
			raw = append(raw, string(st))
		}
		for _, d := range core.DeliveryStatuses {
			raw = append(raw, string(d))
		}
		for _, sc := range core.Scopes {
			raw = append(raw, string(sc))
		}
	}()
	check(t, r.db.Update(context.Background(), func(tx core.Tx) error {
		for _, s := range []core.Session{{ID: "sess-a", Agent: "claude"}, {ID: "sess-b", Agent: "codex"}, {ID: "sess-c"}} {
			s.State, s.CreatedAt = core.SessionActive, 1
			if err := tx.InsertSession(&s); err != nil {
				return err
			}
		}
		sessions := []string{"sess-a", "sess-b", "sess-c"}
		for i, st := range core.TaskStatuses {
			k := &core.Task{ID: fmt.Sprintf("0190task-%02d", i), Runtime: []core.Runtime{core.RuntimeCLI, core.RuntimeCron}[i%2],
				Status: st, DeliveryStatus: core.DeliveryStatuses[i%len(core.DeliveryStatuses)], NotifyPolicy: core.NotifyDoneOnly,
				OwnerSession: sessions[i%3], Task: fmt.Sprintf("Asked Thing %d", i), CreatedAt: core.Timestamp(100 + i)}
			switch i % 3 {
			case 0:
				k.Label = fmt.Sprintf("Build Label%d", i)
			case 1:
				k.Kind = fmt.Sprintf("kind-%d", i)
			}
			if i%2 == 0 {
				k.ChildSession = fmt.Sprintf("child-%d", i)
			}
			if !st.Active() {
				k.EndedAt = 500
				k.Error = fmt.Sprintf("Exit %d: lint", i)
			}
			raw = append(raw, k.ID, string(k.Runtime), k.OwnerSession, k.ChildSession, k.Task, k.Label, k.Kind, k.Error)
			if err := tx.InsertTask(k); err != nil {
				return err
			}
		}
		runs := []core.Run{{PendingApprovalWaits: 1}, {}, {EndedAt: 9, EndedReason: "gone quiet"}}
		for _, o := range core.RunOutcomes {
			runs = append(runs, core.Run{EndedAt: 9, Outcome: o, EndedReason: "reason " + string(o)})
		}
		runs[4].Error, runs[5].EndedReason, runs[5].Error = "Boom here", "", "only error"
		for i := range runs {
			x := &runs[i]
			x.RunID, x.ChildSession, x.RequesterSession = fmt.Sprintf("run-%02d", i), fmt.Sprintf("sub-%d", i), sessions[i%3]
			x.Label, x.StartedAt, x.InactivityBudgetMs = fmt.Sprintf("Sub Label %d", i), 100, 60000
			raw = append(raw, x.RunID, x.ChildSession, x.RequesterSession, x.Label, x.EndedReason, x.Error)
			if err := tx.InsertRun(x); err != nil {
				return err
			}
		}
		for i, st := range core.ApprovalStatuses {
			a := &core.Approval{ID: fmt.Sprintf("appr-%02d", i), Session: sessions[i%3], Tool: []string{"Bash", "Edit"}[i%2],
				Command: fmt.Sprintf("make Target%d", i), Status: st, RequestedAt: core.Timestamp(100 + i)}
			if st != core.ApprovalPending {
				a.DecidedAt, a.DecidedBy, a.Scope = 200, fmt.Sprintf("Alice@host%d", i), core.Scopes[i%len(core.Scopes)]
			}
			raw = append(raw, a.ID, a.Session, a.Tool, a.Command, a.DecidedBy)
			if err := tx.InsertApproval(a); err != nil {
				return err
			}
		}
		for i, st := range core.JobStatuses {
			j := &core.Job{ID: fmt.Sprintf("job-%02d", i), Session: sessions[i%3], Status: st, CreatedAt: core.Timestamp(100 + i),
				Command: [][]string{{"make", "Test"}, {"/usr/bin/env", "GO=1", "go", "vet"}}[i%2], Host: fmt.Sprintf("Host%d", i%2)}
			raw = append(raw, j.ID, j.Session, j.Host)
			raw = append(raw, j.Command...)
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		for i := range 3 {
			n := &core.Notification{Kind: []core.NotificationKind{core.NotifyTaskFailed, core.NotifyJobLost}[i%2], Session: sessions[i],
				SubjectID: fmt.Sprintf("subj-%d", i), Text: fmt.Sprintf("Task Failed %d", i), DedupKey: fmt.Sprint("d", i),
				CreatedAt: core.Timestamp(100 + i)}
			if i == 1 {
				n.DeliveredAt = 300
			}
			raw = append(raw, n.Session, n.SubjectID, n.Text, string(n.Kind), n.DedupKey)
			if _, err := tx.InsertNotification(n); err != nil {
				return err
			}
		}
		return nil
	}))
	return raw
}

// TestSearchParityEveryPane: for each pane, every term — each field's
// whole text and pieces of it, as the console shows it and as the registry
// holds it, in other ASCII cases, the agents' names, terms across two
// fields and terms no row holds — selects the same rows in the pane's own
// filter as in the store's window filter.
func TestSearchParityEveryPane(t *testing.T) { storetest.Each(t, testSearchParityEveryPane) }

func testSearchParityEveryPane(t *testing.T) {
	ctx := context.Background()
	r := openReal(t)
	raw := parityFixture(t, r)
	ws := r.src.(feed.WindowSource)
	window := func(k feed.Kind, q string) *batch {
		t.Helper()
		b := newBatch()
		_, err := ws.Window(ctx, feed.WindowRequest{Kind: k, Query: q, After: 1000}, b)
		check(t, err)
		return b
	}
	// The in-memory windows over the same rows (feed.MemoryWindow) select
	// the same rows too.
	mem := feed.NewMemoryWindow(r.src)
	if _, err := mem.Load(ctx, feed.LoadRequest{Full: true}, newBatch()); err != nil {
		t.Fatal(err)
	}
	memWindow := func(k feed.Kind, q string) *batch {
		t.Helper()
		b := newBatch()
		_, err := mem.Window(ctx, feed.WindowRequest{Kind: k, Query: q, After: 1000}, b)
		check(t, err)
		return b
	}
	panes := []struct {
		kind   feed.Kind
		entity string
		table  string
		// mem is each row's id and search text as the pane indexes it
		// (lowercased), and its fields as shown; ids the ids of a window.
		mem func(b *batch) (ids []string, hays [][]byte, fields [][]string)
		ids func(b *batch) []string
	}{
		{feed.KindTask, core.EntityTask, "tasks", memOf(taskSpec, func(b *batch) []taskRow { return b.tasks }),
			func(b *batch) []string { return idsOf(taskSpec, b.tasks) }},
		{feed.KindRun, core.EntityRun, "runs", memOf(runSpec, func(b *batch) []runRow { return b.runs }),
			func(b *batch) []string { return idsOf(runSpec, b.runs) }},
		{feed.KindApproval, core.EntityApproval, "approvals", memOf(approvalSpec, func(b *batch) []approvalRow { return b.approvals }),
			func(b *batch) []string { return idsOf(approvalSpec, b.approvals) }},
		{feed.KindJob, core.EntityJob, "jobs", memOf(jobSpec, func(b *batch) []jobRow { return b.jobs }),
			func(b *batch) []string { return idsOf(jobSpec, b.jobs) }},
		{feed.KindAlert, core.EntityNotification, "notifications", memOf(alertSpec, func(b *batch) []alertRow { return b.alerts }),
			func(b *batch) []string { return idsOf(alertSpec, b.alerts) }},
	}
	for _, p := range panes {
		ids, hays, fields := p.mem(window(p.kind, ""))
		if len(ids) < 3 {
			t.Fatalf("%s: %d rows", p.table, len(ids))
		}
		vf := view.Fields(p.entity)
		terms := []string{"claude", "LAUD", "codex", "no such text", "zz"}
		add := func(s string, loose bool) {
			if loose { // within one argument only (view.Field.Loose)
				for _, w := range strings.Fields(s) {
					if !strings.ContainsAny(w, `"'/[],`) {
						terms = append(terms, w)
					}
				}
				return
			}
			if s == "" {
				return
			}
			terms = append(terms, s, strings.ToUpper(s), s[len(s)/3:len(s)/3+min(3, len(s)-len(s)/3)])
		}
		for _, fs := range fields {
			for i, f := range fs {
				add(f, vf[i].Loose)
			}
			terms = append(terms, fs[0]+" "+fs[1], fs[len(fs)-2]+fs[len(fs)-1]) // across fields: no match
		}
		for _, v := range raw {
			add(v, strings.HasPrefix(v, "/")) // argv[0] shows by its base name (view.Field.Loose)
		}
		slices.Sort(terms)
		for _, q := range slices.Compact(terms) {
			var want []string
			low := []byte(strings.ToLower(q))
			for i, h := range hays {
				if bytes.Contains(h, low) {
					want = append(want, ids[i])
				}
			}
			got := p.ids(window(p.kind, q))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %q: the store's filter selects %v, the pane's %v", p.table, q, got, want)
			}
			inMem := p.ids(memWindow(p.kind, q))
			slices.Sort(inMem)
			if !slices.Equal(inMem, want) {
				t.Errorf("%s, %q: the memory window's filter selects %v, the pane's %v", p.table, q, inMem, want)
			}
		}
	}
}

// memOf is a pane's rows as its table indexes them: ids, search texts and
// fields (the view's, as the pane shows them).
func memOf[R any](spec *listSpec[R], rows func(*batch) []R) func(*batch) ([]string, [][]byte, [][]string) {
	return func(b *batch) ([]string, [][]byte, [][]string) {
		tb := newTable(spec, rows(b), nil)
		var ids []string
		var hays [][]byte
		var fields [][]string
		for s := range tb.rows {
			ids = append(ids, spec.id(&tb.rows[s]))
			h := tb.hays[s]
			hays = append(hays, tb.arena[h.off:h.off+h.n])
			fields = append(fields, strings.Split(string(spec.hay(&tb.rows[s], nil)), "\n"))
		}
		return ids, hays, fields
	}
}

func idsOf[R any](spec *listSpec[R], rows []R) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = spec.id(&rows[i])
	}
	return out
}
