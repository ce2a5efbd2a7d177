package cli

// The non-gated hook's path (PostToolUse, Stop, SessionStart, …): answer
// within about a second whatever the registry does, and lose nothing: the
// event goes to the hook spool first and is folded into the registry, in
// order, by whoever gets the registry next (this hook, the next one, the
// daemon's sweep, the console).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/spool"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/tui"
)

// eventBudget is how long after its start a non-gated hook may still work
// on the registry; a busy SQLite statement can overrun it by eventBusyMs.
// Together they stay under the second Claude Code should ever wait on a
// non-gating hook.
const eventBudget = 500 * time.Millisecond

// eventBusyMs is the non-gated hook's SQLite busy timeout: a write lock held
// longer sends the event to the spool instead of stalling the agent.
const eventBusyMs = 100

// foldRetry is how long a non-gated hook waits between tries at a busy
// registry.
const foldRetry = 20 * time.Millisecond

// hookSpool is the spool of the registry in force: <registry>.spool beside a
// SQLite file; for a PostgreSQL registry $CLAWPIT_HOME/hook-spool/<hash of
// its URL without the password>.
func (a *app) hookSpool() *spool.Spool {
	db := a.resolvedDBPath()
	if store.IsPostgresURL(db) {
		// Keyed by the URL without its password (hookRegistry), so the hook
		// (whose command holds none) and a daemon or console given the
		// password in CLAWPIT_DB share one spool.
		name, _, err := hookRegistry(db)
		if err != nil {
			name = store.RedactURL(db)
		}
		sum := sha256.Sum256([]byte(name))
		return &spool.Spool{Dir: filepath.Join(home(), "hook-spool", hex.EncodeToString(sum[:8]))}
	}
	abs, err := filepath.Abs(db)
	if err != nil {
		abs = db
	}
	return &spool.Spool{Dir: abs + ".spool"}
}

// runEvent records a non-gated event p, within start+eventBudget: after the
// events spooled before it (folded in first, in order), or spooled itself
// when the registry stays busy. Exit 0 when it is applied or kept for later;
// exit 1 (message on stderr) when the registry refuses it or is broken (it
// stays spooled then); a full spool drops it with a line on stderr, exit 0.
func (a *app) runEvent(ctx context.Context, start time.Time, cfg claude.Config, p *claude.Payload) error {
	fctx, cancel := context.WithDeadline(ctx, start.Add(eventBudget))
	defer cancel()
	sp := a.hookSpool()
	own := p
	var rep spool.Report
	for {
		reg, err := a.open(fctx, store.Options{BusyTimeoutMs: eventBusyMs})
		if err == nil {
			var r spool.Report
			r, err = claude.FoldSpool(fctx, reg, sp, own, cfg)
			for _, l := range claude.SpoolReportLines(r) {
				fmt.Fprintln(a.stderr, "clawpit: "+l)
			}
			if own != nil {
				rep, own = r, nil // applied, refused or spooled: from now on only folds
			}
			if err == nil {
				break
			}
		} else if own != nil {
			if _, aerr := sp.Append(mustSpoolRecord(p, cfg)); aerr != nil {
				if errors.Is(aerr, spool.ErrFull) {
					sp.NoteDropped()
				}
				return a.eventLost(sp, p, errors.Join(err, aerr))
			}
			rep, own = spool.Report{Own: spool.OwnSpooled, OwnErr: err}, nil
		}
		if !registryBusy(err) && !errors.Is(err, context.DeadlineExceeded) {
			if rep.Own != spool.OwnSpooled {
				return a.eventOutcome(sp, p, rep, err)
			}
			return &exitError{code: exitFailed, msg: fmt.Sprintf("hook %s: %v (the event is kept in %s)", p.HookEventName, err, sp.Dir)}
		}
		t := time.NewTimer(foldRetry)
		select {
		case <-fctx.Done():
			t.Stop()
			if rep.Own != spool.OwnSpooled && rep.Own != spool.OwnApplied {
				return a.eventOutcome(sp, p, rep, err)
			}
			fmt.Fprintf(a.stderr, "clawpit: hook %s: the registry is busy; the event is kept in %s and applied later\n", p.HookEventName, sp.Dir)
			return nil
		case <-t.C:
		}
	}
	return a.eventOutcome(sp, p, rep, nil)
}

// eventOutcome is the hook's exit once its event was applied or spooled
// (exit 0), refused by the registry (exit 1) or lost (exit 0, a line on
// stderr); never handled at all, err says why (exit 1).
func (a *app) eventOutcome(sp *spool.Spool, p *claude.Payload, rep spool.Report, err error) error {
	switch rep.Own {
	case spool.OwnApplied, spool.OwnSpooled:
		return nil
	case spool.OwnRefused:
		return &exitError{code: exitFailed, msg: fmt.Sprintf("hook %s: %v", p.HookEventName, rep.OwnErr)}
	case spool.OwnLost:
		return a.eventLost(sp, p, rep.OwnErr)
	}
	return &exitError{code: exitFailed, msg: fmt.Sprintf("hook %s: %v", p.HookEventName, err)}
}

// eventLost reports an event neither applied nor spooled: a line on stderr,
// exit 0 (Claude Code is not held up; the drop note counts it).
func (a *app) eventLost(sp *spool.Spool, p *claude.Payload, why error) error {
	fmt.Fprintf(a.stderr, "clawpit: hook %s: event dropped: the registry is busy and the hook spool %s cannot take it (%v)\n", p.HookEventName, sp.Dir, why)
	return nil
}

// mustSpoolRecord is p's spool record; p is never a PreToolUse here.
func mustSpoolRecord(p *claude.Payload, cfg claude.Config) []byte {
	b, _ := claude.EncodeSpoolRecord(p, cfg)
	return b
}

// foldHookSpool folds the hook spool into reg for at most within; the
// daemon, the console and the gated hook call it. A busy registry leaves
// the rest for later. report (nil: none) is told of each event dropped and
// of a failure other than a busy registry.
func (a *app) foldHookSpool(ctx context.Context, reg *core.Registry, within time.Duration, report func(string)) {
	sp := a.hookSpool()
	if n, err := sp.Len(); (err != nil || n == 0) && !spoolHasDropNote(sp) {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	rep, err := claude.FoldSpool(fctx, reg, sp, nil, claude.Config{})
	if report == nil {
		return
	}
	for _, l := range claude.SpoolReportLines(rep) {
		report(l)
	}
	if err != nil && !registryBusy(err) && fctx.Err() == nil {
		report("hook spool: " + err.Error())
	}
}

// foldingMaintenance is the console's sweeper folding the hook spool in
// before each periodic sweep, so events spooled while the registry was busy
// show up even when no hook or daemon runs.
type foldingMaintenance struct {
	tui.Maintenance
	fold func(ctx context.Context)
}

func (m foldingMaintenance) Sweep(ctx context.Context) (tui.SweepResult, error) {
	m.fold(ctx)
	return m.Maintenance.Sweep(ctx)
}

// spoolHasDropNote reports whether events were refused since the last fold.
func spoolHasDropNote(sp *spool.Spool) bool {
	n, _ := sp.DropNote()
	return n > 0
}
