package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

// TestEntryValidation: ids are refused where runtimes hand them in (ErrInvalid
// naming the value, inert), labels are stored as one inert line, at most
// 1 KiB; nothing is written for refused input.
func TestEntryValidation(t *testing.T) {
	f := registrytest.New(t)
	bad := "x\x1b]0;t\x07"
	errs := map[string]error{}
	_, _, errs["session"] = f.Reg.OpenSession(f.Ctx, bad, "", core.ActorRuntime)
	_, errs["run"] = f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: bad, ChildSession: "c"}, core.ActorRuntime)
	_, errs["run child"] = f.Reg.RegisterRun(f.Ctx, core.NewRun{RunID: "r", ChildSession: "c\u202e"}, core.ActorRuntime)
	_, errs["task id"] = f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, ID: bad}, core.ActorRuntime)
	_, errs["task source"] = f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, SourceID: strings.Repeat("s", 129)}, core.ActorRuntime)
	_, errs["task label"] = f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: strings.Repeat("é", 513)}, core.ActorRuntime)
	for what, err := range errs {
		if !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", what, err)
			continue
		}
		if strings.ContainsAny(err.Error(), "\x1b\x07\u202e\n") {
			t.Errorf("%s: error not inert: %q", what, err)
		}
	}
	if !strings.Contains(errs["run"].Error(), `run id "x"`) {
		t.Errorf("run error does not name the value: %v", errs["run"])
	}
	tk, err := f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: "a\x1b[31mb\nc\td"}, core.ActorRuntime)
	if err != nil || tk.Label != "ab c d" {
		t.Fatalf("label: %v %q", err, tk.Label)
	}
	if _, err := f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI, Label: strings.Repeat("\x1b[1m", 400) + strings.Repeat("x", 1024)}, core.ActorRuntime); err != nil {
		t.Errorf("a label of 1 KiB after sanitising is refused: %v", err)
	}
}
