package view

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// The computed values the sorts read (Key), as migration 0007's generated
// columns compute them in SQL (store/view_test.go checks they agree).

// TaskName is a task's name (KeyName, tasks.win_name): its label, else its
// kind, else what was asked.
func TaskName(t *core.Task) string {
	switch {
	case t.Label != "":
		return t.Label
	case t.Kind != "":
		return t.Kind
	}
	return t.Task
}

// TaskLast is when a task last did something (KeyLast, tasks.win_last,
// epoch ms): the later of its last activity (core.Task.LastActivity) and
// its end.
func TaskLast(t *core.Task) core.Timestamp { return max(t.LastActivity(), t.EndedAt) }

// RunLast is when a run last did something (KeyLast, runs.win_last, epoch
// ms): its end, else its last progress, else its start.
func RunLast(ended, progress, started core.Timestamp) core.Timestamp {
	return core.Coalesce(ended, progress, started)
}

// JobProgram is a job's program as the Jobs pane shows it (KeyProgram,
// jobs.win_program): argv[0] after its last '/', "" without arguments.
func JobProgram(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	return argv[0][strings.LastIndexByte(argv[0], '/')+1:]
}

// TaskValues reads a task's sort keys and searchable fields as the store
// does (tasks.win_*; Fields): a Memory of tasks.
func TaskValues() Values[core.Task] {
	return Values[core.Task]{
		Keys: map[string]func(*core.Task) any{
			KeyUrgency: func(t *core.Task) any { return int64(TaskUrgency(t.Status)) },
			KeyLast:    func(t *core.Task) any { return int64(TaskLast(t)) },
			KeyCreated: func(t *core.Task) any { return int64(t.CreatedAt) },
			KeyName:    func(t *core.Task) any { return TaskName(t) },
		},
		Fields: map[string]func(*core.Task) string{
			"id": func(t *core.Task) string { return t.ID }, "status": func(t *core.Task) string { return string(t.Status) },
			"runtime": func(t *core.Task) string { return string(t.Runtime) }, FieldAgent: func(t *core.Task) string { return t.Agent },
			"name": TaskName, "session": func(t *core.Task) string { return cmp.Or(t.ChildSession, t.OwnerSession) },
			"delivery": func(t *core.Task) string { return string(t.DeliveryStatus) }, "error": func(t *core.Task) string { return t.Error },
		},
		ID: func(t *core.Task) any { return t.ID },
	}
}

// RunValues: as TaskValues, for runs.
func RunValues() Values[core.Run] {
	return Values[core.Run]{
		Keys: map[string]func(*core.Run) any{
			KeyUrgency: func(r *core.Run) any { return int64(RunUrgency(RunState(r))) },
			KeyLast:    func(r *core.Run) any { return int64(RunLast(r.EndedAt, r.LastProgressAt, r.StartedAt)) },
			KeyStarted: func(r *core.Run) any { return int64(r.StartedAt) },
			KeyLabel:   func(r *core.Run) any { return r.Label },
		},
		Fields: map[string]func(*core.Run) string{
			"run": func(r *core.Run) string { return r.RunID }, "state": RunState,
			FieldAgent: func(r *core.Run) string { return r.Agent }, "label": func(r *core.Run) string { return r.Label },
			"child session": func(r *core.Run) string { return r.ChildSession },
			"reason": func(r *core.Run) string {
				switch {
				case r.Error == "":
					return r.EndedReason
				case r.EndedReason == "":
					return r.Error
				}
				return r.EndedReason + ": " + r.Error
			},
		},
		ID: func(r *core.Run) any { return r.RunID },
	}
}

// ApprovalValues: as TaskValues, for approvals.
func ApprovalValues() Values[core.Approval] {
	return Values[core.Approval]{
		Keys: map[string]func(*core.Approval) any{
			KeyPending:   func(a *core.Approval) any { return int64(ApprovalUrgency(a.Status)) },
			KeyRequested: func(a *core.Approval) any { return int64(a.RequestedAt) },
			KeyTool:      func(a *core.Approval) any { return a.Tool },
		},
		Fields: map[string]func(*core.Approval) string{
			"id": func(a *core.Approval) string { return a.ID }, "status": func(a *core.Approval) string { return string(a.Status) },
			"tool": func(a *core.Approval) string { return a.Tool }, "command": func(a *core.Approval) string { return a.Command },
			FieldAgent: func(a *core.Approval) string { return a.Agent }, "session": func(a *core.Approval) string { return a.Session },
			"scope": func(a *core.Approval) string { return string(a.Scope) }, "decided by": func(a *core.Approval) string { return a.DecidedBy },
		},
		ID: func(a *core.Approval) any { return a.ID },
	}
}

// JobValues: as TaskValues, for jobs. The command sorts by its program
// (JobProgram), then as the store's column holds it (argv as a JSON array),
// and is searched as one line.
func JobValues() Values[core.Job] {
	return Values[core.Job]{
		Keys: map[string]func(*core.Job) any{
			KeyUrgency: func(j *core.Job) any { return int64(JobUrgency(j.Status)) },
			KeyCreated: func(j *core.Job) any { return int64(j.CreatedAt) },
			KeyProgram: func(j *core.Job) any { return JobProgram(j.Command) },
			KeyCommand: func(j *core.Job) any {
				b, _ := json.Marshal(j.Command) // a []string always encodes
				return string(b)
			},
		},
		Fields: map[string]func(*core.Job) string{
			"id": func(j *core.Job) string { return j.ID }, "status": func(j *core.Job) string { return string(j.Status) },
			"command": func(j *core.Job) string { return core.CommandLine(j.Command) },
			"session": func(j *core.Job) string { return j.Session }, "host": func(j *core.Job) string { return j.Host },
		},
		ID: func(j *core.Job) any { return j.ID },
	}
}

// AlertValues: as TaskValues, for notifications (ids are numbers).
func AlertValues() Values[core.Notification] {
	return Values[core.Notification]{
		Keys: map[string]func(*core.Notification) any{
			KeyUnread: func(n *core.Notification) any { return int64(AlertUrgency(n.DeliveredAt)) },
			KeyID:     func(n *core.Notification) any { return n.ID },
			KeyKind:   func(n *core.Notification) any { return string(n.Kind) },
		},
		Fields: map[string]func(*core.Notification) string{
			"id": func(n *core.Notification) string { return strconv.FormatInt(n.ID, 10) },
			"state": func(n *core.Notification) string {
				if n.DeliveredAt == 0 {
					return "unread"
				}
				return "read"
			},
			"kind": func(n *core.Notification) string { return string(n.Kind) }, "text": func(n *core.Notification) string { return n.Text },
			"session": func(n *core.Notification) string { return n.Session }, "subject": func(n *core.Notification) string { return n.SubjectID },
		},
		ID: func(n *core.Notification) any { return n.ID },
	}
}
