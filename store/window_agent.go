package store

import (
	"database/sql"
	"strings"
)

// The console shows which agent a row came from (issue 28) and its filter
// matches it: a task's agent is its owner session's, a run's its requester
// session's, an approval's its session's (sessions.agent, migration 0016).
// A window joins it in per row shown (one primary-key lookup each); a
// filter finds the agents whose name contains the text (few: one index
// seek each, migration 0017's sessions_agent) and matches the rows whose
// session is one of theirs.

// maxAgents bounds the distinct agents agentsMatching reads (clawpit's
// adapters record three; anything beyond is not a name an operator filters
// by).
const maxAgents = 64

// agentCol is the window's extra column: the agent of the row's session
// (col, unqualified: no column of sessions has its name), "" when the
// session is unknown. The row's table is named by the enclosing query (a
// CTE "m" on PostgreSQL, selectFew), hence no qualifier.
func agentCol(col string) string {
	return "coalesce((SELECT agent FROM sessions WHERE sessions.id = " + col + "), '')"
}

// agentsMatching lists the recorded agents whose name contains q, ASCII
// case folded as the filter's LIKE (agent names are ASCII): read from
// sessions_agent one distinct value at a time. None for an empty q.
func (t *tx) agentsMatching(q string) ([]string, error) {
	if q == "" {
		return nil, nil
	}
	lq := asciiLower(q)
	var out []string
	prev := ""
	for range maxAgents {
		var a sql.NullString
		if err := t.tx.QueryRowContext(t.ctx, t.db.dialectSQL("SELECT min(agent) FROM sessions WHERE agent > ?"), prev).Scan(&a); err != nil {
			return nil, mapErr(err)
		}
		if !a.Valid {
			break
		}
		if strings.Contains(asciiLower(a.String), lq) {
			out = append(out, a.String)
		}
		prev = a.String
	}
	return out, nil
}

// agentWhere is "the row's session is one of agents'" (plus: with a unary
// + on the column, which keeps SQLite's planner on the order's index) and
// its arguments; "" for no agents.
func agentWhere(col string, agents []string, plus bool) (string, []any) {
	if len(agents) == 0 {
		return "", nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(agents)), ", ")
	args := make([]any, len(agents))
	for i, a := range agents {
		args[i] = a
	}
	p := ""
	if plus {
		p = "+"
	}
	return p + col + " IN (SELECT id FROM sessions WHERE agent IN (" + marks + "))", args
}

// agentScanner scans a window row's columns and then its agent (agentCol).
type agentScanner struct {
	r     rowScanner
	agent *string
}

func (s agentScanner) Scan(dest ...any) error { return s.r.Scan(append(dest, s.agent)...) }
