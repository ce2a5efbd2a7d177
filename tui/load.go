package tui

import (
	"context"
	"errors"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// batch is the Sink of one load: it turns registry rows into the panes'
// compact, sanitised rows as they stream in (in the Cmd, off the UI
// goroutine).
type batch struct {
	tasks     []taskRow
	runs      []runRow
	approvals []approvalRow
	jobs      []jobRow
	alerts    []alertRow
	gone      [feed.NumKinds][]string
	maxAlert  int64
	touched   map[Target]bool // (kind, id) of every row sent, for the detail view
}

func newBatch() *batch { return &batch{touched: map[Target]bool{}} }

func (b *batch) touch(k feed.Kind, id string) {
	if len(b.touched) < 10_000 {
		b.touched[Target{Kind: k, ID: id}] = true
	}
}

func (b *batch) Task(t *core.Task) {
	b.tasks = append(b.tasks, taskRowOf(t))
	b.touch(feed.KindTask, t.ID)
}

func (b *batch) Run(r *core.Run) {
	b.runs = append(b.runs, runRowOf(r))
	b.touch(feed.KindRun, r.RunID)
}

func (b *batch) Approval(a *core.Approval) {
	b.approvals = append(b.approvals, approvalRowOf(a))
	b.touch(feed.KindApproval, a.ID)
}

func (b *batch) Job(j *core.Job) {
	b.jobs = append(b.jobs, jobRowOf(j))
	b.touch(feed.KindJob, j.ID)
}

func (b *batch) Alert(n *core.Notification) {
	b.alerts = append(b.alerts, alertRowOf(n))
	b.maxAlert = max(b.maxAlert, n.ID)
	b.touch(feed.KindAlert, alertRowOf(n).idStr)
}

// Changed hears of a changed row of a windowed pane (feed.ChangeSink): only the
// detail view needs its id.
func (b *batch) Changed(k feed.Kind, id string) { b.touch(k, id) }

func (b *batch) Gone(k feed.Kind, id string) {
	b.gone[k] = append(b.gone[k], id)
	b.touch(k, id)
}

// loadedMsg is the result of one poll: nothing changed (same), an error, or
// rows (full tables built off the UI goroutine, or deltas).
type loadedMsg struct {
	same    bool
	err     error
	version int64
	res     feed.LoadResult
	b       *batch
	note    string // the Source's ChangeNote

	// Full loads: tables already indexed and sorted.
	tasks     *table[taskRow]
	runs      *table[runRow]
	approvals *table[approvalRow]
	jobs      *table[jobRow]
	alerts    *table[alertRow]
}

// sortKeys are the panes' sort keys when a load starts, so a full load
// sorts in the Cmd.
type sortKeys [feed.NumKinds]int

// loadCmd polls data_version and, when it changed (or full), loads.
func loadCmd(ctx context.Context, src feed.Source, req feed.LoadRequest, version int64, known bool, sorts sortKeys) tea.Cmd {
	return func() tea.Msg {
		v, err := src.DataVersion(ctx)
		if err != nil {
			return loadedMsg{err: err}
		}
		note := ""
		if n, ok := src.(feed.ChangeNoter); ok {
			note = n.ChangeNote()
		}
		if !req.Full && known && v == version {
			return loadedMsg{same: true, version: v, note: note}
		}
		b := newBatch()
		res, err := src.Load(ctx, req, b)
		if err != nil {
			return loadedMsg{err: err}
		}
		msg := loadedMsg{version: v, res: res, b: b, note: note}
		if res.Full {
			t := newTable(taskSpec, b.tasks, sorts[feed.KindTask])
			r := newTable(runSpec, b.runs, sorts[feed.KindRun])
			a := newTable(approvalSpec, b.approvals, sorts[feed.KindApproval])
			j := newTable(jobSpec, b.jobs, sorts[feed.KindJob])
			n := newTable(alertSpec, b.alerts, sorts[feed.KindAlert])
			msg.tasks, msg.runs, msg.approvals, msg.jobs, msg.alerts = &t, &r, &a, &j, &n
			b.tasks, b.runs, b.approvals, b.jobs, b.alerts = nil, nil, nil, nil, nil
		}
		return msg
	}
}

// isBusy reports a locked or slow database (shown as "database busy,
// retrying…", never a frozen screen).
func isBusy(err error) bool {
	return errors.Is(err, core.ErrBusy) || errors.Is(err, context.DeadlineExceeded)
}

// markRead turns unread alerts that are no longer undelivered into read
// rows (a delivery elsewhere: `notifications --ack`, a notify command).
func markRead(l *list[alertRow], undelivered []int64, now core.Timestamp) []alertRow {
	if undelivered == nil {
		return nil
	}
	slices.Sort(undelivered)
	var up []alertRow
	for s := range l.rows {
		r := &l.rows[s]
		if l.gone[s] || r.delivered != 0 {
			continue
		}
		if _, found := slices.BinarySearch(undelivered, r.id); !found {
			c := *r
			c.delivered = now
			up = append(up, c)
		}
	}
	return up
}
