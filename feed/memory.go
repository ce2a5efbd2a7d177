package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/view"
)

// MemoryWindow makes a Source that loads whole tables (a registry that is
// not clawpit's, a test's fixed rows) a WindowSource: it keeps a copy of
// every row its Loads bring and answers windows, counts and the header's
// numbers from that copy, with the sorts and searchable fields of package
// view (view.Memory), as the store answers them in SQL. Path, DataVersion
// and Detail are the wrapped Source's. Safe for concurrent use (the
// console reads windows while it loads).
type MemoryWindow struct {
	Source

	mu      sync.Mutex
	tasks   *memTable[core.Task]
	runs    *memTable[core.Run]
	apprs   *memTable[core.Approval]
	jobs    *memTable[core.Job]
	alerts  *memTable[core.Notification]
	loaded  bool  // a full load has filled the copy
	alertID int64 // the newest notification id kept (the next AfterAlertID)
}

// NewMemoryWindow wraps src (a Source that loads whole tables).
func NewMemoryWindow(src Source) *MemoryWindow {
	return &MemoryWindow{
		Source: src,
		tasks:  newMemTable(core.EntityTask, view.TaskValues(), func(t *core.Task) string { return t.ID }),
		runs:   newMemTable(core.EntityRun, view.RunValues(), func(r *core.Run) string { return r.RunID }),
		apprs:  newMemTable(core.EntityApproval, view.ApprovalValues(), func(a *core.Approval) string { return a.ID }),
		jobs:   newMemTable(core.EntityJob, view.JobValues(), func(j *core.Job) string { return j.ID }),
		alerts: newMemTable(core.EntityNotification, view.AlertValues(), func(n *core.Notification) string { return strconv.FormatInt(n.ID, 10) }),
	}
}

// Load loads from the wrapped Source, keeps a copy of the rows and passes
// them on to sink in the order they came, except a windowed kind's: a full
// load withholds the rows of a table holding more than req.WindowOver rows
// (every table when negative; LoadResult.Windowed), a delta load those of
// req.Windowed's kinds (LoadResult.Touched, ChangeSink.Changed). For the
// windowed kinds it counts the attention bell's news against the rows it
// held (NewPending, NewFailed, NewBudgets; after a full load too, with
// FullNews). A delta marks the notifications no longer undelivered
// (LoadResult.Undelivered) read at req.Now; one whose table sizes
// (LoadResult.Counts) differ from the copy's (rows pruned without a
// journal) is followed at once by a full load, whose result it returns.
// Errors: the wrapped Load's.
func (m *MemoryWindow) Load(ctx context.Context, req LoadRequest, sink Sink) (LoadResult, error) {
	rec := &recordSink{}
	// The wrapped Source sends every row (it may window on its own): the
	// copy must hold them all.
	whole := req
	whole.WindowOver, whole.Windowed = 0, [NumKinds]bool{}
	m.mu.Lock()
	// The notifications after those the copy holds: the console's cursor
	// moves only with the rows it was sent.
	whole.AfterAlertID = max(whole.AfterAlertID, m.alertID)
	m.mu.Unlock()
	res, err := m.Source.Load(ctx, whole, rec)
	if err != nil {
		return res, err
	}
	m.mu.Lock()
	windowed := req.Windowed
	if res.Full {
		windowed = m.windowedOf(rec, req.WindowOver)
		res.Windowed = windowed
		res.FullNews = m.loaded
		if m.loaded {
			for _, e := range rec.events {
				if windowed[e.kind] {
					m.countNews(e, &res)
				}
			}
		}
		m.reset()
	}
	changes, _ := sink.(ChangeSink)
	for _, e := range rec.events {
		if !res.Full && windowed[e.kind] {
			m.countNews(e, &res)
		}
		m.keep(e)
		switch {
		case !windowed[e.kind]:
			e.send(sink)
		case !res.Full:
			res.Touched[e.kind] = true
			if changes != nil {
				changes.Changed(e.kind, e.id)
			}
		}
	}
	if !res.Full && windowed[KindAlert] && m.markRead(res.Undelivered, req.Now, changes) {
		res.Touched[KindAlert] = true
	}
	drifted := !res.Full && res.Counts != nil && !m.holds(*res.Counts)
	m.loaded = true
	res.AlertID = m.alertID
	m.mu.Unlock()
	if drifted {
		full := req
		full.Full = true
		return m.Load(ctx, full, sink)
	}
	return res, nil
}

