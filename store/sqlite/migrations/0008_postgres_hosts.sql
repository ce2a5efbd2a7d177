-- clawpit registry schema v8 (branch postgres): hosts (SPEC §14).
--
-- jobs.host: the machine a job's supervisor runs on (hostname, or
-- CLAWPIT_HOST). Liveness, reaping and cancel signal a job's processes only
-- on that host. '' for jobs recorded before this version: they belong to the
-- single host that wrote them.
ALTER TABLE jobs ADD COLUMN host TEXT NOT NULL DEFAULT '';

-- hosts: when each host's sweep last confirmed its own jobs' supervisors.
-- A sweep elsewhere reports a host whose active jobs have gone unconfirmed
-- for more than two sweep intervals (it never marks them lost itself).
CREATE TABLE hosts (
  name     TEXT PRIMARY KEY,
  swept_at INTEGER NOT NULL
);
