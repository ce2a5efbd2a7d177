package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/themes"
)

// Layout: two header lines and the tabs above the body; the pane's info
// line, the status line and the key hints below it.
const (
	headerRows = 3
	footerRows = 3
	// busyAfter is how long a read may take before the status line says the
	// database is busy.
	busyAfter = time.Second
	// recountEvery refreshes the 24 h header counts between loads.
	recountEvery = 10 * time.Second
)

// level is a status line's severity.
type level uint8

const (
	lvlInfo level = iota
	lvlOK
	lvlWarn
	lvlErr
)

type statusLine struct {
	text string
	lvl  level
	at   core.Timestamp // when it was set (context clock, epoch ms)
}

// Status messages expire so that an old one ("watchdog: 1 timed out") does
// not read as current minutes later; a newer message replaces an older one
// at once. Warnings and errors stay longer than info.
const (
	statusTTLInfo = 8 * time.Second
	statusTTLWarn = 20 * time.Second
)

// expired reports whether the message is past its TTL at now.
func (s statusLine) expired(now core.Timestamp) bool {
	if s.text == "" {
		return false
	}
	ttl := statusTTLInfo
	if s.lvl >= lvlWarn {
		ttl = statusTTLWarn
	}
	return now-s.at >= core.Timestamp(ttl.Milliseconds())
}

// Model is the console's root model. It owns the shared Context, the five
// panes, and at most one of: help, dialog, detail view, log view.
type Model struct {
	ctx  *Context
	opts Options
	src  feed.Source

	tasks     *list[taskRow]
	runs      *list[runRow]
	approvals *list[approvalRow]
	jobs      *list[jobRow]
	alerts    *list[alertRow]
	panes     [feed.NumKinds]pane
	// afterFirst are the reads held back until the first window arrives
	// (onLoaded: the active pane's rows first).
	afterFirst []tea.Cmd
	// headerKnown: the header's counts have been read (until then it shows
	// "…", not zeros).
	headerKnown bool
	active      feed.Kind

	help     help.Model
	showHelp bool
	helpTop  int // the first help line shown (helpview.go)
	dialog   dialog
	detail   *detailView
	logv     LogComponent
	logJob   string // id of the job whose log is open
	logEnded bool   // the log view was told the job ended

	bg   context.Context
	stop context.CancelFunc

	// Live data.
	loaded    bool
	loading   bool
	loadStart core.Timestamp
	forceFull bool
	version   int64
	eventID   int64
	alertID   int64
	busy      bool
	offline   bool   // the registry server cannot be reached (header badge)
	changes   string // how the Source learns of writes (ChangeNoter; header)
	counts    headerCounts
	countedAt core.Timestamp
	spent     core.UsageSummary // every agent's last 24 h, as of the last load (the header's "spent 24h")

	// Embedded sweeper and watchdog.
	sweeping     bool
	watching     bool
	lastSweep    SweepResult
	lastSweepAt  core.Timestamp
	lastSweepErr error
	nextSweep    core.Timestamp
	nextWatchdog core.Timestamp

	status statusLine

	// news, after a reload of whole tables with windowed panes, waits for
	// the next header read to ring for what the header's counts gained
	// (attention.go headerNewsRing).
	news *headerNews
	// Attention (attention.go): the header is highlighted until flashUntil.
	flashUntil core.Timestamp
	flashText  string

	// Redraws (ticks.go): the last rendered screen, whether it must be
	// rendered again, when its text next changes by itself, and when the
	// pending tick is due (0: none).
	frame    string
	frames   int // frames rendered (tests)
	dirty    bool
	redrawAt core.Timestamp
	tickAt   core.Timestamp
	polling  bool // the data_version watch is running (ticks.go)
	// refreshAgain: a RefreshMsg (a pushed change) came during a load,
	// which may have read the version before it; load again after.
	refreshAgain bool
	// hints wake the watch when the registry may have changed (HintSource;
	// nil: poll every PollInterval); hintsTried: subscribed or refused.
	hints      <-chan struct{}
	hintsTried bool
	changedAt  time.Time // the watch's last changedMsg (wall clock)

	ticks bool       // schedule the poll and the tick (off in model-level tests)
	probe *viewProbe // tests: the last rendered screen
	quit  bool
}

