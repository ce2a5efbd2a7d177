package feed

import (
	"context"

	"github.com/clawpit/clawpit/core"
)

// Source is where the console reads a registry. NewStoreSource reads
// clawpit's own (a core.Store); adapters/openclaw reads OpenClaw's; the
// console's tests use a fixed in-memory one. Every method may block on the
// registry: the console calls them off its event loop, never while it
// draws.
type Source interface {
	// Path names the registry (shown in the header).
	Path() string
	// DataVersion changes whenever another connection commits (SQLite's
	// PRAGMA data_version; PostgreSQL's notifications' counter).
	DataVersion(ctx context.Context) (int64, error)
	// Load sends rows to sink: every row when req.Full (or when the change
	// since req.AfterEventID is too big to replay), otherwise only the rows
	// whose journal changed since then plus notifications after
	// req.AfterAlertID.
	Load(ctx context.Context, req LoadRequest, sink Sink) (LoadResult, error)
	// Detail reads one entity with every field and its event journal.
	Detail(ctx context.Context, kind Kind, id string) (*Detail, error)
}

// LoadRequest says what to load.
type LoadRequest struct {
	Full         bool
	AfterEventID int64 // journal cursor of the last load
	AfterAlertID int64 // newest notification id already loaded
	MaxEvents    int   // more journal rows than this since the cursor: load everything
	// WindowOver, when positive and the source reads windows (WindowSource),
	// makes a full load send no rows of a table holding more rows than this:
	// its pane reads windows instead (LoadResult.Windowed). Negative: every
	// table; 0: none.
	WindowOver int
	// Windowed are the kinds whose panes read windows: a delta load sends
	// none of their rows, only LoadResult.Touched.
	Windowed [NumKinds]bool
	// Now is the console's clock: LoadResult.Spent sums the day before it.
	Now core.Timestamp
}

// LoadResult describes what a Load sent.
type LoadResult struct {
	Full        bool    // every row was sent (replace, not merge)
	EventID     int64   // the journal cursor for the next load
	Undelivered []int64 // delta loads: ids of every undelivered notification now
	// Counts are the table sizes in the same snapshot (delta loads; nil
	// from a Source that does not count): the console reloads everything
	// when what it holds differs (rows pruned by another process leave no
	// journal).
	Counts *core.TableCounts
	// Windowed (full loads) are the kinds whose rows were not sent: their
	// panes read windows (WindowSource.Window).
	Windowed [NumKinds]bool
	// Touched (delta loads) are the windowed kinds whose rows changed.
	Touched [NumKinds]bool
	// NewPending and NewFailed (delta loads) count, from the journal, the
	// approvals of a windowed pane that became pending and its tasks that
	// became failed, timed out or lost: the attention bell's news, whose
	// rows a windowed pane does not read.
	NewPending, NewFailed int
	// NewBudgets counts the budget_exceeded notifications of a windowed
	// Alerts pane that a load brings: those after LoadRequest.AfterAlertID
	// (the store, when that is set), or not held before (MemoryWindow,
	// after its first full load).
	NewBudgets int
	// AlertID is the newest notification id the source has seen: the next
	// load's AfterAlertID (a windowed Alerts pane is sent no rows to take
	// it from).
	AlertID int64
	// FullNews says a full load's NewPending, NewFailed and NewBudgets are
	// counted against the rows the source held before it (MemoryWindow):
	// the console rings for them as for a delta's. Without it a full
	// load's news are unknown (the store's: the console compares the
	// header's counts instead).
	FullNews bool
	// Spent is what every agent spent in the 24 hours before
	// LoadRequest.Now (sessions and tracked tasks, each count at its
	// time; the header's "spent 24h"); nil from a Source that does not
	// read usage.
	Spent *core.UsageSummary
}

