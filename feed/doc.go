// Package feed is the console's data contract, outside the screen: what a
// registry hands the console (Source, WindowSource, Sink, Detail, Field and
// the requests and results between them), and the feed that reads
// clawpit's own registry through core.Tx (NewStoreSource: whole tables,
// deltas replayed from the journal, windows, details with what each row
// spent and which agent it belongs to).
//
// The console (tui) consumes it; an adapter that shows another runtime's
// registry in the console (adapters/openclaw) implements Source;
// NewMemoryWindow makes such a Source a WindowSource by answering windows
// from a copy of its rows. feed imports core and view and nothing of the
// screen (no Bubble Tea, no lipgloss, no tui): what both the console and a
// feed need lives here, in view or in core.
package feed
