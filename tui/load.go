package tui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// batch is the Sink of one load: it turns registry rows into the panes'
// compact, sanitised rows as they stream in (in the Cmd, off the UI
// goroutine).
type batch struct {
	tasks     []taskRow
	runs      []runRow
	approvals []approvalRow
	jobs      []jobRow
	alerts    []alertRow
	gone      [feed.NumKinds][]string
	touched   map[Target]bool // (kind, id) of every row sent, for the detail view
}

func newBatch() *batch { return &batch{touched: map[Target]bool{}} }

func (b *batch) touch(k feed.Kind, id string) {
	if len(b.touched) < 10_000 {
		b.touched[Target{Kind: k, ID: id}] = true
	}
}

func (b *batch) Task(t *core.Task) {
	b.tasks = append(b.tasks, taskRowOf(t))
	b.touch(feed.KindTask, t.ID)
}

func (b *batch) Run(r *core.Run) {
	b.runs = append(b.runs, runRowOf(r))
	b.touch(feed.KindRun, r.RunID)
}

func (b *batch) Approval(a *core.Approval) {
	b.approvals = append(b.approvals, approvalRowOf(a))
	b.touch(feed.KindApproval, a.ID)
}

func (b *batch) Job(j *core.Job) {
	b.jobs = append(b.jobs, jobRowOf(j))
	b.touch(feed.KindJob, j.ID)
}

func (b *batch) Alert(n *core.Notification) {
	b.alerts = append(b.alerts, alertRowOf(n))
	b.touch(feed.KindAlert, alertRowOf(n).idStr)
}

// Changed hears of a changed row (feed.ChangeSink): only the detail view
// needs its id (the pane rereads its window).
func (b *batch) Changed(k feed.Kind, id string) { b.touch(k, id) }

func (b *batch) Gone(k feed.Kind, id string) {
	b.gone[k] = append(b.gone[k], id)
	b.touch(k, id)
}

// loadedMsg is the result of one poll: nothing changed (same), an error, or
// what changed (every pane reads windows: a load brings no rows, only the
// ids that changed, for the detail view, and the attention bell's news).
type loadedMsg struct {
	same    bool
	err     error
	version int64
	res     feed.LoadResult
	b       *batch
	note    string // the Source's ChangeNote
}

// loadCmd polls data_version and, when it changed (or full), loads.
func loadCmd(ctx context.Context, src feed.Source, req feed.LoadRequest, version int64, known bool) tea.Cmd {
	return func() tea.Msg {
		v, err := src.DataVersion(ctx)
		if err != nil {
			return loadedMsg{err: err}
		}
		note := ""
		if n, ok := src.(feed.ChangeNoter); ok {
			note = n.ChangeNote()
		}
		if !req.Full && known && v == version {
			return loadedMsg{same: true, version: v, note: note}
		}
		b := newBatch()
		res, err := src.Load(ctx, req, b)
		if err != nil {
			return loadedMsg{err: err}
		}
		return loadedMsg{version: v, res: res, b: b, note: note}
	}
}

// isBusy reports a locked or slow database (shown as "database busy,
// retrying…", never a frozen screen).
func isBusy(err error) bool {
	return errors.Is(err, core.ErrBusy) || errors.Is(err, context.DeadlineExceeded)
}

// onLoaded takes a load's result: a failed read is shown and retried, an
// unchanged version changes nothing, and a change rereads every pane's
// window; then what depends on it follows (header counts, the bell, an open
// detail or log view).
func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	m.loading = false
	if !m.loadSucceeded(msg) {
		return nil
	}
	if msg.same {
		if m.forceFull {
			return m.startLoad(true)
		}
		return nil
	}
	m.version = msg.version
	if msg.res.Spent != nil {
		m.spent = *msg.res.Spent
	}
	var ring tea.Cmd // the attention bell (attention.go)
	var cmds []tea.Cmd
	if msg.res.Full {
		ring, cmds = m.onFullLoad(msg)
	} else {
		ring, cmds = m.onDelta(msg)
	}
	m.eventID = msg.res.EventID
	m.alertID = max(m.alertID, msg.res.AlertID)
	if h := m.headerRead(); h != nil {
		cmds = append(cmds, h)
	}
	cmds = append(cmds, ring)
	if m.forceFull {
		cmds = append(cmds, m.startLoad(true))
	}
	if d := m.detail; d != nil && !msg.res.Full && msg.b.touched[Target{Kind: d.target.Kind, ID: d.target.ID}] {
		cmds = append(cmds, detailCmd(m.bg, m.src, d.target))
	}
	cmds = append(cmds, m.jobEnded())
	return tea.Batch(cmds...)
}

