-- clawpit registry schema v21 (PostgreSQL): the Jobs pane's command order
-- reads the program by the name the pane shows it (argv[0] after its last
-- '/'), then the stored command; see the SQLite migration of the same
-- number. The column is STORED (no virtual generated columns before 18),
-- computed by an immutable function that gives '' for a command that is
-- not a JSON array of strings, so such a row is still written.
CREATE FUNCTION clawpit_job_program(command text) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF jsonb_typeof(command::jsonb -> 0) = 'string' THEN
    RETURN regexp_replace(command::jsonb ->> 0, '^.*/', '');
  END IF;
  RETURN '';
EXCEPTION WHEN others THEN
  RETURN '';
END $$;
ALTER TABLE jobs ADD COLUMN win_program TEXT COLLATE "C" GENERATED ALWAYS AS (clawpit_job_program(command)) STORED;
DROP INDEX jobs_win_command;
CREATE INDEX jobs_win_command ON jobs(win_program, command, id);
