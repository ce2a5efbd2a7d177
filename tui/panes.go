package tui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/termtext"
	"github.com/clawpit/clawpit/view"
)

// pane is one of the five tables. Each is a component in soft-serve's sense:
// it updates on messages, renders itself, takes its size and lists its keys
// for help (help.KeyMap).
type pane interface {
	Update(msg tea.Msg) (bool, tea.Cmd)
	View() string
	SetSize(w, h int)
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
	Title() string
	Kind() feed.Kind
	Selected() (Target, bool)
	Counts() (shown, total int)
	// CountCapped reports that shown is a lower bound (the pane's
	// filter counted up to its limit).
	CountCapped() bool
	// CountKnown is false for a pane whose table has not been
	// counted yet (its tab then shows "…", not 0).
	CountKnown() bool
	Editing() bool
	Filtered() bool
	SortName() string
	InfoLine(w int) string
	// pin keeps the cursor on the selected row across re-sorts (the
	// operator acted on it).
	pin()
}

// ---- rows -------------------------------------------------------------

// taskRow is a task as the Tasks pane keeps it: only what it shows, sanitised.
type taskRow struct {
	urgency  int8  // view.TaskUrgency: running 6, queued, lost, failed, timed_out, cancelled, succeeded 0
	idn      uint8 // characters of id shown: its shortest unique prefix (set by the table)
	id       string
	status   core.TaskStatus
	runtime  core.Runtime
	delivery core.DeliveryStatus
	name     string // label, else kind, else what was asked
	session  string // backing session: child, else owner (docs/contract.md "Lost work")
	agent    string // the owner session's agent (core.Task.Agent), "" when unknown
	runID    string
	err      string
	created  core.Timestamp
	last     core.Timestamp // the latest of ended_at and last_event_at ?? started_at ?? created_at
	ended    core.Timestamp
	spent    string // the SPENT cell: its own and its run's tokens' cost (feed.SpentText)
}

func taskRowOf(t *core.Task) taskRow {
	name := clip(view.TaskName(t), 200)
	return taskRow{
		urgency:  int8(view.TaskUrgency(t.Status)),
		id:       oneLine(t.ID),
		status:   intern(t.Status, core.TaskStatuses),
		runtime:  intern(t.Runtime, core.Runtimes),
		delivery: intern(t.DeliveryStatus, core.DeliveryStatuses),
		name:     oneLine(name),
		session:  oneLine(t.BackingSession()),
		agent:    agentName(t.Agent),
		runID:    oneLine(t.RunID),
		err:      oneLine(clip(t.Error, 300)),
		created:  t.CreatedAt,
		last:     view.TaskLast(t),
		ended:    t.EndedAt,
		spent:    feed.SpentText(t.Spent),
	}
}

// shortID is the task's id as shown: its unique prefix among the loaded
// tasks (13 characters until the table has computed it).
func (r *taskRow) shortID() string {
	if r.idn == 0 || int(r.idn) > len(r.id) {
		return shortID(r.id)
	}
	return r.id[:r.idn]
}

// runRow is a subagent run as the Runs pane keeps it.
type runRow struct {
	urgency                     int8 // view.RunUrgency: waiting 4, running, error/timeout, other ends, ok 0
	id, label, child, requester string
	agent                       string // the requester session's agent (core.Run.Agent)
	state                       string // running | waiting | the outcome
	waits                       int64
	started, progress, ended    core.Timestamp
	reason                      string
	spent                       string // the SPENT cell (feed.SpentText)
}

func runRowOf(r *core.Run) runRow {
	state := view.RunState(r)
	reason := r.EndedReason
	if r.Error != "" {
		reason = joinNonEmpty(": ", reason, r.Error)
	}
	return runRow{
		urgency: int8(view.RunUrgency(state)),
		id:      oneLine(r.RunID), label: oneLine(r.Label), child: oneLine(r.ChildSession),
		requester: oneLine(r.RequesterSession), agent: agentName(r.Agent), state: internStr(state), waits: r.PendingApprovalWaits,
		started: r.StartedAt, progress: r.LastProgressAt, ended: r.EndedAt, reason: oneLine(clip(reason, 300)),
		spent: feed.SpentText(r.Spent),
	}
}

