package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/view"
)

// actionMsg reports an action's outcome for the status line.
type actionMsg struct {
	text string
	lvl  level
}

// outcome turns an action's Result and error into the status line: success,
// the exact refusal, or the error (README "The console").
func outcome(what string, res core.Result, err error, okText string) actionMsg {
	switch {
	case err != nil && res.Applied:
		return actionMsg{okText + ", but: " + errText(err), lvlWarn}
	case err != nil:
		return actionMsg{what + " failed: " + errText(err), lvlErr}
	case !res.Applied:
		return actionMsg{what + " refused: " + oneLine(res.Reason), lvlWarn}
	}
	if res.Reason != "" {
		okText += " (" + oneLine(res.Reason) + ")"
	}
	return actionMsg{okText, lvlOK}
}

// statusMsg sets the status line, then runs next (when not nil). Dialogs
// report through it: the status is set before the action it announces
// starts, so an action's outcome never lands under its "…" line.
type statusMsg struct {
	text string
	lvl  level
	next tea.Cmd
}

// statusCmd reports text on the status line, then runs next.
func statusCmd(text string, lvl level, next tea.Cmd) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: text, lvl: lvl, next: next} }
}

// refusal is why an action key does nothing on a target: the status line's
// text and level. The zero refusal means the action is enabled.
type refusal struct {
	text string
	lvl  level
}

func info(text string) refusal { return refusal{text, lvlInfo} }

func warn(text string) refusal { return refusal{text, lvlWarn} }

// actionBinding is one action key as data, in the manner of lazygit's
// controllers: the binding, the pane kinds it applies to, why it is
// disabled on a target, and the dialog it opens. actionKey walks the table;
// the panes' help lists the rows for their kind.
type actionBinding struct {
	name    string
	binding func(*KeyMap) key.Binding
	// kinds are the panes whose rows the action applies to; nil: it needs
	// no target (maintenance).
	kinds []feed.Kind
	// wrongKind is the status when the selected row is of another kind.
	wrongKind func(k *KeyMap) string
	// disabled returns why the action is refused on t (t.Status is the one
	// the pane shows now); the zero refusal when it may go ahead.
	disabled func(m *Model, t Target) refusal
	// open builds the dialog (and the Cmd that feeds it, if any).
	open func(m *Model, t Target) (dialog, tea.Cmd)
}

// The dialogs are refused up front, on the status the row shows, when the
// entity has already ended: asking to confirm something that can only be
// refused wastes a keystroke (the action itself still refuses if it raced).
var actionBindings = []actionBinding{
	{
		name:      "approve",
		binding:   func(k *KeyMap) key.Binding { return k.Approve },
		kinds:     []feed.Kind{feed.KindApproval},
		wrongKind: func(k *KeyMap) string { return "approve applies to approvals (pane " + firstKey(k.Approvals) + ")" },
		disabled:  func(m *Model, t Target) refusal { return m.undecided("approve", t) },
		open: func(m *Model, t Target) (dialog, tea.Cmd) {
			return newScopeDialog(t, func(s core.Scope, n int) tea.Cmd { return m.approveCmd(t, s, n) }), nil
		},
	},
	{
		name:      "deny",
		binding:   func(k *KeyMap) key.Binding { return k.Deny },
		kinds:     []feed.Kind{feed.KindApproval},
		wrongKind: func(k *KeyMap) string { return "deny applies to approvals (pane " + firstKey(k.Approvals) + ")" },
		disabled:  func(m *Model, t Target) refusal { return m.undecided("deny", t) },
		open: func(m *Model, t Target) (dialog, tea.Cmd) {
			return &reasonDialog{t: t, in: lineInput{limit: 500}, deny: func(r string) tea.Cmd { return m.denyCmd(t, r) }}, nil
		},
	},
	{
		name:      "cancel",
		binding:   func(k *KeyMap) key.Binding { return k.Cancel },
		kinds:     []feed.Kind{feed.KindTask, feed.KindJob},
		wrongKind: func(*KeyMap) string { return "cancel applies to tasks and jobs" },
		disabled:  (*Model).cancelDisabled,
		open:      (*Model).cancelDialog,
	},
	{
		name:      "kill",
		binding:   func(k *KeyMap) key.Binding { return k.Kill },
		kinds:     []feed.Kind{feed.KindRun, feed.KindTask},
		wrongKind: func(*KeyMap) string { return killWrongKind },
		disabled:  (*Model).killDisabled,
		open:      (*Model).killDialog,
	},
	{
		name:      "reap",
		binding:   func(k *KeyMap) key.Binding { return k.Reap },
		kinds:     []feed.Kind{feed.KindJob, feed.KindTask},
		wrongKind: func(*KeyMap) string { return "reap applies to a job or task row: it reaps that session's jobs" },
		disabled:  (*Model).reapDisabled,
		open:      (*Model).reapDialog,
	},
	ackBinding,
	ackAllBinding,
	{
		name:    "maintenance",
		binding: func(k *KeyMap) key.Binding { return k.Maintenance },
		disabled: func(m *Model, _ Target) refusal {
			if m.opts.Maintenance == nil {
				return warn("maintenance is not available in this console")
			}
			return refusal{}
		},
		open: func(m *Model, _ Target) (dialog, tea.Cmd) {
			return &planDialog{loading: true, apply: m.applyCmd}, m.planCmd()
		},
	},
}

