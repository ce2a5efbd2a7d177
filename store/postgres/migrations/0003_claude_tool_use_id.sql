-- PostgreSQL port of store/migrations/0003_claude_tool_use_id.sql (same version number, same
-- tables, columns, constraints and partial indexes). INTEGER is BIGINT, ids
-- compare byte-wise (COLLATE "C", as SQLite's BINARY) for prefix lookups.
-- clawpit registry schema v3: the runtime's id of the tool call an approval gates
-- (Claude Code hooks: PreToolUse `tool_use_id`). Unique when present, so the same
-- tool call arriving again (a resumed session) finds its first request and decision.
ALTER TABLE approvals ADD COLUMN tool_use_id TEXT;
CREATE UNIQUE INDEX approvals_tool_use_id ON approvals(tool_use_id) WHERE tool_use_id IS NOT NULL;
