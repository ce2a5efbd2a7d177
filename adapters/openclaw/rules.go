package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// OpenClaw's thresholds, as its source sets them (openclaw/openclaw
// src/tasks/, read at task-registry.maintenance.ts 00f57cb1781e and
// task-registry.audit.ts 0aa87298bc1e).
const (
	// GraceMs: src/tasks/task-registry.maintenance.ts TASK_RECONCILE_GRACE_MS.
	GraceMs = 5 * 60_000
	// RetentionMs: task-registry.runtime-config.ts DEFAULT_TASK_RETENTION_MS
	// (getTaskRetentionMs, used by maintenance.ts resolveCleanupAfter).
	RetentionMs = 7 * 24 * 60 * 60_000
	// LostRetentionMs: src/tasks/task-retention.ts LOST_TASK_RETENTION_MS
	// (the audit's resolveEffectiveTaskCleanupAfter).
	LostRetentionMs = 24 * 60 * 60_000
	// StaleQueuedMs, StaleRunningMs: task-registry.audit.ts DEFAULT_STALE_*.
	StaleQueuedMs  = 10 * 60_000
	StaleRunningMs = 30 * 60_000
)

// Options are the clock and thresholds of a reading (zero values select
// OpenClaw's defaults and the system clock).
type Options struct {
	Now         time.Time
	GraceMs     int64
	RetentionMs int64
	// MaxActions, when > 0, lists at most this many preview actions per
	// rule; the counts stay exact (the rest is counted by index, not read).
	MaxActions int

	// skipScan leaves out the audit's one unindexed scan (delivery_failed
	// and timestamp checks on finished rows that have cleanup_after): the
	// console's alerts skip it to keep its first screen fast.
	skipScan bool
}

func timeNow() time.Time { return time.Now() }

func (o Options) now() int64 {
	if o.Now.IsZero() {
		return time.Now().UnixMilli()
	}
	return o.Now.UnixMilli()
}

func (o Options) grace() int64 {
	if o.GraceMs > 0 {
		return o.GraceMs
	}
	return GraceMs
}

func (o Options) retention() int64 {
	if o.RetentionMs > 0 {
		return o.RetentionMs
	}
	return RetentionMs
}

// backing answers OpenClaw's hasBackingSession as the `openclaw tasks`
// CLI process sees it (a separate process from the gateway): cron is never
// authoritative there, and no CLI agent run context is in its memory. It
// caches session stores per sweep like maintenance.ts
// BackingSessionLookupContext.
type backing struct {
	d      *DB
	tx     *sql.Tx
	stores map[string]map[string]bool // sessions.json path → lowercased keys (nil: no file)
	// Statements prepared once per sweep: one lookup per active task.
	session, acp, run *sql.Stmt
}

func newBacking(d *DB, tx *sql.Tx) *backing {
	return &backing{d: d, tx: tx, stores: map[string]map[string]bool{}}
}

// stmt prepares q once on the transaction.
func (b *backing) stmt(ctx context.Context, p **sql.Stmt, q string) (*sql.Stmt, error) {
	if *p == nil {
		st, err := b.tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("openclaw read: %w", err)
		}
		*p = st
	}
	return *p, nil
}

// close releases the prepared statements.
func (b *backing) close() {
	for _, st := range []*sql.Stmt{b.session, b.acp, b.run} {
		if st != nil {
			st.Close()
		}
	}
}

// chatType is session-chat-type-base.ts deriveSessionChatTypeFromScopedKey
// over the key without its "agent:<id>:" head (deriveSessionChatTypeFromKey).
func chatType(key string) string {
	k := strings.ToLower(strings.TrimSpace(key))
	if _, rest, ok := parseAgentKey(k); ok {
		k = rest
	}
	tok := map[string]bool{}
	for _, t := range strings.Split(k, ":") {
		if t != "" {
			tok[t] = true
		}
	}
	switch {
	case tok["group"]:
		return "group"
	case tok["channel"]:
		return "channel"
	case tok["direct"], tok["dm"]:
		return "direct"
	}
	return "unknown"
}

// parseAgentKey splits "agent:<id>:<rest>" (routing/session-key.ts
// parseAgentSessionKey).
func parseAgentKey(k string) (agent, rest string, ok bool) {
	parts := strings.SplitN(k, ":", 3)
	if len(parts) != 3 || parts[0] != "agent" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// sessionExists looks the child session key up where OpenClaw keeps it: the
// agent's session store $STATE/agents/<agent>/sessions/sessions.json (keys
// matched exactly, then lower-cased: maintenance.ts findSessionEntryByKey);
// when that file is absent, the database's session_state_heads.
func (b *backing) sessionExists(ctx context.Context, key string) bool {
	agent := "main"
	if a, _, ok := parseAgentKey(strings.ToLower(strings.TrimSpace(key))); ok {
		agent = a
	}
	if b.d.StateDir != "" {
		p := filepath.Join(b.d.StateDir, "agents", agent, "sessions", "sessions.json")
		keys, seen := b.stores[p]
		if !seen {
			keys = loadSessionKeys(p)
			b.stores[p] = keys
		}
		if keys != nil {
			return keys[key] || keys[strings.ToLower(strings.TrimSpace(key))]
		}
	}
	if !b.d.hasSessions {
		return false
	}
	st, err := b.stmt(ctx, &b.session, "SELECT 1 FROM session_state_heads WHERE session_key = ? LIMIT 1")
	if err != nil {
		return false
	}
	var one int
	return st.QueryRowContext(ctx, key).Scan(&one) == nil
}

func loadSessionKeys(path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	keys := make(map[string]bool, 2*len(m))
	for k := range m {
		keys[k] = true
		keys[strings.ToLower(k)] = true
	}
	return keys
}

// backed is maintenance.ts hasBackingSession for the CLI process.
func (b *backing) backed(ctx context.Context, t *Task) bool {
	if t.Runtime == "cron" {
		return true // the CLI is never cron-authoritative
	}
	if t.Runtime == "cli" && (strings.TrimSpace(t.SourceID) != "" || strings.TrimSpace(t.RunID) != "") {
		return false // hasCliRunIdentity without an agent run context in this process
	}
	child := strings.TrimSpace(t.ChildSessionKey)
	if child == "" {
		return true
	}
	switch t.Runtime {
	case "acp":
		if !b.d.hasACP {
			return true // store read failed → backed
		}
		st, err := b.stmt(ctx, &b.acp, "SELECT 1 FROM acp_sessions WHERE session_key = ?")
		if err != nil {
			return true // store read failed → backed
		}
		var one int
		err = st.QueryRowContext(ctx, child).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return true
		}
		return err == nil
	case "subagent", "cli":
		if t.Runtime == "cli" {
			switch chatType(child) {
			case "channel", "group", "direct":
				return false
			}
		}
		return b.sessionExists(ctx, child)
	}
	return true
}

// shouldMarkLost is maintenance.ts shouldMarkLost: active, grace expired
// (reference time at least grace ago), and not backed.
func (b *backing) shouldMarkLost(ctx context.Context, t *Task, now, grace int64) bool {
	if !t.Active() || now-t.ReferenceAt() < grace {
		return false
	}
	return !b.backed(ctx, t)
}

// lostError is the error markTaskLost writes: the task's own error, else
// "backing session missing" (maintenance.ts resolveTaskLostError).
func lostError(t *Task) string {
	if t.Error != "" {
		return t.Error
	}
	return "backing session missing"
}