const killWrongKind = "kill applies to runs (or a task that mirrors a run)"

// actionKeysFor lists the action bindings that apply to rows of kind, in
// table order (the panes' help).
func actionKeysFor(k *KeyMap, kind feed.Kind) []key.Binding {
	var out []key.Binding
	for _, a := range actionBindings {
		if slices.Contains(a.kinds, kind) {
			out = append(out, a.binding(k))
		}
	}
	return out
}

// actionKey handles the action keys (approve, deny, cancel, kill, reap,
// maintenance) on target t (have: a row is selected). It reports whether k
// was an action key. A refused action says why on the status line.
func (m *Model) actionKey(k tea.KeyPressMsg, t Target, have bool) (tea.Cmd, bool) {
	var a *actionBinding
	for i := range actionBindings {
		if key.Matches(k, actionBindings[i].binding(m.ctx.Keys)) {
			a = &actionBindings[i]
			break
		}
	}
	if a == nil {
		return nil, false
	}
	r := m.refuse(a, &t, have)
	if r.text != "" {
		m.setStatus(r.text, r.lvl)
		return nil, true
	}
	d, cmd := a.open(m, t)
	m.dialog = d
	return cmd, true
}

// refuse is why action a is refused on t (the zero refusal: it is not). It
// refreshes t.Status from the pane: the detail view's target was copied
// when it opened.
func (m *Model) refuse(a *actionBinding, t *Target, have bool) refusal {
	switch {
	case m.opts.Owner != nil && m.opts.Owner.Explain != nil:
		return info(m.opts.Owner.Explain(a.name, *t, have))
	case m.ctx.ReadOnly && m.opts.ReadOnlyWhy != "":
		return warn("read-only console: " + a.name + " is disabled (" + m.opts.ReadOnlyWhy + ")")
	case m.ctx.ReadOnly:
		return warn("read-only console: " + a.name + " is disabled")
	case a.kinds == nil:
		return a.disabled(m, *t)
	case !have:
		return info("nothing selected to " + a.name)
	}
	if p, ok := m.panes[t.Kind].(interface {
		statusOf(id string) (string, bool)
	}); ok {
		if st, ok := p.statusOf(t.ID); ok {
			t.Status = st
		}
	}
	if !slices.Contains(a.kinds, t.Kind) {
		return info(a.wrongKind(m.ctx.Keys))
	}
	return a.disabled(m, *t)
}

// undecided refuses approve and deny on an approval that is no longer
// pending.
func (m *Model) undecided(name string, t Target) refusal {
	if t.Status != string(core.ApprovalPending) {
		return info("approval " + t.Short + " is already " + t.Status + ": nothing to decide")
	}
	if m.opts.Actions == nil {
		return warn(name + " is not available in this console")
	}
	return refusal{}
}

func (m *Model) cancelDisabled(t Target) refusal {
	if t.Kind == feed.KindJob {
		if !core.JobStatus(t.Status).Active() {
			return info("job " + t.Short + " is already " + t.Status + ": nothing to cancel")
		}
		if m.opts.Jobs == nil {
			return warn("job control is not available in this console")
		}
		return refusal{}
	}
	if core.TaskStatus(t.Status).Terminal() {
		return info("task " + t.Short + " is already " + t.Status + ": nothing to cancel")
	}
	if m.opts.Actions == nil {
		return warn("cancel is not available in this console")
	}
	return refusal{}
}

