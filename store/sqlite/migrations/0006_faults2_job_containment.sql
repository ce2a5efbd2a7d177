-- clawpit registry schema v5 (branch faults2).
--
-- jobs.containment: how the supervisor holds the job's whole process tree on
-- this machine — 'cgroup' (a cgroup v2 of its own, ended with cgroup.kill),
-- 'subreaper' (the supervisor is a child subreaper: descendants that leave
-- the process group or session re-parent to it and are killed with it), or
-- 'process group' (only the group can be signalled). '' until the command
-- starts. jobs.cgroup: the cgroup directory when containment is 'cgroup', so
-- a sweep can end the tree of a job whose supervisor died.
ALTER TABLE jobs ADD COLUMN containment TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN cgroup TEXT NOT NULL DEFAULT '';