// New builds the console. opts.Source is required; everything else has a
// default or may be nil (see Options).
func New(opts Options) *Model {
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.Theme == nil {
		opts.Theme, _ = themes.Get(themes.Default)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.Operator == "" {
		opts.Operator = core.OperatorActor()
	}
	keys := opts.Keys
	ctx := &Context{
		Width: 80, Height: 24,
		Theme: opts.Theme, Keys: &keys, ReadOnly: opts.ReadOnly,
		Operator: opts.Operator, Clock: opts.Clock, DBPath: opts.Source.Path(),
	}
	m := &Model{ctx: ctx, opts: opts, src: opts.Source, ticks: true}
	m.bg, m.stop = context.WithCancel(context.Background())
	ctx.bg = m.bg
	if ws, ok := opts.Source.(feed.WindowSource); ok {
		ctx.win = ws
	}
	ctx.unread = m.unreadAlerts
	m.tasks = newList(ctx, taskSpec)
	ctx.tasks = m.tasks
	m.runs = newList(ctx, runSpec)
	m.approvals = newList(ctx, approvalSpec)
	m.jobs = newList(ctx, jobSpec)
	m.alerts = newList(ctx, alertSpec)
	m.panes = [feed.NumKinds]pane{m.tasks, m.runs, m.approvals, m.jobs, m.alerts}
	m.help = help.New()
	m.help.Styles = opts.Theme.Help
	now := ctx.now()
	// The embedded sweeper's first sweep runs as the console opens, not an
	// interval later: what is due (an approval past its expiry, a task past
	// its grace) is recorded before the operator acts on it.
	m.nextSweep = now
	m.nextWatchdog = now.Add(opts.WatchdogInterval)
	m.dirty = true
	m.resize()
	return m
}

// Context returns the shared context (tests and the log view adapter).
func (m *Model) Context() *Context { return m.ctx }

// Init starts the first (full) load and the tick; the watch follows the
// load.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.startLoad(true), m.schedule(m.ctx.now()))
}

// startLoad starts a poll (and a load when data_version moved, or full).
func (m *Model) startLoad(full bool) tea.Cmd {
	if m.loading {
		if full {
			m.forceFull = true
		}
		return nil
	}
	full = full || m.forceFull || !m.loaded
	m.forceFull = false
	m.loading = true
	m.loadStart = m.ctx.now()
	var sorts sortKeys
	sorts[feed.KindTask], sorts[feed.KindRun], sorts[feed.KindApproval] = m.tasks.sort, m.runs.sort, m.approvals.sort
	sorts[feed.KindJob], sorts[feed.KindAlert] = m.jobs.sort, m.alerts.sort
	req := feed.LoadRequest{Full: full, AfterEventID: m.eventID, AfterAlertID: m.alertID, Windowed: m.windowedKinds(), Now: m.ctx.now()}
	if m.ctx.win != nil {
		req.WindowOver = m.opts.WindowOver
		if req.WindowOver == 0 {
			req.WindowOver = DefaultWindowOver
		}
	}
	return loadCmd(m.bg, m.src, req, m.version, m.loaded, sorts)
}

