package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// Source is where the console reads the registry. Every method is called
// from a tea.Cmd, never from Update or View. NewStoreSource reads a
// core.Store; tests use a fixed in-memory source.
type Source interface {
	// Path names the registry (shown in the header).
	Path() string
	// DataVersion changes whenever another connection commits (SPEC §9:
	// PRAGMA data_version).
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

// Detail is one entity with every field and its event journal (SPEC §9).
type Detail struct {
	Kind   Kind
	ID     string
	Fields []Field
	Events []core.Event
	Job    *core.Job // set for jobs (the log view needs its status and log path)
}

// DefaultMaxEvents is the largest journal gap replayed row by row.
const DefaultMaxEvents = 5000

// storeSource reads a core.Store.
type storeSource struct {
	st core.Store
}

// NewStoreSource returns a Source reading st.
func NewStoreSource(st core.Store) Source { return &storeSource{st: st} }

func (s *storeSource) Path() string { return s.st.Path() }

func (s *storeSource) DataVersion(ctx context.Context) (int64, error) { return s.st.DataVersion(ctx) }

func (s *storeSource) Load(ctx context.Context, req LoadRequest, sink Sink) (LoadResult, error) {
	var res LoadResult
	err := s.st.View(ctx, func(tx core.Tx) error {
		var err error
		res, err = load(tx, req, sink)
		return err
	})
	return res, err
}

func load(tx core.Tx, req LoadRequest, sink Sink) (LoadResult, error) {
	max := req.MaxEvents
	if max <= 0 {
		max = DefaultMaxEvents
	}
	if !req.Full {
		evs, err := tx.EventsSince(req.AfterEventID, max+1)
		if err != nil {
			return LoadResult{}, err
		}
		if len(evs) <= max {
			return loadDelta(tx, req, evs, sink)
		}
	}
	return loadFull(tx, sink)
}

func loadFull(tx core.Tx, sink Sink) (LoadResult, error) {
	res := LoadResult{Full: true}
	// The cursor first: a row written after it is reloaded by the next delta
	// (at worst twice), never missed. Inside one read transaction nothing
	// changes anyway.
	id, err := tx.MaxEventID()
	if err != nil {
		return res, err
	}
	res.EventID = id
	if err := tx.EachTask(func(t *core.Task) error { sink.Task(t); return nil }); err != nil {
		return res, err
	}
	runs, err := tx.ListRuns(core.RunFilter{})
	if err != nil {
		return res, err
	}
	for i := range runs {
		sink.Run(&runs[i])
	}
	aps, err := tx.ListApprovals(core.ApprovalFilter{})
	if err != nil {
		return res, err
	}
	for i := range aps {
		sink.Approval(&aps[i])
	}
	jobs, err := tx.ListJobs(core.JobFilter{})
	if err != nil {
		return res, err
	}
	for i := range jobs {
		sink.Job(&jobs[i])
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{})
	if err != nil {
		return res, err
	}
	for i := range ns {
		sink.Alert(&ns[i])
	}
	return res, nil
}

func loadDelta(tx core.Tx, req LoadRequest, evs []core.Event, sink Sink) (LoadResult, error) {
	res := LoadResult{EventID: req.AfterEventID}
	type key struct{ entity, id string }
	seen := map[key]bool{}
	for _, e := range evs {
		res.EventID = e.ID
		k := key{e.Entity, e.EntityID}
		if seen[k] {
			continue
		}
		seen[k] = true
		var err error
		switch e.Entity {
		case core.EntityTask:
			var t *core.Task
			if t, err = tx.GetTask(e.EntityID); err == nil {
				sink.Task(t)
			}
		case core.EntityRun:
			var r *core.Run
			if r, err = tx.GetRun(e.EntityID); err == nil {
				sink.Run(r)
			}
		case core.EntityApproval:
			var a *core.Approval
			if a, err = tx.GetApproval(e.EntityID); err == nil {
				sink.Approval(a)
			}
		case core.EntityJob:
			var j *core.Job
			if j, err = tx.GetJob(e.EntityID); err == nil {
				sink.Job(j)
			}
		default:
			continue
		}
		if errors.Is(err, core.ErrNotFound) {
			sink.Gone(kindOfEntity(e.Entity), e.EntityID)
		} else if err != nil {
			return res, err
		}
	}
	ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: req.AfterAlertID})
	if err != nil {
		return res, err
	}
	for i := range ns {
		sink.Alert(&ns[i])
	}
	un, err := tx.ListNotifications(core.NotificationFilter{UndeliveredOnly: true})
	if err != nil {
		return res, err
	}
	res.Undelivered = make([]int64, len(un))
	for i := range un {
		res.Undelivered[i] = un[i].ID
	}
	c, err := tx.CountRows()
	if err != nil {
		return res, err
	}
	res.Counts = &c
	return res, nil
}

