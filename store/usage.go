package store

import (
	"strings"

	"github.com/clawpit/clawpit/core"
)

// AddUsage adds each row's tokens and reported cost to what its (scope, id,
// model) holds, creating the row when absent, and sets counted_at.
func (t *tx) AddUsage(rows []core.UsageRow) error {
	if err := t.checkWritable("add usage"); err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := t.exec(`INSERT INTO token_usage (scope, scope_id, model, input_tokens, output_tokens,
			cache_write_tokens, cache_read_tokens, reported_cost_micro_usd, counted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (scope, scope_id, model) DO UPDATE SET
			 input_tokens = token_usage.input_tokens + excluded.input_tokens,
			 output_tokens = token_usage.output_tokens + excluded.output_tokens,
			 cache_write_tokens = token_usage.cache_write_tokens + excluded.cache_write_tokens,
			 cache_read_tokens = token_usage.cache_read_tokens + excluded.cache_read_tokens,
			 reported_cost_micro_usd = token_usage.reported_cost_micro_usd + excluded.reported_cost_micro_usd,
			 counted_at = excluded.counted_at`,
			string(r.Scope), r.ID, r.Model, r.Tokens.Input, r.Tokens.Output, r.Tokens.CacheWrite,
			r.Tokens.CacheRead, r.ReportedCostMicroUSD, int64(r.CountedAt)); err != nil {
			return err
		}
		// The same count with its time: what --since and the hourly
		// budget sum (token_usage keeps only the running total).
		if _, err := t.exec(`INSERT INTO usage_counts (scope, scope_id, model, input_tokens, output_tokens,
			cache_write_tokens, cache_read_tokens, reported_cost_micro_usd, counted_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			string(r.Scope), r.ID, r.Model, r.Tokens.Input, r.Tokens.Output, r.Tokens.CacheWrite,
			r.Tokens.CacheRead, r.ReportedCostMicroUSD, int64(r.CountedAt)); err != nil {
			return err
		}
	}
	return nil
}

// ListUsage returns the usage rows f selects, by scope, id and model.
func (t *tx) ListUsage(f core.UsageFilter) ([]core.UsageRow, error) {
	where, args := usageWhere(f)
	q := `SELECT scope, scope_id, model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens,
		reported_cost_micro_usd, counted_at FROM token_usage`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY scope, scope_id, model"
	return queryAll(t, q, args, scanUsageRow)
}

// SumUsage returns, per scope, id and model, the sum of the counts f
// selects from usage_counts (each count with its time: f.Since selects the
// tokens counted since then), counted_at being the newest count's.
func (t *tx) SumUsage(f core.UsageFilter) ([]core.UsageRow, error) {
	where, args := usageWhere(f)
	q := `SELECT scope, scope_id, model, SUM(input_tokens), SUM(output_tokens), SUM(cache_write_tokens),
		SUM(cache_read_tokens), SUM(reported_cost_micro_usd), MAX(counted_at) FROM usage_counts`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " GROUP BY scope, scope_id, model ORDER BY scope, scope_id, model"
	return queryAll(t, q, args, scanUsageRow)
}

func scanUsageRow(r rowScanner, u *core.UsageRow) error {
	return r.Scan(&u.Scope, &u.ID, &u.Model, &u.Tokens.Input, &u.Tokens.Output, &u.Tokens.CacheWrite,
		&u.Tokens.CacheRead, &u.ReportedCostMicroUSD, &u.CountedAt)
}

// usageWhere is the WHERE terms and arguments of f.
func usageWhere(f core.UsageFilter) ([]string, []any) {
	var where []string
	var args []any
	if f.Scope != "" {
		where, args = append(where, "scope = ?"), append(args, string(f.Scope))
	}
	if len(f.IDs) > 0 {
		where = append(where, "scope_id IN (?"+strings.Repeat(", ?", len(f.IDs)-1)+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if f.Since != 0 {
		where, args = append(where, "counted_at >= ?"), append(args, int64(f.Since))
	}
	return where, args
}

// GetBudget returns the spec stored under key (core.BudgetSpec's JSON) and
// who set it when; found false when none is.
func (t *tx) GetBudget(key string) (core.BudgetRecord, bool, error) {
	b, err := findRow(t, "SELECT spec, set_by, set_at FROM budgets WHERE key = ?", []any{key},
		func(r rowScanner, b *core.BudgetRecord) error { return r.Scan(&b.Spec, &b.SetBy, &b.SetAt) })
	if b == nil {
		return core.BudgetRecord{Key: key}, false, err
	}
	b.Key = key
	return *b, true, nil
}

const budgetCols = "key, spec, set_by, set_at"

func scanBudget(r rowScanner, b *core.BudgetRecord) error {
	return r.Scan(&b.Key, &b.Spec, &b.SetBy, &b.SetAt)
}

// ListBudgets returns every budget row, by key.
func (t *tx) ListBudgets() ([]core.BudgetRecord, error) {
	return queryAll(t, "SELECT "+budgetCols+" FROM budgets ORDER BY key", nil, scanBudget)
}

// PutBudget stores b under its key, replacing what was there.
func (t *tx) PutBudget(b core.BudgetRecord) error {
	if err := t.checkWritable("set budget"); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO budgets (key, spec, set_by, set_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET spec = excluded.spec, set_by = excluded.set_by, set_at = excluded.set_at`,
		b.Key, b.Spec, string(b.SetBy), int64(b.SetAt))
	return err
}

const usageSourceCols = `path, session, run_id, read_offset, head, last_message, last_model, last_input,
	last_output, last_cache_write, last_cache_read, note, read_at`

// GetUsageSource returns how far path has been read; nil, nil when never.
func (t *tx) GetUsageSource(path string) (*core.UsageSource, error) {
	return findRow(t, "SELECT "+usageSourceCols+" FROM usage_sources WHERE path = ?", []any{path},
		func(r rowScanner, s *core.UsageSource) error {
			return r.Scan(&s.Path, &s.Session, &s.RunID, &s.Offset, &s.Head, &s.LastMessage, &s.LastModel, &s.Last.Input,
				&s.Last.Output, &s.Last.CacheWrite, &s.Last.CacheRead, &s.Note, &s.ReadAt)
		})
}

// PutUsageSource stores s, replacing the row of its path.
func (t *tx) PutUsageSource(s *core.UsageSource) error {
	if err := t.checkWritable("put usage source"); err != nil {
		return err
	}
	_, err := t.exec("INSERT INTO usage_sources ("+usageSourceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET session = excluded.session, run_id = excluded.run_id,
		 read_offset = excluded.read_offset, head = excluded.head, last_message = excluded.last_message,
		 last_model = excluded.last_model, last_input = excluded.last_input, last_output = excluded.last_output,
		 last_cache_write = excluded.last_cache_write, last_cache_read = excluded.last_cache_read,
		 note = excluded.note, read_at = excluded.read_at`,
		s.Path, s.Session, s.RunID, s.Offset, s.Head, s.LastMessage, s.LastModel, s.Last.Input,
		s.Last.Output, s.Last.CacheWrite, s.Last.CacheRead, s.Note, int64(s.ReadAt))
	return err
}
