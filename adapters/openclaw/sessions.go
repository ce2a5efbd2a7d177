package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"path/filepath"
)

// AgentDBFile is an agent's session database under the state directory
// (OpenClaw 2026.9.6 keeps sessions there, table session_nodes; the
// sessions/sessions.json beside it is only the store's name).
func AgentDBFile(stateDir, agent string) string {
	return filepath.Join(stateDir, "agents", agent, "agent", "openclaw-agent.sqlite")
}

// agentSessions is one agent's session database, opened read-only like
// the registry (roOpen) for one sweep.
type agentSessions struct {
	h    *roHandle
	stmt *sql.Stmt
}

// openAgentSessions opens the agent's session database, nil when it is
// absent or unreadable (OpenClaw: a missing database has no sessions).
func openAgentSessions(ctx context.Context, stateDir, agent string) *agentSessions {
	if stateDir == "" {
		return nil
	}
	h, err := roOpen(ctx, AgentDBFile(stateDir, agent))
	if err != nil || h == nil {
		return nil
	}
	st, err := h.db.PrepareContext(ctx, `SELECT entry_json FROM session_nodes WHERE session_key = ?`)
	if err != nil {
		h.close()
		return nil
	}
	return &agentSessions{h: h, stmt: st}
}

func (a *agentSessions) close() {
	a.stmt.Close()
	a.h.close()
}

// lookup reads one session entry by its exact key; an entry whose JSON
// does not parse is skipped as OpenClaw's parseSessionEntryJson skips it.
func (a *agentSessions) lookup(ctx context.Context, key string) entry {
	var js string
	if err := a.stmt.QueryRowContext(ctx, key).Scan(&js); err != nil {
		return entry{}
	}
	var e struct {
		SubagentRecovery *struct {
			WedgedAt     any    `json:"wedgedAt"`
			WedgedReason string `json:"wedgedReason"`
		} `json:"subagentRecovery"`
	}
	if json.Unmarshal([]byte(js), &e) != nil {
		return entry{}
	}
	out := entry{found: true}
	if r := e.SubagentRecovery; r != nil {
		// isSubagentRecoveryWedgedEntry: a finite positive number.
		if n, ok := r.WedgedAt.(float64); ok && n > 0 && !math.IsInf(n, 0) {
			out.wedged, out.wedgedReason = true, r.WedgedReason
		}
	}
	return out
}
