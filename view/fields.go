package view

import "github.com/clawpit/clawpit/core"

// Field is one searchable field of an entity: text the console shows, which
// its filter (a case-insensitive substring, never spanning two fields)
// searches in memory and the store's windows search in SQL.
type Field struct {
	// Name is the console's name for it: its column, lower case.
	Name string
	// SQL is its text as an expression on the entity's table (SQLite's
	// dialect; the store rewrites it for PostgreSQL). "" for the agent:
	// the store matches it through the row's session (sessions.agent).
	SQL string
	// Loose marks a field whose SQL text is not the one the console shows:
	// a job's command is a JSON array of arguments in SQL, one line with
	// argv[0]'s base name in the console, so a term within one argument
	// matches both and a term across arguments (or quotes, or argv[0]'s
	// directory) only one.
	Loose bool
}

// The agent field's name: the store matches it through the row's session.
const FieldAgent = "agent"

// Fields returns entity's searchable fields in the order the console joins
// them, nil for an entity without a pane. The slice is fresh.
func Fields(entity string) []Field {
	agent := Field{Name: FieldAgent}
	switch entity {
	case core.EntityTask:
		return []Field{{Name: "id", SQL: "id"}, {Name: "status", SQL: "status"}, {Name: "runtime", SQL: "runtime"}, agent,
			{Name: "name", SQL: "win_name"}, {Name: "session", SQL: "coalesce(nullif(child_session, ''), owner_session, '')"},
			{Name: "delivery", SQL: "delivery_status"}, {Name: "error", SQL: "error"}}
	case core.EntityRun:
		return []Field{{Name: "run", SQL: "run_id"},
			{Name: "state", SQL: "(CASE WHEN ended_at IS NULL AND pending_approval_waits > 0 THEN 'waiting' " +
				"WHEN ended_at IS NULL THEN 'running' WHEN outcome = '' THEN 'ended' ELSE outcome END)"},
			agent, {Name: "label", SQL: "label"}, {Name: "child session", SQL: "child_session"},
			// As the REASON column: the ended reason, then the error.
			{Name: "reason", SQL: "(CASE WHEN error = '' THEN ended_reason WHEN ended_reason = '' THEN error " +
				"ELSE ended_reason || ': ' || error END)"}}
	case core.EntityApproval:
		return []Field{{Name: "id", SQL: "id"}, {Name: "status", SQL: "status"}, {Name: "tool", SQL: "tool"},
			{Name: "command", SQL: "command"}, agent, {Name: "session", SQL: "session"}, {Name: "scope", SQL: "scope"},
			{Name: "decided by", SQL: "decided_by"}}
	case core.EntityJob:
		return []Field{{Name: "id", SQL: "id"}, {Name: "status", SQL: "status"}, {Name: "command", SQL: "command", Loose: true},
			{Name: "session", SQL: "session"}, {Name: "host", SQL: "host"}}
	case core.EntityNotification:
		return []Field{{Name: "id", SQL: "CAST(id AS TEXT)"},
			{Name: "state", SQL: "(CASE WHEN delivered_at IS NULL THEN 'unread' ELSE 'read' END)"},
			{Name: "kind", SQL: "kind"}, {Name: "text", SQL: "text"}, {Name: "session", SQL: "session"},
			{Name: "subject", SQL: "subject_id"}}
	}
	return nil
}

// SQLFields returns the SQL of entity's fields the store searches itself
// (every one but the agent), leaving out the columns in except.
func SQLFields(entity string, except ...string) []string {
	var out []string
next:
	for _, f := range Fields(entity) {
		if f.SQL == "" {
			continue
		}
		for _, e := range except {
			if f.SQL == e {
				continue next
			}
		}
		out = append(out, f.SQL)
	}
	return out
}
