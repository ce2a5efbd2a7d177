package cli

// `clawpit task track` (docs/contract.md "Result subtypes"): follow a Claude Code / Agent SDK
// stream-json run on stdin and keep its task row up to date as the lines
// arrive. The parsing is streamjson.Tracker; this file does the I/O and the
// registry calls.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/adapters/claude/streamjson"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/spf13/cobra"
)

// trackFlushEvery throttles the registry writes of a tracked stream: outputs
// and progress are written at most once per interval (and always before the
// task is finished), not once per line.
const trackFlushEvery = time.Second

// trackInterruptGrace is how long track keeps reading after SIGINT/SIGTERM:
// the producer usually got the same signal and still writes its `result`.
const trackInterruptGrace = 5 * time.Second

func trackCommand(a *app) *cobra.Command {
	var (
		cf  taskCreateFlags
		id  string
		tee bool
	)
	cmd := &cobra.Command{
		Use:   "track [--id ID | create flags] [--tee]",
		Short: "Track a Claude stream-json run read from stdin",
		Long: `Reads Claude Code / Agent SDK stream-json (--output-format stream-json) on stdin
as it arrives and keeps a task up to date: it creates the task (create flags;
--runtime defaults to cli) or uses --id of an existing one, marks it running at
the first event, counts each non-empty assistant text block as one output, and
finishes it at the result event (success → succeeded; error_* or is_error →
failed). A stream that ends without a result fails the task with "stream ended
without terminal result (last event: <type/subtype>)". Blank, invalid and
unknown lines are tolerated and reported on stderr at the end.

--tee copies every input line to stdout unchanged as it arrives; the task id
and the summary then go to stderr only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("id") {
				if err := nonEmpty(cmd, "id"); err != nil {
					return err
				}
				var set []string
				for _, n := range taskCreateFlagNames {
					if cmd.Flags().Changed(n) {
						set = append(set, "--"+n)
					}
				}
				if len(set) > 0 {
					return usageError{fmt.Errorf("--id tracks an existing task; it does not take create flags (%s)", strings.Join(set, ", "))}
				}
				return a.track(cmd, "", core.NewTask{}, id, tee)
			}
			if cf.runtime == "" && !cmd.Flags().Changed("runtime") {
				cf.runtime = string(core.RuntimeCLI)
			}
			nt, err := cf.build(cmd)
			if err != nil {
				return err
			}
			return a.track(cmd, "create", nt, "", tee)
		},
	}
	cf.add(cmd, false)
	cmd.Flags().StringVar(&id, "id", "", "track this existing task, given by its whole id (a runtime's own id: never matched as a prefix), instead of creating one")
	cmd.Flags().BoolVar(&tee, "tee", false, "copy stdin to stdout unchanged as it arrives")
	return cmd
}

// trackLine is what the reader goroutine reports for one line.
type trackLine struct {
	ev      streamjson.Event
	err     error // why the line was invalid (never fatal)
	readErr error // reading stdin failed; the stream ends here
	sum     streamjson.Summary
}

// track runs `task track` once the flags are valid: it creates the task
// (mode "create") or finds it by its whole id, then reads the stream-json
// lines on stdin (copied to stdout with tee) into the task until the stream
// ends, and finishes the task with the stream's verdict. A signal stops the
// reading after trackInterruptGrace; the task is still finished (failed,
// "tracking interrupted"), its registry writes on a context the signal does
// not cancel.
func (a *app) track(cmd *cobra.Command, mode string, nt core.NewTask, id string, tee bool) error {
	sigCtx := cmd.Context()
	// Registry writes must still happen after a signal, to finish the task.
	ctx := context.WithoutCancel(sigCtx)
	reg, err := a.registryCreate(ctx)
	if err != nil {
		return err
	}
	task, err := trackedTask(ctx, reg, mode, nt, id)
	if err != nil {
		return err
	}
	id = task.ID
	fmt.Fprintf(a.stderr, "clawpit: tracking task %s\n", termtext.Exact(id, 80))

	lines, teeErr := a.readTrackLines(tee)
	t := &tracker{a: a, reg: reg, ctx: ctx, id: id, warned: map[string]bool{}}
	end := t.consume(sigCtx.Done(), lines)
	select {
	case err := <-teeErr:
		t.warn("tee", fmt.Sprintf("stopped copying stdin to stdout: %v", err))
	default:
	}
	if end.readErr != nil {
		t.warn("read", end.readErr.Error())
	}
	if !t.finished {
		f := end.sum.Finish()
		if end.interrupt {
			f = core.Finish{Status: core.TaskFailed, Error: fmt.Sprintf(
				"stream ended without terminal result (last event: %s): tracking interrupted", end.sum.LastEvent())}
		}
		t.finish(f)
	}
	if t.finishErr != nil {
		return t.finishErr
	}
	return a.trackReport(t, end.sum, end.firstBad, tee)
}

// trackedTask creates the task to track (mode "create") or reads the one
// whose whole id is id: --id is the runtime's own id, so a prefix of
// another task's id must not track that task.
func trackedTask(ctx context.Context, reg *core.Registry, mode string, nt core.NewTask, id string) (*core.Task, error) {
	if mode == "create" {
		return reg.CreateTask(ctx, nt, core.ActorRuntime)
	}
	task, _, err := reg.WholeIDs().GetTask(ctx, id)
	return task, err
}

// readTrackLines reads stdin's lines in a goroutine, copying them to stdout
// when tee, and sends each as a trackLine (a failed read as the last one)
// until stdin ends; lines is closed then. A failed copy to stdout is sent
// once on teeErr (copying stops, reading goes on).
func (a *app) readTrackLines(tee bool) (lines <-chan trackLine, teeErr <-chan error) {
	var out io.Writer
	if tee {
		// A reader that goes away must not kill us (SIGPIPE) before the
		// task is finished: writes then fail with EPIPE and teeing stops.
		signal.Ignore(syscall.SIGPIPE)
		out = a.stdout
	}
	lc := make(chan trackLine, 256)
	ec := make(chan error, 1)
	go func() {
		defer close(lc)
		var tr streamjson.Tracker
		err := readStreamLines(a.stdin, out, &tr, func(ev streamjson.Event, lineErr error) {
			lc <- trackLine{ev: ev, err: lineErr, sum: tr.Summary()}
		}, ec)
		if err != nil {
			lc <- trackLine{readErr: fmt.Errorf("reading stdin: %w", err), sum: tr.Summary()}
		}
	}()
	return lc, ec
}

// trackEnd is how the stream's reading ended: the stream's summary as last
// read, the error that ended reading stdin, whether a signal interrupted it,
// and the first invalid line ("line N: why"; "" if none).
type trackEnd struct {
	sum       streamjson.Summary
	readErr   error
	interrupt bool
	firstBad  string
}

// consume applies the lines to the task as they come (outputs and progress
// written every trackFlushEvery, the task finished at the terminal event)
// until lines closes, or until trackInterruptGrace after sigDone closes.
func (t *tracker) consume(sigDone <-chan struct{}, lines <-chan trackLine) trackEnd {
	ticker := time.NewTicker(trackFlushEvery)
	defer ticker.Stop()
	var end trackEnd
	var grace <-chan time.Time
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return end
			}
			end.sum = l.sum
			if l.readErr != nil {
				end.readErr = l.readErr
				continue
			}
			if l.err != nil && end.firstBad == "" {
				end.firstBad = fmt.Sprintf("line %d: %v", end.sum.Lines, l.err)
			}
			t.event(l.ev)
			if l.ev.Terminal {
				if end.sum.Result != nil {
					t.usage = end.sum.Result.Usage
				}
				t.finish(end.sum.Finish())
			}
		case <-ticker.C:
			t.flush(false)
		case <-sigDone:
			sigDone = nil
			grace = time.After(trackInterruptGrace)
		case <-grace:
			end.interrupt = true
			return end
		}
	}
}

// tracker holds the registry side of one tracked stream.
type tracker struct {
	a   *app
	reg *core.Registry
	ctx context.Context
	id  string

	started   bool
	pending   int64  // outputs counted but not yet written
	dirty     bool   // events seen since the last progress write
	activity  string // latest progress summary
	finished  bool
	task      *core.Task
	res       core.Result
	finishErr error
	warned    map[string]bool
	usage     *streamjson.Usage // the result line's, nil when none
}

// warn prints a non-fatal problem once per kind.
func (t *tracker) warn(kind, msg string) {
	if t.warned[kind] {
		return
	}
	t.warned[kind] = true
	fmt.Fprintf(t.a.stderr, "clawpit: task track: %s\n", msg)
}

// event applies one line: running at the first event, outputs batched.
func (t *tracker) event(ev streamjson.Event) {
	if !ev.IsEvent() || ev.AfterResult || t.finished {
		return
	}
	if !t.started {
		t.started = true
		if _, _, err := t.reg.StartTask(t.ctx, t.id, "", core.ActorRuntime); err != nil {
			t.warn("start", fmt.Sprintf("could not mark task %s running: %v", t.id, err))
		}
	}
	t.pending, _ = core.SatAdd(t.pending, int64(ev.Outputs))
	t.dirty = true
	if ev.Activity != "" {
		t.activity = ev.Activity
	}
}

// flush writes batched outputs and progress. Without force it writes
// progress only when something happened since the last flush.
func (t *tracker) flush(force bool) {
	if t.finished || !t.started {
		return
	}
	if t.pending > 0 {
		if _, _, err := t.reg.AddTaskOutput(t.ctx, t.id, t.pending, core.ActorRuntime); err != nil {
			t.warn("output", fmt.Sprintf("could not count output of task %s (will retry): %v", t.id, err))
		} else {
			t.pending = 0
		}
	}
	if t.dirty && !force {
		if _, _, err := t.reg.ProgressTask(t.ctx, t.id, t.activity, core.ActorRuntime); err != nil {
			t.warn("progress", fmt.Sprintf("could not record progress of task %s: %v", t.id, err))
		} else {
			t.dirty = false
		}
	}
}

// finish writes the remaining outputs and the stream's verdict.
func (t *tracker) finish(f core.Finish) {
	t.flush(true)
	t.finished = true
	t.task, t.res, t.finishErr = t.reg.FinishTask(t.ctx, t.id, f, core.ActorRuntime)
	if t.finishErr == nil && t.pending > 0 {
		t.finishErr = fmt.Errorf("task %s finished, but %d outputs could not be counted", t.id, t.pending)
	}
	if err := t.reg.AddUsage(t.ctx, trackUsageRows(t.id, t.usage, core.TS(t.reg.Clock().Now()))); err != nil {
		// The task's verdict stands; its tokens are only noted lost.
		t.warn("usage", fmt.Sprintf("the result line's usage was not recorded: %v", err))
	}
}

// trackUsageRows are the task-scope usage rows of a result line's usage
// (issue 27): tokens per model, each with the cost the agent reported for
// it (modelUsage costUSD) in millionths of a dollar; total_cost_usd goes on
// the one model's row when modelUsage named none or one.
func trackUsageRows(task string, u *streamjson.Usage, at core.Timestamp) []core.UsageRow {
	if u == nil {
		return nil
	}
	var rows []core.UsageRow
	for model, tok := range u.ByModel {
		cost := u.ModelCostUSD[model]
		if len(u.ByModel) == 1 && u.HasCost {
			cost = u.CostUSD
		}
		rows = append(rows, core.UsageRow{Scope: core.UsageTask, ID: task, Model: model, Tokens: tok,
			ReportedCostMicroUSD: core.MicroUSD(cost), CountedAt: at})
	}
	return rows
}

// trackReport prints the end-of-stream summary: one line on stderr, e.g.
// "tracked task <id>: failed (error_max_turns), 2 outputs, 110 events, 1
// invalid line", and with --json (not --tee) the contract's mutation object with a
// "stream" tally on stdout.
func (a *app) trackReport(t *tracker, sum streamjson.Summary, firstBad string, tee bool) error {
	task := t.task
	verdict := string(task.Status)
	if r := sum.Result; r != nil && task.Status != core.TaskSucceeded {
		if r.IsError && !strings.HasPrefix(r.Subtype, "error_") {
			verdict += " (" + r.Subtype + ", is_error)"
		} else {
			verdict += " (" + r.Subtype + ")"
		}
	} else if sum.Result == nil && task.Status.Terminal() {
		verdict += " (no result, last event: " + sum.LastEvent() + ")"
	}
	if !t.res.Applied {
		verdict = "not applied: " + t.res.Reason + "; task stays " + string(task.Status)
	}
	parts := []string{verdict, plural(sum.Outputs, "output"), plural(sum.Events, "event")}
	if t.usage != nil && len(t.usage.ByModel) > 0 {
		var n int64
		for _, tok := range t.usage.ByModel {
			n += tok.Total()
		}
		parts = append(parts, termtext.Thousands(n)+" tokens")
	}
	for _, c := range []struct {
		n    int64
		what string
	}{{sum.Invalid, "invalid line"}, {sum.Blank, "blank line"}, {sum.Unknown, "unknown event"}, {sum.AfterResult, "event after the result"}} {
		if c.n > 0 {
			parts = append(parts, plural(c.n, c.what))
		}
	}
	fmt.Fprintf(a.stderr, "tracked task %s: %s\n", termtext.Exact(task.ID, 80), termtext.Exact(strings.Join(parts, ", "), 1000))
	if firstBad != "" {
		fmt.Fprintf(a.stderr, "  first invalid %s\n", termtext.Exact(firstBad, 300))
	}
	if a.jsonOut && !tee {
		stream := orderedObject{
			{"lines", sum.Lines}, {"events", sum.Events}, {"outputs", sum.Outputs}, {"blank", sum.Blank},
			{"invalid", sum.Invalid}, {"unknown", sum.Unknown}, {"after_result", sum.AfterResult},
			{"last_event", sum.LastEvent()}, {"result", sum.Result},
		}
		return a.printJSON(mutationJSON(t.res, "task", task, field{"stream", stream}))
	}
	return nil
}

// plural renders "1 output" or "2 outputs"; what is singular and the plural
// adds "s" to its first word ("2 events after the result").
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	head, tail, ok := strings.Cut(what, " ")
	if ok && (head == "event") {
		return fmt.Sprintf("%d %ss %s", n, head, tail)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// readStreamLines feeds r to tr line by line as data arrives, calling fn
// with each line's event (and why it was invalid, if it was). Lines are
// walked, never buffered whole, so a line of any length or shape costs the
// same few kilobytes (bench/README.md: no unbounded memory on bad input). Every byte
// read is copied to tee unchanged as soon as it is read; a tee write error
// stops the copying (reported once on teeErr), never the reading. It returns
// nil at the end of input, or the read error.
func readStreamLines(r io.Reader, tee io.Writer, tr *streamjson.Tracker, fn func(ev streamjson.Event, lineErr error), teeErr chan<- error) error {
	if tee != nil {
		r = io.TeeReader(r, &teeWriter{w: tee, errc: teeErr})
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		ev, fed, lineErr, readErr := tr.ReadLine(br)
		if fed {
			fn(ev, lineErr)
		}
		if readErr != nil {
			if errors.Is(readErr, io.EOF) {
				return nil
			}
			return readErr
		}
	}
}

// teeWriter copies to w until the first write error, which it reports on
// errc (once) and swallows, so reading goes on without the copy.
type teeWriter struct {
	w    io.Writer
	errc chan<- error
	dead bool
}

func (t *teeWriter) Write(p []byte) (int, error) {
	if !t.dead {
		if _, err := t.w.Write(p); err != nil {
			t.dead = true
			t.errc <- err
		}
	}
	return len(p), nil
}
