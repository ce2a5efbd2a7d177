package feed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/clawpit/clawpit/core"
)

// storeSource reads a core.Store.
type storeSource struct {
	st core.Store
	// prices overrides the prices the SPENT column and the detail views'
	// usage are costed at, over core.DefaultPrices and the prices stored
	// with the registry's budgets.
	prices core.Prices
}

// ChangeHints implements HintSource when the store gives hints.
func (s *storeSource) ChangeHints() (<-chan struct{}, func(), bool) {
	if h, ok := s.st.(HintSource); ok {
		return h.ChangeHints()
	}
	return nil, nil, false
}

// NewStoreSource returns a Source reading st.
func NewStoreSource(st core.Store) Source { return &storeSource{st: st} }

// NewPricedStoreSource returns a Source reading st that costs tokens at
// core.DefaultPrices overridden by the prices stored with the registry's
// budgets and then by prices (config.toml [prices]).
func NewPricedStoreSource(st core.Store, prices core.Prices) Source {
	return &storeSource{st: st, prices: prices}
}

// pricesIn is the price table in force in tx: the defaults, the budgets'
// stored overrides, then s.prices.
func (s *storeSource) pricesIn(tx core.Tx) (core.Prices, error) {
	p := core.DefaultPrices()
	rec, found, err := tx.GetBudget("")
	if err != nil {
		return nil, err
	}
	if found {
		var spec core.BudgetSpec
		if json.Unmarshal([]byte(rec.Spec), &spec) == nil {
			p = p.With(spec.Prices)
		}
	}
	return p.With(s.prices), nil
}

func (s *storeSource) Path() string { return s.st.Path() }

func (s *storeSource) DataVersion(ctx context.Context) (int64, error) { return s.st.DataVersion(ctx) }

// ChangeNote implements ChangeNoter when the store says it (store.DB).
func (s *storeSource) ChangeNote() string {
	if n, ok := s.st.(ChangeNoter); ok {
		return n.ChangeNote()
	}
	return ""
}

// Window implements WindowSource (core.Tx's window queries).
func (s *storeSource) Window(ctx context.Context, req WindowRequest, sink Sink) (WindowResult, error) {
	var res WindowResult
	err := s.st.View(ctx, func(tx core.Tx) error {
		wt := tx
		q := core.WindowQuery{Entity: req.Kind.Entity(), Sort: req.Sort, Filter: req.Query, Anchor: req.Anchor,
			AnchorKey: req.AnchorKey, Before: req.Before, After: req.After, End: req.End}
		var err error
		if req.Before > 0 || req.After > 0 {
			prices, err := s.pricesIn(tx)
			if err != nil {
				return err
			}
			rec := &taskIDs{Sink: sink}
			fill := newSpentFill(tx, rec, prices)
			if res.Page, err = wt.Window(q, fill); err != nil {
				return err
			}
			if fill.err != nil {
				return fill.err
			}
			if res.Unique, err = uniqueTaskIDs(tx, rec.ids); err != nil {
				return err
			}
		}
		if !req.Count {
			return nil
		}
		limit := req.CountLimit
		if limit <= 0 {
			limit = 10_000
		}
		if !req.MatchedOnly || q.Filter == "" {
			if res.Total, _, err = wt.CountWindow(core.WindowQuery{Entity: q.Entity}, -1); err != nil {
				return err
			}
			res.Matched = res.Total
		}
		if q.Filter != "" {
			if res.Matched, res.Capped, err = wt.CountWindow(q, limit); err != nil {
				return err
			}
		}
		res.Counted = true
		return nil
	})
	return res, err
}

// taskIDs passes a window's rows on to Sink and keeps its tasks' ids in
// order.
type taskIDs struct {
	Sink
	ids []string
}

func (r *taskIDs) Task(t *core.Task) {
	r.ids = append(r.ids, t.ID)
	r.Sink.Task(t)
}

// wholeIDLen is the longest id the console shows whole whatever its unique
// prefix (every id clawpit writes now has 12 characters; tui's minPrefix).
const wholeIDLen = 13

