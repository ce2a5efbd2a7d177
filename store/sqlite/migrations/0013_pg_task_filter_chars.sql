-- clawpit registry schema v13: nothing to change on SQLite, whose task
-- filter finds one- and two-character texts in its trigram indexes'
-- vocabularies (FTS5) since v9. PostgreSQL's v13 adds an index for them
-- there. The version stays in step.
SELECT 1;
