-- clawpit registry schema v12: an approval records the process waiting to
-- answer its runtime (Claude Code hooks: the gated PreToolUse hook) — its
-- host, pid, start time (clock ticks since boot, /proc stat field 22) and
-- boot and pid namespace ("<boot_id> pid:[<inode>]") — so a sweep on that
-- host, in that namespace, can withdraw an approval whose waiter is gone
-- (killed outright, with no chance to withdraw it itself) instead of
-- leaving it pending for an operator to decide in vain. 0 / '': nobody
-- registered (approvals requested from the CLI). Constant defaults: no
-- row is rewritten.
ALTER TABLE approvals ADD COLUMN waiter_host TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN waiter_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN waiter_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN waiter_ns TEXT NOT NULL DEFAULT '';
