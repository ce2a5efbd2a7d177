package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain"
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
	src  feed.WindowSource // Options.Source, wrapped in feed.MemoryWindow unless it reads windows

	tasks     *list[taskRow]
	runs      *list[runRow]
	approvals *list[approvalRow]
	jobs      *list[jobRow]
	alerts    *list[alertRow]
	panes     [feed.NumKinds]pane
	// afterFirst are the reads held back until the first window arrives
	// (onFullLoad: the active pane's rows first).
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
	alertID   int64 // the newest notification id the source has seen (LoadResult.AlertID)
	busy      bool
	offline   bool   // the registry server cannot be reached (header badge)
	changes   string // how the Source learns of writes (ChangeNoter; header)
	counts    headerCounts
	countedAt core.Timestamp
	spent     core.UsageSummary // every agent's last 24 h, as of the last load (the header's "spent 24h")

	// Embedded sweeper and watchdog: when each pass is due and whether one
	// runs, on the maintenance timetable every process keeps
	// (maintain.Schedule).
	sched        *maintain.Schedule
	lastSweep    SweepResult
	lastSweepAt  core.Timestamp
	lastSweepErr error

	status statusLine

	// news, after a full reload the source counted no news for, waits for
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
	src, ok := opts.Source.(feed.WindowSource)
	if !ok {
		src = feed.NewMemoryWindow(opts.Source)
	}
	m := &Model{ctx: ctx, opts: opts, src: src, ticks: true}
	m.bg, m.stop = context.WithCancel(context.Background())
	ctx.bg, ctx.win = m.bg, src
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
	m.sched = maintain.NewSchedule(maintain.Settings{SweepInterval: opts.SweepInterval, WatchdogInterval: opts.WatchdogInterval}, now.Time())
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
	// Every pane reads windows: a load sends no rows, only what changed
	// (LoadResult.Touched) and the attention bell's news.
	req := feed.LoadRequest{Full: full, AfterEventID: m.eventID, AfterAlertID: m.alertID, WindowOver: -1, Now: m.ctx.now()}
	for k := range req.Windowed {
		req.Windowed[k] = true
	}
	return loadCmd(m.bg, m.src, req, m.version, m.loaded)
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
	case reapCountMsg:
		if d, ok := m.dialog.(*confirmDialog); ok && d.counting == msg.session && msg.session != "" {
			d.lines, d.counting = []string{reapLine(msg)}, ""
		}
		return m, nil
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
		m.countedAt = now // the read below sets it again
		cmds = append(cmds, headerCmd(m.bg, m.src, now))
	}
	cmds = append(cmds, m.recounts(now)...)
	if mt := m.opts.Maintenance; mt != nil && !m.ctx.ReadOnly {
		if m.sched.Start(maintain.KindSweep, now.Time()) {
			cmds = append(cmds, sweepCmd(m.bg, sweepPeriodic, func(ctx context.Context) (SweepResult, error) { return mt.Sweep(ctx) }))
		}
		if m.sched.Start(maintain.KindWatchdog, now.Time()) {
			cmds = append(cmds, sweepCmd(m.bg, sweepWatchdog, mt.Watchdog))
		}
	}
	return tea.Batch(cmds...)
}