// uniqueTaskIDs is WindowResult.Unique for a window of tasks with ids
// (nil for another kind's): read from each id's neighbours in the table,
// only when some id is longer than the console shows whole (the UUIDv7
// ids of older registries), so a window of short ids costs no read.
func uniqueTaskIDs(tx core.Tx, ids []string) ([]int, error) {
	if !slices.ContainsFunc(ids, func(id string) bool { return len(id) > wholeIDLen }) {
		return nil, nil
	}
	nb, err := tx.IDNeighbours(core.EntityTask, ids)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = uniqueLen(id, nb[i][0], nb[i][1])
	}
	return out, nil
}

// Header implements WindowSource.
func (s *storeSource) Header(ctx context.Context, since core.Timestamp) (core.HeaderCounts, error) {
	var c core.HeaderCounts
	err := s.st.View(ctx, func(tx core.Tx) error {
		var err error
		c, err = tx.HeaderCounts(since)
		return err
	})
	return c, err
}

func (s *storeSource) Load(ctx context.Context, req LoadRequest, sink Sink) (LoadResult, error) {
	var res LoadResult
	err := s.st.View(ctx, func(tx core.Tx) error {
		prices, err := s.pricesIn(tx)
		if err != nil {
			return err
		}
		spent := newSpentFill(tx, sink, prices)
		fill := newAgentFill(tx, spent)
		if res, err = load(tx, req, fill); err == nil {
			err = cmp.Or(fill.err, spent.err)
		}
		if err != nil || req.Now == 0 {
			return err
		}
		res.Spent, err = spentSince(tx, req.Now-spentSpan, prices)
		return err
	})
	return res, err
}

func load(tx core.Tx, req LoadRequest, sink Sink) (LoadResult, error) {
	max := req.MaxEvents
	if max <= 0 {
		max = DefaultMaxEvents
	}
	if !req.Full {
		evs, err := tx.EventsSince(req.AfterEventID, max+1)
		if err != nil {
			return LoadResult{}, err
		}
		if len(evs) <= max {
			return loadDelta(tx, req, evs, sink)
		}
	}
	return loadFull(tx, req, sink)
}

// windowedKinds are the kinds whose tables hold more than over rows (each
// count stops at over+1 rows, so it costs no more than reading them).
func windowedKinds(tx core.Tx, over int) ([NumKinds]bool, error) {
	var out [NumKinds]bool
	if over == 0 {
		return out, nil
	}
	for k := Kind(0); k < NumKinds; k++ {
		if over < 0 {
			out[k] = true
			continue
		}
		// No filter: every row counts. (A filter of "\x00all" counted every
		// row on SQLite only because its LIKE pattern ends at the NUL;
		// PostgreSQL refuses NUL in text.)
		_, capped, err := tx.CountWindow(core.WindowQuery{Entity: k.Entity()}, int64(over))
		if err != nil {
			return out, err
		}
		out[k] = capped
	}
	return out, nil
}

func loadFull(tx core.Tx, req LoadRequest, sink Sink) (LoadResult, error) {
	res := LoadResult{Full: true}
	win, err := windowedKinds(tx, req.WindowOver)
	if err != nil {
		return res, err
	}
	res.Windowed = win
	// The cursor first: a row written after it is reloaded by the next delta
	// (at worst twice), never missed. Inside one read transaction nothing
	// changes anyway.
	id, err := tx.MaxEventID()
	if err != nil {
		return res, err
	}
	res.EventID = id
	if !win[KindTask] { // else the Tasks pane reads windows
		// Read every task before passing any on: the sink's fills look up
		// each row's usage and session in tx, and PostgreSQL cannot run a
		// statement on a transaction's connection while another's rows are
		// still being read (the load failed with "bad connection"). A table
		// loaded whole holds at most WindowOver rows.
		var tasks []core.Task
		if err := tx.EachTask(func(t *core.Task) error { tasks = append(tasks, *t); return nil }); err != nil {
			return res, err
		}
		for i := range tasks {
			sink.Task(&tasks[i])
		}
	}
	if !win[KindRun] {
		runs, err := tx.ListRuns(core.RunFilter{})
		if err != nil {
			return res, err
		}
		for i := range runs {
			sink.Run(&runs[i])
		}
	}
	if !win[KindApproval] {
		aps, err := tx.ListApprovals(core.ApprovalFilter{})
		if err != nil {
			return res, err
		}
		for i := range aps {
			sink.Approval(&aps[i])
		}
	}
	if !win[KindJob] {
		jobs, err := tx.ListJobs(core.JobFilter{})
		if err != nil {
			return res, err
		}
		for i := range jobs {
			sink.Job(&jobs[i])
		}
	}
	if win[KindAlert] {
		res.NewBudgets, res.AlertID, err = alertNews(tx, req.AfterAlertID, req.AfterEventID == 0 && req.AfterAlertID == 0)
		return res, err
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{})
	if err != nil {
		return res, err
	}
	for i := range ns {
		sink.Alert(&ns[i])
		res.AlertID = max(res.AlertID, ns[i].ID)
	}
	return res, nil
}