// last is when the run last did something: its end, else its last progress.
func (r *runRow) last() core.Timestamp { return view.RunLast(r.ended, r.progress, r.started) }

// approvalRow is an approval as the Approvals pane keeps it.
type approvalRow struct {
	id, session, tool, command, runID, taskID, decidedBy string
	agent                                                string // the session's agent (core.Approval.Agent)
	suggestions                                          string // the agent's suggested permission updates, as recorded (Target.Suggestions)
	pattern                                              string // the verb chain a session/always grant remembers, as is
	cwd, rationale                                       string // shown in the approve dialog
	hidden                                               bool   // the command holds control or invisible characters
	status                                               core.ApprovalStatus
	scope                                                core.Scope
	requested, decided, expires                          core.Timestamp
}

func approvalRowOf(a *core.Approval) approvalRow {
	return approvalRow{
		id: oneLine(a.ID), session: oneLine(a.Session), agent: agentName(a.Agent), tool: oneLine(a.Tool), command: oneLine(a.Command),
		pattern: a.Pattern, hidden: termtext.HasHidden(a.Command),
		cwd: oneLine(clip(a.Cwd, 1000)), rationale: oneLine(clip(a.Rationale, 1000)),
		runID: oneLine(a.RunID), taskID: oneLine(a.TaskID), decidedBy: oneLine(a.DecidedBy),
		status: intern(a.Status, core.ApprovalStatuses), scope: intern(a.Scope, core.Scopes),
		requested: a.RequestedAt, decided: a.DecidedAt, expires: a.ExpiresAt,
		suggestions: string(a.Suggestions), // at most core.MaxSuggestionBytes
	}
}

// jobRow is a background job as the Jobs pane keeps it.
type jobRow struct {
	urgency                       int8 // view.JobUrgency: running 7, pending, lost, failed, timed_out, cancelled, reaped, completed 0
	id, session, command, logPath string
	host                          string // the supervisor's host (README "Many hosts: PostgreSQL")
	status                        core.JobStatus
	exit                          string
	exitCode                      *int
	captureErr                    string
	tree                          string // how the job's process tree is contained (TREE column)
	created, started, completed   core.Timestamp
}

func jobRowOf(j *core.Job) jobRow {
	exit := "-"
	var code *int
	if j.ExitCode != nil {
		exit = strconv.Itoa(*j.ExitCode)
		c := *j.ExitCode
		code = &c
	}
	return jobRow{
		urgency: int8(view.JobUrgency(j.Status)),
		id:      oneLine(j.ID), session: oneLine(j.Session), command: oneLine(clip(core.CommandLine(shortArgv(j.Command)), 500)),
		logPath: j.LogPath, status: intern(j.Status, core.JobStatuses), exit: exit, exitCode: code,
		host:       oneLine(j.Host),
		captureErr: oneLine(clip(j.CaptureError, 300)), tree: treeCell(j.Containment),
		created: j.CreatedAt, started: j.StartedAt, completed: j.CompletedAt,
	}
}

// treeCell is the TREE column: how the job's whole process tree is held on
// this machine ("-" before the command starts).
func treeCell(containment string) string {
	switch containment {
	case "":
		return "-"
	case core.ContainGroup:
		return "group"
	}
	return containment
}

// shortArgv shows argv[0] by its base name in the Jobs table
// (view.JobProgram, which the command sort reads first), so long executable
// paths (go run's cache, /usr/local/…) don't crowd out what the job does;
// the detail view keeps the full command.
func shortArgv(argv []string) []string {
	if len(argv) == 0 || !strings.Contains(argv[0], "/") {
		return argv
	}
	return append([]string{view.JobProgram(argv)}, argv[1:]...)
}

