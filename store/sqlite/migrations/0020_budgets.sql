-- clawpit registry schema v20: usage with its time, and budgets (issue 27).
--
-- usage_counts holds each count as it was added (one row per scope, id and
-- model of one AddUsage), with the time it was counted: token_usage keeps
-- the running totals, this keeps when the tokens were spent, so that
-- `clawpit usage --since` sums only the tokens counted since then and the
-- hourly budget sums the last hour's. Pruned with its session, run or task.
CREATE TABLE usage_counts (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  scope              TEXT NOT NULL CHECK (scope IN ('session','run','task')),
  scope_id           TEXT NOT NULL,
  model              TEXT NOT NULL,
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  reported_cost_micro_usd INTEGER NOT NULL DEFAULT 0,
  counted_at         INTEGER NOT NULL
);
CREATE INDEX usage_counts_at ON usage_counts(counted_at);
CREATE INDEX usage_counts_scope ON usage_counts(scope, scope_id);
-- The totals counted before this migration become one count each, at
-- counted_at 0: when they were spent is not known, and stamped with their
-- last count a recently active session's lifetime spend would fall into the
-- rolling hour (an hourly budget crossed for everyone, `usage --since 1h`
-- over-reported). At 0 they count in every total but in no window.
INSERT INTO usage_counts (scope, scope_id, model, input_tokens, output_tokens, cache_write_tokens,
  cache_read_tokens, reported_cost_micro_usd, counted_at)
SELECT scope, scope_id, model, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens,
  reported_cost_micro_usd, 0 FROM token_usage;

-- budgets holds the budgets in force: key '' is the registry's (per
-- session, per run, per hour across all, and the action), set by `clawpit
-- budget set` or published by `daemon`/`serve` from [budget] and their
-- flags; key 'session:<id>' or 'run:<id>' is one session's or run's raised
-- limit (`clawpit budget raise`). spec is JSON (core.BudgetSpec).
CREATE TABLE budgets (
  key     TEXT PRIMARY KEY,
  spec    TEXT NOT NULL,
  set_by  TEXT NOT NULL DEFAULT '',
  set_at  INTEGER NOT NULL
);