// alertNews counts the budget_exceeded notifications after the console's
// cursor (after) and returns the newest notification id (after when there
// is none newer). The first load (first: no cursor of either kind) brings
// no news: only the newest id is read, not every notification.
func alertNews(tx core.Tx, after int64, first bool) (budgets int, last int64, err error) {
	if first {
		last, err = tx.SweepLastNotificationID()
		return 0, last, err
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: after})
	if err != nil {
		return 0, after, err
	}
	last = after
	for i := range ns {
		if ns[i].Kind == core.NotifyBudgetExceeded {
			budgets++
		}
		last = max(last, ns[i].ID)
	}
	return budgets, last, nil
}

// journalNews counts, over the applied journal rows evs (oldest first), the
// approvals of a windowed Approvals pane that end pending having not been
// pending before, and the tasks of a windowed Tasks pane that end failed,
// timed out or lost having been otherwise: what a delta of rows would show
// the console's attention bell for panes that hold their tables.
func journalNews(evs []core.Event, windowed [NumKinds]bool) (pending, failed int) {
	type key struct{ entity, id string }
	type span struct{ from, to string }
	seen := map[key]*span{}
	var order []key
	for _, e := range evs {
		if !e.Applied || (e.Entity != core.EntityApproval || !windowed[KindApproval]) && (e.Entity != core.EntityTask || !windowed[KindTask]) {
			continue
		}
		k := key{e.Entity, e.EntityID}
		if sp := seen[k]; sp != nil {
			sp.to = e.To
			continue
		}
		seen[k] = &span{from: e.From, to: e.To}
		order = append(order, k)
	}
	bad := func(s string) bool { return core.TaskStatus(s).FailedOrLost() }
	for _, k := range order {
		sp := seen[k]
		switch {
		case k.entity == core.EntityApproval && sp.to == string(core.ApprovalPending) && sp.from != string(core.ApprovalPending):
			pending++
		case k.entity == core.EntityTask && bad(sp.to) && !bad(sp.from):
			failed++
		}
	}
	return pending, failed
}

func loadDelta(tx core.Tx, req LoadRequest, evs []core.Event, sink Sink) (LoadResult, error) {
	res := LoadResult{EventID: req.AfterEventID}
	res.NewPending, res.NewFailed = journalNews(evs, req.Windowed)
	type key struct{ entity, id string }
	seen := map[key]bool{}
	for _, e := range evs {
		res.EventID = e.ID
		k := key{e.Entity, e.EntityID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if kind := kindOfEntity(e.Entity); e.Entity != core.EntityNotification && req.Windowed[kind] {
			res.Touched[kind] = true
			if cs, ok := sink.(ChangeSink); ok {
				cs.Changed(kind, e.EntityID)
			}
			continue
		}
		var err error
		switch e.Entity {
		case core.EntityTask:
			var t *core.Task
			if t, err = tx.GetTask(e.EntityID); err == nil {
				sink.Task(t)
			}
		case core.EntityRun:
			var r *core.Run
			if r, err = tx.GetRun(e.EntityID); err == nil {
				sink.Run(r)
			}
		case core.EntityApproval:
			var a *core.Approval
			if a, err = tx.GetApproval(e.EntityID); err == nil {
				sink.Approval(a)
			}
		case core.EntityJob:
			var j *core.Job
			if j, err = tx.GetJob(e.EntityID); err == nil {
				sink.Job(j)
			}
		default:
			continue
		}
		if errors.Is(err, core.ErrNotFound) {
			sink.Gone(kindOfEntity(e.Entity), e.EntityID)
		} else if err != nil {
			return res, err
		}
	}
	if req.Windowed[KindAlert] {
		// Notifications have no journal of their own: any newer id, or any
		// change at all (a delivery), rereads the pane's window.
		res.Touched[KindAlert] = true
		var err error
		if res.NewBudgets, res.AlertID, err = alertNews(tx, req.AfterAlertID, false); err != nil {
			return res, err
		}
		return res, countRows(tx, req, &res)
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: req.AfterAlertID})
	if err != nil {
		return res, err
	}
	res.AlertID = req.AfterAlertID
	for i := range ns {
		sink.Alert(&ns[i])
		res.AlertID = max(res.AlertID, ns[i].ID)
	}
	un, err := tx.ListNotifications(core.NotificationFilter{UndeliveredOnly: true})
	if err != nil {
		return res, err
	}
	res.Undelivered = make([]int64, len(un))
	for i := range un {
		res.Undelivered[i] = un[i].ID
	}
	return res, countRows(tx, req, &res)
}

