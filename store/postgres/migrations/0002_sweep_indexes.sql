-- PostgreSQL port of store/migrations/0002_sweep_indexes.sql (same version number, same
-- tables, columns, constraints and partial indexes). INTEGER is BIGINT, ids
-- compare byte-wise (COLLATE "C", as SQLite's BINARY) for prefix lookups.
-- clawpit registry schema v2: indexes for the maintenance sweeper (SPEC §5: every rule
-- reads through an index, so a sweep's cost follows active and due rows, not history).
-- Partial indexes: each holds only the rows its rule looks for.

-- Ended runs without cleanup_after (R8 stamp).
CREATE INDEX runs_unstamped ON runs(ended_at) WHERE cleanup_after IS NULL AND ended_at IS NOT NULL;

-- Contradictory timestamps (R10 inconsistent_timestamps). The query repeats each
-- predicate verbatim so SQLite can use the partial index.
CREATE INDEX tasks_inconsistent ON tasks(id) WHERE (started_at < created_at OR ended_at < started_at OR ended_at < created_at OR (ended_at IS NOT NULL AND status IN ('queued','running')));
CREATE INDEX runs_inconsistent ON runs(run_id) WHERE (ended_at < started_at);
CREATE INDEX approvals_inconsistent ON approvals(id) WHERE (decided_at < requested_at OR (decided_at IS NOT NULL AND status = 'pending'));
CREATE INDEX jobs_inconsistent ON jobs(id) WHERE (started_at < created_at OR completed_at < started_at OR completed_at < created_at OR (completed_at IS NOT NULL AND status IN ('pending','running')));
