package sweep

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/clawpit/clawpit/core"
)

// The maintenance sweeper (docs/contract.md "Maintenance"). One sweep evaluates, in order: job
// liveness (J8) → watchdog (R6) → early lost (R5) → grace lost (R5) →
// approval expiry (R9) → silent tasks (R7) → retention stamp and prune (R8)
// → audit (R10). It first builds a Plan from read-only queries (one View
// snapshot, every query through an index), then Apply executes each action as
// a conditional update — re-checked inside the write transaction against the
// revision (or status) it was planned under — so a runtime write that lands
// between plan and apply wins and the action is counted raced. Several
// sweepers, in one process or many, are therefore safe together.

// Rule names of sweep actions (Action.Rule), in the order of docs/contract.md "Maintenance".
const (
	RuleJobLiveness    = "job_liveness"    // J8: active job whose supervisor is gone → lost
	RuleWatchdog       = "watchdog"        // R6: idle running run → timeout, mirrored tasks → timed_out
	RuleEarlyLost      = "early_lost"      // R5: active task whose mirrored run ended → lost at once
	RuleGraceLost      = "grace_lost"      // R5: active unbacked task idle past the grace window → lost
	RuleApprovalExpiry = "approval_expiry" // R9: pending approval past expires_at → expired
	RuleApprovalWaiter = "approval_waiter" // pending approval whose waiting hook on this host exited → cancelled
	RuleSilentTask     = "silent_task"     // R7: task that expected output and produced none → task_silent notification
	RuleStamp          = "retention_stamp" // R8: finished row without cleanup_after → stamped
	RulePrune          = "retention_prune" // R8: row past cleanup_after → deleted with its journal
)

// Results of an action (Action.Result).
const (
	ActionPlanned = "planned" // dry run, or not applied yet
	ActionApplied = "applied"
	ActionRaced   = "raced"  // the row changed between plan and apply; the other write won
	ActionFailed  = "failed" // a job's log directory could not be deleted: the row is kept (R8)
)

