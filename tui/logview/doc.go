// Package logview is the console's job log view (README "The console" "Log view", J2–J5,
// P5): a live, bounded, searchable follow of one job's redacted log across
// rotations. It is a Bubble Tea component: the console embeds a Model, sizes
// it, forwards messages to it and draws its View.
//
// # API
//
//	lv := logview.New(logview.Options{
//		Title:  "job 3fa2c1 npm run dev", // status bar; sanitised
//		Dir:    jobDir,                   // <jobs dir>/<job-id>; followed across rotations
//		Styles: theme.LogView,            // zero value: plain text, no escapes
//		Keys:   keys.LogView,             // zero value: DefaultKeyMap()
//		// Capacity (10,000 lines), MaxLineRunes (4096), Source/Open (default:
//		// follow Dir), Redact (default: core's stateful LineRedactor).
//	})
//	lv.SetSize(w, h)      // outer size: h-1 log rows + 1 status row
//	cmd := lv.Init()      // opens the source, returns the read Cmd (call once)
//	lv, cmd = lv.Update(msg)
//	s := lv.View()        // exactly h rows, each at most w cells
//	lv.Close()            // on leaving the view: stops the follower (idempotent)
//
// The parent:
//   - forwards every message it does not handle itself (LinesMsg,
//     SourceDoneMsg, keys, paste, mouse wheel); messages of a closed or other
//     view are ignored, so stale reads are harmless;
//   - closes the view on Keys().Close (esc/q) — but only when !Editing():
//     while the search prompt is open every key belongs to the view;
//   - sends JobEndedMsg{Status, ExitCode, At, CaptureError} when it sees the
//     job reach a terminal status; the view then shows a marker line
//     "── job completed (exit 0) at 10:04:05 ──" after the last line (it
//     stays last: lines still in flight from the finished job go above it);
//   - shows help from Keys() (a help.KeyMap; the Model's ShortHelp/FullHelp
//     return the same).
//
// # Behaviour
//
// Follow: autoscroll keeps the last line on the last row. space pauses: the
// window freezes while reading continues into the buffer and the status bar
// shows "PAUSED (N new lines)"; space or G resumes at the bottom. Scrolling
// up (k/↑, pgup/b, ctrl+u, g, wheel) pauses like a pager; scrolling down
// never resumes by itself. w toggles wrapping: off, long lines are cut at the
// width and ←/→ (h/l) scroll horizontally by half a screen ("col N" in the
// status bar); on, they are hard-wrapped and scrolling moves by screen rows.
// / opens the search prompt (enter runs, esc cancels, empty query clears);
// matches are highlighted, n/N go to the next/previous matching line with
// wraparound ("match 3/17" counts matching lines). Smart case: an all
// lower-case query ignores ASCII case. New lines that match are added to the
// count while following.
//
// Status bar: badge (FOLLOWING / PAUSED (N new lines)), title, buffered
// lines / capacity, wrap on/off, column, search state, how the job ended,
// and "follow stopped: <error>" when the source failed. The title gives way
// first when the width is short.
//
// # Bounded memory and cost
//
// Lines live in a ring of Capacity lines (default 10,000), addressed by
// absolute sequence numbers so positions survive eviction. View renders only
// the rows in the window; wrapped heights are computed only for the lines
// around it (never viewport.SetContent of the whole buffer), so a frame
// costs O(height), not O(lines). Per-line memory is capped by MaxLineRunes.
//
// # Reading, batching, sanitising, redacting
//
// The default source is tailer.Follow on Dir with Backlog = Capacity: the
// last Capacity lines on disk (read backwards across output.1.log, as a
// tail), then live lines, with no gap and no overlap, across rotations. If
// the follower could not keep up with rotations it inserts tailer.GapNotice
// as a line. On JobEndedMsg the view calls StopAtEOF on a source that has it
// (EOFStopper): the follower delivers what is left on disk, including a last
// line without "\n", and ends; the view then stops reading. A follower
// error (e.g. the log directory was pruned) shows as "follow stopped: …".
//
// The read Cmd waits for the source's next batch off the UI goroutine,
// coalesces every batch already queued (up to Capacity lines), sanitises
// each line once as it enters (termtext.Log: escape sequences, control
// and bidi characters removed, tabs expanded, \r resolved, capped at
// MaxLineRunes) and redacts it, and returns ONE LinesMsg; Update appends it
// and re-issues the Cmd. Never one message per line.
//
// Redaction: the log on disk is already redacted per line by the job
// supervisor (J2). The view redacts again with one redact.LineRedactor per
// view that sees every line of the stream in order, so a PEM private key
// whose BEGIN line arrived in an earlier batch is still caught: there is no
// gap at batch boundaries. The residual gap is the start of the view: lines
// of a key block whose BEGIN line was already gone (rotated away or before
// the first line read) look like ordinary base64 and are shown as they are
// on disk.
//
// Nothing from the job reaches the terminal unsanitised: with the zero
// Styles, View's output holds no escape sequence at all.
package logview
