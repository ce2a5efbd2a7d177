package tui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// Source is where the console reads the registry. Every method is called
// from a tea.Cmd, never from Update or View. NewStoreSource reads a
// core.Store; tests use a fixed in-memory source.
type Source interface {
	// Path names the registry (shown in the header).
	Path() string
	// DataVersion changes whenever another connection commits (SPEC §9:
	// PRAGMA data_version).
	DataVersion(ctx context.Context) (int64, error)
	// Load sends rows to sink: every row when req.Full (or when the change
	// since req.AfterEventID is too big to replay), otherwise only the rows
	// whose journal changed since then plus notifications after
	// req.AfterAlertID.
	Load(ctx context.Context, req LoadRequest, sink Sink) (LoadResult, error)
	// Detail reads one entity with every field and its event journal.
	Detail(ctx context.Context, kind Kind, id string) (*Detail, error)
}

// LoadRequest says what to load.
type LoadRequest struct {
	Full         bool
	AfterEventID int64 // journal cursor of the last load
	AfterAlertID int64 // newest notification id already loaded
	MaxEvents    int   // more journal rows than this since the cursor: load everything
	// WindowOver, when positive and the source reads windows (WindowSource),
	// makes a full load send no rows of a table holding more rows than this:
	// its pane reads windows instead (LoadResult.Windowed). Negative: every
	// table; 0: none.
	WindowOver int
	// Windowed are the kinds whose panes read windows: a delta load sends
	// none of their rows, only LoadResult.Touched.
	Windowed [numKinds]bool
	// Now is the console's clock: LoadResult.Spent sums the day before it.
	Now core.Timestamp
}

// LoadResult describes what a Load sent.
type LoadResult struct {
	Full        bool    // every row was sent (replace, not merge)
	EventID     int64   // the journal cursor for the next load
	Undelivered []int64 // delta loads: ids of every undelivered notification now
	// Counts are the table sizes in the same snapshot (delta loads; nil
	// from a Source that does not count): the console reloads everything
	// when what it holds differs (rows pruned by another process leave no
	// journal).
	Counts *core.TableCounts
	// Windowed (full loads) are the kinds whose rows were not sent: their
	// panes read windows (WindowSource.Window).
	Windowed [numKinds]bool
	// Touched (delta loads) are the windowed kinds whose rows changed.
	Touched [numKinds]bool
	// NewPending and NewFailed (delta loads) count, from the journal, the
	// approvals of a windowed pane that became pending and its tasks that
	// became failed, timed out or lost: the attention bell's news, whose
	// rows a windowed pane does not read.
	NewPending, NewFailed int
	// Spent is what every agent spent in the 24 hours before
	// LoadRequest.Now (sessions and tracked tasks, each count at its
	// time; the header's "spent 24h"); nil from a Source that does not
	// read usage.
	Spent *core.UsageSummary
}

// WindowSource is a Source that also reads windows of a table's rows in a
// pane's sort order and filter (SPEC §14: keyset pagination, filter and sort
// in the store, never whole tables). The console uses it for tables over
// LoadRequest.WindowOver rows; a Source without it is loaded whole. Like
// every Source method, these run in tea.Cmds.
type WindowSource interface {
	Source
	// Window sends one window of req.Kind's rows to sink, in window order.
	Window(ctx context.Context, req WindowRequest, sink Sink) (WindowResult, error)
	// Header returns the header's counts; failures and lost since since.
	Header(ctx context.Context, since core.Timestamp) (core.HeaderCounts, error)
}

// WindowRequest asks for one window (see core.WindowQuery for the anchor's
// meaning) and, with Count, for the row counts.
type WindowRequest struct {
	Kind   Kind
	Sort   string // the pane's sort key name
	Query  string // the / filter, "" = none
	Anchor string // id of the row the window is placed at, "" = top (or End)
	// AnchorKey places the window instead of Anchor: a position an earlier
	// window gave (WindowResult.Page.FirstKey; core.WindowQuery.AnchorKey).
	AnchorKey     string
	Before, After int
	End           bool
	Count         bool  // also count the rows, and those passing the filter
	CountLimit    int64 // stop counting filtered rows here (0 = 10,000)
	// MatchedOnly (with Count) counts only the rows passing the filter:
	// a new filter leaves the table's count as it was, and counting a
	// large table again on every keystroke would compete with the
	// keystroke's own reads. Total is then 0.
	MatchedOnly bool
}

