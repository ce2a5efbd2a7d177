package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/spool"
)

// spoolRecord is one hook event a non-gated hook spooled because the
// registry was busy: the payload as read and the hook's run inactivity
// budget (what SubagentStart records).
type spoolRecord struct {
	V            int      `json:"v"`
	InactivityMs int64    `json:"inactivity_ms,omitempty"`
	TaskKind     string   `json:"task_kind,omitempty"` // Config.TaskKind (Codex, Gemini)
	Agent        string   `json:"agent,omitempty"`     // Config.Agent
	NestRuns     string   `json:"nest_runs,omitempty"` // Config.NestRunPrefix
	Payload      *Payload `json:"payload"`
}

// spoolVersion is the record format written now.
const spoolVersion = 1

// EncodeSpoolRecord is the spool record of a non-gated event p handled with
// cfg. Errors: ErrInvalid for PreToolUse, which is never spooled (it needs
// the registry to answer).
func EncodeSpoolRecord(p *Payload, cfg Config) ([]byte, error) {
	if p.HookEventName == EventPreToolUse {
		return nil, core.Invalidf("a PreToolUse event is never spooled")
	}
	b, err := json.Marshal(spoolRecord{V: spoolVersion, InactivityMs: cfg.RunInactivity.Milliseconds(), TaskKind: cfg.TaskKind, Agent: cfg.Agent, NestRuns: cfg.NestRunPrefix, Payload: p})
	if err != nil {
		return nil, fmt.Errorf("encode hook spool record: %w", err)
	}
	return b, nil
}

// decodeSpoolRecord reads a record; any fault is the record's own.
func decodeSpoolRecord(data []byte) (*Payload, Config, error) {
	var rec spoolRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, Config{}, core.Invalidf("hook spool record is not readable: %v", err)
	}
	switch {
	case rec.V != spoolVersion:
		return nil, Config{}, core.Invalidf("hook spool record version %d, want %d", rec.V, spoolVersion)
	case rec.Payload == nil || rec.Payload.HookEventName == "":
		return nil, Config{}, core.Invalidf("hook spool record has no event")
	case rec.Payload.HookEventName == EventPreToolUse:
		return nil, Config{}, core.Invalidf("hook spool record holds a PreToolUse, which is never spooled")
	}
	cfg := Config{RunInactivity: time.Duration(rec.InactivityMs) * time.Millisecond, TaskKind: rec.TaskKind, Agent: rec.Agent, NestRunPrefix: rec.NestRuns}
	if cfg.RunInactivity <= 0 || cfg.RunInactivity > MaxRunInactivity {
		cfg.RunInactivity = DefaultRunInactivity
	}
	return rec.Payload, cfg, nil
}

// FoldSpool applies the events spooled in sp to reg, oldest first, each in
// one transaction with its fold record (core.Registry.ApplyOnce), so none
// is applied twice and none out of order. An event the registry refuses for
// its own sake (invalid, unknown run) is dropped and listed in the report;
// a busy or unreachable registry stops the fold, the rest kept for the next
// one. Events given up earlier because the spool was full are reported as
// one runtime notice in Alerts. own (nil: none) is the caller's own event,
// applied after the spooled ones or spooled itself (Report.Own says which).
// Errors: the fold lock not taken before ctx ended, and the registry's
// (core.ErrBusy, core.ErrUnavailable, …).
func FoldSpool(ctx context.Context, reg *core.Registry, sp *spool.Spool, own *Payload, cfg Config) (spool.Report, error) {
	apply := func(ctx context.Context, e spool.Entry) error {
		p, cfg, err := decodeSpoolRecord(e.Data)
		if err != nil {
			return spool.Drop(err)
		}
		_, err = reg.ApplyOnce(ctx, e.Key, "hook "+p.HookEventName+" folded in from the spool", func(ctx context.Context, in *core.Registry) error {
			h := &Handler{Reg: in, Cfg: cfg}
			_, err := h.Handle(ctx, p)
			return err
		})
		if recordFault(err) {
			return spool.Drop(fmt.Errorf("hook %s: %w", p.HookEventName, err))
		}
		return err
	}
	dropped := func(ctx context.Context, n int) error {
		text := fmt.Sprintf("%d Claude Code hook %s lost: the registry was busy and the hook spool (%s) was full",
			n, plural(n, "event was", "events were"), sp.Dir)
		_, _, err := reg.RaiseNotification(ctx, core.NewNotification{Kind: core.NotifyRuntimeNotice, Text: text})
		return err
	}
	var o *spool.Own
	if own != nil {
		data, err := EncodeSpoolRecord(own, cfg)
		if err != nil {
			return spool.Report{}, err
		}
		o = &spool.Own{Data: data, Apply: func(ctx context.Context) error {
			err := reg.InOneTx(ctx, func(ctx context.Context, in *core.Registry) error {
				h := &Handler{Reg: in, Cfg: cfg}
				_, err := h.Handle(ctx, own)
				return err
			})
			if recordFault(err) {
				return spool.Drop(err)
			}
			return err
		}}
	}
	return sp.Fold(ctx, apply, dropped, o)
}

// recordFault reports whether err is the event's own fault, so that
// applying it again can never succeed.
func recordFault(err error) bool {
	return errors.Is(err, core.ErrInvalid) || errors.Is(err, core.ErrNotFound) || errors.Is(err, core.ErrAmbiguous)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// SpoolReportLines are the lines a fold's report puts on stderr: one per
// dropped event.
func SpoolReportLines(rep spool.Report) []string {
	var out []string
	for _, d := range rep.Dropped {
		out = append(out, "hook spool: dropped an event the registry refuses: "+strings.TrimSpace(d))
	}
	return out
}