// Update handles one message. Reads and writes happen only in the Cmds it
// returns. The screen is rendered again only when something on it changed
// (quietMsg, quietState) or its text changes by itself now (redrawAt);
// then the next tick is scheduled for its next change (ticks.go).
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	before := m.quietState()
	_, cmd := m.update(msg)
	now := m.ctx.now()
	if !quietMsg(msg) || m.quietState() != before || m.redrawAt != 0 && now >= m.redrawAt {
		m.dirty = true
	}
	if m.dirty {
		m.renderFrame()
	}
	if m.refreshAgain && !m.loading {
		m.refreshAgain = false
		cmd = tea.Batch(cmd, m.startLoad(false))
	}
	return m, tea.Batch(cmd, m.watch(), m.schedule(now))
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.ctx.Width, m.ctx.Height = msg.Width, msg.Height
		m.resize()
		return m, nil
	case tickMsg:
		if msg.at != m.tickAt {
			return m, nil // superseded by an earlier tick
		}
		m.tickAt = 0
		return m, m.onTick()
	case changedMsg:
		m.polling, m.changedAt = false, msg.at
		return m, m.startLoad(false)
	case RefreshMsg:
		if m.loading {
			// The load in flight may have read the version before this
			// change: load again when it is done (Update).
			m.refreshAgain = true
			return m, nil
		}
		return m, m.startLoad(false)
	case loadedMsg:
		return m, m.onLoaded(msg)
	case detailMsg:
		return m, m.onDetail(msg)
	case windowMsg:
		return m, m.onWindow(msg)
	case countMsg:
		m.onCount(msg)
		return m, nil
	case headerMsg:
		if msg.err == nil {
			m.setHeader(msg.c, msg.at)
			return m, m.headerNewsRing(msg.at)
		}
		return m, nil
	case actionMsg:
		m.setStatus(msg.text, msg.lvl)
		return m, m.startLoad(false)
	case statusMsg:
		m.setStatus(msg.text, msg.lvl)
		return m, msg.next
	case planMsg:
		if d, ok := m.dialog.(*planDialog); ok {
			d.plan, d.err, d.loading = msg.plan, msg.err, false
		}
		return m, nil
	case sweepMsg:
		return m, m.onSweep(msg)
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		return m, m.onPaste(msg)
	}
	if m.logv != nil {
		var cmd tea.Cmd
		m.logv, cmd = m.logv.Update(msg)
		return m, cmd
	}
	return m, nil
}