// alertRow is a notification as the Alerts pane keeps it.
type alertRow struct {
	id                     int64
	idStr                  string
	kind                   string
	session, subject, text string
	created, delivered     core.Timestamp
}

func alertRowOf(n *core.Notification) alertRow {
	return alertRow{
		id: n.ID, idStr: strconv.FormatInt(n.ID, 10), kind: internStr(string(n.Kind)),
		session: oneLine(n.Session), subject: oneLine(n.SubjectID), text: oneLine(clip(n.Text, 500)),
		created: n.CreatedAt, delivered: n.DeliveredAt,
	}
}

func (a *alertRow) state() string {
	if a.delivered == 0 {
		return "unread"
	}
	return "read"
}

// ---- specs ------------------------------------------------------------

var taskSpec = &listSpec[taskRow]{
	kind:  feed.KindTask,
	title: "Tasks",
	columns: []column{
		{Title: "ID", Width: 13},
		{Title: "STATUS", Width: 9},
		{Title: "RUNTIME", Width: 8},
		{Title: "AGENT", Width: 6, MinScreen: 150}, // the first dropped as the screen narrows
		{Title: "LABEL", Width: 12, Flex: 2},
		{Title: "SESSION", Width: 16, MinScreen: 110},
		{Title: "DELIVERY", Width: 14, MinScreen: 140, Delivery: true},
		{Title: "ERROR", Width: 10, Flex: 1, MinScreen: 120},
		{Title: "SPENT", Width: 9, Right: true, MinScreen: 155}, // dropped before AGENT
		{Title: "LAST", Width: 4, Right: true},
		{Title: "AGE", Width: 4, Right: true, MinScreen: 100},
	},
	statusCol: 1,
	sorts:     view.SortNames(core.EntityTask),
	id:        func(r *taskRow) string { return r.id },
	prefix:    func(r *taskRow) *uint8 { return &r.idn },
	status:    func(r *taskRow) string { return string(r.status) },
	cells: func(r *taskRow, c *Context, now core.Timestamp, dst []string) []string {
		return append(dst, r.shortID(), string(r.status), string(r.runtime), r.agent, r.name, r.session,
			string(r.delivery), r.err, r.spent, c.age(now, r.last), c.age(now, r.created))
	},
	hay: hayOf(core.EntityTask, map[string]func(*taskRow) string{
		"id": func(r *taskRow) string { return r.id }, "status": func(r *taskRow) string { return string(r.status) },
		"runtime": func(r *taskRow) string { return string(r.runtime) }, "agent": func(r *taskRow) string { return r.agent },
		"name": func(r *taskRow) string { return r.name }, "session": func(r *taskRow) string { return r.session },
		"delivery": func(r *taskRow) string { return string(r.delivery) }, "error": func(r *taskRow) string { return r.err },
	}),
	target: func(r *taskRow) Target {
		return Target{Kind: feed.KindTask, ID: r.id, Short: r.shortID(), Status: string(r.status),
			Session: r.session, RunID: r.runID, Name: r.name}
	},
}

var runSpec = &listSpec[runRow]{
	kind:  feed.KindRun,
	title: "Runs",
	columns: []column{
		{Title: "RUN", Width: 14},
		{Title: "STATE", Width: 9},
		{Title: "AGENT", Width: 6, MinScreen: 130}, // the first dropped as the screen narrows
		{Title: "LABEL", Width: 12, Flex: 2},
		{Title: "CHILD SESSION", Width: 16, MinScreen: 100},
		{Title: "WAITS", Width: 5, Right: true, MinScreen: 90},
		{Title: "REASON", Width: 10, Flex: 1, MinScreen: 120},
		{Title: "SPENT", Width: 9, Right: true, MinScreen: 140}, // dropped before AGENT
		{Title: "LAST", Width: 4, Right: true},
		{Title: "AGE", Width: 4, Right: true, MinScreen: 100},
	},
	statusCol: 1,
	sorts:     view.SortNames(core.EntityRun),
	id:        func(r *runRow) string { return r.id },
	status:    func(r *runRow) string { return r.state },
	cells: func(r *runRow, c *Context, now core.Timestamp, dst []string) []string {
		return append(dst, r.id, r.state, r.agent, r.label, r.child, strconv.FormatInt(r.waits, 10), r.reason,
			r.spent, c.age(now, r.last()), c.age(now, r.started))
	},
	hay: hayOf(core.EntityRun, map[string]func(*runRow) string{
		"run": func(r *runRow) string { return r.id }, "state": func(r *runRow) string { return r.state },
		"agent": func(r *runRow) string { return r.agent }, "label": func(r *runRow) string { return r.label },
		"child session": func(r *runRow) string { return r.child }, "reason": func(r *runRow) string { return r.reason },
	}),
	target: func(r *runRow) Target {
		return Target{Kind: feed.KindRun, ID: r.id, Short: r.id, Status: r.state, Session: r.child, RunID: r.id, Name: r.label}
	},
}

