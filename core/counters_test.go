package core_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
)

func TestSatAdd(t *testing.T) {
	const max = math.MaxInt64
	for _, c := range []struct {
		a, n, want int64
		full       bool
	}{
		{0, 1, 1, false},
		{5, 0, 5, false},
		{5, -3, 5, false}, // negative: the caller refuses it; nothing added
		{max - 1, 1, max, false},
		{max, 1, max, true},
		{max - 1, 2, max, true},
		{max, max, max, true},
		{1, max, max, true},
		{0, max, max, false},
	} {
		got, full := core.SatAdd(c.a, c.n)
		if got != c.want || full != c.full {
			t.Errorf("SatAdd(%d, %d) = %d, %v; want %d, %v", c.a, c.n, got, full, c.want, c.full)
		}
	}
}

// TestAddTaskOutputSaturates: output_count stops at its maximum, the
// journal never shows a negative count, and a count below 1 is refused.
func TestAddTaskOutputSaturates(t *testing.T) {
	f := registrytest.New(t)
	k, err := f.Reg.CreateTask(f.Ctx, core.NewTask{Runtime: core.RuntimeCLI}, core.ActorRuntime)
	f.Must(err)
	for _, c := range []struct {
		n    int64
		want int64
		note string
	}{
		{math.MaxInt64, math.MaxInt64, "(output_count 9223372036854775807)"},
		{math.MaxInt64, math.MaxInt64, "at its maximum"},
		{1, math.MaxInt64, "at its maximum"},
	} {
		got, res, err := f.Reg.AddTaskOutput(f.Ctx, k.ID, c.n, core.ActorRuntime)
		if err != nil || !res.Applied || got.OutputCount != c.want {
			t.Fatalf("AddTaskOutput(+%d) = %+v, %+v, %v; want output_count %d", c.n, got, res, err, c.want)
		}
		_, evs, err := f.Reg.GetTask(f.Ctx, k.ID)
		f.Must(err)
		if last := evs[len(evs)-1].Reason; !strings.Contains(last, c.note) || strings.Contains(last, "count -") {
			t.Fatalf("journal %q, want %q", last, c.note)
		}
	}
	got, _, err := f.Reg.FinishTask(f.Ctx, k.ID, core.Finish{Subtype: "success", Text: "one more"}, core.ActorRuntime)
	if err != nil || got.OutputCount != math.MaxInt64 {
		t.Fatalf("FinishTask with text at the maximum: %+v, %v", got, err)
	}
	for _, n := range []int64{0, -1, math.MinInt64} {
		if _, _, err := f.Reg.AddTaskOutput(f.Ctx, k.ID, n, core.ActorRuntime); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("AddTaskOutput(%d): %v, want invalid", n, err)
		}
	}
}
