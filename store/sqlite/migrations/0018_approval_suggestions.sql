-- clawpit registry schema v18: an agent's suggested permission updates,
-- offered as approval scopes (issue 28, --gate-on ask: Claude Code's
-- PermissionRequest permission_suggestions). suggestions is the JSON array
-- as the agent sent it ('' when none); suggestion the one the operator
-- approved with, 1-based (0: none, approved once).
ALTER TABLE approvals ADD COLUMN suggestions TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN suggestion INTEGER NOT NULL DEFAULT 0;
