package core_test

import (
	"errors"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// TestIDMatchModes: MatchWhole finds a row only by its whole id; MatchPrefix
// (the operator's) also by a unique prefix of 4+ characters. An exact id
// wins in both, even when it is a prefix of another id.
func TestIDMatchModes(t *testing.T) {
	f := registrytest.New(t)
	f.Session("sess-5f1c9a2e")
	for _, id := range []string{"agent-7f3a9c21", "agent-0b1c"} {
		_, err := f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: id, ChildSession: "sess-5f1c9a2e"}, core.ActorRuntime)
		f.Must(err)
	}
	task, err := f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, ID: "build-20260101"}, core.ActorRuntime)
	f.Must(err)

	type lookup func(r *core.Registry, id string) (string, error)
	getRun := func(r *core.Registry, id string) (string, error) {
		run, _, err := r.GetRun(f.Ctx, id)
		if err != nil {
			return "", err
		}
		return run.RunID, nil
	}
	getSession := func(r *core.Registry, id string) (string, error) {
		s, _, err := r.GetSession(f.Ctx, id)
		if err != nil {
			return "", err
		}
		return s.ID, nil
	}
	getTask := func(r *core.Registry, id string) (string, error) {
		k, _, err := r.GetTask(f.Ctx, id)
		if err != nil {
			return "", err
		}
		return k.ID, nil
	}
	cases := []struct {
		name  string
		get   lookup
		id    string
		match core.IDMatch
		want  string // "" with wantErr
		err   error
	}{
		{"run whole id, whole", getRun, "agent-7f3a9c21", core.MatchWhole, "agent-7f3a9c21", nil},
		{"run prefix, whole", getRun, "agent-7f3a", core.MatchWhole, "", core.ErrNotFound},
		{"run prefix, prefix", getRun, "agent-7f3a", core.MatchPrefix, "agent-7f3a9c21", nil},
		{"run ambiguous prefix, prefix", getRun, "agent-", core.MatchPrefix, "", core.ErrAmbiguous},
		{"run ambiguous prefix, whole", getRun, "agent-", core.MatchWhole, "", core.ErrNotFound},
		{"session prefix, whole", getSession, "sess-5f1c", core.MatchWhole, "", core.ErrNotFound},
		{"session prefix, prefix", getSession, "sess-5f1c", core.MatchPrefix, "sess-5f1c9a2e", nil},
		{"task prefix, whole", getTask, "build-2026", core.MatchWhole, "", core.ErrNotFound},
		{"task prefix, prefix", getTask, "build-2026", core.MatchPrefix, task.ID, nil},
		{"short id, whole", getTask, "bui", core.MatchWhole, "", core.ErrNotFound},
		{"short prefix, prefix", getTask, "bui", core.MatchPrefix, "", core.ErrInvalid},
		{"empty id, whole", getTask, "", core.MatchWhole, "", core.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := f.Reg
			if c.match == core.MatchWhole {
				reg = f.Reg.WholeIDs()
			}
			if reg.IDMatch() != c.match {
				t.Fatalf("IDMatch() = %s, want %s", reg.IDMatch(), c.match)
			}
			got, err := c.get(reg, c.id)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("%q: got %q, %v; want %v", c.id, got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("%q: got %q, %v; want %q", c.id, got, err, c.want)
			}
		})
	}

	// A change through the whole view: the stop of agent-7f3a is not the
	// stop of agent-7f3a9c21.
	whole := f.Reg.WholeIDs()
	if _, _, _, err := whole.CompleteRun(f.Ctx, "agent-7f3a", core.OutcomeOK, "", core.ActorRuntime); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("CompleteRun(agent-7f3a) whole: %v, want not found", err)
	}
	if run, _, err := f.Reg.GetRun(f.Ctx, "agent-7f3a9c21"); err != nil || !run.Running() {
		t.Fatalf("agent-7f3a9c21 after a whole-id stop of agent-7f3a: %+v, %v", run, err)
	}
	// The view leaves the registry it came from as it was.
	if f.Reg.IDMatch() != core.MatchPrefix {
		t.Fatalf("WholeIDs changed its registry's match to %s", f.Reg.IDMatch())
	}
}