func (m *Model) cancelDialog(t Target) (dialog, tea.Cmd) {
	op, ctx := m.ctx.Operator, m.bg
	if t.Kind == feed.KindJob {
		jobs := m.opts.Jobs
		return &confirmDialog{
			title: "Cancel job " + t.Short + "?",
			lines: []string{t.Name, "status " + t.Status, "SIGTERM to its process group, SIGKILL after 5 s."},
			yes:   "cancel job", no: "keep it",
			run: func() tea.Msg {
				_, res, err := jobs.CancelJob(ctx, t.ID, op)
				return outcome("cancel job "+t.Short, res, err, "cancelled job "+t.Short)
			},
		}, nil
	}
	act := m.opts.Actions
	return &confirmDialog{
		title: "Cancel task " + t.Short + "?",
		lines: []string{t.Name, "status " + t.Status,
			"The task becomes cancelled (\"" + core.DefaultCancelError + "\"); its run is killed and its job cancelled."},
		yes: "cancel task", no: "keep it",
		run: func() tea.Msg {
			_, res, err := act.CancelTask(ctx, t.ID, "", op)
			return outcome("cancel task "+t.Short, res, err, "cancelled task "+t.Short)
		},
	}, nil
}

// killRunID is the run that kill ends for t: the run itself, or the run a
// task mirrors ("" when none).
func killRunID(t Target) string {
	switch t.Kind {
	case feed.KindRun:
		return t.ID
	case feed.KindTask:
		return t.RunID
	}
	return ""
}

func (m *Model) killDisabled(t Target) refusal {
	runID := killRunID(t)
	if runID == "" {
		return info(killWrongKind)
	}
	if state, ok := m.runState(t, runID); ok && state != "running" && state != "waiting" {
		return info("run " + runID + " has already ended (" + state + "): nothing to kill")
	}
	if m.opts.Actions == nil {
		return warn("kill is not available in this console")
	}
	return refusal{}
}

func (m *Model) killDialog(t Target) (dialog, tea.Cmd) {
	runID := killRunID(t)
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	lines := []string{t.Name}
	if t.Kind == feed.KindTask {
		lines = append(lines, "the run of task "+t.Short)
	}
	lines = append(lines, "Ends the run (outcome killed) and cancels its pending approvals;",
		"its tasks keep their status until the next sweep marks them lost.")
	return &confirmDialog{
		title: "Kill run " + runID + "?",
		lines: lines, yes: "kill run", no: "keep it",
		run: func() tea.Msg {
			_, res, err := act.KillRun(ctx, runID, "", op)
			return outcome("kill run "+runID, res, err, "killed run "+runID)
		},
	}, nil
}

// runState is the state the Runs pane shows for runID (running, waiting or
// the outcome); ok is false when the run is not loaded.
func (m *Model) runState(t Target, runID string) (string, bool) {
	if t.Kind == feed.KindRun {
		return t.Status, true
	}
	if s, ok := m.runs.ids[runID]; ok {
		return m.runs.rows[s].state, true
	}
	return "", false
}

func (m *Model) reapDisabled(t Target) refusal {
	if t.Session == "" {
		return info(t.Kind.String() + " " + t.Short + " has no session to reap")
	}
	if m.opts.Jobs == nil {
		return warn("job control is not available in this console")
	}
	return refusal{}
}

// reapCountMax is the most of a session's jobs the reap dialog reads to
// count its pending and running ones.
const reapCountMax = 1000

// reapCountMsg is how many pending or running jobs a session has: the reap
// dialog's line.
type reapCountMsg struct {
	session string
	n       int
	err     error
}

// reapCountCmd counts session's pending and running jobs in the registry,
// not only the Jobs window's: one window in the urgency order (running and
// pending first) filtered by the session (which keeps rows that merely
// mention it too: the session is compared here).
func reapCountCmd(ctx context.Context, src feed.WindowSource, session string) tea.Cmd {
	return func() tea.Msg {
		b := newBatch()
		req := feed.WindowRequest{Kind: feed.KindJob, Sort: view.SortNames(core.EntityJob)[0], Query: session, After: reapCountMax}
		if _, err := src.Window(ctx, req, b); err != nil {
			return reapCountMsg{session: session, err: err}
		}
		n := 0
		for i := range b.jobs {
			if r := &b.jobs[i]; r.session == session && r.status.Active() {
				n++
			}
		}
		return reapCountMsg{session: session, n: n}
	}
}

// reapLine is the reap dialog's line once the session's jobs are counted.
func reapLine(msg reapCountMsg) string {
	switch {
	case msg.err != nil:
		return "Counting the session's jobs failed (" + oneLine(errText(msg.err)) + "); reap kills every pending or running one."
	case msg.n == 0:
		return "The session has no pending or running job: nothing to kill; reap records that."
	}
	return fmt.Sprintf("Kills the %d pending or running job%s of the session and marks %s reaped.",
		msg.n, pluralS(msg.n), plural(msg.n, "it", "them"))
}

