-- clawpit registry schema v11: nothing to change on SQLite, whose task
-- filter has read trigram indexes (FTS5) since v9. PostgreSQL's v11 adds
-- the same kind of index there (pg_trgm). The version stays in step.
SELECT 1;
