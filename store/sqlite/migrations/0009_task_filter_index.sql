-- clawpit registry schema v9: the console's `/` filter over tasks reads
-- trigram indexes (SQLite FTS5, tokenize='trigram'), so a keystroke over
-- millions of tasks reads the few rows that contain the text instead of
-- every row.
--
--   tasks_fts        id, runtime, name (label, else kind, else task) and
--                    session (child, else owner): set when a task is
--                    created and seldom changed, so runtimes' and the
--                    sweeper's writes rarely touch it;
--   tasks_error_fts  error, for the tasks that have one: marking a task
--                    lost or failed writes here only.
--
-- Status and delivery status are not indexed here: their few values are
-- matched in the store and read through the status, urgency and delivery
-- indexes (tasks_delivery, below).
--
-- Both are contentless (the registry keeps the text once, in tasks): a
-- trigger deletes a task's entry with FTS5's 'delete' command and the
-- values it indexed, computed again from the old row by the same
-- expressions. (Not contentless_delete: SQLite before 3.43, as in Debian
-- 12's sqlite3 CLI, could then not write to tasks at all.) Every value ends
-- in two U+0001 characters: then each character of a value starts a
-- trigram, and a one- or two-character filter finds its trigrams in the
-- index's vocabulary (the *_vocab tables) by prefix. The indexes keep which
-- rows (and, for tasks_fts, which columns) hold a trigram, not where
-- (detail = 'column' and 'none': a fraction of the size of positions, and
-- writes cost little), so a longer query asks for the rows whose one column
-- holds its rarest trigrams. They give candidates: the store re-checks
-- every one with LIKE.
--
-- The triggers keep the indexes in step inside the writing transaction; an
-- update reindexes a task only when a value an index holds changed (every
-- UpdateTask writes every column). Runs in one transaction like every
-- migration (the backfill included): killed midway, it rolls back and the
-- next open runs it again.
CREATE VIRTUAL TABLE tasks_fts USING fts5(id, runtime, name, session, content = '', tokenize = 'trigram', detail = 'column');
CREATE VIRTUAL TABLE tasks_fts_vocab USING fts5vocab(tasks_fts, 'row');
CREATE VIRTUAL TABLE tasks_error_fts USING fts5(error, content = '', tokenize = 'trigram', detail = 'none');
CREATE VIRTUAL TABLE tasks_error_fts_vocab USING fts5vocab(tasks_error_fts, 'row');

CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
  INSERT INTO tasks_fts(rowid, id, runtime, name, session) VALUES (
    new.rowid, new.id || char(1, 1), new.runtime || char(1, 1),
    coalesce(nullif(new.label, ''), nullif(new.kind, ''), new.task) || char(1, 1),
    coalesce(nullif(new.child_session, ''), new.owner_session, '') || char(1, 1));
  INSERT INTO tasks_error_fts(rowid, error) SELECT new.rowid, new.error || char(1, 1) WHERE new.error != '';
END;

CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, id, runtime, name, session) VALUES ('delete',
    old.rowid, old.id || char(1, 1), old.runtime || char(1, 1),
    coalesce(nullif(old.label, ''), nullif(old.kind, ''), old.task) || char(1, 1),
    coalesce(nullif(old.child_session, ''), old.owner_session, '') || char(1, 1));
  INSERT INTO tasks_error_fts(tasks_error_fts, rowid, error)
    SELECT 'delete', old.rowid, old.error || char(1, 1) WHERE old.error != '';
END;

CREATE TRIGGER tasks_fts_update AFTER UPDATE OF id, runtime, label, kind, task, child_session, owner_session ON tasks
WHEN old.id IS NOT new.id OR old.runtime IS NOT new.runtime OR old.label IS NOT new.label
  OR old.kind IS NOT new.kind OR old.task IS NOT new.task OR old.child_session IS NOT new.child_session
  OR old.owner_session IS NOT new.owner_session
BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, id, runtime, name, session) VALUES ('delete',
    old.rowid, old.id || char(1, 1), old.runtime || char(1, 1),
    coalesce(nullif(old.label, ''), nullif(old.kind, ''), old.task) || char(1, 1),
    coalesce(nullif(old.child_session, ''), old.owner_session, '') || char(1, 1));
  INSERT INTO tasks_fts(rowid, id, runtime, name, session) VALUES (
    new.rowid, new.id || char(1, 1), new.runtime || char(1, 1),
    coalesce(nullif(new.label, ''), nullif(new.kind, ''), new.task) || char(1, 1),
    coalesce(nullif(new.child_session, ''), new.owner_session, '') || char(1, 1));
END;

CREATE TRIGGER tasks_error_fts_update AFTER UPDATE OF error ON tasks WHEN old.error IS NOT new.error BEGIN
  INSERT INTO tasks_error_fts(tasks_error_fts, rowid, error)
    SELECT 'delete', old.rowid, old.error || char(1, 1) WHERE old.error != '';
  INSERT INTO tasks_error_fts(rowid, error) SELECT new.rowid, new.error || char(1, 1) WHERE new.error != '';
END;

-- One delivery status's tasks, for the filter's delivery arm.
CREATE INDEX tasks_delivery ON tasks(delivery_status);

INSERT INTO tasks_fts(rowid, id, runtime, name, session)
  SELECT rowid, id || char(1, 1), runtime || char(1, 1),
    coalesce(nullif(label, ''), nullif(kind, ''), task) || char(1, 1),
    coalesce(nullif(child_session, ''), owner_session, '') || char(1, 1)
  FROM tasks;
INSERT INTO tasks_error_fts(rowid, error) SELECT rowid, error || char(1, 1) FROM tasks WHERE error != '';