// windowedOf is which kinds a full load withholds (Load).
func (m *MemoryWindow) windowedOf(rec *recordSink, over int) [NumKinds]bool {
	var n [NumKinds]int
	for _, e := range rec.events {
		n[e.kind]++
	}
	var w [NumKinds]bool
	for k := range NumKinds {
		w[k] = over < 0 || (over > 0 && n[k] > over)
	}
	return w
}

func (m *MemoryWindow) reset() {
	m.alertID = 0
	m.tasks.reset()
	m.runs.reset()
	m.apprs.reset()
	m.jobs.reset()
	m.alerts.reset()
}

// markRead marks read (delivered at now) the kept notifications that are
// not in undelivered (every undelivered id; nil: not reported), telling
// changes; it reports whether any was.
func (m *MemoryWindow) markRead(undelivered []int64, now core.Timestamp, changes ChangeSink) bool {
	if undelivered == nil {
		return false
	}
	still := make(map[int64]bool, len(undelivered))
	for _, id := range undelivered {
		still[id] = true
	}
	now = max(now, 1) // a delivery time is never 0 (0 is unread)
	changed := false
	for i := range m.alerts.rows {
		n := &m.alerts.rows[i]
		if n.DeliveredAt == 0 && !still[n.ID] {
			n.DeliveredAt = now
			m.alerts.dirty, changed = true, true
			if changes != nil {
				changes.Changed(KindAlert, strconv.FormatInt(n.ID, 10))
			}
		}
	}
	return changed
}

// holds reports whether the copy holds as many rows as c counts.
func (m *MemoryWindow) holds(c core.TableCounts) bool {
	return int64(len(m.tasks.rows)) == c.Tasks && int64(len(m.runs.rows)) == c.Runs &&
		int64(len(m.apprs.rows)) == c.Approvals && int64(len(m.jobs.rows)) == c.Jobs &&
		int64(len(m.alerts.rows)) == c.Notifications
}

// countNews counts, before e is kept, an approval that became pending, a
// task that became failed, timed out or lost, and a budget_exceeded
// notification not held before (LoadResult.NewPending, NewFailed,
// NewBudgets).
func (m *MemoryWindow) countNews(e loadEvent, res *LoadResult) {
	switch {
	case e.appr != nil && e.appr.Status == core.ApprovalPending:
		if old, ok := m.apprs.get(e.id); !ok || old.Status != core.ApprovalPending {
			res.NewPending++
		}
	case e.task != nil && failedTask(e.task.Status):
		if old, ok := m.tasks.get(e.id); !ok || !failedTask(old.Status) {
			res.NewFailed++
		}
	case e.alert != nil && e.alert.Kind == core.NotifyBudgetExceeded:
		if _, ok := m.alerts.get(e.id); !ok {
			res.NewBudgets++
		}
	}
}

func failedTask(s core.TaskStatus) bool {
	return s == core.TaskFailed || s == core.TaskTimedOut || s == core.TaskLost
}

// keep records e in the copy.
func (m *MemoryWindow) keep(e loadEvent) {
	switch {
	case e.gone:
		switch e.kind {
		case KindTask:
			m.tasks.remove(e.id)
		case KindRun:
			m.runs.remove(e.id)
		case KindApproval:
			m.apprs.remove(e.id)
		case KindJob:
			m.jobs.remove(e.id)
		case KindAlert:
			m.alerts.remove(e.id)
		}
	case e.task != nil:
		m.tasks.put(*e.task)
	case e.run != nil:
		m.runs.put(*e.run)
	case e.appr != nil:
		m.apprs.put(*e.appr)
	case e.job != nil:
		m.jobs.put(*e.job)
	case e.alert != nil:
		m.alerts.put(*e.alert)
		m.alertID = max(m.alertID, e.alert.ID)
	}
}

