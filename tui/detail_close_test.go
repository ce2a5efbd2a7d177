package tui

import (
	"strings"
	"testing"
)

// In a detail view q closes the view, so neither the footer nor `?` may
// promise that it quits.
func TestDetailQuitKeySaysClose(t *testing.T) {
	hs := newHarness(t, 120, 30)
	hs.keys("enter")
	if hs.m.detail == nil {
		t.Fatal("enter opened no detail")
	}
	if s := hs.screen(); strings.Contains(s, "q quit") || !strings.Contains(s, "q close") {
		t.Fatalf("detail footer promises quit:\n%s", s)
	}
	hs.keys("?")
	if s := hs.screen(); !strings.Contains(s, "detail view") || !strings.Contains(s, "close") || strings.Contains(s, " quit") {
		t.Fatalf("detail help promises quit:\n%s", s)
	}
	hs.keys("?", "q")
	if hs.m.detail != nil || hs.m.quit {
		t.Fatalf("q in the detail view: detail open %v, quit %v; want closed, not quit", hs.m.detail != nil, hs.m.quit)
	}
}