var approvalSpec = &listSpec[approvalRow]{
	kind:  feed.KindApproval,
	title: "Approvals",
	columns: []column{
		{Title: "ID", Width: 12},
		{Title: "STATUS", Width: 9},
		{Title: "TOOL", Width: 10},
		{Title: "COMMAND", Width: 12, Flex: 1, Command: true},
		{Title: "AGENT", Width: 6, MinScreen: 150}, // the first dropped as the screen narrows
		{Title: "SESSION", Width: 16, MinScreen: 100},
		{Title: "SCOPE", Width: 7, MinScreen: 110},
		{Title: "DECIDED BY", Width: 18, MinScreen: 140},
		{Title: "EXPIRES", Width: 7, Right: true, MinScreen: 120},
		{Title: "AGE", Width: 4, Right: true},
	},
	statusCol: 1,
	sorts:     view.SortNames(core.EntityApproval),
	id:        func(r *approvalRow) string { return r.id },
	status:    func(r *approvalRow) string { return string(r.status) },
	cells: func(r *approvalRow, c *Context, now core.Timestamp, dst []string) []string {
		exp, st := "-", r.status
		if st == core.ApprovalPending {
			exp = c.until(now, r.expires)
			if r.expires != 0 && now >= r.expires {
				exp, st = "-", core.ApprovalExpired // expired in fact; a sweep records it (core.Approval.AsOf)
			}
		}
		return append(dst, r.id, string(st), r.tool, r.command, r.agent, r.session, string(r.scope), r.decidedBy,
			exp, c.age(now, r.requested))
	},
	hay: hayOf(core.EntityApproval, map[string]func(*approvalRow) string{
		"id": func(r *approvalRow) string { return r.id }, "status": func(r *approvalRow) string { return string(r.status) },
		"tool": func(r *approvalRow) string { return r.tool }, "command": func(r *approvalRow) string { return r.command },
		"agent": func(r *approvalRow) string { return r.agent }, "session": func(r *approvalRow) string { return r.session },
		"scope": func(r *approvalRow) string { return string(r.scope) }, "decided by": func(r *approvalRow) string { return r.decidedBy },
	}),
	target: func(r *approvalRow) Target {
		return Target{Kind: feed.KindApproval, ID: r.id, Short: r.id, Status: string(r.status), Session: r.session,
			RunID: r.runID, Name: r.tool + ": " + r.command, Tool: r.tool, Pattern: r.pattern, Hidden: r.hidden,
			Cwd: r.cwd, Why: r.rationale, Suggestions: r.suggestions}
	},
}