// countRows sets res.Counts when the store can count: the sizes of the
// tables loaded whole (a windowed pane's table is not counted here: its
// window rereads its own count).
func countRows(tx core.Tx, req LoadRequest, res *LoadResult) error {
	if !slices.Contains(req.Windowed[:], true) {
		c, err := tx.CountRows()
		if err != nil {
			return err
		}
		res.Counts = &c
		return nil
	}
	var n [NumKinds]int64
	for k := Kind(0); k < NumKinds; k++ {
		if req.Windowed[k] {
			continue
		}
		var err error
		if n[k], _, err = tx.CountWindow(core.WindowQuery{Entity: k.Entity()}, -1); err != nil {
			return err
		}
	}
	res.Counts = &core.TableCounts{Tasks: n[KindTask], Runs: n[KindRun], Approvals: n[KindApproval], Jobs: n[KindJob], Notifications: n[KindAlert]}
	return nil
}

func (s *storeSource) Detail(ctx context.Context, kind Kind, id string) (*Detail, error) {
	var d *Detail
	err := s.st.View(ctx, func(tx core.Tx) error {
		var err error
		prices, err := s.pricesIn(tx)
		if err != nil {
			return err
		}
		d, err = readDetail(tx, kind, id, prices)
		return err
	})
	return d, err
}

func readDetail(tx core.Tx, kind Kind, id string, prices core.Prices) (*Detail, error) {
	d := &Detail{Kind: kind, ID: id}
	var v any
	entity := ""
	switch kind {
	case KindTask:
		t, err := tx.GetTask(id)
		if err != nil {
			return nil, err
		}
		v, entity = t, core.EntityTask
	case KindRun:
		r, err := tx.GetRun(id)
		if err != nil {
			return nil, err
		}
		v, entity = r, core.EntityRun
	case KindApproval:
		a, err := tx.GetApproval(id)
		if err != nil {
			return nil, err
		}
		v, entity = a, core.EntityApproval
	case KindJob:
		j, err := tx.GetJob(id)
		if err != nil {
			return nil, err
		}
		v, entity, d.Job = j, core.EntityJob, j
	case KindAlert:
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, core.Invalidf("notification id %q", id)
		}
		ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: n - 1, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(ns) == 0 || ns[0].ID != n {
			return nil, core.NotFoundf("no notification with id %d", n)
		}
		v = &ns[0]
		// A notification has no journal of its own: show its subject's.
		entity, id = SubjectEntity(ns[0].Kind), ns[0].SubjectID
	}
	d.Fields = Fields(v)
	if f, ok, err := agentField(tx, v); err != nil {
		return nil, err
	} else if ok {
		d.Fields = insertAfterSession(d.Fields, f)
	}
	fs, _, err := usageFields(tx, v, prices)
	if err != nil {
		return nil, err
	}
	d.Fields = append(d.Fields, fs...)
	if entity != "" && id != "" {
		evs, err := tx.Events(entity, id)
		if err != nil {
			return nil, err
		}
		d.Events = evs
	}
	return d, nil
}

// insertAfterSession puts f just after the entity's session field (a
// task's owner_session, a run's requester_session, an approval's
// session), or last.
func insertAfterSession(fields []Field, f Field) []Field {
	for i, x := range fields {
		if x.Name == "owner_session" || x.Name == "requester_session" || x.Name == "session" {
			return slices.Insert(fields, i+1, f)
		}
	}
	return append(fields, f)
}
