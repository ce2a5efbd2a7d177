package core

// ConsoleTx is the optional read side the console uses when the store offers
// it (package store's transactions do). The console type-asserts a Tx to it
// and falls back to the plain Tx methods when it is absent.
type ConsoleTx interface {
	// MaxEventID returns the id of the newest journal row, 0 when the journal
	// is empty: the console's starting point for EventsSince after a full load.
	MaxEventID() (int64, error)
	// EachTask calls fn for every task, newest first, without building the
	// whole result in memory (the console loads 100,000 tasks this way). The
	// *Task passed to fn is reused between calls: fn must copy what it keeps.
	// An error from fn stops the scan and is returned.
	EachTask(fn func(*Task) error) error
	// CountRows returns the row count of every table the console shows.
	CountRows() (TableCounts, error)
}

// TableCounts are the row counts of the tables the console shows. The
// console compares them with what it holds after replaying the journal: rows
// pruned by another process leave no journal (SPEC R8 prunes the journal
// with the row), so a mismatch means "reload everything".
type TableCounts struct {
	Tasks, Runs, Approvals, Jobs, Notifications int64
}
