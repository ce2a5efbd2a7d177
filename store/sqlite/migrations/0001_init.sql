-- clawpit registry schema v1 (SPEC §2–§3). Times are INTEGER Unix epoch ms, NULL when absent.
-- Every mutable table has `rev`, bumped by each conditional update (WHERE id=? AND rev=?).

CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  label            TEXT NOT NULL DEFAULT '',
  state            TEXT NOT NULL CHECK (state IN ('active','passivated','closed')),
  created_at       INTEGER NOT NULL,
  last_activity_at INTEGER,
  passivated_at    INTEGER,
  rev              INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX sessions_state ON sessions(state);

CREATE TABLE tasks (
  id               TEXT PRIMARY KEY,
  runtime          TEXT NOT NULL CHECK (runtime IN ('subagent','cli','cron','acp')),
  kind             TEXT NOT NULL DEFAULT '',
  status           TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','timed_out','cancelled','lost')),
  delivery_status  TEXT NOT NULL CHECK (delivery_status IN ('pending','delivered','session_queued','failed','parent_missing','not_applicable')),
  notify_policy    TEXT NOT NULL CHECK (notify_policy IN ('done_only','state_changes','silent')),
  run_id           TEXT,
  source_id        TEXT,
  owner_session    TEXT,
  child_session    TEXT,
  parent_task_id   TEXT,
  label            TEXT NOT NULL DEFAULT '',
  task             TEXT NOT NULL DEFAULT '',
  error            TEXT NOT NULL DEFAULT '',
  result_subtype   TEXT NOT NULL DEFAULT '',
  progress_summary TEXT NOT NULL DEFAULT '',
  expects_output   INTEGER NOT NULL DEFAULT 0,
  output_count     INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  started_at       INTEGER,
  last_event_at    INTEGER,
  ended_at         INTEGER,
  cleanup_after    INTEGER,
  -- last_event_at ?? started_at ?? created_at (SPEC R5), kept by the store so the
  -- grace-lost rule reads through an index.
  activity_at      INTEGER NOT NULL,
  rev              INTEGER NOT NULL DEFAULT 1
);
-- Active tasks by last activity: grace lost (R5), stale audit (R10). Partial, so its
-- size follows the active set, not history.
CREATE INDEX tasks_active ON tasks(activity_at) WHERE status IN ('queued','running');
CREATE INDEX tasks_run_id ON tasks(run_id) WHERE run_id IS NOT NULL;
CREATE INDEX tasks_source_id ON tasks(source_id) WHERE source_id IS NOT NULL;
CREATE INDEX tasks_owner_session ON tasks(owner_session) WHERE owner_session IS NOT NULL;
CREATE INDEX tasks_child_session ON tasks(child_session) WHERE child_session IS NOT NULL;
CREATE INDEX tasks_cleanup_after ON tasks(cleanup_after) WHERE cleanup_after IS NOT NULL;
-- Terminal rows not yet stamped (R8 stamp, R10 missing_cleanup).
CREATE INDEX tasks_unstamped ON tasks(ended_at) WHERE cleanup_after IS NULL AND status NOT IN ('queued','running');
-- Silent-task candidates (R7): expected output, produced none.
CREATE INDEX tasks_silent ON tasks(ended_at) WHERE expects_output = 1 AND output_count = 0 AND status IN ('succeeded','failed');
-- Delivery failures (R10).
CREATE INDEX tasks_delivery_failed ON tasks(id) WHERE delivery_status = 'failed';
CREATE INDEX tasks_status_created ON tasks(status, created_at);
CREATE INDEX tasks_created ON tasks(created_at);

