package tui

import (
	"strings"
	"testing"
)

// noteSource is a fixture that says how it learns of writes (ChangeNoter).
type noteSource struct {
	*fakeSource
	note string
}

func (s noteSource) ChangeNote() string { return s.note }

// The header says how fresh the screen is on PostgreSQL: "live" with LISTEN,
// "polling 1s" through a pooler without --listen-db; nothing on SQLite.
func TestHeaderChangeNote(t *testing.T) {
	for _, c := range []struct{ note, want, not string }{
		{"live", "live", "polling"},
		{"polling 1s", "polling 1s", "live"},
		{"", "", "polling"},
	} {
		hs := newHarness(t, 120, 30, func(o *Options) {
			if c.note != "" {
				o.Source = noteSource{fixture(), c.note}
			}
		})
		head := strings.Join(strings.SplitN(hs.screen(), "\n", 3)[:2], "\n")
		if c.want != "" && !strings.Contains(head, c.want) {
			t.Errorf("note %q: header lacks %q:\n%s", c.note, c.want, head)
		}
		if strings.Contains(head, c.not) {
			t.Errorf("note %q: header shows %q:\n%s", c.note, c.not, head)
		}
	}
}
