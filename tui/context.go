// Package tui is clawpit's Bubble Tea console (README "The console"): one root model, one
// component per pane (Tasks, Runs, Approvals, Jobs, Alerts), a detail view,
// dialogs, help and the job log view. Every read and write runs in a tea.Cmd;
// Update and View never touch the database.
package tui

import (
	"strings"

	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/themes"
)

// Context is what every component shares (gh-dash's ProgramContext): the
// screen size, theme, key map, read-only flag and operator identity. The root
// model owns it; components hold a pointer and read it at render time.
type Context struct {
	Width, Height int
	Theme         *themes.Theme
	Keys          *KeyMap
	ReadOnly      bool
	Operator      core.Actor
	Clock         core.Clock
	DBPath        string

	paints     map[string]paint
	paintTheme *themes.Theme
	tasks      interface{ prefixOf(id string) string } // the Tasks pane, for ids shown elsewhere
	multiHost  bool                                    // the Jobs window holds jobs of more than one host: show HOST
	delivers   bool                                    // a task of the Tasks window has a delivery outcome: show DELIVERY
	win        feed.WindowSource                       // where every pane reads its windows (Model.src)
	unread     func() (n int, known bool)              // the header's unread alerts (the Alerts tab and info line)
	bg         context.Context                         // cancelled when the console quits
	redrawAt   core.Timestamp                          // while rendering: when the screen next changes by itself (ticks.go)
}

// taskPrefix is a task id as the Tasks pane shows it (its unique prefix), so
// an alert's subject is the same string the operator sees in the Tasks pane.
// Ids of other entities are short and shown whole.
func (c *Context) taskPrefix(id string) string {
	if c.tasks == nil {
		return shortID(id)
	}
	return c.tasks.prefixOf(id)
}

// paint returns st reduced to its escape sequences, cached under name. The
// table draws every visible cell each frame; concatenating the cached
// sequences is much cheaper than a lipgloss Render per cell. Only for
// styles without width, padding, margins or borders.
func (c *Context) paint(st lipgloss.Style, name string) paint {
	if c.paints == nil || c.paintTheme != c.Theme {
		c.paints, c.paintTheme = map[string]paint{}, c.Theme
	}
	p, ok := c.paints[name]
	if !ok {
		p = paintOf(st)
		c.paints[name] = p
	}
	return p
}

// paint is a style as the escape sequences before and after its text.
type paint struct{ pre, post string }

func paintOf(st lipgloss.Style) paint {
	out := st.Render("X")
	i := strings.Index(out, "X")
	if i < 0 {
		return paint{}
	}
	return paint{pre: out[:i], post: out[i+1:]}
}

// on wraps s (plain text) in the style.
func (p paint) on(s string) string {
	if p.pre == "" && p.post == "" {
		return s
	}
	return p.pre + s + p.post
}

// now is the context clock's time in epoch ms.
func (c *Context) now() core.Timestamp { return core.TS(c.Clock.Now()) }

// Target is the row an action applies to: the selected row of the active
// pane, or the entity of the open detail view.
type Target struct {
	Kind    feed.Kind
	ID      string // full id (for alerts, the decimal notification id)
	Short   string // the id as shown in tables
	Status  string // status word as shown
	Session string // the session whose jobs `reap` would reap
	RunID   string // the run a task mirrors (kill from a task row)
	LogPath string // jobs: the log file
	Name    string // label / command, sanitised, one line
	Tool    string // approvals: the tool, sanitised
	Pattern string // approvals: the exact pattern a session/always grant remembers (not sanitised: the dialog quotes it)
	Hidden  bool   // approvals: the command holds control or invisible characters (Name shows them as symbols)
	Cwd     string // approvals: the command's working directory, sanitised
	Why     string // approvals: the runtime's rationale, sanitised
	// Suggestions are an approval's suggested permission updates from its
	// agent: core.Approval.Suggestions, the JSON array as recorded (a
	// string: a Target is a map key), not sanitised (the dialog shows each
	// with termtext.Exact).
	Suggestions string
}

// Actions are the registry mutations the console offers (README "The console"). Every call
// carries the operator's identity for the journal. *core.Registry implements it.
type Actions interface {
	ApproveApproval(ctx context.Context, id string, scope core.Scope, actor core.Actor) (*core.Approval, *core.Grant, core.Result, error)
	// ApproveWithSuggestion approves once with the agent's suggested
	// permission update n (1-based), which the waiting hook hands back to
	// the agent (core.Registry.ApproveWithSuggestion).
	ApproveWithSuggestion(ctx context.Context, id string, n int, actor core.Actor) (*core.Approval, core.Result, error)
	DenyApproval(ctx context.Context, id, reason string, actor core.Actor) (*core.Approval, core.Result, error)
	CancelTask(ctx context.Context, id, reason string, actor core.Actor) (*core.Task, core.Result, error)
	KillRun(ctx context.Context, runID, reason string, actor core.Actor) (*core.Run, core.Result, error)
	// ReadNotification marks one alert read (id: the notification's id);
	// ReadAllNotifications every unread one, returning how many.
	ReadNotification(ctx context.Context, id int64, actor core.Actor) (core.Result, error)
	ReadAllNotifications(ctx context.Context, actor core.Actor) (int, error)
}

