package store

import "github.com/clawpit/clawpit/core"

// MaxEventID returns the newest journal row id, 0 for an empty journal. It
// reads the rowid b-tree's last entry (constant time).
func (t *tx) MaxEventID() (int64, error) {
	var id int64
	if err := t.queryRow("SELECT COALESCE(MAX(id), 0) FROM events").Scan(&id); err != nil {
		return 0, mapErr(err)
	}
	return id, nil
}

// EachTask streams every task, newest first (created_at DESC, id DESC), to
// fn, scanning into one reused core.Task.
func (t *tx) EachTask(fn func(*core.Task) error) error {
	rows, err := t.query("SELECT " + taskCols + " FROM tasks ORDER BY created_at DESC, id DESC")
	if err != nil {
		return mapErr(err)
	}
	defer rows.Close()
	var k core.Task
	for rows.Next() {
		k = core.Task{}
		if err := scanTask(rows, &k); err != nil {
			return mapErr(err)
		}
		if err := fn(&k); err != nil {
			return err
		}
	}
	return mapErr(rows.Err())
}

// CountRows counts the rows of tasks, runs, approvals, jobs and
// notifications in one statement (each COUNT(*) walks the table's smallest
// index).
func (t *tx) CountRows() (core.TableCounts, error) {
	var c core.TableCounts
	err := t.queryRow(`SELECT
		(SELECT COUNT(*) FROM tasks), (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM approvals),
		(SELECT COUNT(*) FROM jobs), (SELECT COUNT(*) FROM notifications)`).
		Scan(&c.Tasks, &c.Runs, &c.Approvals, &c.Jobs, &c.Notifications)
	if err != nil {
		return c, mapErr(err)
	}
	return c, nil
}
