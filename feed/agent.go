package feed

import (
	"errors"

	"github.com/clawpit/clawpit/core"
)

// agentFill passes a load's rows on with their session's agent set (the
// AGENT column, issue 28). A windowed pane's rows come with it from the
// store's window (core.WindowTx.Window joins sessions.agent in); whole
// tables and deltas (GetTask, ListRuns, …) do not, so it is looked up here,
// once per session per load: a load of whole tables holds at most
// the console's window threshold (LoadRequest.WindowOver) of rows of each
// kind, and few sessions.
type agentFill struct {
	Sink
	tx    core.Tx
	agent map[string]string // session id → its agent ("" when none or unknown)
	err   error             // the first failed lookup (the load fails with it)
}

func newAgentFill(tx core.Tx, sink Sink) *agentFill {
	return &agentFill{Sink: sink, tx: tx, agent: map[string]string{}}
}

// of is session's agent; "" for none, a session not recorded, or after a
// failed lookup (kept in f.err).
func (f *agentFill) of(session string) string {
	if session == "" {
		return ""
	}
	if a, ok := f.agent[session]; ok {
		return a
	}
	s, err := f.tx.GetSession(session)
	switch {
	case errors.Is(err, core.ErrNotFound):
	case err != nil:
		if f.err == nil {
			f.err = err
		}
		return ""
	default:
		f.agent[session] = s.Agent
		return s.Agent
	}
	f.agent[session] = ""
	return ""
}

func (f *agentFill) Task(t *core.Task) {
	if t.Agent == "" {
		t.Agent = f.of(t.OwnerSession)
	}
	f.Sink.Task(t)
}

func (f *agentFill) Run(r *core.Run) {
	if r.Agent == "" {
		r.Agent = f.of(r.RequesterSession)
	}
	f.Sink.Run(r)
}

func (f *agentFill) Approval(a *core.Approval) {
	if a.Agent == "" {
		a.Agent = f.of(a.Session)
	}
	f.Sink.Approval(a)
}

// Changed passes on a changed windowed row (ChangeSink) when the sink
// hears of them.
func (f *agentFill) Changed(k Kind, id string) {
	if cs, ok := f.Sink.(ChangeSink); ok {
		cs.Changed(k, id)
	}
}

// agentField is the detail view's "agent" field: the agent of the session
// the entity belongs to (a task's owner, a run's requester, an approval's
// session), "-" when none is recorded. ok is false for other kinds.
func agentField(tx core.Tx, v any) (Field, bool, error) {
	var session string
	switch x := v.(type) {
	case *core.Task:
		session = x.OwnerSession
	case *core.Run:
		session = x.RequesterSession
	case *core.Approval:
		session = x.Session
	default:
		return Field{}, false, nil
	}
	f := newAgentFill(tx, nil)
	a := f.of(session)
	if a == "" {
		a = "-"
	}
	return Field{Name: "agent", Value: a}, true, f.err
}
