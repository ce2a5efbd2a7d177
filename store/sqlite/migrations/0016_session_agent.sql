-- clawpit registry schema v16: which agent a session came from (issue 28):
-- "claude" (Claude Code), "codex" (Codex CLI), "gemini" (Gemini CLI), or ''
-- when the runtime did not say (sessions recorded before, OpenClaw, the
-- CLI). Set by the hook adapters on the session's first record.
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';
