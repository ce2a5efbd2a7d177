package cli

import (
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// TestAge: the CLI's ages are termtext.Age's, the console's rule (≥ 24h →
// days), so `clawpit` and the console agree.
func TestAge(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if got := age(now, core.TS(now.Add(-30*time.Hour))); got != "1d" {
		t.Errorf("age(30h) = %q, want 1d", got)
	}
	if age(now, 0) != "-" {
		t.Error("absent age")
	}
}
