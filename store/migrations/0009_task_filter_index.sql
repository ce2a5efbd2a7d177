-- clawpit registry schema v9: the console's `/` filter over tasks reads a
-- trigram index (SQLite FTS5, tokenize='trigram'), so a keystroke over
-- millions of tasks reads the few rows that contain the text instead of
-- every row. Status is not indexed here: its seven values are matched in
-- the store and read through the status and urgency indexes.
--
-- Contentless (the registry keeps the text once, in tasks): a trigger
-- deletes a task's entry with FTS5's 'delete' command and the values it
-- indexed, computed again from the old row by the same expressions. (Not
-- contentless_delete: SQLite before 3.43, as in Debian 12's sqlite3 CLI,
-- could then not write to tasks at all.) Every
-- value ends in two U+0001 characters: then each character of a value
-- starts a trigram, and a one- or two-character filter finds its trigrams
-- in the index's vocabulary (tasks_fts_vocab) by prefix. The index is a
-- candidate set: the store re-checks every candidate with LIKE.
--
-- The triggers keep the index in step inside the writing transaction. An
-- update reindexes a task only when a value the filter searches changed
-- (every UpdateTask writes every column). Runs in one transaction like
-- every migration (the backfill included): killed midway, it rolls back
-- and the next open runs it again.
CREATE VIRTUAL TABLE tasks_fts USING fts5(
  id, runtime, name, session, delivery, error,
  content = '', tokenize = 'trigram');

CREATE VIRTUAL TABLE tasks_fts_vocab USING fts5vocab(tasks_fts, 'row');

CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
  INSERT INTO tasks_fts(rowid, id, runtime, name, session, delivery, error) VALUES (
    new.rowid, new.id || char(1, 1), new.runtime || char(1, 1),
    coalesce(nullif(new.label, ''), nullif(new.kind, ''), new.task) || char(1, 1),
    coalesce(nullif(new.child_session, ''), new.owner_session, '') || char(1, 1),
    new.delivery_status || char(1, 1), new.error || char(1, 1));
END;

CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, id, runtime, name, session, delivery, error) VALUES ('delete',
    old.rowid, old.id || char(1, 1), old.runtime || char(1, 1),
    coalesce(nullif(old.label, ''), nullif(old.kind, ''), old.task) || char(1, 1),
    coalesce(nullif(old.child_session, ''), old.owner_session, '') || char(1, 1),
    old.delivery_status || char(1, 1), old.error || char(1, 1));
END;

CREATE TRIGGER tasks_fts_update AFTER UPDATE OF id, runtime, label, kind, task, child_session, owner_session,
  delivery_status, error ON tasks
WHEN old.id IS NOT new.id OR old.runtime IS NOT new.runtime OR old.label IS NOT new.label
  OR old.kind IS NOT new.kind OR old.task IS NOT new.task OR old.child_session IS NOT new.child_session
  OR old.owner_session IS NOT new.owner_session OR old.delivery_status IS NOT new.delivery_status
  OR old.error IS NOT new.error
BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, id, runtime, name, session, delivery, error) VALUES ('delete',
    old.rowid, old.id || char(1, 1), old.runtime || char(1, 1),
    coalesce(nullif(old.label, ''), nullif(old.kind, ''), old.task) || char(1, 1),
    coalesce(nullif(old.child_session, ''), old.owner_session, '') || char(1, 1),
    old.delivery_status || char(1, 1), old.error || char(1, 1));
  INSERT INTO tasks_fts(rowid, id, runtime, name, session, delivery, error) VALUES (
    new.rowid, new.id || char(1, 1), new.runtime || char(1, 1),
    coalesce(nullif(new.label, ''), nullif(new.kind, ''), new.task) || char(1, 1),
    coalesce(nullif(new.child_session, ''), new.owner_session, '') || char(1, 1),
    new.delivery_status || char(1, 1), new.error || char(1, 1));
END;

INSERT INTO tasks_fts(rowid, id, runtime, name, session, delivery, error)
  SELECT rowid, id || char(1, 1), runtime || char(1, 1),
    coalesce(nullif(label, ''), nullif(kind, ''), task) || char(1, 1),
    coalesce(nullif(child_session, ''), owner_session, '') || char(1, 1),
    delivery_status || char(1, 1), error || char(1, 1)
  FROM tasks;
