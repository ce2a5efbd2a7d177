-- clawpit registry schema v4: the console reads windows of rows (SPEC §14: keyset
-- pagination, filter and sort in SQL, never whole tables). Each pane's computed sort
-- keys are virtual generated columns (computed when read, nothing stored in the
-- rows), so one row-value comparison over an index on (keys…, id) seeks straight to
-- a window's anchor: SQLite seeks row values on columns, not on index expressions.
-- The id comes last so every order is total. Plus indexed range counts for the
-- header's last-24-h numbers.
-- Runs in one transaction like every migration: killed midway, it rolls back and
-- the next open runs it again.

-- Tasks: urgency (running, queued, lost, failed, timed_out, cancelled, succeeded),
-- then the latest of activity and end; recency; creation; label.
ALTER TABLE tasks ADD COLUMN win_urgency INTEGER GENERATED ALWAYS AS
  (CASE status WHEN 'running' THEN 6 WHEN 'queued' THEN 5 WHEN 'lost' THEN 4 WHEN 'failed' THEN 3
   WHEN 'timed_out' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END) VIRTUAL;
ALTER TABLE tasks ADD COLUMN win_last INTEGER GENERATED ALWAYS AS (max(activity_at, coalesce(ended_at, 0))) VIRTUAL;
ALTER TABLE tasks ADD COLUMN win_name TEXT GENERATED ALWAYS AS (coalesce(nullif(label, ''), nullif(kind, ''), task)) VIRTUAL;
CREATE INDEX tasks_win_urgency ON tasks(win_urgency, win_last, id);
CREATE INDEX tasks_win_recent ON tasks(win_last, id);
CREATE INDEX tasks_win_created ON tasks(created_at, id);
CREATE INDEX tasks_win_label ON tasks(win_name, id);
CREATE INDEX tasks_status_ended ON tasks(status, ended_at);

-- Runs: waiting, running, error/timeout, other ends, ok; then the last activity.
ALTER TABLE runs ADD COLUMN win_urgency INTEGER GENERATED ALWAYS AS
  (CASE WHEN ended_at IS NULL AND pending_approval_waits > 0 THEN 4 WHEN ended_at IS NULL THEN 3
   WHEN outcome IN ('error', 'timeout') THEN 2 WHEN outcome = 'ok' THEN 0 ELSE 1 END) VIRTUAL;
ALTER TABLE runs ADD COLUMN win_last INTEGER GENERATED ALWAYS AS (coalesce(ended_at, nullif(last_progress_at, 0), started_at)) VIRTUAL;
CREATE INDEX runs_win_urgency ON runs(win_urgency, win_last, run_id);
CREATE INDEX runs_win_recent ON runs(win_last, run_id);
CREATE INDEX runs_win_started ON runs(started_at, run_id);
CREATE INDEX runs_win_label ON runs(label, run_id);

-- Approvals: pending first, then newest request.
ALTER TABLE approvals ADD COLUMN win_pending INTEGER GENERATED ALWAYS AS (status = 'pending') VIRTUAL;
CREATE INDEX approvals_win_urgency ON approvals(win_pending, requested_at, id);
CREATE INDEX approvals_win_recent ON approvals(requested_at, id);
CREATE INDEX approvals_win_tool ON approvals(tool, id);
CREATE INDEX approvals_pending ON approvals(id) WHERE status = 'pending';

-- Jobs: running, pending, lost, failed, timed_out, cancelled, reaped, completed.
ALTER TABLE jobs ADD COLUMN win_urgency INTEGER GENERATED ALWAYS AS
  (CASE status WHEN 'running' THEN 7 WHEN 'pending' THEN 6 WHEN 'lost' THEN 5 WHEN 'failed' THEN 4
   WHEN 'timed_out' THEN 3 WHEN 'cancelled' THEN 2 WHEN 'reaped' THEN 1 ELSE 0 END) VIRTUAL;
CREATE INDEX jobs_win_urgency ON jobs(win_urgency, created_at, id);
CREATE INDEX jobs_win_recent ON jobs(created_at, id);
CREATE INDEX jobs_win_command ON jobs(command, id);
CREATE INDEX jobs_status_completed ON jobs(status, completed_at);
CREATE INDEX jobs_lost_at ON jobs(coalesce(completed_at, created_at)) WHERE status = 'lost';

-- Notifications: unread first, then newest; by kind.
ALTER TABLE notifications ADD COLUMN win_unread INTEGER GENERATED ALWAYS AS (delivered_at IS NULL) VIRTUAL;
CREATE INDEX notifications_win_urgency ON notifications(win_unread, id);
CREATE INDEX notifications_win_kind ON notifications(kind, id);
