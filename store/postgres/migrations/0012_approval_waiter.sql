-- clawpit registry schema v12 (PostgreSQL): see ../migrations/0012. An
-- approval records the process waiting to answer its runtime (host, pid,
-- start time, boot and pid namespace), so a sweep on that host, in that
-- namespace, can withdraw an approval whose waiter is gone. Constant defaults: no row is rewritten.
ALTER TABLE approvals ADD COLUMN waiter_host TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN waiter_pid BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN waiter_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN waiter_ns TEXT NOT NULL DEFAULT '';