var jobSpec = &listSpec[jobRow]{
	kind:  feed.KindJob,
	title: "Jobs",
	columns: []column{
		{Title: "ID", Width: 12},
		{Title: "STATUS", Width: 9},
		{Title: "EXIT", Width: 4, Right: true},
		{Title: "COMMAND", Width: 12, Flex: 1, Command: true},
		{Title: "SESSION", Width: 16, MinScreen: 100},
		{Title: "HOST", Width: 12, MinScreen: 100, MultiHost: true},
		{Title: "RAN", Width: 5, Right: true, MinScreen: 110},
		{Title: "TREE", Width: 9, MinScreen: 130},
		{Title: "AGE", Width: 4, Right: true},
	},
	statusCol: 1,
	openLog:   true,
	sorts:     view.SortNames(core.EntityJob),
	id:        func(r *jobRow) string { return r.id },
	status:    func(r *jobRow) string { return string(r.status) },
	cells: func(r *jobRow, c *Context, now core.Timestamp, dst []string) []string {
		ran := "-"
		if r.started != 0 {
			ran = shortDur(r.completed.Sub(r.started))
			if r.completed == 0 {
				ran = c.sinceText(now, r.started)
			}
		}
		return append(dst, r.id, string(r.status), r.exit, r.command, r.session, r.host, ran, r.tree, c.age(now, r.created))
	},
	hay: hayOf(core.EntityJob, map[string]func(*jobRow) string{
		"id": func(r *jobRow) string { return r.id }, "status": func(r *jobRow) string { return string(r.status) },
		"command": func(r *jobRow) string { return r.command }, "session": func(r *jobRow) string { return r.session },
		"host": func(r *jobRow) string { return r.host },
	}),
	target: func(r *jobRow) Target {
		return Target{Kind: feed.KindJob, ID: r.id, Short: r.id, Status: string(r.status), Session: r.session,
			LogPath: r.logPath, Name: r.command}
	},
}

var alertSpec = &listSpec[alertRow]{
	kind:  feed.KindAlert,
	title: "Alerts",
	columns: []column{
		{Title: "ID", Width: 6, Right: true},
		{Title: "STATE", Width: 6},
		{Title: "KIND", Width: 16},
		{Title: "TEXT", Width: 12, Flex: 1},
		{Title: "SESSION", Width: 16, MinScreen: 110},
		{Title: "SUBJECT", Width: 18, MinScreen: 130},
		{Title: "AGE", Width: 4, Right: true},
	},
	statusCol: 1,
	sorts:     view.SortNames(core.EntityNotification),
	dim:       func(r *alertRow) bool { return r.delivered != 0 },
	id:        func(r *alertRow) string { return r.idStr },
	status:    func(r *alertRow) string { return r.state() },
	cells: func(r *alertRow, c *Context, now core.Timestamp, dst []string) []string {
		return append(dst, r.idStr, r.state(), r.kind, r.text, r.session, c.taskPrefix(r.subject), c.age(now, r.created))
	},
	hay: hayOf(core.EntityNotification, map[string]func(*alertRow) string{
		"id": func(r *alertRow) string { return r.idStr }, "state": (*alertRow).state, "kind": func(r *alertRow) string { return r.kind },
		"text": func(r *alertRow) string { return r.text }, "session": func(r *alertRow) string { return r.session },
		"subject": func(r *alertRow) string { return r.subject },
	}),
	target: func(r *alertRow) Target {
		return Target{Kind: feed.KindAlert, ID: r.idStr, Short: r.idStr, Status: r.state(), Session: r.session, Name: r.text}
	},
}

// agentNames are the agents clawpit's adapters record (sessions.agent):
// their rows share these strings.
var agentNames = []string{"claude", "codex", "gemini"}

// agentName is an agent's name as a row keeps it: one sanitised line (the
// registry's text is data), clipped to 40 bytes, interned when it is one
// clawpit records.
func agentName(a string) string { return intern(oneLine(clip(a, 40)), agentNames) }

// clip caps s at n bytes (before sanitising, so huge fields cost little),
// at a rune boundary (a cut rune would show as invalid bytes).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

var internSet = []string{"running", "waiting", "ended", "ok", "error", "timeout", "killed", "reset", "deleted",
	string(core.NotifyJobFinished), string(core.NotifyJobLost), string(core.NotifyTaskFailed),
	string(core.NotifyTaskSilent), string(core.NotifyRunTimedOut), string(core.NotifyApprovalExpired)}

func internStr(s string) string { return intern(s, internSet) }