func (m *Model) reapDialog(t Target) (dialog, tea.Cmd) {
	jobs, op, ctx, s := m.opts.Jobs, m.ctx.Operator, m.bg, t.Session
	what := "Counting the session's pending and running jobs…"
	return &confirmDialog{
		title: "Reap the jobs of session " + s + "?",
		lines: []string{what}, counting: s,
		yes: "reap", no: "keep them",
		run: func() tea.Msg {
			rep, err := jobs.ReapSession(ctx, s, op)
			if err != nil {
				return actionMsg{"reap session " + s + " failed: " + errText(err), lvlErr}
			}
			if len(rep.Reaped) == 0 {
				return actionMsg{"session " + s + " has no pending or running jobs: nothing reaped", lvlInfo}
			}
			text := fmt.Sprintf("reaped %d job%s of session %s", len(rep.Reaped), pluralS(len(rep.Reaped)), s)
			if rep.TimedOut {
				text += " (some processes outlived the 5 s wait)"
			}
			return actionMsg{text, lvlOK}
		},
	}, reapCountCmd(ctx, m.src, s)
}

// approveCmd approves t with scope, or (n > 0) once with its agent's
// suggestion n.
func (m *Model) approveCmd(t Target, scope core.Scope, n int) tea.Cmd {
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	return func() tea.Msg {
		if n > 0 {
			_, res, err := act.ApproveWithSuggestion(ctx, t.ID, n, op)
			return outcome("approve "+t.Short, res, err, "approved "+t.Short+" (once, with suggestion "+strconv.Itoa(n)+")")
		}
		_, g, res, err := act.ApproveApproval(ctx, t.ID, scope, op)
		ok := "approved " + t.Short + " (" + string(scope) + ")"
		if g != nil && scope != core.ScopeOnce {
			ok += ", grant " + g.ID + " " + oneLine(g.Tool) + " " + strconv.Quote(g.Pattern)
		}
		return outcome("approve "+t.Short, res, err, ok)
	}
}

// denyCmd denies t with an optional reason.
func (m *Model) denyCmd(t Target, reason string) tea.Cmd {
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	return func() tea.Msg {
		_, res, err := act.DenyApproval(ctx, t.ID, reason, op)
		ok := "denied " + t.Short
		if reason != "" {
			ok += ": " + reason
		}
		return outcome("deny "+t.Short, res, err, ok)
	}
}

// ---- maintenance ------------------------------------------------------

type planMsg struct {
	plan *Plan
	err  error
}

// planCmd asks the maintenance for a dry-run plan.
func (m *Model) planCmd() tea.Cmd {
	mt, ctx := m.opts.Maintenance, m.bg
	return func() tea.Msg {
		p, err := mt.Plan(ctx)
		return planMsg{plan: p, err: err}
	}
}

type sweepKind uint8

const (
	sweepPeriodic sweepKind = iota
	sweepWatchdog
	sweepApply
)

type sweepMsg struct {
	kind sweepKind
	res  SweepResult
	err  error
}

func sweepCmd(ctx context.Context, kind sweepKind, fn func(context.Context) (SweepResult, error)) tea.Cmd {
	return func() tea.Msg {
		res, err := fn(ctx)
		return sweepMsg{kind: kind, res: res, err: err}
	}
}

func (m *Model) applyCmd(p *Plan) tea.Cmd {
	mt := m.opts.Maintenance
	return sweepCmd(m.bg, sweepApply, func(ctx context.Context) (SweepResult, error) { return mt.Apply(ctx, p) })
}

func (m *Model) onSweep(msg sweepMsg) tea.Cmd {
	now := m.ctx.now()
	switch msg.kind {
	case sweepWatchdog:
		m.sched.Done(maintain.KindWatchdog)
		switch {
		case msg.err != nil && isBusy(msg.err):
			m.setStatus("database busy, retrying…", lvlWarn)
		case msg.err != nil:
			m.setStatus("watchdog failed: "+errText(msg.err), lvlErr)
		case msg.res.Wrote:
			m.setStatus("watchdog: "+msg.res.Short, lvlInfo)
		}
		return m.startLoad(false)
	case sweepPeriodic:
		m.sched.Done(maintain.KindSweep)
	case sweepApply:
		if _, ok := m.dialog.(*planDialog); ok {
			m.dialog = nil
		}
		if msg.err != nil {
			m.setStatus("maintenance failed: "+errText(msg.err), lvlErr)
		} else {
			m.setStatus("maintenance applied: "+msg.res.Short, lvlOK)
		}
	}
	m.lastSweepAt, m.lastSweep, m.lastSweepErr = now, msg.res, msg.err
	// A sweep that wrote may have pruned rows, and a prune leaves no journal
	// for a delta load to find: reload everything, so the header's counts
	// agree with what the sweep just reported.
	return m.startLoad(msg.res.Wrote)
}
