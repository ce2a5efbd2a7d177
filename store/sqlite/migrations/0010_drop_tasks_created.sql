-- clawpit registry schema v10: drop tasks_created (created_at), which
-- tasks_win_created (created_at, id) from v7 serves wholly: every write of a
-- task row kept both up to date, and deleting a task (the sweep's prunes)
-- costs a tenth more for it.
DROP INDEX IF EXISTS tasks_created;
