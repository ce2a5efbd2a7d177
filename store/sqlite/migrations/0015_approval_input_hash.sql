-- clawpit registry schema v15: an answer belongs to one tool call. A
-- runtime's tool_use_id alone no longer finds a recorded decision: the
-- session, the tool and the input must be the same too. input_hash is the
-- SHA-256 (lowercase hex) of the tool's input JSON re-encoded canonically
-- (core.CanonicalInputHash); NULL for approvals recorded before it, which
-- therefore never answer a repeated tool call. The same tool_use_id may now
-- recur on approvals of other calls; one call still has one approval.
ALTER TABLE approvals ADD COLUMN input_hash TEXT;
DROP INDEX approvals_tool_use_id;
CREATE UNIQUE INDEX approvals_tool_call ON approvals(tool_use_id, session, tool, input_hash) WHERE tool_use_id IS NOT NULL;
