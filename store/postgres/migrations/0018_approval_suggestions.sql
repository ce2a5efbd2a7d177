-- PostgreSQL port of store/migrations/0018_approval_suggestions.sql (same
-- version number and columns).
ALTER TABLE approvals ADD COLUMN suggestions TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN suggestion BIGINT NOT NULL DEFAULT 0;
