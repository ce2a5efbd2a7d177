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
	h     *roHandle
	conn  *sql.Conn // one connection for the sweep: a new one per lookup costs more than the lookup
	tx    *sql.Tx   // one read transaction: one lock, not one per lookup
	stmt  *sql.Stmt
	cache map[string]entry
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
	conn, err := h.db.Conn(ctx)
	if err != nil {
		h.close()
		return nil
	}
	a := &agentSessions{h: h, conn: conn, cache: map[string]entry{}}
	if a.tx, err = conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}); err == nil {
		a.stmt, err = a.tx.PrepareContext(ctx, `SELECT entry_json FROM session_nodes WHERE session_key = ?`)
	}
	if err != nil {
		a.close()
		return nil
	}
	return a
}

func (a *agentSessions) close() {
	if a.stmt != nil {
		a.stmt.Close()
	}
	if a.tx != nil {
		a.tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	}
	a.conn.Close()
	a.h.close()
}

// lookup reads one session entry by its exact key; an entry whose JSON
// does not parse is skipped as OpenClaw's parseSessionEntryJson skips it.
func (a *agentSessions) lookup(ctx context.Context, key string) entry {
	if e, ok := a.cache[key]; ok {
		return e
	}
	e := a.read(ctx, key)
	a.cache[key] = e
	return e
}

func (a *agentSessions) read(ctx context.Context, key string) entry {
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
