-- clawpit registry schema v14: nothing to change on PostgreSQL. SQLite's
-- v14 adds a label-ordered name index for the task filter; PostgreSQL's
-- trigram indexes return no order. The version stays in step.
SELECT 1;
