-- PostgreSQL port of store/migrations/0007_window_sort_indexes.sql: the
-- console reads windows of rows (keyset pagination, filter and sort in SQL).
-- The computed sort keys have the same names as on SQLite, so store/window.go
-- runs the same statements; PostgreSQL has only STORED generated columns
-- (computed on write). A row-value comparison over a btree on (keys…, id)
-- seeks to a window's anchor on PostgreSQL as on SQLite.
--
-- Sorted text columns compare byte-wise (COLLATE "C", SQLite's BINARY), so
-- both stores order labels, tools, commands and kinds alike whatever the
-- database's locale.

-- Tasks: urgency (running, queued, lost, failed, timed_out, cancelled, succeeded),
-- then the latest of activity and end; recency; creation; label.
ALTER TABLE tasks ADD COLUMN win_urgency BIGINT GENERATED ALWAYS AS
  (CASE status WHEN 'running' THEN 6 WHEN 'queued' THEN 5 WHEN 'lost' THEN 4 WHEN 'failed' THEN 3
   WHEN 'timed_out' THEN 2 WHEN 'cancelled' THEN 1 ELSE 0 END) STORED;
ALTER TABLE tasks ADD COLUMN win_last BIGINT GENERATED ALWAYS AS (GREATEST(activity_at, coalesce(ended_at, 0))) STORED;
ALTER TABLE tasks ADD COLUMN win_name TEXT COLLATE "C" GENERATED ALWAYS AS (coalesce(nullif(label, ''), nullif(kind, ''), task)) STORED;
CREATE INDEX tasks_win_urgency ON tasks(win_urgency, win_last, id);
CREATE INDEX tasks_win_recent ON tasks(win_last, id);
CREATE INDEX tasks_win_created ON tasks(created_at, id);
CREATE INDEX tasks_win_label ON tasks(win_name, id);
CREATE INDEX tasks_status_ended ON tasks(status, ended_at);

-- Runs: waiting, running, error/timeout, other ends, ok; then the last activity.
ALTER TABLE runs ALTER COLUMN label TYPE TEXT COLLATE "C";
ALTER TABLE runs ADD COLUMN win_urgency BIGINT GENERATED ALWAYS AS
  (CASE WHEN ended_at IS NULL AND pending_approval_waits > 0 THEN 4 WHEN ended_at IS NULL THEN 3
   WHEN outcome IN ('error', 'timeout') THEN 2 WHEN outcome = 'ok' THEN 0 ELSE 1 END) STORED;
ALTER TABLE runs ADD COLUMN win_last BIGINT GENERATED ALWAYS AS (coalesce(ended_at, nullif(last_progress_at, 0), started_at)) STORED;
CREATE INDEX runs_win_urgency ON runs(win_urgency, win_last, run_id);
CREATE INDEX runs_win_recent ON runs(win_last, run_id);
CREATE INDEX runs_win_started ON runs(started_at, run_id);
CREATE INDEX runs_win_label ON runs(label, run_id);

-- Approvals: pending first, then newest request.
ALTER TABLE approvals ALTER COLUMN tool TYPE TEXT COLLATE "C";
ALTER TABLE approvals ADD COLUMN win_pending BIGINT GENERATED ALWAYS AS
  (CASE WHEN status = 'pending' THEN 1 ELSE 0 END) STORED;
CREATE INDEX approvals_win_urgency ON approvals(win_pending, requested_at, id);
CREATE INDEX approvals_win_recent ON approvals(requested_at, id);
CREATE INDEX approvals_win_tool ON approvals(tool, id);
CREATE INDEX approvals_pending ON approvals(id) WHERE status = 'pending';

-- Jobs: running, pending, lost, failed, timed_out, cancelled, reaped, completed.
ALTER TABLE jobs ALTER COLUMN command TYPE TEXT COLLATE "C";
ALTER TABLE jobs ADD COLUMN win_urgency BIGINT GENERATED ALWAYS AS
  (CASE status WHEN 'running' THEN 7 WHEN 'pending' THEN 6 WHEN 'lost' THEN 5 WHEN 'failed' THEN 4
   WHEN 'timed_out' THEN 3 WHEN 'cancelled' THEN 2 WHEN 'reaped' THEN 1 ELSE 0 END) STORED;
CREATE INDEX jobs_win_urgency ON jobs(win_urgency, created_at, id);
CREATE INDEX jobs_win_recent ON jobs(created_at, id);
CREATE INDEX jobs_win_command ON jobs(command, id);
CREATE INDEX jobs_status_completed ON jobs(status, completed_at);
CREATE INDEX jobs_lost_at ON jobs(coalesce(completed_at, created_at)) WHERE status = 'lost';

-- Notifications: unread first, then newest; by kind.
ALTER TABLE notifications ALTER COLUMN kind TYPE TEXT COLLATE "C";
ALTER TABLE notifications ADD COLUMN win_unread BIGINT GENERATED ALWAYS AS
  (CASE WHEN delivered_at IS NULL THEN 1 ELSE 0 END) STORED;
CREATE INDEX notifications_win_urgency ON notifications(win_unread, id);
CREATE INDEX notifications_win_kind ON notifications(kind, id);
