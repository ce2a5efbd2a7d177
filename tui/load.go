package tui

import (
	"context"
	"errors"
	"slices"

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
	maxAlert  int64
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
	b.maxAlert = max(b.maxAlert, n.ID)
	b.touch(feed.KindAlert, alertRowOf(n).idStr)
}

// Changed hears of a changed row of a windowed pane (feed.ChangeSink): only the
// detail view needs its id.
func (b *batch) Changed(k feed.Kind, id string) { b.touch(k, id) }

func (b *batch) Gone(k feed.Kind, id string) {
	b.gone[k] = append(b.gone[k], id)
	b.touch(k, id)
}

// loadedMsg is the result of one poll: nothing changed (same), an error, or
// rows (full tables built off the UI goroutine, or deltas).
type loadedMsg struct {
	same    bool
	err     error
	version int64
	res     feed.LoadResult
	b       *batch
	note    string // the Source's ChangeNote

	// Full loads: tables already indexed and sorted.
	tasks     *table[taskRow]
	runs      *table[runRow]
	approvals *table[approvalRow]
	jobs      *table[jobRow]
	alerts    *table[alertRow]
}

// sortKeys are the panes' sort keys when a load starts, so a full load
// sorts in the Cmd.
type sortKeys [feed.NumKinds]int

// loadCmd polls data_version and, when it changed (or full), loads.
func loadCmd(ctx context.Context, src feed.Source, req feed.LoadRequest, version int64, known bool, sorts sortKeys) tea.Cmd {
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
		msg := loadedMsg{version: v, res: res, b: b, note: note}
		if res.Full {
			t := newTable(taskSpec, b.tasks, sorts[feed.KindTask])
			r := newTable(runSpec, b.runs, sorts[feed.KindRun])
			a := newTable(approvalSpec, b.approvals, sorts[feed.KindApproval])
			j := newTable(jobSpec, b.jobs, sorts[feed.KindJob])
			n := newTable(alertSpec, b.alerts, sorts[feed.KindAlert])
			msg.tasks, msg.runs, msg.approvals, msg.jobs, msg.alerts = &t, &r, &a, &j, &n
			b.tasks, b.runs, b.approvals, b.jobs, b.alerts = nil, nil, nil, nil, nil
		}
		return msg
	}
}

// isBusy reports a locked or slow database (shown as "database busy,
// retrying…", never a frozen screen).
func isBusy(err error) bool {
	return errors.Is(err, core.ErrBusy) || errors.Is(err, context.DeadlineExceeded)
}

// markRead turns unread alerts that are no longer undelivered into read
// rows (a delivery elsewhere: `notifications --ack`, a notify command).
func markRead(l *list[alertRow], undelivered []int64, now core.Timestamp) []alertRow {
	if undelivered == nil {
		return nil
	}
	slices.Sort(undelivered)
	var up []alertRow
	for s := range l.rows {
		r := &l.rows[s]
		if l.gone[s] || r.delivered != 0 {
			continue
		}
		if _, found := slices.BinarySearch(undelivered, r.id); !found {
			c := *r
			c.delivered = now
			up = append(up, c)
		}
	}
	return up
}

