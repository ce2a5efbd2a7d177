package tui

import (
	"strings"
	"testing"
)

// An owned registry (an adapter's read-only view): the header shows the
// owner's badge beside READ-ONLY, and every action key answers the owner's
// explanation instead of acting.
func TestOwnerBadgeAndExplanations(t *testing.T) {
	var asked []string
	owner := func(o *Options) {
		readOnly(o)
		o.Owner = &Owner{Name: "OPENCLAW", Note: "newest rows", Explain: func(action string, tg Target, have bool) string {
			asked = append(asked, action+" "+tg.ID)
			return "OpenClaw owns this registry: " + action + " " + tg.ID
		}}
	}
	hs := newHarness(t, 120, 30, owner)
	scr := hs.screen()
	for _, want := range []string{"OPENCLAW", "READ-ONLY", "newest rows"} {
		if !strings.Contains(scr, want) {
			t.Fatalf("header lacks %q:\n%s", want, scr)
		}
	}
	hs.keys("3", "a")
	if got := hs.m.StatusText(); !strings.HasPrefix(got, "OpenClaw owns this registry: approve ") {
		t.Fatalf("status %q", got)
	}
	if hs.m.dialog != nil {
		t.Fatal("an owned registry opened an action dialog")
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "approve ") {
		t.Fatalf("Explain calls %v", asked)
	}
}
