-- PostgreSQL port of store/migrations/0006_faults2_job_containment.sql.
--
-- jobs.containment: how the supervisor holds the job's whole process tree on
-- this machine — 'cgroup', 'subreaper' or 'process group'; '' until the
-- command starts. jobs.cgroup: the cgroup directory when containment is
-- 'cgroup', so a sweep can end the tree of a job whose supervisor died.
ALTER TABLE jobs ADD COLUMN containment TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN cgroup TEXT NOT NULL DEFAULT '';
