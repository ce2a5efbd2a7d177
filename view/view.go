// Package view declares each registry entity once as the console shows it:
// its sort orders (their names, their keys and the columns that hold them),
// its urgency ranking and its searchable fields. The console (tui) derives
// its comparators, rank lookups and in-memory search text from it; the store
// derives its windows' sort keys, its filter's field lists and the urgency
// weights of its filter plans. Memory answers the same window queries over
// rows held in memory (small tables, tests, registries not clawpit's). Migration 0007's generated columns (win_*)
// compute the same weights in SQL; store/view_test.go checks them against
// this package on every engine.
//
// It imports only core: it lies below both the console and the store.
package view

import "github.com/clawpit/clawpit/core"

// Key is one sort key of an entity: its name (what the console compares)
// and the SQL column that holds it (a migration 0007 generated column, win_*,
// or a plain one).
type Key struct {
	Name   string
	Column string
}

// Sort is one order of an entity's rows: its keys in turn, all descending
// (Desc: largest first) or all ascending. The store appends the id (the
// same direction) so its order is total; the console breaks ties by id too.
type Sort struct {
	Name string
	Keys []Key
	Desc bool
}

// Key names. A console row compares its own value of each (tui/panes.go); a
// window reads Key.Column.
const (
	KeyUrgency   = "urgency"   // the entity's urgency weight (TaskUrgency, RunUrgency, JobUrgency)
	KeyLast      = "last"      // when the row last did something (epoch ms)
	KeyCreated   = "created"   // creation time (epoch ms)
	KeyStarted   = "started"   // start time (epoch ms)
	KeyRequested = "requested" // an approval's request time (epoch ms)
	KeyPending   = "pending"   // ApprovalUrgency: 1 pending, else 0
	KeyUnread    = "unread"    // AlertUrgency: 1 not yet delivered, else 0
	KeyID        = "id"        // a notification's id (increasing with time)
	KeyName      = "name"      // a task's name: label, else kind, else what was asked
	KeyLabel     = "label"
	KeyTool      = "tool"
	KeyProgram   = "program" // a job's program: argv[0]'s base name (JobProgram), as the Jobs pane shows it
	KeyCommand   = "command" // a job's command as stored: its arguments as a JSON array
	KeyKind      = "kind"
)

// Sorts returns the sort orders entity's panes and windows offer, the
// default (urgency) first; nil for an entity without a pane. entity is one
// of core.EntityTask, EntityRun, EntityApproval, EntityJob,
// EntityNotification. The slice is fresh: the caller may keep it.
func Sorts(entity string) []Sort {
	switch entity {
	case core.EntityTask:
		last := Key{KeyLast, "win_last"}
		return []Sort{
			{"urgency", []Key{{KeyUrgency, "win_urgency"}, last}, true},
			{"recent", []Key{last}, true},
			{"created", []Key{{KeyCreated, "created_at"}}, true},
			{"label", []Key{{KeyName, "win_name"}}, false},
		}
	case core.EntityRun:
		last := Key{KeyLast, "win_last"}
		return []Sort{
			{"urgency", []Key{{KeyUrgency, "win_urgency"}, last}, true},
			{"recent", []Key{last}, true},
			{"started", []Key{{KeyStarted, "started_at"}}, true},
			{"label", []Key{{KeyLabel, "label"}}, false},
		}
	case core.EntityApproval:
		req := Key{KeyRequested, "requested_at"}
		return []Sort{
			{"urgency", []Key{{KeyPending, "win_pending"}, req}, true},
			{"recent", []Key{req}, true},
			{"tool", []Key{{KeyTool, "tool"}}, false},
		}
	case core.EntityJob:
		created := Key{KeyCreated, "created_at"}
		return []Sort{
			{"urgency", []Key{{KeyUrgency, "win_urgency"}, created}, true},
			{"recent", []Key{created}, true},
			// The program by the name the pane shows (not its directory),
			// then the stored command.
			{"command", []Key{{KeyProgram, "win_program"}, {KeyCommand, "command"}}, false},
		}
	case core.EntityNotification:
		id := Key{KeyID, "id"}
		return []Sort{
			{"urgency", []Key{{KeyUnread, "win_unread"}, id}, true},
			{"recent", []Key{id}, true},
			{"kind", []Key{{KeyKind, "kind"}}, false},
		}
	}
	return nil
}

// SortNames returns the names of entity's sorts in order (Sorts), nil for
// an entity without a pane: the values core.WindowQuery.Sort accepts.
func SortNames(entity string) []string {
	sorts := Sorts(entity)
	if sorts == nil {
		return nil
	}
	names := make([]string, len(sorts))
	for i, s := range sorts {
		names[i] = s.Name
	}
	return names
}