// Audit finding kinds (docs/contract.md "Audit") and their severities. Errors are states that
// need an operator (a result that never reached its session, contradictory
// timestamps, a job log that cannot be deleted); warnings are states that
// may resolve on their own or only cost space.
const (
	FindingStaleQueued            = "stale_queued"            // warning: queued ≥ StaleQueued
	FindingStaleRunning           = "stale_running"           // warning: running ≥ StaleRunning, no running run or job behind it
	FindingMissingCleanup         = "missing_cleanup"         // warning: finished row with no end time: cleanup_after cannot be computed
	FindingDeliveryFailed         = "delivery_failed"         // error: delivery_status failed
	FindingInconsistentTimestamps = "inconsistent_timestamps" // error: start before creation, end before start, active with an end
	FindingPruneFailed            = "prune_failed"            // error: a pruned job's log directory could not be deleted; row kept

	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Action is one planned change (docs/contract.md "Maintenance": rule, entity, id, from, to, reason).
type Action struct {
	Rule   string `json:"rule"`
	Entity string `json:"entity"`
	ID     string `json:"id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
	Result string `json:"result"` // planned, applied, raced or failed

	rev     int64          // revision planned against (conditional update)
	dep     int            // 1-based index of the action that must apply first; 0 = none
	at      core.Timestamp // lost: ended_at to stamp when unset; stamp: cleanup_after
	job     *core.Job      // job_liveness: the job as LostJobs read it
	logPath string         // prune of a job: its log file
}

// Finding is one audit result (docs/contract.md "Audit"): reported, never fixed.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"` // error or warning
	Entity   string `json:"entity"`
	ID       string `json:"id"`
	Detail   string `json:"detail"`
}

// Plan is what one sweep (or watchdog pass) would do, built without writing.
type Plan struct {
	// Now is the registry clock when planning started; every window is
	// measured against it.
	Now core.Timestamp
	// Actions in docs/contract.md "Maintenance" order; dependent actions follow the one they need.
	Actions []Action
	// Findings of the audit (empty for a watchdog pass).
	Findings []Finding
	// Truncated is true when some rule hit Sweeper.MaxPerRule: the rest is
	// left for the next sweep.
	Truncated bool

	watchdogOnly bool
	planTime     time.Duration
	touchHost    string // this host has active jobs the sweep confirmed (hosts.go)
}

// Sweeper runs maintenance sweeps over a registry. Safe for concurrent use:
// within one process Sweep is single-flight and Watchdog waits for a running
// sweep; across processes every write is conditional.
type Sweeper struct {
	reg  *core.Registry
	jobs core.JobLiveness

	// BatchSize caps how many actions one write transaction applies
	// (default 2,000), and BatchTime how long it may run before it commits
	// (default 40 ms, checked after each action): Apply holds the write
	// lock in short stretches, so runtimes' writes interleave with a large
	// apply instead of waiting behind it (docs/contract.md "Maintenance", bench/README.md P1).
	BatchSize int
	BatchTime time.Duration
	// MaxPerRule caps the rows one rule plans per sweep (default 20,000), so
	// a backlog (a first sweep over an old registry) is worked off over a few
	// sweeps in bounded memory.
	MaxPerRule int
	// HostStaleAfter is how long another host's active jobs may go without
	// its sweep confirming them before the audit reports the host (README "Many hosts: PostgreSQL"; default DefaultHostStaleAfter, two sweep intervals).
	HostStaleAfter time.Duration
	// RemoveAll deletes a pruned job's log directory (default os.RemoveAll).
	RemoveAll func(path string) error

	flightMu sync.Mutex
	flight   *sweepCall
	runMu    sync.Mutex // one plan+apply at a time in this process
}

type sweepCall struct {
	done   chan struct{}
	dryRun bool
	rep    *Report
	err    error
}

// New returns a sweeper over reg using reg's clock and thresholds; a
// process builds it through maintain.NewSweeper.
// jobs may be nil: job liveness (J8) is then skipped.
func New(reg *core.Registry, jobs core.JobLiveness) *Sweeper {
	return &Sweeper{reg: reg, jobs: jobs}
}

func (s *Sweeper) batchSize() int {
	if s.BatchSize > 0 {
		return s.BatchSize
	}
	return 2000
}

func (s *Sweeper) batchTime() time.Duration {
	if s.BatchTime > 0 {
		return s.BatchTime
	}
	return 40 * time.Millisecond
}

func (s *Sweeper) maxPerRule() int {
	if s.MaxPerRule > 0 {
		return s.MaxPerRule
	}
	return 20000
}

func (s *Sweeper) removeAll(p string) error {
	if s.RemoveAll != nil {
		return s.RemoveAll(p)
	}
	return os.RemoveAll(p)
}

func (s *Sweeper) now() core.Timestamp { return core.TS(s.reg.Clock().Now()) }

// Sweep runs one sweep: Plan, then (unless dryRun) Apply. A dry run writes
// nothing at all. Within one process Sweep is single-flight: a call made
// while a sweep of the same mode is running waits for it and returns its
// report (shared: do not modify it); a call of the other mode waits its turn.
// The report is returned with an error when applying failed part-way.
func (s *Sweeper) Sweep(ctx context.Context, dryRun bool) (*Report, error) {
	s.flightMu.Lock()
	if c := s.flight; c != nil && c.dryRun == dryRun {
		s.flightMu.Unlock()
		select {
		case <-c.done:
			return c.rep, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &sweepCall{done: make(chan struct{}), dryRun: dryRun}
	s.flight = c
	s.flightMu.Unlock()

	c.rep, c.err = s.sweep(ctx, dryRun)

	s.flightMu.Lock()
	if s.flight == c {
		s.flight = nil
	}
	s.flightMu.Unlock()
	close(c.done)
	return c.rep, c.err
}

func (s *Sweeper) sweep(ctx context.Context, dryRun bool) (*Report, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	p, err := s.plan(ctx, false)
	if err != nil {
		return nil, err
	}
	if dryRun {
		return p.DryRun(), nil
	}
	return s.apply(ctx, p)
}

// Plan builds the plan of one full sweep without writing anything (docs/contract.md "Maintenance").
func (s *Sweeper) Plan(ctx context.Context) (*Plan, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	return s.plan(ctx, false)
}

// Apply executes p: each action as a conditional update with its journal
// event and notification in the same transaction, many actions per
// transaction. An action whose row changed since p was built is skipped and
// counted raced. It returns the report, and an error (with the partial report)
// when a write failed; actions applied before the failure stay applied.
func (s *Sweeper) Apply(ctx context.Context, p *Plan) (*Report, error) {
	if p == nil {
		return nil, core.Invalidf("nil sweep plan")
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	return s.apply(ctx, p)
}

// sweepRule is one maintenance rule as Apply and the report see it. Each
// rule's file holds its plan step, this, and the text of its actions
// (reason, from, to), so a rule is read and changed in one place:
// jobliveness.go (J8), watchdog.go (R6), tasklost.go (R5), expiry.go (R9),
// silent.go (R7), retention.go (R8); audit.go (R10) only reports.
type sweepRule interface {
	// apply executes acts[i] inside the write transaction, re-checking it
	// against the revision or status it was planned under; false when it
	// raced. Job liveness is applied outside (its own transaction and
	// signals) and never reaches apply.
	apply(s *Sweeper, b *applyTx, i int) (bool, error)
	// count adds one action that took effect (in a dry run: that is
	// planned) to the report's counts (docs/contract.md "Maintenance" report).
	count(c *Counts, a *Action)
}

// ruleOf returns the rule named by Action.Rule; nil for an unknown name.
func ruleOf(name string) sweepRule {
	switch name {
	case RuleJobLiveness:
		return jobLivenessRule{}
	case RuleWatchdog:
		return watchdogRule{}
	case RuleEarlyLost, RuleGraceLost:
		return taskLostRule{}
	case RuleApprovalExpiry:
		return expiryRule{}
	case RuleApprovalWaiter:
		return waiterRule{}
	case RuleSilentTask:
		return silentRule{}
	case RuleStamp:
		return stampRule{}
	case RulePrune:
		return pruneRule{}
	}
	return nil
}
