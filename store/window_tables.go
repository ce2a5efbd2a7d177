package store

// Each entity's window table: its columns, sorts and filter fields
// (winTableOf), one constructor per entity.

import (
	"database/sql"

	"github.com/clawpit/clawpit/core"
	views "github.com/clawpit/clawpit/view" // package view (the tests hold a helper named view)
)

// winTableOf returns a fresh description of how entity's windows are read
// (fresh because agents is set per query), false for an entity without
// windows.
func winTableOf(entity string) (*winTable, bool) {
	switch entity {
	case core.EntityTask:
		return taskWindow(), true
	case core.EntityRun:
		return runWindow(), true
	case core.EntityApproval:
		return approvalWindow(), true
	case core.EntityJob:
		return jobWindow(), true
	case core.EntityNotification:
		return notificationWindow(), true
	}
	return nil, false
}

// winSorts is entity's sorts (view.Sorts) as windows read them: each key's
// column, then the id column (unless the last key is the id already), so
// every order is total and one row-value comparison seeks to an anchor.
func winSorts(entity, id string) []winSort {
	var out []winSort
	for _, s := range views.Sorts(entity) {
		keys := make([]string, 0, len(s.Keys)+1)
		for _, k := range s.Keys {
			keys = append(keys, k.Column)
		}
		if keys[len(keys)-1] != id {
			keys = append(keys, id)
		}
		out = append(out, winSort{name: s.Name, keys: keys, desc: s.Desc})
	}
	return out
}

// taskWindow reads tasks: searched by id, status, runtime, name, session,
// delivery status and error (on PostgreSQL through pgTaskHay), filtered by the
// owner session's agent, sorted by urgency, recency, creation or label.
func taskWindow() *winTable {
	return &winTable{
		table: "tasks", id: "id", cols: taskCols + ", " + agentCol("owner_session"), filter: taskFilter,
		agentSession: "owner_session",
		hay:          views.SQLFields(core.EntityTask),
		pgHay:        pgTaskHay, pgChars: pgTaskChars,
		sorts: winSorts(core.EntityTask, "id"),
		scan: func(r *sql.Rows, sink core.RowSink) error {
			var t core.Task
			if err := scanTask(agentScanner{r, &t.Agent}, &t); err != nil {
				return err
			}
			sink.Task(&t)
			return nil
		},
	}
}

// runWindow reads runs: searched by id, the state the console shows
// (waiting, running, ended or the outcome), label, child session and
// reason (the ended reason and the error, joined as the REASON column
// shows them), filtered by the requester's agent, sorted by urgency,
// recency, start or label.
func runWindow() *winTable {
	return &winTable{
		table: "runs", id: "run_id", cols: runCols + ", " + agentCol("requester_session"),
		agentSession: "requester_session",
		hay:          views.SQLFields(core.EntityRun),
		sorts:        winSorts(core.EntityRun, "run_id"),
		scan: func(r *sql.Rows, sink core.RowSink) error {
			var x core.Run
			if err := scanRun(agentScanner{r, &x.Agent}, &x); err != nil {
				return err
			}
			sink.Run(&x)
			return nil
		},
	}
}

// approvalWindow reads approvals: searched by id, status, tool, command,
// session, scope and decider, filtered by the session's agent, pending first
// in urgency order, else by recency or tool.
func approvalWindow() *winTable {
	return &winTable{
		table: "approvals", id: "id", cols: approvalCols + ", " + agentCol("session"),
		agentSession: "session",
		hay:          views.SQLFields(core.EntityApproval),
		sorts:        winSorts(core.EntityApproval, "id"),
		scan: func(r *sql.Rows, sink core.RowSink) error {
			var a core.Approval
			if err := scanApproval(agentScanner{r, &a.Agent}, &a); err != nil {
				return err
			}
			sink.Approval(&a)
			return nil
		},
	}
}

// jobWindow reads background jobs: searched by id, status, command,
// session and host (no agent filter), sorted by urgency, recency or command.
func jobWindow() *winTable {
	return &winTable{
		table: "jobs", id: "id", cols: jobCols,
		hay:   views.SQLFields(core.EntityJob),
		sorts: winSorts(core.EntityJob, "id"),
		scan: func(r *sql.Rows, sink core.RowSink) error {
			var j core.Job
			if err := scanJob(r, &j); err != nil {
				return err
			}
			sink.Job(&j)
			return nil
		},
	}
}

// notificationWindow reads notifications: searched by id, read state, kind,
// text, session and subject, unread first in urgency order, else by recency
// or kind.
func notificationWindow() *winTable {
	return &winTable{
		table: "notifications", id: "id", cols: notificationCols,
		hay:   views.SQLFields(core.EntityNotification),
		sorts: winSorts(core.EntityNotification, "id"),
		scan: func(r *sql.Rows, sink core.RowSink) error {
			var n core.Notification
			if err := scanNotification(r, &n); err != nil {
				return err
			}
			sink.Alert(&n)
			return nil
		},
	}
}