// WindowResult describes a window sent by Window.
type WindowResult struct {
	Page    core.WindowPage
	Counted bool  // Total and Matched are set
	Total   int64 // rows in the table
	Matched int64 // rows passing the filter (Total without one)
	Capped  bool  // Matched stopped at the count limit: there are more
}

// Sink receives loaded rows. The pointers are only valid during the call:
// the sink copies what it keeps (the console keeps compact sanitised rows).
type Sink interface {
	Task(*core.Task)
	Run(*core.Run)
	Approval(*core.Approval)
	Job(*core.Job)
	Alert(*core.Notification)
	// Gone reports an entity whose journal changed but which no longer
	// exists (pruned).
	Gone(kind Kind, id string)
}

// Field is one field of an entity in the detail view. Values are raw: the
// console sanitises them when it builds the view.
type Field struct {
	Name  string
	Value string
	TS    core.Timestamp // set for time fields (the view adds the relative age)
}

// Detail is one entity with every field and its event journal (SPEC §9).
type Detail struct {
	Kind   Kind
	ID     string
	Fields []Field
	Events []core.Event
	Job    *core.Job // set for jobs (the log view needs its status and log path)
}

// ChangeNoter is implemented by a Source that says in the header how it
// learns of other processes' writes: "live" (PostgreSQL LISTEN), "polling
// 1s" (PostgreSQL through a pooler without --listen-db), "" to say nothing
// (SQLite, fixtures). Called from a tea.Cmd, after DataVersion.
type ChangeNoter interface {
	ChangeNote() string
}

// DefaultMaxEvents is the largest journal gap replayed row by row.
const DefaultMaxEvents = 5000

// storeSource reads a core.Store.
type storeSource struct {
	st core.Store
	// prices overrides the prices the SPENT column and the detail views'
	// usage are costed at, over core.DefaultPrices and the prices stored
	// with the registry's budgets.
	prices core.Prices
}