// loadSucceeded notes how the source learns of changes and whether the
// registry server is reachable, and reports whether msg carries a result. A
// failed read shows on the status line (a busy database as a warning that
// stays until a read succeeds); a successful one clears that warning.
func (m *Model) loadSucceeded(msg loadedMsg) bool {
	m.offline = msg.err != nil && errors.Is(msg.err, core.ErrUnavailable)
	if msg.err != nil {
		if isBusy(msg.err) {
			m.busy = true
			m.setStatus("database busy, retrying…", lvlWarn)
		} else {
			m.setStatus("reading the registry failed (retrying): "+oneLine(msg.err.Error()), lvlErr)
		}
		return false
	}
	m.changes = msg.note
	if m.busy {
		m.busy = false
		if m.status.lvl >= lvlWarn {
			m.setStatus("", lvlInfo)
		}
	}
	return true
}

// onFullLoad takes a full load (the first, or a burst of changes past
// MaxEvents, or rows pruned elsewhere): each pane reads its window and
// counts again. A reload after the first rings for what it brings
// (reloadRing). It returns the bell and the reads to start.
func (m *Model) onFullLoad(msg loadedMsg) (ring tea.Cmd, cmds []tea.Cmd) {
	if m.loaded {
		ring = m.reloadRing(msg.res)
	}
	var reads, counts [feed.NumKinds]tea.Cmd
	reads[feed.KindTask], counts[feed.KindTask] = m.tasks.reload()
	reads[feed.KindRun], counts[feed.KindRun] = m.runs.reload()
	reads[feed.KindApproval], counts[feed.KindApproval] = m.approvals.reload()
	reads[feed.KindJob], counts[feed.KindJob] = m.jobs.reload()
	reads[feed.KindAlert], counts[feed.KindAlert] = m.alerts.reload()
	if !m.loaded {
		// The screen's rows first, alone: on a registry whose pages are
		// not in memory every other read (the other panes, the counts,
		// the header) competes for the disk. 10,000,000 tasks, cold:
		// 564 ms to the first screen with all at once, 12 ms alone.
		cmds = append(cmds, reads[m.active])
		for k := range feed.NumKinds {
			if k != m.active {
				m.afterFirst = append(m.afterFirst, reads[k])
			}
			m.afterFirst = append(m.afterFirst, counts[k])
		}
	} else {
		cmds = append(cmds, reads[:]...)
		cmds = append(cmds, counts[:]...)
	}
	m.loaded = true
	return ring, cmds
}

// reloadRing is the bell for a reload after the first: for the news the
// source counted against what it held before (LoadResult.FullNews, as a
// delta's), else for the budgets crossed since the last load and, at the
// next header read, for what the header's counts gained (m.news;
// headerNewsRing).
func (m *Model) reloadRing(res feed.LoadResult) tea.Cmd {
	if res.FullNews {
		return m.noticeNew(res.NewPending, res.NewFailed, res.NewBudgets)
	}
	if m.headerKnown {
		m.news = &headerNews{base: m.counts, at: m.ctx.now()}
	}
	return m.noticeNew(0, 0, res.NewBudgets)
}

// onDelta takes a delta (the journal since the last load): every pane
// rereads its window, touched or not (rows pruned by another process leave
// no journal: docs/contract.md "Retention"; a window read costs one
// indexed range of a few pages, or a slice of the rows held in memory),
// and the panes whose rows changed recount. It rings for new pending
// approvals, failures and budget alerts. It returns the bell and the reads
// to start.
func (m *Model) onDelta(msg loadedMsg) (ring tea.Cmd, cmds []tea.Cmd) {
	res := msg.res
	ring = m.noticeNew(res.NewPending, res.NewFailed, res.NewBudgets)
	cmds = append(cmds, m.tasks.refresh(), m.runs.refresh(), m.approvals.refresh(), m.jobs.refresh(), m.alerts.refresh())
	cmds = append(cmds, m.recounts(m.ctx.now())...)
	return ring, cmds
}