// JobActions cancel and reap background jobs (docs/contract.md "Background jobs: Ending", docs/contract.md "Background jobs: Reaped"). *supervisor.Jobs
// implements it (it is core.JobController).
type JobActions = core.JobController

// Plan is a maintenance plan as the console shows it: one line per planned
// action and finding, and an opaque value handed back to Apply.
type Plan struct {
	Summary string   // one line: what applying would do
	Lines   []string // one per action and audit finding
	Empty   bool     // nothing to apply
	Raw     any      // the maintainer's own plan
}

// SweepResult is what a sweep, an applied plan or a watchdog run reports.
type SweepResult struct {
	Short string   // compact, for the header ("3 lost · 12 pruned", "nothing to do")
	Text  string   // the full one-line report (docs/contract.md "Maintenance" first line)
	Lines []string // one per action and finding
	Wrote bool     // something was written (the console reloads everything)
}

// Maintenance is the embedded sweeper (docs/contract.md "Maintenance"). cmd_console adapts
// *sweep.Sweeper to it.
type Maintenance interface {
	// Plan builds the maintenance plan without writing (the dry run of `m`).
	Plan(ctx context.Context) (*Plan, error)
	// Apply executes a plan from Plan (conditional updates; raced are counted).
	Apply(ctx context.Context, p *Plan) (SweepResult, error)
	// Sweep plans and applies in one go (the periodic sweep).
	Sweep(ctx context.Context) (SweepResult, error)
	// Watchdog runs the R6 inactivity step alone.
	Watchdog(ctx context.Context) (SweepResult, error)
}

// Options configure the console.
type Options struct {
	// Source is the registry shown. Every pane reads windows of its rows
	// (feed.WindowSource: sorted, filtered and counted by the source); a
	// Source that only loads whole tables is wrapped in
	// feed.NewMemoryWindow, which answers windows from a copy of its rows
	// with the store's sorts and searchable fields, so a pane shows the
	// same order whatever the source.
	Source      feed.Source
	Actions     Actions     // nil with ReadOnly
	Jobs        JobActions  // nil: cancel/reap of jobs answer that jobs are unavailable
	Maintenance Maintenance // nil: no sweeper, `m` answers it is unavailable
	Theme       *themes.Theme
	Keys        KeyMap
	ReadOnly    bool
	// ReadOnlyWhy, with ReadOnly, is why (clawpit serve: "operator wall is
	// readonly"): a refused action key says it.
	ReadOnlyWhy string
	Operator    core.Actor
	Clock       core.Clock // nil: the system clock

	SweepInterval    time.Duration // 0 disables the embedded sweeper
	WatchdogInterval time.Duration // 0 disables the watchdog
	// PollInterval is the data_version poll (default 200 ms) of a source
	// without change hints (HintSource); with them the console reads it at
	// each hint and every HintSafetyNet (5 s) besides.
	PollInterval time.Duration
	// NoPoll: changes arrive as RefreshMsg (clawpit serve's shared
	// watcher), so the console does not poll data_version itself.
	NoPoll bool

	// Attention rings the bell and highlights the header once on what it
	// names (attention.go); the zero value is silent.
	Attention Attention

	// SweepNote, when set, is what the header says about the sweeper in
	// place of this console's own (a `clawpit serve` session: the server
	// sweeps, not the session).
	SweepNote string

	// LogView builds the job log view; nil uses a built-in placeholder.
	LogView func(ctx *Context, job Target) LogComponent

	// Owner, when set, says another program owns the registry shown (an
	// adapter's read-only view): the header shows its name badge and
	// note, and every action key answers Owner.Explain instead.
	Owner *Owner
}

// Owner describes the program that owns a registry the console only reads.
type Owner struct {
	Name string // badge text, e.g. "OPENCLAW"
	Note string // one short header note, e.g. "newest 5,000 finished rows"
	// Explain is the status-line answer to action (its name, e.g.
	// "approve") on t (have is false when nothing is selected).
	Explain func(action string, t Target, have bool) string
}

// LogComponent is the job log view as the root model drives it (an adapter
// over tui/logview).
type LogComponent interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (LogComponent, tea.Cmd)
	View() string
	SetSize(w, h int)
	Close()
	// Editing reports whether it takes every key (its search prompt): then
	// esc and q are its own, not "close".
	Editing() bool
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
}
