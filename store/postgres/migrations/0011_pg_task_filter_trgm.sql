-- clawpit registry schema v11 (PostgreSQL): a trigram index (pg_trgm, GIN)
-- over the fields the console's task filter searches, joined by chr(1) (a
-- character no filter holds, so a match never spans two fields), so a `/`
-- keystroke of three or more characters over millions of tasks reads the
-- rows that contain the text instead of the pane's order until a screenful
-- matches. The expression is store/window.go's pgTaskHay, term for term.
--
-- pg_trgm is an extension: a role that may not create it (or a server
-- without it) gets no index, and the filter reads as before. Its operator
-- class is named with the schema it lives in (public, or where it already
-- was), so the index does not depend on the search_path. The block runs
-- in a savepoint of its own: a failure there leaves the rest whole.
DO $$
DECLARE
  nsp text;
BEGIN
  -- In public when the role may create there: an extension in a registry's
  -- own schema would go with that schema, and with it every other
  -- registry's index that uses its operator class.
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
  EXCEPTION WHEN OTHERS THEN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  END;
  SELECT n.nspname INTO nsp FROM pg_opclass c
    JOIN pg_namespace n ON n.oid = c.opcnamespace
    JOIN pg_am a ON a.oid = c.opcmethod
    WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin';
  EXECUTE format($ix$CREATE INDEX IF NOT EXISTS tasks_filter_trgm ON tasks USING gin (((id || chr(1) || status || chr(1) || runtime || chr(1) || coalesce(win_name, '') || chr(1) || coalesce(nullif(child_session, ''), owner_session, '') || chr(1) || delivery_status || chr(1) || error) COLLATE "C") %I.gin_trgm_ops)$ix$, nsp);
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'clawpit: no trigram index for the task filter (%): the filter reads the pane''s order', SQLERRM;
END
$$;
