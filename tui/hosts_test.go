package tui

import (
	"strings"
	"testing"
)

// TestJobsHostColumn (README "Many hosts: PostgreSQL"): the Jobs pane shows HOST only while the
// jobs of its window ran on more than one host.
func TestJobsHostColumn(t *testing.T) {
	hosts := func(hs ...string) hopt {
		return func(o *Options) {
			src := o.Source.(*fakeSource)
			for i, h := range hs {
				src.jobs[i].Host = h
			}
		}
	}
	for _, c := range []struct {
		name  string
		hosts []string
		want  bool
	}{
		{"no hosts recorded", nil, false},
		{"one host", []string{"host-a", "host-a", "host-a", "host-a"}, false},
		{"two hosts", []string{"host-a", "host-b"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			screen := stripANSI(goldenRun(t, 160, 48, []step{{keys: []string{"4"}, wait: "npm run dev"}}, hosts(c.hosts...)))
			if got := strings.Contains(screen, " HOST "); got != c.want {
				t.Errorf("HOST column shown = %v, want %v:\n%s", got, c.want, screen)
			}
			if c.want && !strings.Contains(screen, "host-b") {
				t.Errorf("host-b not shown:\n%s", screen)
			}
		})
	}
}
