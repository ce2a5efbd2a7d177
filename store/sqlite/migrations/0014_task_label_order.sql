-- clawpit registry schema v14: the task filter in label order reads the
-- matching names in that order, so a text whose matches sort behind
-- millions of labels costs a window's rows, not a walk of the label index
-- up to them (10,000,000 tasks: 710 ms for `task 4` before).
--
--   tasks_label_buckets  the label order cut into buckets of a few hundred
--                        tasks: bucket b holds the tasks from (lo_name,
--                        lo_id) up to the next bucket's; b grows with the
--                        order, with gaps left for splits; n counts the
--                        index entries keyed in it;
--   tasks_label_fts      each task's name (label, else kind, else task)
--                        in a trigram index whose rowid is its key:
--                        bucket << 33 | the task's rowid. FTS5 returns a
--                        match's rowids in order, so matches come bucket
--                        by bucket in label order, and one bucket is
--                        sorted by reading it whole;
--   tasks_label_keys     each indexed task's current key (stale keys of
--                        deleted or renamed tasks are skipped on read and
--                        collected later);
--   tasks_label_queue    tasks inserted or renamed since their last
--                        indexing: the store indexes them before its
--                        transaction commits, and a read treats them
--                        apart, so writers outside clawpit (the sqlite3
--                        shell) stay correct.
--   tasks_label_gc       where the collection of stale keys resumes.
--
-- Only triggers on insert and rename touch these tables: deleting a task
-- (the sweep's pruning) writes nothing here, because FTS5 writes whose
-- rowids are out of order cost a segment each. The backfill (buckets of
-- 256 tasks, the keys and the index) runs in Go after this file, in the
-- same transaction (store/label_order.go).
CREATE TABLE tasks_label_buckets (
  lo_name TEXT NOT NULL,
  lo_id   TEXT NOT NULL,
  b       INTEGER NOT NULL UNIQUE,
  n       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (lo_name, lo_id)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE tasks_label_fts USING fts5(name, content = '', contentless_delete = 1, tokenize = 'trigram', detail = 'none');

CREATE TABLE tasks_label_keys (
  task INTEGER PRIMARY KEY,
  key  INTEGER NOT NULL
);

CREATE TABLE tasks_label_queue (task INTEGER PRIMARY KEY);

CREATE TABLE tasks_label_gc (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  after INTEGER NOT NULL
);

CREATE TRIGGER tasks_label_insert AFTER INSERT ON tasks BEGIN
  INSERT OR IGNORE INTO tasks_label_queue (task) VALUES (new.rowid);
END;

CREATE TRIGGER tasks_label_rename AFTER UPDATE OF id, label, kind, task ON tasks
WHEN old.id IS NOT new.id OR old.win_name IS NOT new.win_name
BEGIN
  INSERT OR IGNORE INTO tasks_label_queue (task) VALUES (new.rowid);
END;