func kindOfEntity(entity string) Kind {
	switch entity {
	case core.EntityRun:
		return KindRun
	case core.EntityApproval:
		return KindApproval
	case core.EntityJob:
		return KindJob
	case core.EntityNotification:
		return KindAlert
	}
	return KindTask
}

// subjectEntity is the journal entity a notification kind is about.
func subjectEntity(k core.NotificationKind) string {
	switch k {
	case core.NotifyJobFinished, core.NotifyJobLost:
		return core.EntityJob
	case core.NotifyTaskFailed, core.NotifyTaskSilent:
		return core.EntityTask
	case core.NotifyRunTimedOut:
		return core.EntityRun
	case core.NotifyApprovalExpired, core.NotifyRuntimeNotice:
		return core.EntityApproval // a runtime notice's subject, when set, is the approval it asks about
	}
	return ""
}

func (s *storeSource) Detail(ctx context.Context, kind Kind, id string) (*Detail, error) {
	var d *Detail
	err := s.st.View(ctx, func(tx core.Tx) error {
		var err error
		d, err = readDetail(tx, kind, id)
		return err
	})
	return d, err
}

func readDetail(tx core.Tx, kind Kind, id string) (*Detail, error) {
	d := &Detail{Kind: kind, ID: id}
	var v any
	entity := ""
	switch kind {
	case KindTask:
		t, err := tx.GetTask(id)
		if err != nil {
			return nil, err
		}
		v, entity = t, core.EntityTask
	case KindRun:
		r, err := tx.GetRun(id)
		if err != nil {
			return nil, err
		}
		v, entity = r, core.EntityRun
	case KindApproval:
		a, err := tx.GetApproval(id)
		if err != nil {
			return nil, err
		}
		v, entity = a, core.EntityApproval
	case KindJob:
		j, err := tx.GetJob(id)
		if err != nil {
			return nil, err
		}
		v, entity, d.Job = j, core.EntityJob, j
	case KindAlert:
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, core.Invalidf("notification id %q", id)
		}
		ns, err := tx.ListNotifications(core.NotificationFilter{AfterID: n - 1, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(ns) == 0 || ns[0].ID != n {
			return nil, core.NotFoundf("no notification with id %d", n)
		}
		v = &ns[0]
		// A notification has no journal of its own: show its subject's.
		entity, id = subjectEntity(ns[0].Kind), ns[0].SubjectID
	}
	d.Fields = Fields(v)
	if entity != "" && id != "" {
		evs, err := tx.Events(entity, id)
		if err != nil {
			return nil, err
		}
		d.Events = evs
	}
	return d, nil
}

var tsType = reflect.TypeOf(core.Timestamp(0))

// Fields lists every JSON field of an entity struct (pointer), in
// declaration order, with its value as text: timestamps carry TS, absent
// values print as "null" like the CLI's JSON.
func Fields(v any) []Field {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil
	}
	rt := rv.Type()
	out := make([]Field, 0, rt.NumField())
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, fieldOf(name, rv.Field(i)))
	}
	return out
}

func fieldOf(name string, fv reflect.Value) Field {
	f := Field{Name: name}
	switch {
	case fv.Type() == tsType:
		f.TS = core.Timestamp(fv.Int())
		f.Value = f.TS.String()
		if f.TS == 0 {
			f.Value = "null"
		}
	case fv.Kind() == reflect.Pointer:
		if fv.IsNil() {
			f.Value = "null"
		} else {
			f.Value = fmt.Sprint(fv.Elem().Interface())
		}
	case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
		f.Value = core.CommandLine(fv.Interface().([]string))
	default:
		f.Value = fmt.Sprint(fv.Interface())
	}
	return f
}
