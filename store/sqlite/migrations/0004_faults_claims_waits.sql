-- clawpit registry schema v3 (branch faults).
--
-- approvals.holds_wait: 1 while the approval counts in its run's
-- pending_approval_waits (SPEC R6). It is set with the increment and cleared
-- with the decrement, so a resolution releases exactly the waits that were
-- taken — no longer inferred from timestamps, which could not tell a request
-- made in the same millisecond as the run's end. Backfill: the old inference
-- for pending approvals (decided ones have released theirs already).
ALTER TABLE approvals ADD COLUMN holds_wait INTEGER NOT NULL DEFAULT 0;
UPDATE approvals SET holds_wait = 1
 WHERE status = 'pending' AND run_id IS NOT NULL AND EXISTS (
   SELECT 1 FROM runs
    WHERE runs.run_id = approvals.run_id AND runs.started_at <= approvals.requested_at
      AND (runs.ended_at IS NULL OR approvals.requested_at < runs.ended_at));

-- notifications.claimed_by / claim_until: a notifier (console or daemon,
-- `--notify-cmd`) claims a notification with a conditional update before it
-- runs the command, so two live notifiers never deliver the same one. The
-- claim is a lease (unix ms): a notifier that dies mid-delivery leaves a
-- claim that expires, and the notification is delivered again (at least once
-- across crashes, exactly once between live notifiers).
ALTER TABLE notifications ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE notifications ADD COLUMN claim_until INTEGER;
