package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
)

// actionMsg reports an action's outcome for the status line.
type actionMsg struct {
	text string
	lvl  level
}

// outcome turns an action's Result and error into the status line: success,
// the exact refusal, or the error (SPEC §9).
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

// actionKey handles the action keys (approve, deny, cancel, kill, reap,
// maintenance) on target t. It reports whether k was an action key.
func (m *Model) actionKey(k tea.KeyPressMsg, t Target, have bool) (tea.Cmd, bool) {
	keys := m.ctx.Keys
	var name string
	switch {
	case key.Matches(k, keys.Approve):
		name = "approve"
	case key.Matches(k, keys.Deny):
		name = "deny"
	case key.Matches(k, keys.Cancel):
		name = "cancel"
	case key.Matches(k, keys.Kill):
		name = "kill"
	case key.Matches(k, keys.Reap):
		name = "reap"
	case key.Matches(k, keys.Maintenance):
		name = "maintenance"
	default:
		return nil, false
	}
	if m.ctx.ReadOnly {
		m.setStatus("read-only console: "+name+" is disabled", lvlWarn)
		return nil, true
	}
	if name == "maintenance" {
		return m.startPlan(), true
	}
	if !have {
		m.setStatus("nothing selected to "+name, lvlInfo)
		return nil, true
	}
	// The detail view's target was copied when it opened: take the status the
	// pane shows now.
	if p, ok := m.panes[t.Kind].(interface {
		statusOf(id string) (string, bool)
	}); ok {
		if st, ok := p.statusOf(t.ID); ok {
			t.Status = st
		}
	}
	switch name {
	case "approve", "deny":
		if t.Kind != KindApproval {
			m.setStatus(name+" applies to approvals (pane "+firstKey(keys.Approvals)+")", lvlInfo)
			return nil, true
		}
		if t.Status != string(core.ApprovalPending) {
			m.setStatus("approval "+t.Short+" is already "+t.Status+": nothing to decide", lvlInfo)
			return nil, true
		}
		if m.opts.Actions == nil {
			m.setStatus(name+" is not available in this console", lvlWarn)
			return nil, true
		}
		if name == "approve" {
			m.dialog = newScopeDialog(t)
		} else {
			m.dialog = &reasonDialog{t: t, in: lineInput{limit: 500}}
		}
	case "cancel":
		m.cancelDialog(t)
	case "kill":
		m.killDialog(t)
	case "reap":
		m.reapDialog(t)
	}
	return nil, true
}

// The dialogs below are refused up front, on the status the row shows, when
// the entity has already ended: asking to confirm something that can only be
// refused wastes a keystroke (the action itself still refuses if it raced).

func (m *Model) cancelDialog(t Target) {
	switch t.Kind {
	case KindTask:
		if core.TaskStatus(t.Status).Terminal() {
			m.setStatus("task "+t.Short+" is already "+t.Status+": nothing to cancel", lvlInfo)
			return
		}
		if m.opts.Actions == nil {
			m.setStatus("cancel is not available in this console", lvlWarn)
			return
		}
		act, op := m.opts.Actions, m.ctx.Operator
		m.dialog = &confirmDialog{
			title: "Cancel task " + t.Short + "?",
			lines: []string{t.Name, "status " + t.Status,
				"The task becomes cancelled (\"" + core.DefaultCancelError + "\"); its run is killed and its job cancelled."},
			yes: "cancel task", no: "keep it",
			run: func(ctx context.Context) actionMsg {
				_, res, err := act.CancelTask(ctx, t.ID, "", op)
				return outcome("cancel task "+t.Short, res, err, "cancelled task "+t.Short)
			},
		}
	case KindJob:
		if !core.JobStatus(t.Status).Active() {
			m.setStatus("job "+t.Short+" is already "+t.Status+": nothing to cancel", lvlInfo)
			return
		}
		if m.opts.Jobs == nil {
			m.setStatus("job control is not available in this console", lvlWarn)
			return
		}
		jobs, op := m.opts.Jobs, m.ctx.Operator
		m.dialog = &confirmDialog{
			title: "Cancel job " + t.Short + "?",
			lines: []string{t.Name, "status " + t.Status, "SIGTERM to its process group, SIGKILL after 5 s."},
			yes:   "cancel job", no: "keep it",
			run: func(ctx context.Context) actionMsg {
				_, res, err := jobs.CancelJob(ctx, t.ID, op)
				return outcome("cancel job "+t.Short, res, err, "cancelled job "+t.Short)
			},
		}
	default:
		m.setStatus("cancel applies to tasks and jobs", lvlInfo)
	}
}