// onLoaded takes a load's result: a failed read is shown and retried, an
// unchanged version changes nothing, a full load installs whole tables (or
// switches panes to windows) and a delta is merged; then what depends on the
// rows follows (columns shown, header counts, the bell, an open detail or
// log view).
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
	m.relayoutColumns()
	m.eventID = msg.res.EventID
	m.alertID = max(m.alertID, msg.b.maxAlert)
	if h := m.headerRead(msg.res.Full); h != nil {
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

// onFullLoad installs a load of whole tables: each pane takes its table or,
// when the source said its table is too large, switches to windows and
// reads its first window and counts. A reload after the first rings for
// what it brings (reloadRing). It returns the bell and the reads to start.
func (m *Model) onFullLoad(msg loadedMsg) (ring tea.Cmd, cmds []tea.Cmd) {
	w := msg.res.Windowed
	if m.loaded {
		ring = m.reloadRing(msg)
	}
	var reads, counts [feed.NumKinds]tea.Cmd
	reads[feed.KindTask], counts[feed.KindTask] = installOrWindow(m.tasks, msg.tasks, w[feed.KindTask])
	reads[feed.KindRun], counts[feed.KindRun] = installOrWindow(m.runs, msg.runs, w[feed.KindRun])
	reads[feed.KindApproval], counts[feed.KindApproval] = installOrWindow(m.approvals, msg.approvals, w[feed.KindApproval])
	reads[feed.KindJob], counts[feed.KindJob] = installOrWindow(m.jobs, msg.jobs, w[feed.KindJob])
	reads[feed.KindAlert], counts[feed.KindAlert] = installOrWindow(m.alerts, msg.alerts, w[feed.KindAlert])
	if !m.loaded && w[m.active] {
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

// reloadRing is the bell for a reload of whole tables (a burst of changes
// past MaxEvents, rows pruned by another process): it rings for what the
// reload brings, as a delta would, in panes that hold their tables before
// and after. A windowed pane's news are in the journal rows the reload
// skipped: the header's counts, read next, say how many came (m.news).
func (m *Model) reloadRing(msg loadedMsg) tea.Cmd {
	w := msg.res.Windowed
	wa, wt := m.approvals.windowed() || w[feed.KindApproval], m.tasks.windowed() || w[feed.KindTask]
	var aps []approvalRow
	var ts []taskRow
	if !wa {
		aps = msg.approvals.rows
	}
	if !wt {
		ts = msg.tasks.rows
	}
	ring := m.noticeNew(aps, ts, 0, 0)
	if !m.alerts.windowed() && !w[feed.KindAlert] {
		ring = m.noticeBudgets(msg.alerts.rows, ring)
	}
	if m.headerKnown && (wa || wt) {
		m.news = &headerNews{base: m.counts, at: m.ctx.now(), approvals: wa, failures: wt}
	}
	return ring
}

// onDelta merges a delta (the journal since the last load) into the panes
// holding their tables and rereads the windowed panes' windows; it rings for
// new pending approvals, failures and budget alerts. Pane sizes that no
// longer match the tables' (msg.res.Counts: rows changed without a journal
// entry) ask for a full load. It returns the bell and the reads to start.
func (m *Model) onDelta(msg loadedMsg) (ring tea.Cmd, cmds []tea.Cmd) {
	b := msg.b
	ring = m.noticeBudgets(b.alerts, m.noticeNew(b.approvals, b.tasks, msg.res.NewPending, msg.res.NewFailed))
	since, c := m.ctx.now()-day, &m.counts
	t := msg.res.Touched
	cmds = append(cmds, applyOrRefresh(m.tasks, b.tasks, b.gone[feed.KindTask], since, c, t[feed.KindTask]),
		applyOrRefresh(m.runs, b.runs, b.gone[feed.KindRun], since, c, t[feed.KindRun]),
		applyOrRefresh(m.approvals, b.approvals, b.gone[feed.KindApproval], since, c, t[feed.KindApproval]),
		applyOrRefresh(m.jobs, b.jobs, b.gone[feed.KindJob], since, c, t[feed.KindJob]),
		applyOrRefresh(m.alerts, b.alerts, b.gone[feed.KindAlert], since, c, t[feed.KindAlert]))
	if !m.alerts.windowed() {
		applyCounted(m.alerts, markRead(m.alerts, msg.res.Undelivered, m.ctx.now()), nil, since, c)
	}
	cmds = append(cmds, m.recounts(m.ctx.now())...)
	if c := msg.res.Counts; c != nil && !m.holds(*c) {
		m.forceFull = true
	}
	return ring, cmds
}

// relayoutColumns shows or hides the columns that depend on the rows: the
// Jobs pane's HOST (jobs from more than one host) and the Tasks pane's
// delivery column.
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

// headerRead brings the header's counts up to date after a load: with a
// windowed pane they come from the store (indexed counts, not rows the panes
// no longer hold), returned as a read, or held back with the other reads
// until the first window arrives; else a full load counts the panes' rows
// here (a delta already counted what it merged). It returns nil when
// nothing is to read now.
func (m *Model) headerRead(full bool) tea.Cmd {
	if m.anyWindowed() {
		h := headerCmd(m.bg, m.ctx.win, m.ctx.now())
		if m.afterFirst != nil {
			m.afterFirst = append(m.afterFirst, h)
			return nil
		}
		return h
	}
	if full {
		m.countHeader()
	}
	return nil
}

// holds reports whether the panes hold exactly as many rows as the tables
// (windowed panes hold a window: not compared).
func (m *Model) holds(c core.TableCounts) bool {
	ok := func(win bool, live int, n int64) bool { return win || int64(live) == n }
	return ok(m.tasks.windowed(), m.tasks.live, c.Tasks) && ok(m.runs.windowed(), m.runs.live, c.Runs) &&
		ok(m.approvals.windowed(), m.approvals.live, c.Approvals) && ok(m.jobs.windowed(), m.jobs.live, c.Jobs) &&
		ok(m.alerts.windowed(), m.alerts.live, c.Notifications)
}

// windowedKinds are the kinds whose panes read windows.
func (m *Model) windowedKinds() [feed.NumKinds]bool {
	return [feed.NumKinds]bool{m.tasks.windowed(), m.runs.windowed(), m.approvals.windowed(), m.jobs.windowed(), m.alerts.windowed()}
}

func (m *Model) anyWindowed() bool {
	for _, w := range m.windowedKinds() {
		if w {
			return true
		}
	}
	return false
}

// installOrWindow installs a full load's table, or switches the pane to
// windows (its table was too large to load) and reads its first window.
func installOrWindow[R any](l *list[R], t *table[R], windowed bool) (read, count tea.Cmd) {
	if windowed {
		return l.setWindowed()
	}
	l.setWhole()
	l.install(*t)
	return nil, nil
}

// applyOrRefresh merges a delta into a pane holding its table, or rereads a
// windowed pane's window (a change outside the window changes only its
// counts). A windowed pane rereads after every change, touched or not: rows
// pruned by another process leave no journal (docs/contract.md "Retention"), and a window read
// costs one indexed range of a few pages.
func applyOrRefresh[R any](l *list[R], up []R, gone []string, since core.Timestamp, c *headerCounts, touched bool) tea.Cmd {
	if l.windowed() {
		return l.refresh()
	}
	applyCounted(l, up, gone, since, c)
	return nil
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

// recounts starts the counts of windowed panes whose rows changed, each
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

// multiHost reports whether the loaded jobs ran on more than one host (README "Many hosts: PostgreSQL"): the Jobs pane then shows its HOST column. Jobs recorded before hosts
// ("") count as no host.
func multiHost(t table[jobRow]) bool {
	first := ""
	for i := range t.rows {
		if h := t.rows[i].host; h != "" && (i >= len(t.gone) || !t.gone[i]) {
			if first == "" {
				first = h
			} else if h != first {
				return true
			}
		}
	}
	return false
}