CREATE TABLE runs (
  run_id                   TEXT PRIMARY KEY,
  child_session            TEXT NOT NULL DEFAULT '',
  requester_session        TEXT NOT NULL DEFAULT '',
  label                    TEXT NOT NULL DEFAULT '',
  started_at               INTEGER NOT NULL,
  last_progress_at         INTEGER NOT NULL,
  inactivity_budget_ms     INTEGER NOT NULL,
  pending_approval_waits   INTEGER NOT NULL DEFAULT 0 CHECK (pending_approval_waits >= 0),
  ended_at                 INTEGER,
  outcome                  TEXT NOT NULL DEFAULT '' CHECK (outcome IN ('','ok','error','timeout','killed','reset','deleted')),
  ended_reason             TEXT NOT NULL DEFAULT '',
  suppress_announce_reason TEXT NOT NULL DEFAULT '',
  cleanup_handled          INTEGER NOT NULL DEFAULT 0,
  error                    TEXT NOT NULL DEFAULT '',
  cleanup_after            INTEGER,
  rev                      INTEGER NOT NULL DEFAULT 1
);
-- Running runs for the watchdog (R6) and "backed" checks (R5).
CREATE INDEX runs_running ON runs(last_progress_at) WHERE ended_at IS NULL;
-- Ended runs for early lost (R5) and retention (R8).
CREATE INDEX runs_ended ON runs(ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX runs_child_session ON runs(child_session);
CREATE INDEX runs_cleanup_after ON runs(cleanup_after) WHERE cleanup_after IS NOT NULL;
CREATE INDEX runs_started ON runs(started_at);

CREATE TABLE approvals (
  id            TEXT PRIMARY KEY,
  session       TEXT NOT NULL,
  run_id        TEXT,
  task_id       TEXT,
  tool          TEXT NOT NULL,
  command       TEXT NOT NULL,
  rationale     TEXT NOT NULL DEFAULT '',
  cwd           TEXT NOT NULL DEFAULT '',
  pattern       TEXT NOT NULL DEFAULT '',
  status        TEXT NOT NULL CHECK (status IN ('pending','approved','denied','expired','cancelled')),
  scope         TEXT NOT NULL DEFAULT '' CHECK (scope IN ('','once','session','always')),
  reason        TEXT NOT NULL DEFAULT '',
  decided_by    TEXT NOT NULL DEFAULT '',
  requested_at  INTEGER NOT NULL,
  decided_at    INTEGER,
  expires_at    INTEGER,
  cleanup_after INTEGER,
  rev           INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX approvals_pending_expiry ON approvals(expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;
CREATE INDEX approvals_pending_run ON approvals(run_id) WHERE status = 'pending';
CREATE INDEX approvals_session ON approvals(session, status);
CREATE INDEX approvals_cleanup_after ON approvals(cleanup_after) WHERE cleanup_after IS NOT NULL;
CREATE INDEX approvals_unstamped ON approvals(decided_at) WHERE cleanup_after IS NULL AND status <> 'pending';
CREATE INDEX approvals_requested ON approvals(requested_at);

CREATE TABLE grants (
  id         TEXT PRIMARY KEY,
  tool       TEXT NOT NULL,
  pattern    TEXT NOT NULL,
  scope      TEXT NOT NULL CHECK (scope IN ('session','always')),
  session    TEXT NOT NULL DEFAULT '',
  created_by TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  UNIQUE (tool, pattern, scope, session)
);

CREATE TABLE jobs (
  id               TEXT PRIMARY KEY,
  session          TEXT NOT NULL,
  command          TEXT NOT NULL, -- JSON array (argv)
  cwd              TEXT NOT NULL DEFAULT '',
  rationale        TEXT NOT NULL DEFAULT '',
  status           TEXT NOT NULL CHECK (status IN ('pending','running','completed','failed','cancelled','timed_out','reaped','lost')),
  exit_code        INTEGER,
  timeout_s        INTEGER NOT NULL DEFAULT 0,
  pid              INTEGER NOT NULL DEFAULT 0,
  pgid             INTEGER NOT NULL DEFAULT 0,
  supervisor_pid   INTEGER NOT NULL DEFAULT 0,
  supervisor_start INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  started_at       INTEGER,
  completed_at     INTEGER,
  log_path         TEXT NOT NULL DEFAULT '',
  capture_error    TEXT NOT NULL DEFAULT '',
  surfaced_at      INTEGER,
  cleanup_after    INTEGER,
  rev              INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX jobs_active ON jobs(created_at) WHERE status IN ('pending','running');
CREATE INDEX jobs_session ON jobs(session, status);
CREATE INDEX jobs_cleanup_after ON jobs(cleanup_after) WHERE cleanup_after IS NOT NULL;
CREATE INDEX jobs_unstamped ON jobs(completed_at) WHERE cleanup_after IS NULL AND status NOT IN ('pending','running');
CREATE INDEX jobs_created ON jobs(created_at);

CREATE TABLE notifications (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  session       TEXT NOT NULL DEFAULT '',
  kind          TEXT NOT NULL,
  subject_id    TEXT NOT NULL DEFAULT '',
  text          TEXT NOT NULL,
  dedup_key     TEXT NOT NULL UNIQUE,
  created_at    INTEGER NOT NULL,
  delivered_at  INTEGER,
  cleanup_after INTEGER
);
CREATE INDEX notifications_undelivered ON notifications(id) WHERE delivered_at IS NULL;
CREATE INDEX notifications_cleanup_after ON notifications(cleanup_after) WHERE cleanup_after IS NOT NULL;
CREATE INDEX notifications_unstamped ON notifications(delivered_at) WHERE cleanup_after IS NULL AND delivered_at IS NOT NULL;

CREATE TABLE events (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  at        INTEGER NOT NULL,
  entity    TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  from_state TEXT NOT NULL DEFAULT '',
  to_state   TEXT NOT NULL DEFAULT '',
  actor     TEXT NOT NULL,
  reason    TEXT NOT NULL DEFAULT '',
  applied   INTEGER NOT NULL
);
CREATE INDEX events_entity ON events(entity, entity_id, id);