// WindowSource is a Source that also reads windows of a table's rows in a
// pane's sort order and filter (keyset pagination, filter and sort in the
// store, never whole tables). Every pane of the console reads through it;
// the console wraps a Source without it in NewMemoryWindow.
type WindowSource interface {
	Source
	// Window sends one window of req.Kind's rows to sink, in window order.
	Window(ctx context.Context, req WindowRequest, sink Sink) (WindowResult, error)
	// Header returns the header's counts; failures and lost since since.
	Header(ctx context.Context, since core.Timestamp) (core.HeaderCounts, error)
}

// WindowRequest asks for one window (see core.WindowQuery for the anchor's
// meaning) and, with Count, for the row counts.
type WindowRequest struct {
	Kind   Kind
	Sort   string // the pane's sort key name
	Query  string // the / filter, "" = none
	Anchor string // id of the row the window is placed at, "" = top (or End)
	// AnchorKey places the window instead of Anchor: a position an earlier
	// window gave (WindowResult.Page.FirstKey; core.WindowQuery.AnchorKey).
	AnchorKey     string
	Before, After int
	End           bool
	Count         bool  // also count the rows, and those passing the filter
	CountLimit    int64 // stop counting filtered rows here (0 = 10,000)
	// MatchedOnly (with Count) counts only the rows passing the filter:
	// a new filter leaves the table's count as it was, and counting a
	// large table again on every keystroke would compete with the
	// keystroke's own reads. Total is then 0.
	MatchedOnly bool
}

// WindowResult describes a window sent by Window.
type WindowResult struct {
	Page    core.WindowPage
	Counted bool  // Total and Matched are set
	Total   int64 // rows in the table
	Matched int64 // rows passing the filter (Total without one)
	Capped  bool  // Matched stopped at the count limit: there are more
	// Unique, when not nil, holds for each row sent, in order, the fewest
	// leading bytes of its id that no other row of its table starts with
	// (the CLI takes a unique prefix: docs/contract.md "Entities and
	// statuses"); nil: unknown (the console then shows whole ids).
	// MemoryWindow sets it for every kind; the store for a window of tasks
	// holding an id longer than 13 characters (an older registry's UUIDv7:
	// shorter ids are shown whole anyway).
	Unique []int
}

// Sink receives loaded rows. The pointers are only valid during the call:
// the sink copies what it keeps (the console keeps compact sanitised rows).
type Sink interface {
	Task(*core.Task)
	Run(*core.Run)
	Approval(*core.Approval)
	Job(*core.Job)
	Alert(*core.Notification)
	// Gone reports an entity whose journal changed but which no longer
	// exists (pruned).
	Gone(kind Kind, id string)
}

// Field is one field of an entity in the detail view. Values are raw: the
// console sanitises them when it builds the view.
type Field struct {
	Name  string
	Value string
	TS    core.Timestamp // set for time fields (the view adds the relative age)
}

// Detail is one entity with every field and its event journal.
type Detail struct {
	Kind   Kind
	ID     string
	Fields []Field
	Events []core.Event
	Job    *core.Job // set for jobs (the log view needs its status and log path)
}

// ChangeNoter is implemented by a Source that says in the header how it
// learns of other processes' writes: "live" (PostgreSQL LISTEN), "polling
// 1s" (PostgreSQL through a pooler without --listen-db), "" to say nothing
// (SQLite, fixtures). The console asks after each DataVersion.
type ChangeNoter interface {
	ChangeNote() string
}

// DefaultMaxEvents is the largest journal gap replayed row by row.
const DefaultMaxEvents = 5000

// HintSource is a Source that can say when the registry may have changed
// (store.DB.ChangeHints: a file system or NOTIFY hint, coalesced in a
// channel of capacity 1; ok false when it cannot). The console then reads
// DataVersion at each hint, and only every few seconds besides (a safety
// net) instead of at its poll interval: an idle console does not wake to
// poll.
type HintSource interface {
	ChangeHints() (hints <-chan struct{}, cancel func(), ok bool)
}

// ChangeSink is a Sink that also hears of the changed rows of windowed
// kinds (LoadRequest.Windowed): ids only, during a delta Load, once per
// row; the pane rereads its window.
type ChangeSink interface {
	Changed(kind Kind, id string)
}
