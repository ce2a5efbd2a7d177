-- clawpit registry schema v9 on PostgreSQL: nothing to change. SQLite's v9
-- adds a trigram index (FTS5) for the console's task filter; here the
-- filter stays ILIKE over the shown fields (pg_trgm is an extension a
-- registry's role may not be allowed to create). The version stays in step
-- with SQLite's.
SELECT 1;
