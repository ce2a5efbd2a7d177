package core

// WindowTx is the read side of a console that reads windows of rows instead
// of whole tables (README "Many hosts: PostgreSQL": keyset pagination, filter and sort in SQL).
// Every Tx has it.
type WindowTx interface {
	// Window sends one window of entity's rows to sink, in the order of
	// q.Sort: up to q.Before rows just before the anchor row, then up to
	// q.After rows from the anchor on (the anchor row itself first, when it
	// matches the filter). Every row it returns passes q.Filter. Errors:
	// ErrInvalid for an unknown entity or sort key.
	Window(q WindowQuery, sink RowSink) (WindowPage, error)
	// CountWindow counts the rows of q.Entity that pass q.Filter, stopping at
	// limit (capped is then true; a negative limit counts them all): an
	// unfiltered count walks the table's smallest index, a filtered one reads
	// rows until limit matches.
	CountWindow(q WindowQuery, limit int64) (n int64, capped bool, err error)
	// HeaderCounts returns the console header's numbers, each from an
	// indexed count; "recent" ones (failed, lost) ended at or after since
	// (epoch ms).
	HeaderCounts(since Timestamp) (HeaderCounts, error)
}

// WindowQuery selects a window of one table's rows.
type WindowQuery struct {
	Entity string // EntityTask, EntityRun, EntityApproval, EntityJob or EntityNotification
	Sort   string // a sort of the entity (package view declares them: view.SortNames), "" = the first (urgency)
	// Filter is a case-insensitive substring (ASCII folding) over the row's
	// searchable text: the fields the console shows. "" = every row.
	Filter string
	// Anchor is the id of the row the window is placed at. It need not pass
	// the filter; when it no longer exists the window is empty. "" = the
	// first row (or the last, with End).
	Anchor string
	// AnchorKey, when set, places the window instead of Anchor: a position
	// an earlier page gave (WindowPage.FirstKey), the sort-key values its
	// first row had when that page was read. A row that has moved since (a
	// running task that finished, say) does not move the window with it.
	AnchorKey string
	Before    int  // rows before the anchor (0 = none)
	After     int  // rows from the anchor on
	End       bool // with no anchor: the last After rows
}

// WindowPage describes a window sent by Window.
type WindowPage struct {
	Before     int  // rows sent before the anchor (they come first)
	Rows       int  // rows sent in all
	MoreBefore bool // rows exist before the first one sent
	MoreAfter  bool // rows exist after the last one sent
	// FirstKey is the position of the first row sent, for a later
	// WindowQuery.AnchorKey: opaque text (its sort-key values); "" when no
	// row was sent.
	FirstKey string
}

// RowSink receives rows (tui.Sink is one). The pointers are only valid during
// the call.
type RowSink interface {
	Task(*Task)
	Run(*Run)
	Approval(*Approval)
	Job(*Job)
	Alert(*Notification)
}

// HeaderCounts are the console header's numbers (README "The console").
type HeaderCounts struct {
	PendingApprovals int64
	RunningTasks     int64
	RunningRuns      int64
	ActiveJobs       int64 // pending or running
	Failed           int64 // tasks and jobs failed or timed out since the cutoff
	Lost             int64 // tasks and jobs lost since the cutoff
	Unread           int64 // notifications not yet delivered
}
