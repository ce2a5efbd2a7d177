package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// TranscriptRef names a transcript to count and whom its tokens belong to.
type TranscriptRef struct {
	Path    string // Claude Code: transcript_path, or a sub-agent's agent_transcript_path
	Session string // the session the tokens are counted in
	// RunID is the sub-agent run whose own transcript Path is ("" for the
	// session's): its tokens are the run's and also the session's.
	RunID string
	// Format is the file's: Claude Code's transcript (the zero value) or
	// Codex's rollout.
	Format TranscriptFormat
}

// UsageReport says what RecordTranscriptUsage counted.
type UsageReport struct {
	ByModel map[string]Tokens
	Lines   int    // complete lines read
	Note    string // what could not be read or was reset; "" when all went well
}

// usageRaceRetries is how many times a read that raced another hook's
// (both read the same transcript from the same offset) is done again.
const usageRaceRetries = 3

// RecordTranscriptUsage counts the tokens of the Claude Code transcript ref
// names from where the last count stopped (usage_sources) and adds them to
// ref's session and, for a sub-agent's transcript, its run (issue 27). The
// file is read outside the write transaction, read-only and bounded
// (ReadClaudeTranscript); the count is written only if no other hook moved
// the offset meanwhile, else read again, so no line is counted twice. A
// transcript that cannot be read is not an error: the report and the
// source's note say so. Errors: the store's only (ErrBusy, ErrUnavailable).
func (r *Registry) RecordTranscriptUsage(ctx context.Context, ref TranscriptRef) (UsageReport, error) {
	if ref.Path == "" || ref.Session == "" {
		return UsageReport{Note: "no transcript path"}, nil
	}
	for range usageRaceRetries {
		var prev *UsageSource
		if err := r.store.View(ctx, func(tx Tx) (err error) {
			prev, err = tx.GetUsageSource(ref.Path)
			return err
		}); err != nil {
			return UsageReport{}, fmt.Errorf("usage source %s: %w", ref.Path, err)
		}
		src := UsageSource{Path: ref.Path}
		if prev != nil {
			src = *prev
		}
		src.Session, src.RunID = ref.Session, ref.RunID
		read, rerr := readTranscript(ctx, src, ref.Format, ref.RunID != "")
		if rerr != nil {
			read.Source.Note = joinNote(read.Source.Note, rerr.Error())
		}
		read.Source.ReadAt = r.now()
		raced := false
		err := r.store.Update(ctx, func(tx Tx) error {
			now, err := tx.GetUsageSource(ref.Path)
			if err != nil {
				return err
			}
			if !sameOffset(prev, now) {
				raced = true
				return nil
			}
			if err := tx.PutUsageSource(&read.Source); err != nil {
				return err
			}
			// A transcript not there (yet, or any more) is noted only:
			// a notice for it would be noise.
			if !errors.Is(rerr, fs.ErrNotExist) {
				if err := r.usageNotice(tx, prev, read.Source); err != nil {
					return err
				}
			}
			rows := usageRows(ref, read.ByModel, read.Source.ReadAt)
			if len(rows) == 0 {
				return nil
			}
			if err := tx.AddUsage(rows); err != nil {
				return err
			}
			// A budget these tokens cross is alerted in the same
			// transaction: once, whichever hook counted them.
			return r.budgetAlerts(tx, ref.Session, ref.RunID)
		})
		if err != nil {
			return UsageReport{}, fmt.Errorf("record usage of %s: %w", ref.Path, err)
		}
		if !raced {
			return UsageReport{ByModel: read.ByModel, Lines: read.Lines, Note: read.Source.Note}, nil
		}
	}
	return UsageReport{Note: "another hook kept counting this transcript; left to it"}, nil
}

// usageNotice raises a runtime notice (the console's Alerts) when a read
// noted something new about a transcript: unreadable (other than
// missing), lines not JSON or too long, truncated or replaced. A note repeated by the next read raises
// nothing more (dedup key: path, offset and note).
func (r *Registry) usageNotice(tx Tx, prev *UsageSource, src UsageSource) error {
	if src.Note == "" || (prev != nil && prev.Note == src.Note) {
		return nil
	}
	n := &Notification{Session: src.Session, Kind: NotifyRuntimeNotice, CreatedAt: r.now(),
		Text:     r.redactText("token count of " + filepath.Base(src.Path) + ": " + src.Note),
		DedupKey: fmt.Sprintf("usage:%s:%d:%s", src.Path, src.Offset, src.Note)}
	if _, err := tx.InsertNotification(n); err != nil {
		return fmt.Errorf("usage notice: %w", err)
	}
	return nil
}

// sameOffset reports whether a and b are the same read position (both nil:
// never read).
func sameOffset(a, b *UsageSource) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Offset == b.Offset && a.Head == b.Head && a.LastMessage == b.LastMessage && a.Last == b.Last
}

// usageRows are the rows byModel adds: the session's, and the run's too
// for a sub-agent's transcript.
func usageRows(ref TranscriptRef, byModel map[string]Tokens, at Timestamp) []UsageRow {
	var rows []UsageRow
	for model, t := range byModel {
		rows = append(rows, UsageRow{Scope: UsageSession, ID: ref.Session, Model: model, Tokens: t, CountedAt: at})
		if ref.RunID != "" {
			rows = append(rows, UsageRow{Scope: UsageRun, ID: ref.RunID, Model: model, Tokens: t, CountedAt: at})
		}
	}
	return rows
}

// AddUsage adds rows (a tracked task's result line) as they are.
// Errors: ErrInvalid for a row without scope or id; the store's.
func (r *Registry) AddUsage(ctx context.Context, rows []UsageRow) error {
	if len(rows) == 0 {
		return nil
	}
	for _, u := range rows {
		if u.Scope == "" || u.ID == "" {
			return Invalidf("usage row without scope or id")
		}
	}
	return r.store.Update(ctx, func(tx Tx) error {
		if err := tx.AddUsage(rows); err != nil {
			return err
		}
		return r.budgetAlerts(tx, "", "") // the hourly budget counts tracked tasks too
	})
}

// ListUsage returns the usage rows f selects.
func (r *Registry) ListUsage(ctx context.Context, f UsageFilter) ([]UsageRow, error) {
	var out []UsageRow
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.ListUsage(f)
		return err
	})
	return out, err
}

// SumUsage returns per scope, id and model the tokens counted within f
// (f.Since: those counted since then, not every token of a row last counted
// since then), counted_at being the newest count's.
func (r *Registry) SumUsage(ctx context.Context, f UsageFilter) ([]UsageRow, error) {
	var out []UsageRow
	err := r.store.View(ctx, func(tx Tx) (err error) {
		out, err = tx.SumUsage(f)
		return err
	})
	return out, err
}