// HintSource is a Source that can say when the registry may have changed
// (store.DB.ChangeHints: a file system or NOTIFY hint, coalesced in a
// channel of capacity 1; ok false when it cannot). The console then reads
// DataVersion at each hint, and only every HintSafetyNet besides, instead of
// every Options.PollInterval: an idle console does not wake to poll.
type HintSource interface {
	ChangeHints() (hints <-chan struct{}, cancel func(), ok bool)
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

// kindEntity is the journal entity of a pane's kind.
func kindEntity(k Kind) string {
	return [...]string{core.EntityTask, core.EntityRun, core.EntityApproval, core.EntityJob, core.EntityNotification}[k]
}

// Window implements WindowSource (core.Tx's window queries).
func (s *storeSource) Window(ctx context.Context, req WindowRequest, sink Sink) (WindowResult, error) {
	var res WindowResult
	err := s.st.View(ctx, func(tx core.Tx) error {
		wt := tx
		q := core.WindowQuery{Entity: kindEntity(req.Kind), Sort: req.Sort, Filter: req.Query, Anchor: req.Anchor,
			AnchorKey: req.AnchorKey, Before: req.Before, After: req.After, End: req.End}
		var err error
		if req.Before > 0 || req.After > 0 {
			prices, err := s.pricesIn(tx)
			if err != nil {
				return err
			}
			fill := newSpentFill(tx, sink, prices)
			if res.Page, err = wt.Window(q, fill); err != nil {
				return err
			}
			if fill.err != nil {
				return fill.err
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
		res.Spent, err = spentSince(tx, req.Now-day, prices)
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
func windowedKinds(tx core.Tx, over int) ([numKinds]bool, error) {
	var out [numKinds]bool
	if over == 0 {
		return out, nil
	}
	for k := Kind(0); k < numKinds; k++ {
		if over < 0 {
			out[k] = true
			continue
		}
		// No filter: every row counts. (A filter of "\x00all" counted every
		// row on SQLite only because its LIKE pattern ends at the NUL;
		// PostgreSQL refuses NUL in text.)
		_, capped, err := tx.CountWindow(core.WindowQuery{Entity: kindEntity(k)}, int64(over))
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
		if err := tx.EachTask(func(t *core.Task) error { sink.Task(t); return nil }); err != nil {
			return res, err
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
	if !win[KindAlert] {
		ns, err := tx.ListNotifications(core.NotificationFilter{})
		if err != nil {
			return res, err
		}
		for i := range ns {
			sink.Alert(&ns[i])
		}
	}
	return res, nil
}

// journalNews counts, over the applied journal rows evs (oldest first), the
// approvals of a windowed Approvals pane that end pending having not been
// pending before, and the tasks of a windowed Tasks pane that end failed,
// timed out or lost having been otherwise: what a delta of rows would show
// the attention bell (noticeNew) for panes that hold their tables.
func journalNews(evs []core.Event, windowed [numKinds]bool) (pending, failed int) {
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
	bad := func(s string) bool { return failedOrLost(core.TaskStatus(s)) }
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

// changeSink is a Sink that also hears of changed rows of windowed panes
// (ids only: the pane rereads its window).
type changeSink interface {
	Changed(kind Kind, id string)
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
			if cs, ok := sink.(changeSink); ok {
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
		return res, countRows(tx, req, &res)
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: req.AfterAlertID})
	if err != nil {
		return res, err
	}
	for i := range ns {
		sink.Alert(&ns[i])
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
	var n [numKinds]int64
	for k := Kind(0); k < numKinds; k++ {
		if req.Windowed[k] {
			continue
		}
		var err error
		if n[k], _, err = tx.CountWindow(core.WindowQuery{Entity: kindEntity(k)}, -1); err != nil {
			return err
		}
	}
	res.Counts = &core.TableCounts{Tasks: n[KindTask], Runs: n[KindRun], Approvals: n[KindApproval], Jobs: n[KindJob], Notifications: n[KindAlert]}
	return nil
}

func kindOfEntity(entity string) Kind {
	switch entity {
	case core.EntityRun:
		return KindRun
	case core.EntityApproval:
		return KindApproval
	case core.EntityJob:
		return KindJob
	case core.EntityNotification:
		return KindAlert
	}
	return KindTask
}

// subjectEntity is the journal entity a notification kind is about.
func subjectEntity(k core.NotificationKind) string {
	switch k {
	case core.NotifyJobFinished, core.NotifyJobLost:
		return core.EntityJob
	case core.NotifyTaskFailed, core.NotifyTaskSilent:
		return core.EntityTask
	case core.NotifyRunTimedOut:
		return core.EntityRun
	case core.NotifyApprovalExpired, core.NotifyRuntimeNotice:
		return core.EntityApproval // a runtime notice's subject, when set, is the approval it asks about
	}
	return ""
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
		entity, id = subjectEntity(ns[0].Kind), ns[0].SubjectID
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

var (
	tsType      = reflect.TypeOf(core.Timestamp(0))
	rawJSONType = reflect.TypeOf(json.RawMessage(nil))
)

// Fields lists every JSON field of an entity struct (pointer), in
// declaration order, with its value as text: timestamps carry TS, absent
// values print as "null" like the CLI's JSON.
func Fields(v any) []Field {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	rt := rv.Type()
	out := make([]Field, 0, rt.NumField())
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, fieldOf(name, rv.Field(i)))
	}
	return out
}

func fieldOf(name string, fv reflect.Value) Field {
	f := Field{Name: name}
	switch {
	case fv.Type() == tsType:
		f.TS = core.Timestamp(fv.Int())
		f.Value = f.TS.String()
		if f.TS == 0 {
			f.Value = "null"
		}
	case fv.Kind() == reflect.Pointer:
		if fv.IsNil() {
			f.Value = "null"
		} else {
			f.Value = fmt.Sprint(fv.Elem().Interface())
		}
	case fv.Type() == rawJSONType:
		// JSON kept as sent (an approval's suggestions): its text, not its
		// bytes' numbers.
		f.Value = string(fv.Bytes())
		if f.Value == "" {
			f.Value = "null"
		}
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		f.Value = core.CommandLine(fv.Interface().([]string))
	default:
		f.Value = fmt.Sprint(fv.Interface())
	}
	return f
}
