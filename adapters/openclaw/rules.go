package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// OpenClaw 2026.9.6's thresholds, as its source sets them (the regions of
// the npm package's dist/ named after src/tasks/ files).
const (
	// GraceMs: task-registry.maintenance.ts TASK_RECONCILE_GRACE_MS.
	GraceMs = 5 * 60_000
	// RetentionMs: task-retention.ts DEFAULT_TASK_RETENTION_MS
	// (resolveTaskRetentionMs of every status but lost).
	RetentionMs = 7 * 24 * 60 * 60_000
	// LostRetentionMs: task-retention.ts LOST_TASK_RETENTION_MS (a lost
	// task's retention, and the cap of its cleanup_after in
	// resolveEffectiveTaskCleanupAfter).
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

	// AsStored audits the rows as stored, as `openclaw tasks audit --json`
	// does, instead of as maintenance would leave them (no lost
	// projection, no cron recovery).
	AsStored bool

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

// HarnessGraceMs: task-registry.maintenance.ts
// HARNESS_OWNED_SUBAGENT_RECONCILE_GRACE_MS, the grace of a harness-owned
// subagent task (no child session, a task kind).
const HarnessGraceMs = 30 * 60_000

// backing answers OpenClaw 2026.9.6's hasBackingSession
// (task-registry.maintenance.ts) as the `openclaw tasks` CLI process
// answers it: that process never makes a runtime authoritative
// (configureTaskRegistryMaintenance is not called with
// runtimeAuthoritative) and holds no agent run context, so cli, acp and
// cron tasks are always backed, and a subagent task is backed unless its
// child session is missing from the agent's session database or wedged
// there. It caches one session database handle per agent for a sweep, as
// BackingSessionLookupContext caches session facts.
type backing struct {
	d      *DB
	tx     *sql.Tx
	agents map[string]*agentSessions // agent id → its session database (nil: none)
	// Statements prepared once per sweep: one lookup per active task.
	run *sql.Stmt
}

func newBacking(d *DB, tx *sql.Tx) *backing {
	return &backing{d: d, tx: tx, agents: map[string]*agentSessions{}}
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

// close releases the prepared statements and the session databases.
func (b *backing) close() {
	if b.run != nil {
		b.run.Close()
	}
	for _, a := range b.agents {
		if a != nil {
			a.close()
		}
	}
}

// harnessOwned is harness-owned-subagent-task.ts isHarnessOwnedSubagentTask:
// a subagent task with no child session key and a task kind.
func harnessOwned(t *Task) bool {
	return t.Runtime == "subagent" && strings.TrimSpace(t.ChildSessionKey) == "" && strings.TrimSpace(t.TaskKind) != ""
}

// graceMs is the lost grace of t (maintenance.ts hasLostGraceExpired).
func graceMs(t *Task, grace int64) int64 {
	if harnessOwned(t) {
		return HarnessGraceMs
	}
	return grace
}

// entry is the child session's entry as OpenClaw reads its backing facts
// (session-backing-facts.ts readSessionBackingFacts): found, and its
// subagentRecovery wedge.
type entry struct {
	found        bool
	wedged       bool
	wedgedReason string
}

// session looks the child session key up in the agent's session database,
// $STATE/agents/<agent>/agent/openclaw-agent.sqlite (table session_nodes,
// exact key), where OpenClaw 2026.9.6 keeps sessions; the agent is the
// key's "agent:<id>:" head, else "main". A missing database is no session.
func (b *backing) session(ctx context.Context, key string) entry {
	agent := "main"
	if a, _, ok := parseAgentKey(strings.ToLower(key)); ok {
		agent = a
	}
	as, seen := b.agents[agent]
	if !seen {
		as = openAgentSessions(ctx, b.d.StateDir, agent)
		b.agents[agent] = as
	}
	if as == nil {
		return entry{}
	}
	return as.lookup(ctx, key)
}

// backed is maintenance.ts hasBackingSession for the CLI process.
func (b *backing) backed(ctx context.Context, t *Task) bool {
	if t.Runtime != "subagent" {
		return true // cron, cli, acp: no runtime is authoritative in the CLI
	}
	child := strings.TrimSpace(t.ChildSessionKey)
	if child == "" {
		return !harnessOwned(t)
	}
	e := b.session(ctx, child)
	if e.wedged {
		return false
	}
	if t.Detail.BackingSubagent {
		return true // registry-backed: ownership is only checked when authoritative
	}
	return e.found
}

// shouldMarkLost is maintenance.ts shouldMarkLost: active, grace expired
// (reference time at least the grace ago), and not backed.
func (b *backing) shouldMarkLost(ctx context.Context, t *Task, now, grace int64) bool {
	if !t.Active() || now-t.ReferenceAt() < graceMs(t, grace) {
		return false
	}
	return !b.backed(ctx, t)
}

// lostError is the error markTaskLost writes: the task's own error, else
// maintenance.ts resolveTaskLostError (harness-owned, wedged, registry-backed
// subagents each have their own words).
func (b *backing) lostError(ctx context.Context, t *Task) string {
	if t.Error != "" {
		return t.Error
	}
	if harnessOwned(t) {
		return "Native subagent stopped reporting progress"
	}
	if t.Runtime == "subagent" {
		if child := strings.TrimSpace(t.ChildSessionKey); child != "" {
			if e := b.session(ctx, child); e.wedged {
				return e.reason()
			}
		}
		if t.Detail.BackingSubagent {
			return "subagent run ownership missing"
		}
	}
	return "backing session missing"
}

// reason is subagent-recovery-state.ts formatSubagentRecoveryWedgedReason.
func (e entry) reason() string {
	if r := strings.TrimSpace(e.wedgedReason); r != "" {
		return r
	}
	return "subagent orphan recovery is tombstoned for this session"
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