// Window sends one window of the kept rows of req.Kind (as of the last
// Load) to sink, in window order. Errors: core.ErrInvalid for a kind out
// of range, an unknown sort or a malformed AnchorKey.
func (m *MemoryWindow) Window(ctx context.Context, req WindowRequest, sink Sink) (WindowResult, error) {
	if err := ctx.Err(); err != nil {
		return WindowResult{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := core.WindowQuery{Entity: req.Kind.Entity(), Sort: req.Sort, Filter: req.Query, Anchor: req.Anchor,
		AnchorKey: req.AnchorKey, Before: req.Before, After: req.After, End: req.End}
	switch req.Kind {
	case KindTask:
		return m.tasks.window(q, req, sink.Task)
	case KindRun:
		return m.runs.window(q, req, sink.Run)
	case KindApproval:
		return m.apprs.window(q, req, sink.Approval)
	case KindJob:
		return m.jobs.window(q, req, sink.Job)
	case KindAlert:
		return m.alerts.window(q, req, sink.Alert)
	}
	return WindowResult{}, core.Invalidf("no windows of kind %d", req.Kind)
}

// Header counts the header's numbers in the kept rows, as the store does
// (core.HeaderCounts): failures and losses ended at or after since.
func (m *MemoryWindow) Header(ctx context.Context, since core.Timestamp) (core.HeaderCounts, error) {
	var c core.HeaderCounts
	if err := ctx.Err(); err != nil {
		return c, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.apprs.rows {
		c.PendingApprovals += b2i(a.Status == core.ApprovalPending)
	}
	for _, t := range m.tasks.rows {
		c.RunningTasks += b2i(t.Status == core.TaskRunning)
		c.Failed += b2i((t.Status == core.TaskFailed || t.Status == core.TaskTimedOut) && t.EndedAt != 0 && t.EndedAt >= since)
		c.Lost += b2i(t.Status == core.TaskLost && t.EndedAt != 0 && t.EndedAt >= since)
	}
	for _, r := range m.runs.rows {
		c.RunningRuns += b2i(r.EndedAt == 0)
	}
	for _, j := range m.jobs.rows {
		c.ActiveJobs += b2i(j.Status.Active())
		c.Failed += b2i((j.Status == core.JobFailed || j.Status == core.JobTimedOut) && j.CompletedAt != 0 && j.CompletedAt >= since)
		c.Lost += b2i(j.Status == core.JobLost && core.Coalesce(j.CompletedAt, j.CreatedAt) >= since)
	}
	for _, n := range m.alerts.rows {
		c.Unread += b2i(n.DeliveredAt == 0)
	}
	return c, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// memTable is one kind's kept rows, by id, and its view.Memory (rebuilt
// when a window is read after a change).
type memTable[R any] struct {
	mem   *view.Memory[R]
	id    func(*R) string
	rows  []R
	at    map[string]int // id → index in rows
	dirty bool
	// unique is each row's id's shortest prefix no other id starts with
	// (WindowResult.Unique), rebuilt with mem.
	unique map[string]int
}

func newMemTable[R any](entity string, v view.Values[R], id func(*R) string) *memTable[R] {
	mem, err := view.NewMemory(entity, v)
	if err != nil {
		// The Values are this package's own: a mismatch with the view is a
		// programming error that every test reaches.
		panic(fmt.Sprintf("feed: %v", err))
	}
	return &memTable[R]{mem: mem, id: id, at: map[string]int{}}
}

func (t *memTable[R]) reset() {
	t.rows, t.at, t.dirty = t.rows[:0], map[string]int{}, true
}

func (t *memTable[R]) get(id string) (R, bool) {
	i, ok := t.at[id]
	if !ok {
		var zero R
		return zero, false
	}
	return t.rows[i], true
}

func (t *memTable[R]) put(r R) {
	id := t.id(&r)
	if i, ok := t.at[id]; ok {
		t.rows[i] = r
	} else {
		t.at[id] = len(t.rows)
		t.rows = append(t.rows, r)
	}
	t.dirty = true
}

func (t *memTable[R]) remove(id string) {
	i, ok := t.at[id]
	if !ok {
		return
	}
	last := len(t.rows) - 1
	if i != last {
		t.rows[i] = t.rows[last]
		t.at[t.id(&t.rows[i])] = i
	}
	t.rows = t.rows[:last]
	delete(t.at, id)
	t.dirty = true
}

func (t *memTable[R]) window(q core.WindowQuery, req WindowRequest, send func(*R)) (WindowResult, error) {
	if t.dirty {
		// view.Memory keeps the slice: every change to rows marks the
		// table dirty, so it is set again before its next read.
		t.mem.Set(t.rows)
		t.unique = uniquePrefixes(t.at)
		t.dirty = false
	}
	var res WindowResult
	var err error
	res.Unique = []int{}
	if res.Page, err = t.mem.Window(q, func(r *R) {
		res.Unique = append(res.Unique, t.unique[t.id(r)])
		send(r)
	}); err != nil {
		return WindowResult{}, err
	}
	if req.Count {
		res.Counted = true
		res.Matched, res.Capped = t.mem.Count(req.Query, req.CountLimit)
		if !req.MatchedOnly {
			res.Total = int64(t.mem.Len())
		}
	}
	return res, nil
}

// uniquePrefixes maps each id of ids to the length of its shortest prefix
// that no other id starts with (uniqueLen).
func uniquePrefixes(ids map[string]int) map[string]int {
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	out := make(map[string]int, len(sorted))
	for i, id := range sorted {
		var prev, next string
		if i > 0 {
			prev = sorted[i-1]
		}
		if i+1 < len(sorted) {
			next = sorted[i+1]
		}
		out[id] = uniqueLen(id, prev, next)
	}
	return out
}

// uniqueLen is the length of id's shortest prefix that neither of its
// neighbours in sorted order (prev, next; "" at an end) starts with: one
// past its longest common prefix with either (they share the most with
// it), at most its length.
func uniqueLen(id, prev, next string) int {
	n := max(1, commonPrefix(id, prev)+1, commonPrefix(id, next)+1)
	return min(n, len(id))
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// recordSink keeps a load's rows (copies) and gone ids in order.
type recordSink struct{ events []loadEvent }

// loadEvent is one row, or one gone id, of a load.
type loadEvent struct {
	kind  Kind
	id    string
	gone  bool
	task  *core.Task
	run   *core.Run
	appr  *core.Approval
	job   *core.Job
	alert *core.Notification
}

func (e loadEvent) send(s Sink) {
	switch {
	case e.gone:
		s.Gone(e.kind, e.id)
	case e.task != nil:
		s.Task(e.task)
	case e.run != nil:
		s.Run(e.run)
	case e.appr != nil:
		s.Approval(e.appr)
	case e.job != nil:
		s.Job(e.job)
	case e.alert != nil:
		s.Alert(e.alert)
	}
}

func (r *recordSink) Task(t *core.Task) {
	c := *t
	r.events = append(r.events, loadEvent{kind: KindTask, id: c.ID, task: &c})
}

func (r *recordSink) Run(x *core.Run) {
	c := *x
	r.events = append(r.events, loadEvent{kind: KindRun, id: c.RunID, run: &c})
}

func (r *recordSink) Approval(a *core.Approval) {
	c := *a
	r.events = append(r.events, loadEvent{kind: KindApproval, id: c.ID, appr: &c})
}

func (r *recordSink) Job(j *core.Job) {
	c := *j
	r.events = append(r.events, loadEvent{kind: KindJob, id: c.ID, job: &c})
}

func (r *recordSink) Alert(n *core.Notification) {
	c := *n
	r.events = append(r.events, loadEvent{kind: KindAlert, id: strconv.FormatInt(c.ID, 10), alert: &c})
}

func (r *recordSink) Gone(kind Kind, id string) {
	r.events = append(r.events, loadEvent{kind: kind, id: id, gone: true})
}

// ChangeNote is the wrapped Source's (ChangeNoter); "" when it has none.
func (m *MemoryWindow) ChangeNote() string {
	if n, ok := m.Source.(ChangeNoter); ok {
		return n.ChangeNote()
	}
	return ""
}

// ChangeHints are the wrapped Source's (HintSource); ok false when it has
// none.
func (m *MemoryWindow) ChangeHints() (hints <-chan struct{}, cancel func(), ok bool) {
	if h, ok := m.Source.(HintSource); ok {
		return h.ChangeHints()
	}
	return nil, func() {}, false
}
