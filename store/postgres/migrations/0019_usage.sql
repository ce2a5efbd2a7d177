-- PostgreSQL port of store/migrations/0017_usage.sql (same version number,
-- tables and columns; INTEGER is BIGINT).
-- clawpit registry schema v17: what agents cost (issue 27).
--
-- token_usage holds tokens per session and per sub-agent run, per model, as
-- counted from the agent's own transcript (Claude Code: each assistant
-- message's usage; `task track`: the stream-json result line). scope is
-- 'session', 'run' or 'task'; a sub-agent's tokens are its run's and are
-- also added to its parent session's. Tokens are counts; counted_at is Unix
-- epoch ms of the last count; reported_cost_micro_usd is what the agent
-- itself reported (total_cost_usd, in millionths of a dollar), 0 when none.
CREATE TABLE token_usage (
  scope              TEXT NOT NULL CHECK (scope IN ('session','run','task')),
  scope_id           TEXT COLLATE "C" NOT NULL,
  model              TEXT NOT NULL,
  input_tokens       BIGINT NOT NULL DEFAULT 0,
  output_tokens      BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
  reported_cost_micro_usd BIGINT NOT NULL DEFAULT 0,
  counted_at         BIGINT NOT NULL,
  PRIMARY KEY (scope, scope_id, model)
);
CREATE INDEX token_usage_counted ON token_usage(counted_at);

-- usage_sources is how far each transcript has been read: read_offset is
-- the byte offset after the last complete line counted; head is a hash of
-- the file's first bytes (a rotated file is a new file); last_message and
-- last_* are the last assistant message counted, whose usage a later line
-- of the same message may raise; note says what the last read could not do.
CREATE TABLE usage_sources (
  path          TEXT PRIMARY KEY,
  session       TEXT NOT NULL,
  run_id        TEXT NOT NULL DEFAULT '',
  read_offset   BIGINT NOT NULL DEFAULT 0,
  head          TEXT NOT NULL DEFAULT '',
  last_message  TEXT NOT NULL DEFAULT '',
  last_model    TEXT NOT NULL DEFAULT '',
  last_input    BIGINT NOT NULL DEFAULT 0,
  last_output   BIGINT NOT NULL DEFAULT 0,
  last_cache_write BIGINT NOT NULL DEFAULT 0,
  last_cache_read  BIGINT NOT NULL DEFAULT 0,
  note          TEXT NOT NULL DEFAULT '',
  read_at       BIGINT NOT NULL
);