// onTick polls for changes, expires the status line, runs the sweeper and
// watchdog when due, recounts the header, and notices a read that takes
// too long.
func (m *Model) onTick() tea.Cmd {
	now := m.ctx.now()
	var cmds []tea.Cmd
	// While the database stays busy the busy warning stays up.
	if !m.busy && m.status.expired(now) {
		m.setStatus("", lvlInfo)
	}
	if m.loading {
		if !m.busy && now.Sub(m.loadStart) >= busyAfter {
			m.busy = true
			if m.loaded {
				m.setStatus("database busy, retrying…", lvlWarn)
			} else {
				// The first full load of a large registry is slow, not busy.
				m.setStatus("loading the registry…", lvlInfo)
			}
		}
	} else if !m.polling && !m.opts.NoPoll {
		// A poll too, where nothing else watches (model-level tests): the
		// watch or the server's push notices every change, and a tick that
		// loaded would schedule the busy check's tick a second later,
		// which would load again: an idle console ticking every second.
		cmds = append(cmds, m.startLoad(false))
	}
	if m.loaded && m.afterFirst == nil && now.Sub(m.countedAt) >= recountEvery {
		if m.anyWindowed() {
			m.countedAt = now // the read below sets it again
			cmds = append(cmds, headerCmd(m.bg, m.ctx.win, now))
		} else {
			m.countHeader()
		}
	}
	cmds = append(cmds, m.recounts(now)...)
	if mt := m.opts.Maintenance; mt != nil && !m.ctx.ReadOnly {
		if m.opts.SweepInterval > 0 && !m.sweeping && now >= m.nextSweep {
			m.sweeping = true
			cmds = append(cmds, sweepCmd(m.bg, sweepPeriodic, func(ctx context.Context) (SweepResult, error) { return mt.Sweep(ctx) }))
		}
		if m.opts.WatchdogInterval > 0 && !m.watching && now >= m.nextWatchdog {
			m.watching = true
			cmds = append(cmds, sweepCmd(m.bg, sweepWatchdog, mt.Watchdog))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) onLoaded(msg loadedMsg) tea.Cmd {
	m.loading = false
	m.offline = msg.err != nil && errors.Is(msg.err, core.ErrUnavailable)
	if msg.err == nil {
		m.changes = msg.note
	}
	if msg.err != nil {
		if isBusy(msg.err) {
			m.busy = true
			m.setStatus("database busy, retrying…", lvlWarn)
		} else {
			m.setStatus("reading the registry failed (retrying): "+oneLine(msg.err.Error()), lvlErr)
		}
		return nil
	}
	if m.busy {
		m.busy = false
		if m.status.lvl >= lvlWarn {
			m.setStatus("", lvlInfo)
		}
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
	b := msg.b
	var ring tea.Cmd // the attention bell (attention.go)
	var cmds []tea.Cmd
	if msg.res.Full {
		w := msg.res.Windowed
		if m.loaded {
			// A reload of whole tables (a burst of changes past MaxEvents,
			// rows pruned by another process) rings for what it brings, as
			// a delta would, in panes that hold their tables before and after.
			wa, wt := m.approvals.windowed() || w[feed.KindApproval], m.tasks.windowed() || w[feed.KindTask]
			var aps []approvalRow
			var ts []taskRow
			if !wa {
				aps = msg.approvals.rows
			}
			if !wt {
				ts = msg.tasks.rows
			}
			ring = m.noticeNew(aps, ts, 0, 0)
			if !m.alerts.windowed() && !w[feed.KindAlert] {
				ring = m.noticeBudgets(msg.alerts.rows, ring)
			}
			// A windowed pane's news are in the journal rows the reload
			// skipped: the header's counts, read next, say how many came.
			if m.headerKnown && (wa || wt) {
				m.news = &headerNews{base: m.counts, at: m.ctx.now(), approvals: wa, failures: wt}
			}
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
	} else {
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
	}
	if mh := multiHost(m.jobs.table); mh != m.ctx.multiHost {
		m.ctx.multiHost = mh
		m.jobs.layout()
	}
	if d := delivers(m.tasks.table); d != m.ctx.delivers {
		m.ctx.delivers = d
		m.tasks.layout()
	}
	m.eventID = msg.res.EventID
	m.alertID = max(m.alertID, b.maxAlert)
	if m.anyWindowed() {
		// The header counts come from the store (indexed counts), not
		// from rows the panes no longer hold.
		if h := headerCmd(m.bg, m.ctx.win, m.ctx.now()); m.afterFirst != nil {
			m.afterFirst = append(m.afterFirst, h)
		} else {
			cmds = append(cmds, h)
		}
	} else if msg.res.Full {
		m.countHeader()
	}

	cmds = append(cmds, ring)
	if m.forceFull {
		cmds = append(cmds, m.startLoad(true))
	}
	if d := m.detail; d != nil && !msg.res.Full && b.touched[Target{Kind: d.target.Kind, ID: d.target.ID}] {
		cmds = append(cmds, detailCmd(m.bg, m.src, d.target))
	}
	cmds = append(cmds, m.jobEnded())
	return tea.Batch(cmds...)
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

// jobEnded tells an open log view that its job reached a terminal status,
// so it marks where the job ended.
func (m *Model) jobEnded() tea.Cmd {
	if m.logv == nil || m.logEnded {
		return nil
	}
	s, ok := m.jobs.ids[m.logJob]
	if !ok {
		return nil
	}
	r := m.jobs.rows[s]
	if r.status.Active() {
		return nil
	}
	m.logEnded = true
	var cmd tea.Cmd
	m.logv, cmd = m.logv.Update(jobEndedMsg(&r))
	return cmd
}

// ---- keys -------------------------------------------------------------

func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	keys := m.ctx.Keys
	if k.String() == "ctrl+c" {
		return m.quitCmd()
	}
	if m.dialog != nil {
		done, cmd := m.dialog.update(m.ctx, k)
		if done {
			m.dialog = nil
		}
		return cmd
	}
	if m.showHelp {
		m.helpKey(k)
		return nil
	}
	if m.logv != nil {
		if !m.logv.Editing() {
			switch {
			case key.Matches(k, keys.Help):
				m.showHelp = true
				return nil
			case m.logCloses(k):
				m.closeLog()
				return nil
			}
		}
		var cmd tea.Cmd
		m.logv, cmd = m.logv.Update(k)
		return cmd
	}
	if m.detail != nil {
		if used := m.detail.update(k); used {
			return nil
		}
		switch {
		case key.Matches(k, keys.Back, keys.Quit):
			m.detail = nil
			return nil
		case key.Matches(k, keys.Help):
			m.showHelp = true
			return nil
		case key.Matches(k, keys.Log):
			return m.openLog(m.detail.target)
		}
		if cmd, used := m.actionKey(k, m.detail.target, true); used {
			return cmd
		}
		if k2, ok := m.paneKey(k); ok {
			m.detail = nil
			m.switchPane(k2)
		}
		return nil
	}
	p := m.panes[m.active]
	if p.Editing() {
		return m.paneUpdate(p, k)
	}
	switch {
	case key.Matches(k, keys.Quit):
		return m.quitCmd()
	case key.Matches(k, keys.Help):
		m.showHelp = true
		return nil
	case key.Matches(k, keys.NextPane):
		m.switchPane((m.active + 1) % feed.NumKinds)
		return nil
	case key.Matches(k, keys.PrevPane):
		m.switchPane((m.active + feed.NumKinds - 1) % feed.NumKinds)
		return nil
	}
	if k2, ok := m.paneKey(k); ok {
		m.switchPane(k2)
		return nil
	}
	t, have := p.Selected()
	if have && m.isRowKey(k) {
		p.pin()
	}
	switch {
	case key.Matches(k, keys.Detail):
		if !have {
			return nil
		}
		if t.Kind == feed.KindJob {
			return m.openLog(t)
		}
		return m.openDetail(t)
	case key.Matches(k, keys.Info):
		if have {
			return m.openDetail(t)
		}
		return nil
	case key.Matches(k, keys.Log):
		if have && t.Kind == feed.KindJob {
			return m.openLog(t)
		}
		if have {
			m.setStatus("the log view is for jobs (switch to Jobs with "+firstKey(keys.Jobs)+")", lvlInfo)
		}
		return nil
	}
	if cmd, used := m.actionKey(k, t, have); used {
		return cmd
	}
	return m.paneUpdate(p, k)
}

func (m *Model) onPaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.dialog != nil:
		_, cmd := m.dialog.update(m.ctx, msg)
		return cmd
	case m.logv != nil:
		var cmd tea.Cmd
		m.logv, cmd = m.logv.Update(msg)
		return cmd
	case m.detail == nil && !m.showHelp && m.panes[m.active].Editing():
		return m.paneUpdate(m.panes[m.active], msg)
	}
	return nil
}

// paneKey maps 1–5 (or their rebinding) to a pane.
// isRowKey reports whether k acts on the selected row (detail, log, an
// action other than maintenance): such a key pins the cursor to the row.
func (m *Model) isRowKey(k tea.KeyPressMsg) bool {
	keys := m.ctx.Keys
	if key.Matches(k, keys.Detail, keys.Info, keys.Log) {
		return true
	}
	for _, a := range actionBindings {
		if a.kinds != nil && key.Matches(k, a.binding(keys)) {
			return true
		}
	}
	return false
}

func (m *Model) paneKey(k tea.KeyPressMsg) (feed.Kind, bool) {
	for kind := feed.Kind(0); kind < feed.NumKinds; kind++ {
		if key.Matches(k, m.paneBinding(kind)) {
			return kind, true
		}
	}
	return 0, false
}

func (m *Model) paneBinding(k feed.Kind) key.Binding {
	keys := m.ctx.Keys
	return [...]key.Binding{keys.Tasks, keys.Runs, keys.Approvals, keys.Jobs, keys.Alerts}[k]
}

func (m *Model) switchPane(k feed.Kind) {
	m.active = k
	m.showHelp, m.helpTop = false, 0
	m.clearStatus()
}

func (m *Model) quitCmd() tea.Cmd {
	m.quit = true
	m.closeLog()
	m.stop()
	return tea.Quit
}

// ---- detail and log ---------------------------------------------------

type detailMsg struct {
	target Target
	d      *feed.Detail
	err    error
}

func detailCmd(ctx context.Context, src feed.Source, t Target) tea.Cmd {
	return func() tea.Msg {
		d, err := src.Detail(ctx, t.Kind, t.ID)
		return detailMsg{target: t, d: d, err: err}
	}
}

func (m *Model) openDetail(t Target) tea.Cmd {
	m.detail = newDetailView(m.ctx, t)
	m.resize()
	return detailCmd(m.bg, m.src, t)
}

func (m *Model) onDetail(msg detailMsg) tea.Cmd {
	if m.detail == nil || m.detail.target.Kind != msg.target.Kind || m.detail.target.ID != msg.target.ID {
		return nil
	}
	m.detail.set(msg.d, msg.err)
	return nil
}

func (m *Model) openLog(t Target) tea.Cmd {
	if t.Kind != feed.KindJob {
		return nil
	}
	if t.LogPath == "" {
		m.setStatus("job "+t.Short+" has no log file", lvlWarn)
		return nil
	}
	m.closeLog()
	m.logv = m.newLog(t)
	m.logJob = t.ID
	m.logEnded = false
	m.detail = nil
	m.resize()
	return tea.Batch(m.logv.Init(), m.jobEnded())
}

func (m *Model) closeLog() {
	if m.logv != nil {
		m.logv.Close()
		m.logv = nil
		m.logJob = ""
	}
}

func (m *Model) newLog(t Target) LogComponent {
	if m.opts.LogView != nil {
		return m.opts.LogView(m.ctx, t)
	}
	return newLogPane(m.ctx, t)
}

// logCloses reports whether k closes the log view (its own close keys).
func (m *Model) logCloses(k tea.KeyPressMsg) bool {
	type closer interface{ Closes(tea.KeyPressMsg) bool }
	if c, ok := m.logv.(closer); ok {
		return c.Closes(k)
	}
	return key.Matches(k, m.ctx.Keys.Back, m.ctx.Keys.Quit)
}

// ---- status -----------------------------------------------------------

func (m *Model) setStatus(text string, lvl level) {
	m.status = statusLine{text: text, lvl: lvl, at: m.ctx.now()}
}

// StatusText is the status line's text (tests and the e2e harness).
func (m *Model) StatusText() string { return m.status.text }

func (m *Model) statusView(w int) string {
	th := m.ctx.Theme
	s := m.status
	if s.text == "" {
		hint := m.whoHint()
		if !m.loaded {
			hint = "loading the registry…  " + hint
		}
		return clipLine(th.Muted.Render(truncRight(hint, w)), w)
	}
	st := th.StatusInfo
	switch s.lvl {
	case lvlOK:
		st = th.StatusOK
	case lvlWarn:
		st = th.StatusWarn
	case lvlErr:
		st = th.StatusErr
	}
	return st.Render(truncRight(s.text, w))
}

// truncRight cuts plain text to w cells with an ellipsis.
func truncRight(s string, w int) string {
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// ansiTruncate cuts a styled string to w cells.
func ansiTruncate(s string, w int) string { return ansi.Truncate(s, w, "") }

// firstKey is the first key of a binding, as help shows it.
func firstKey(b key.Binding) string {
	if h := b.Help().Key; h != "" {
		if i := strings.IndexByte(h, '/'); i > 0 {
			return h[:i]
		}
		return h
	}
	if ks := b.Keys(); len(ks) > 0 {
		return ks[0]
	}
	return "?"
}

// ---- layout and view --------------------------------------------------

func (m *Model) bodyHeight() int { return max(3, m.ctx.Height-headerRows-footerRows) }

func (m *Model) resize() {
	w, h := max(20, m.ctx.Width), m.bodyHeight()
	for _, p := range m.panes {
		p.SetSize(w, h)
	}
	if m.detail != nil {
		m.detail.SetSize(w, h)
	}
	if m.logv != nil {
		m.logv.SetSize(w, h+1) // the log view draws its own status bar over the info line
	}
	m.help.SetWidth(w)
}

// viewProbe records the last screen (tests wait on it).
type viewProbe struct {
	mu   sync.Mutex
	last string
}

func (p *viewProbe) set(s string) {
	p.mu.Lock()
	p.last = s
	p.mu.Unlock()
}

func (p *viewProbe) get() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// View renders the whole screen: alt screen, every line at most the
// terminal's width, always the same number of lines.
func (m *Model) View() tea.View {
	if m.dirty {
		m.renderFrame()
	}
	s := m.frame
	if m.probe != nil {
		m.probe.set(s)
	}
	v := tea.NewView(s)
	v.AltScreen = true
	return v
}

// renderFrame renders the screen into frame and notes when its text next
// changes by itself (redrawAt: a visible age or countdown turning over,
// the header highlight ending).
func (m *Model) renderFrame() {
	m.ctx.redrawAt = 0
	m.frame = m.render()
	if m.flashing() {
		m.ctx.noteChange(m.ctx.now(), m.flashUntil)
	}
	m.redrawAt, m.dirty = m.ctx.redrawAt, false
	m.frames++
}

func (m *Model) render() string {
	w := max(20, m.ctx.Width)
	var b strings.Builder
	b.Grow(w * (m.ctx.Height + 2) * 2)
	b.WriteString(m.headerView(w))
	b.WriteByte('\n')
	b.WriteString(m.tabsView(w))
	b.WriteByte('\n')
	p := m.panes[m.active]
	bodyH := m.bodyHeight()
	var info, hints string
	switch {
	case m.showHelp:
		b.WriteString(m.fullHelpView(w, bodyH))
		info = m.helpInfo(w)
		hints = m.helpHints(w)
	case m.logv != nil:
		b.WriteString(m.logv.View())
		hints = m.hintsView(m.logv.ShortHelp(), w)
	case m.detail != nil:
		b.WriteString(m.detail.View())
		info = m.detail.infoLine(w)
		hints = m.hintsView(m.detail.shortHelp(m), w)
	default:
		b.WriteString(p.View())
		info = p.InfoLine(w)
		hints = m.hintsView(p.ShortHelp(), w)
	}
	if m.logv == nil || m.showHelp {
		b.WriteByte('\n')
		b.WriteString(clipLine(info, w))
	}
	b.WriteByte('\n')
	b.WriteString(m.statusView(w))
	b.WriteByte('\n')
	b.WriteString(clipLine(hints, w))
	screen := b.String()
	if m.dialog != nil {
		screen = overlay(screen, m.dialog.view(m.ctx, w), w, m.ctx.Height)
	}
	return screen
}

// hintsView renders the short key hints in width w. The help and quit keys
// are pinned at the right end so a narrow terminal drops other hints (with
// bubbles/help's "…") rather than the way to find them.
func (m *Model) hintsView(bindings []key.Binding, w int) string {
	pinned := func(b key.Binding) bool {
		return sameKeys(b, m.ctx.Keys.Help) || sameKeys(b, m.ctx.Keys.Quit)
	}
	var rest, tail []key.Binding
	for _, b := range bindings {
		if pinned(b) {
			tail = append(tail, b)
		} else {
			rest = append(rest, b)
		}
	}
	h := m.help
	tailView := h.ShortHelpView(tail)
	if len(rest) == 0 || tailView == "" {
		h.SetWidth(w)
		return h.ShortHelpView(bindings)
	}
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	h.SetWidth(max(0, w-lipgloss.Width(tailView)-lipgloss.Width(sep)))
	return h.ShortHelpView(rest) + sep + tailView
}

// sameKeys reports whether two bindings have the same keys.
func sameKeys(a, b key.Binding) bool {
	ak, bk := a.Keys(), b.Keys()
	if len(ak) != len(bk) || len(ak) == 0 {
		return false
	}
	for i := range ak {
		if ak[i] != bk[i] {
			return false
		}
	}
	return true
}

// overlay draws box centred over screen.
func overlay(screen, box string, w, h int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max(0, (w-bw)/2), max(0, (h-bh)/2)
	c := lipgloss.NewCanvas(w, max(h, lipgloss.Height(screen)))
	c.Compose(lipgloss.NewCompositor(lipgloss.NewLayer(screen), lipgloss.NewLayer(box).X(x).Y(y).Z(1)))
	return c.Render()
}

// ---- errors shown to the operator -------------------------------------

// errText is an error as the status line shows it.
func errText(err error) string { return oneLine(err.Error()) }

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