func (m *Model) killDialog(t Target) {
	runID := ""
	switch {
	case t.Kind == KindRun:
		runID = t.ID
	case t.Kind == KindTask && t.RunID != "":
		runID = t.RunID
	default:
		m.setStatus("kill applies to runs (or a task that mirrors a run)", lvlInfo)
		return
	}
	if state, ok := m.runState(t, runID); ok && state != "running" && state != "waiting" {
		m.setStatus("run "+runID+" has already ended ("+state+"): nothing to kill", lvlInfo)
		return
	}
	if m.opts.Actions == nil {
		m.setStatus("kill is not available in this console", lvlWarn)
		return
	}
	act, op := m.opts.Actions, m.ctx.Operator
	lines := []string{t.Name}
	if t.Kind == KindTask {
		lines = append(lines, "the run of task "+t.Short)
	}
	lines = append(lines, "Ends the run (outcome killed) and cancels its pending approvals;",
		"its tasks keep their status until the next sweep marks them lost.")
	m.dialog = &confirmDialog{
		title: "Kill run " + runID + "?",
		lines: lines, yes: "kill run", no: "keep it",
		run: func(ctx context.Context) actionMsg {
			_, res, err := act.KillRun(ctx, runID, "", op)
			return outcome("kill run "+runID, res, err, "killed run "+runID)
		},
	}
}

// runState is the state the Runs pane shows for runID (running, waiting or
// the outcome); ok is false when the run is not loaded.
func (m *Model) runState(t Target, runID string) (string, bool) {
	if t.Kind == KindRun {
		return t.Status, true
	}
	if s, ok := m.runs.ids[runID]; ok && !m.runs.gone[s] {
		return m.runs.rows[s].state, true
	}
	return "", false
}

func (m *Model) reapDialog(t Target) {
	if t.Kind != KindJob && t.Kind != KindTask {
		m.setStatus("reap applies to a job or task row: it reaps that session's jobs", lvlInfo)
		return
	}
	if t.Session == "" {
		m.setStatus(t.Kind.String()+" "+t.Short+" has no session to reap", lvlInfo)
		return
	}
	if m.opts.Jobs == nil {
		m.setStatus("job control is not available in this console", lvlWarn)
		return
	}
	jobs, op, s := m.opts.Jobs, m.ctx.Operator, t.Session
	m.dialog = &confirmDialog{
		title: "Reap the jobs of session " + s + "?",
		lines: []string{"Kills every pending or running job of the session and marks it reaped."},
		yes:   "reap", no: "keep them",
		run: func(ctx context.Context) actionMsg {
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
	}
}

// approveCmd approves t with scope.
func (m *Model) approveCmd(t Target, scope core.Scope) tea.Cmd {
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	return func() tea.Msg {
		_, g, res, err := act.ApproveApproval(ctx, t.ID, scope, op)
		ok := "approved " + t.Short + " (" + string(scope) + ")"
		if g != nil && scope != core.ScopeOnce {
			ok += ", grant " + g.ID
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

func (m *Model) startPlan() tea.Cmd {
	mt := m.opts.Maintenance
	if mt == nil {
		m.setStatus("maintenance is not available in this console", lvlWarn)
		return nil
	}
	m.dialog = &planDialog{loading: true}
	ctx := m.bg
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
		m.watching = false
		m.nextWatchdog = now.Add(m.opts.WatchdogInterval)
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
		m.sweeping = false
		m.nextSweep = now.Add(m.opts.SweepInterval)
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
	return m.startLoad(false)
}