// relayoutColumns shows or hides the columns that depend on the rows in the
// windows: the Jobs pane's HOST (jobs from more than one host) and the Tasks
// pane's delivery column.
func (m *Model) relayoutColumns() {
	if mh := multiHost(m.jobs.table); mh != m.ctx.multiHost {
		m.ctx.multiHost = mh
		m.jobs.layout()
	}
	if d := delivers(m.tasks.table); d != m.ctx.delivers {
		m.ctx.delivers = d
		m.tasks.layout()
	}
}

// headerRead reads the header's counts from the source after a load
// (indexed counts in the store, or the rows feed.MemoryWindow holds), or
// holds the read back with the other reads until the first window arrives.
// It returns nil when nothing is to read now.
func (m *Model) headerRead() tea.Cmd {
	h := headerCmd(m.bg, m.src, m.ctx.now())
	if m.afterFirst != nil {
		m.afterFirst = append(m.afterFirst, h)
		return nil
	}
	return h
}

// onWindow routes a window to its pane. The first one after the first load
// (the active pane's, read alone) releases the reads held back for it.
func (m *Model) onWindow(msg windowMsg) tea.Cmd {
	var first tea.Cmd
	if m.afterFirst != nil {
		first = tea.Batch(m.afterFirst...)
		m.afterFirst = nil
	}
	var cmd tea.Cmd
	var err error
	switch msg.kind {
	case feed.KindTask:
		cmd, err = m.tasks.onWindow(msg.b.tasks, msg)
	case feed.KindRun:
		cmd, err = m.runs.onWindow(msg.b.runs, msg)
	case feed.KindApproval:
		cmd, err = m.approvals.onWindow(msg.b.approvals, msg)
	case feed.KindJob:
		cmd, err = m.jobs.onWindow(msg.b.jobs, msg)
	case feed.KindAlert:
		cmd, err = m.alerts.onWindow(msg.b.alerts, msg)
	}
	if err != nil {
		m.readFailed(err)
	}
	m.relayoutColumns()
	return tea.Batch(first, cmd, m.jobEnded())
}

// onCount routes counts to their pane.
func (m *Model) onCount(msg countMsg) {
	var err error
	switch msg.kind {
	case feed.KindTask:
		err = m.tasks.onCount(msg)
	case feed.KindRun:
		err = m.runs.onCount(msg)
	case feed.KindApproval:
		err = m.approvals.onCount(msg)
	case feed.KindJob:
		err = m.jobs.onCount(msg)
	case feed.KindAlert:
		err = m.alerts.onCount(msg)
	}
	if err != nil {
		m.readFailed(err)
	}
}

// recounts starts the counts of the panes whose rows changed, each
// after its back-off.
func (m *Model) recounts(now core.Timestamp) []tea.Cmd {
	var cmds []tea.Cmd
	if m.tasks.countDue(now) {
		cmds = append(cmds, m.tasks.recount(false))
	}
	if m.runs.countDue(now) {
		cmds = append(cmds, m.runs.recount(false))
	}
	if m.approvals.countDue(now) {
		cmds = append(cmds, m.approvals.recount(false))
	}
	if m.jobs.countDue(now) {
		cmds = append(cmds, m.jobs.recount(false))
	}
	if m.alerts.countDue(now) {
		cmds = append(cmds, m.alerts.recount(false))
	}
	return cmds
}

// setHeader installs the header counts read from the store.
func (m *Model) setHeader(c core.HeaderCounts, at core.Timestamp) {
	m.counts = headerCounts{approvals: int(c.PendingApprovals), tasks: int(c.RunningTasks), runs: int(c.RunningRuns),
		jobs: int(c.ActiveJobs), failed: int(c.Failed), lost: int(c.Lost), unread: int(c.Unread)}
	m.countedAt = at
	m.headerKnown = true
}

// readFailed shows a failed read (a busy database is retried quietly).
func (m *Model) readFailed(err error) {
	if isBusy(err) {
		m.setStatus("database busy, retrying…", lvlWarn)
		return
	}
	m.setStatus("reading the registry failed (retrying): "+oneLine(err.Error()), lvlErr)
}

// multiHost reports whether the jobs of the Jobs window ran on more than one
// host (README "Many hosts: PostgreSQL"): the Jobs pane then shows its HOST
// column. Jobs recorded before hosts ("") count as no host.
func multiHost(t table[jobRow]) bool {
	first := ""
	for i := range t.rows {
		if h := t.rows[i].host; h != "" {
			if first == "" {
				first = h
			} else if h != first {
				return true
			}
		}
	}
	return false
}
