package view

import "github.com/clawpit/clawpit/core"

// The computed values the sorts read (Key), as migration 0007's generated
// columns compute them in SQL (store/view_test.go checks they agree).

// TaskName is a task's name (KeyName, tasks.win_name): its label, else its
// kind, else what was asked.
func TaskName(t *core.Task) string {
	switch {
	case t.Label != "":
		return t.Label
	case t.Kind != "":
		return t.Kind
	}
	return t.Task
}

// TaskLast is when a task last did something (KeyLast, tasks.win_last,
// epoch ms): the later of its last activity (core.Task.LastActivity) and
// its end.
func TaskLast(t *core.Task) core.Timestamp { return max(t.LastActivity(), t.EndedAt) }

// RunLast is when a run last did something (KeyLast, runs.win_last, epoch
// ms): its end, else its last progress, else its start.
func RunLast(ended, progress, started core.Timestamp) core.Timestamp {
	return core.Coalesce(ended, progress, started)
}
